"""DefaultPreemption: when a pod fits nowhere, find a node where evicting lower-priority pods makes
it fit, nominate the pod there and delete those victims (kube-scheduler v1.37.2
defaultpreemption/default_preemption.go and preemption/preemption.go, single pods only).

The choice is synchronous, in PostFilter: the dry run clones each candidate node's NodeInfo and the
CycleState, removes every lower-priority pod (telling the PreFilter extensions, duck-typed
`remove_pod`/`add_pod`), checks the pod fits with the profile's filters (with the pods nominated to
the node that it yields to, framework/nominated.py), then reprieves the victims while the pod still
fits: first those whose eviction would break a PodDisruptionBudget, then the others, each group
from the most important down (pdb.py). Candidates that break no budget are preferred. The
nomination goes back to the failure handler in the CycleState (NOMINATED_NODE_KEY,
kube-scheduler's PostFilterResult), which writes status.nominatedNodeName in the same patch as the
PodScheduled condition and tells the queue's nominator at once; the victims are deleted (with the
Preempted event) in the background, as kube-scheduler's async preemption does (executor.py), and
the preemptor is held back at PreEnqueue meanwhile (kube-scheduler's IsPodRunningPreemption).

With extenders configured, the scheduler calls post_filter_async, which hands the candidates to the
extenders that support preemption (callExtenders) before choosing one.

Not implemented: preempting a pod waiting at Permit or in PreBind in memory (it is deleted like the
others), and pod groups.
A victim this plugin deleted also counts as "terminating by preemption" from memory, before the
informer brings its DisruptionTarget condition.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.extender import Victims
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NOMINATED_NODE_KEY
from kubesched.framework.runtime.extenders import call_extenders
from kubesched.framework.runtime.nominated import run_extension, run_filters_with_nominated_pods, yielded_to
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.coscheduling import POD_GROUP_LABEL
from kubesched.model.objects import Pod
from kubesched.plugins.default_preemption.args import DefaultPreemptionArgs, typed
from kubesched.plugins.default_preemption.executor import Candidate as Candidate  # re-exported: the type of a result
from kubesched.plugins.default_preemption.executor import Executor, coscheduling_hold
from kubesched.plugins.default_preemption.pdb import Budget, NoPDBs, PDBLister, budgets, split_by_violation

NAME = "DefaultPreemption"

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
WAITING = "waiting for the preemption for this pod to be finished"
WAITING_FOR_GROUP = "waiting for the preemption for this pod group to be finished"
# The preemptor's queue moves again when a pod leaves a node (kube-scheduler registers the same).
_EVENTS = (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),)

# Past this many remembered victims, forget those no longer in the snapshot.
_PREEMPTED_KEEP = 1000

log = logging.getLogger(__name__)

# What an evaluation ends with: the status PostFilter answers (before its "preemption: " prefix), the
# candidate to preempt on, and the nomination (a node, "" to clear it, None to leave it).
Outcome = tuple[Status, Candidate | None, str | None]


def _start_time(pod: Pod) -> float:
    """The pod's status.startTime as seconds; now when not started yet (GetPodStartTime)."""
    raw = pod.status.start_time
    if raw:
        try:
            return dt.datetime.fromisoformat(raw).timestamp()
        except ValueError:
            pass
    return time.time()


def _more_important(a: PodInfo, b: PodInfo) -> bool:
    """MoreImportantVictim for single pods: higher priority, then the earlier start time."""
    if a.pod.spec.priority != b.pod.spec.priority:
        return a.pod.spec.priority > b.pod.spec.priority
    return _start_time(a.pod) < _start_time(b.pod)


def _sort_key(p: PodInfo) -> tuple[int, float]:
    return (-p.pod.spec.priority, _start_time(p.pod))


def _terminating_by_preemption(pod: Pod, preempted: set[str]) -> bool:
    """PodTerminatingByPreemption; without the DisruptionTarget condition, a pod this plugin deleted."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for c in pod.status.conditions:
        if c.type == "DisruptionTarget":
            return c.status == "True" and c.reason == "PreemptionByScheduler"
    return pod.metadata.uid in preempted


def _earliest_start_time(victims: list[PodInfo]) -> float:
    """GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    earliest = _start_time(victims[0].pod)
    top = victims[0].pod.spec.priority
    for v in victims:
        pr = v.pod.spec.priority
        if pr == top:
            earliest = min(earliest, _start_time(v.pod))
        elif pr > top:
            top = pr
            earliest = _start_time(v.pod)
    return earliest


def pick_one_node(candidates: list[Candidate]) -> Candidate | None:
    """pickOneNodeForPreemption: fewest PDB violations, lowest highest victim priority, smallest sum
    of priorities, fewest victims, latest earliest start of the highest-priority victims; then the
    first candidate (kube-scheduler's map order makes that one random)."""
    if not candidates:
        return None
    funcs: list[Callable[[Candidate], float]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].pod.spec.priority,
        lambda c: -sum(v.pod.spec.priority + 2**31 for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start_time(c.victims),
    ]
    remaining = candidates
    for f in funcs:
        scores = [f(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[0]


class DefaultPreemption:
    name = NAME

    def __init__(self, args: DefaultPreemptionArgs | None = None, handle: Handle | None = None,
                 offset: Callable[[int], int] | None = None, pdbs: PDBLister | None = None) -> None:
        self.args = args or DefaultPreemptionArgs()
        self.handle = handle or Handle()
        self.pdbs: PDBLister = pdbs or NoPDBs()
        self.profile: Profile | None = None
        # kube-scheduler starts the dry run at a random node (rand.Int31n); tests pass a fixed one.
        self.offset: Callable[[int], int] = offset or random.Random().randrange
        self.executor = Executor(self.handle)

    @property
    def preempted(self) -> set[str]:
        """Victims deleted by this plugin (uids), standing in for their DisruptionTarget condition."""
        return self.executor.preempted

    @property
    def running(self) -> dict[str, str | None]:
        """Preemptors held back (uid -> the last victim's key once its turn came)."""
        return self.executor.running

    def attach_profile(self, profile: Profile) -> None:
        """The profile whose PreFilter extensions and Filters the dry run runs (build_profile calls it)."""
        self.profile = profile

    # --- PreEnqueue ---------------------------------------------------------------------------------

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        return tuple(ClusterEventWithHint(event, self._after_assigned_pod_deletion) for event in _EVENTS)

    def _after_assigned_pod_deletion(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Whether PreEnqueue would let the held preemptor go now. kube-scheduler's hint says Skip
        and leaves the move to the pod's other rejectors, each deletion then taking every held
        preemptor out of unschedulablePods and PreEnqueue putting all but one back, which with
        hundreds held was a quarter of a PreemptionBasic run's CPU. A pod gated here has this
        plugin as its only rejector, so the hint asks what the gate would answer, and the others
        stay where they are."""
        return QueueingHint.QUEUE if self.pre_enqueue(pod) is None else QueueingHint.QUEUE_SKIP

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Hold the preemptor back while its preemption runs (IsPodRunningPreemption): until its
        last victim is terminating or gone from the informer, so a new cycle cannot find it again."""
        group_name = pod.spec.scheduling_group.pod_group_name if pod.spec.scheduling_group else None
        if group_name is not None:
            # A pod-group member waits on its group's preemption (GenericWorkload); a group not
            # found is not this plugin's to hold back.
            group = self.handle.pod_groups.pod_group(pod.metadata.namespace, group_name)
            if group is not None:
                if self.executor.running_preemption(group.metadata.uid):
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_GROUP)
                return None
        co_group = pod.metadata.labels.get(POD_GROUP_LABEL)
        if co_group and self.executor.running_preemption(coscheduling_hold(pod.metadata.namespace, co_group)):
            # A Coscheduling group's members, those created since the preemption began included.
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_GROUP)
        if self.executor.running_preemption(pod.metadata.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING)
        return None

    # --- PostFilter ---------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        self.handle.preemption_attempted()
        return self._done(state, pod, *self.preempt(state, pod, fit_error))

    async def post_filter_async(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        """post_filter in a scheduler with extenders: the candidates go through the extenders that
        support preemption (callExtenders) before one is chosen."""
        self.handle.preemption_attempted()
        return self._done(state, pod, *await self.preempt_with_extenders(state, pod, fit_error))

    def _done(self, state: CycleState, pod: PodInfo, status: Status, candidate: Candidate | None,
              nomination: str | None) -> Status:
        if nomination is not None:
            state.write(NOMINATED_NODE_KEY, nomination)
        if candidate is not None:
            self.executor.actuate(pod.pod, candidate)
        msg = status.message()
        if msg:
            return Status(status.code, f"preemption: {msg}")
        return status

    def dry_run_post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError,
                            snapshot: Snapshot | None = None) -> Status | None:
        """What post_filter answers on this snapshot (default: the handle's), writing nothing
        (kubesched explain)."""
        status, _, _ = self.preempt(state, pod, fit_error, snapshot)
        msg = status.message()
        return Status(status.code, f"preemption: {msg}") if msg else status

    def preempt(self, state: CycleState, pod: PodInfo, fit_error: FitError,
                snapshot: Snapshot | None = None) -> Outcome:
        """Evaluator.evaluate: the status PostFilter answers (without the "preemption: " prefix),
        the chosen candidate on success, and the nomination (a node, "" to clear, None to leave
        it). No writes."""
        found = self.candidates(state, pod, fit_error, snapshot)
        if isinstance(found, tuple):
            return found
        return self.select(found)

    async def preempt_with_extenders(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Outcome:
        """preempt, the candidates given to the handle's extenders first (callExtenders)."""
        snapshot = self.handle.snapshot()
        found = self.candidates(state, pod, fit_error, snapshot)
        if isinstance(found, tuple):
            return found
        victims = {c.name: Victims(c.victims, c.num_pdb_violations) for c in found}
        kept = await call_extenders(self.handle.extenders, self._latest(pod).pod, victims, snapshot)
        if isinstance(kept, Status):
            return kept, None, None
        return self.select([Candidate(name, v.pods, v.num_pdb_violations) for name, v in kept.items()])

    def candidates(self, state: CycleState, pod: PodInfo, fit_error: FitError,
                   snapshot: Snapshot | None = None) -> list[Candidate] | Outcome:
        """Evaluator.evaluate up to its candidates: them, or the outcome when there are none."""
        if snapshot is None:
            snapshot = self.handle.snapshot()
        if len(self.preempted) > _PREEMPTED_KEEP:
            present = {p.pod.metadata.uid for ni in snapshot.node_infos for p in ni.pods.values()}
            self.preempted.intersection_update(present)
        pod = self._latest(pod)
        ok, msg = self.eligible(pod.pod, fit_error.diagnosis, snapshot)
        if not ok:
            return Status(Code.UNSCHEDULABLE, msg), None, None
        all_nodes = snapshot.node_infos
        candidates, statuses, error = self.find_candidates(state, pod, all_nodes, fit_error.diagnosis)
        if error is not None and not candidates:
            return error, None, None
        if not candidates:
            diagnosis = Diagnosis(node_to_status=statuses,
                                  absent_nodes_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL))
            return Status(Code.UNSCHEDULABLE, FitError(pod, len(all_nodes), diagnosis).message()), None, ""
        return candidates

    def _latest(self, pod: PodInfo) -> PodInfo:
        """The informer's version of the pod (the evaluation's first step fetches it)."""
        latest = self.handle.pods.get(pod.key)
        if latest is not None and latest.metadata.uid == pod.pod.metadata.uid:
            return PodInfo(latest)
        return pod

    def select(self, candidates: list[Candidate]) -> Outcome:
        """SelectCandidate, and the outcome of preempting on it."""
        best = pick_one_node(candidates)
        if best is None:
            return Status(Code.UNSCHEDULABLE, "no candidate node for preemption"), None, None
        return Status(Code.SUCCESS, f"found a potential placement for pod on node {best.name}, "
                                    f"preempting {len(best.victims)} victims"), best, best.name

    def eligible(self, pod: Pod, diagnosis: Diagnosis, snapshot: Snapshot | None = None) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers."""
        if pod.spec.preemption_policy == "Never":
            return False, NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            status = diagnosis.node_to_status.get(nominated, diagnosis.absent_nodes_status)
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            if snapshot is None:
                snapshot = self.handle.snapshot()
            row = snapshot.index.get(nominated)
            if row is not None:
                prio = pod.spec.priority
                for p in snapshot.node_infos[row].pods.values():
                    if p.pod.spec.priority < prio and _terminating_by_preemption(p.pod, self.preempted):
                        return False, TERMINATING
        return True, ""

    def num_candidates(self, num_nodes: int) -> int:
        """calculateNumCandidates."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def find_candidates(self, state: CycleState, pod: PodInfo, all_nodes: list[NodeInfo],
                        diagnosis: Diagnosis) -> tuple[list[Candidate], dict[str, Status], Status | None]:
        """findCandidates and DryRunPreemption, sequentially: (candidates, per-node statuses of the
        nodes tried and rejected, the first error)."""
        if not all_nodes:
            return [], {}, Status(Code.ERROR, "no nodes available")
        absent = diagnosis.absent_nodes_status
        potential = [ni for ni in all_nodes
                     if diagnosis.node_to_status.get(ni.name, absent).code == Code.UNSCHEDULABLE]
        if not potential:
            return [], {}, None
        n = len(potential)
        known = budgets(self.pdbs.list())
        nominator = self.handle.nominator
        offset = self.offset(n)
        want = self.num_candidates(n)
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        error: Status | None = None
        prio = pod.pod.spec.priority
        for i in range(n):
            ni = potential[(offset + i) % n]
            if not any(p.pod.spec.priority < prio for p in ni.pods.values()):
                # SelectVictimsOnNode's first answer, without cloning the node and the state.
                statuses[ni.name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
                continue
            victims, violations, status = self.select_victims_on_node(
                state.clone(), pod, ni.clone(), known, yielded_to(nominator, ni.name, pod))
            if status is None and victims:
                found = violating if violations else non_violating
                # Each list holds `want` candidates at most; later ones are dropped (candidateList.add).
                if len(found) < want:
                    found.append(Candidate(ni.name, victims, violations))
                if non_violating and len(non_violating) + len(violating) >= want:
                    break
                continue
            if status is None:
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{ni.name}"')
            if status.code == Code.ERROR and error is None:
                error = status
            statuses[ni.name] = status
        return non_violating + violating, statuses, error

    def select_victims_on_node(self, state: CycleState, pod: PodInfo, node: NodeInfo,
                               known: Sequence[Budget] = (),
                               nominated: Sequence[PodInfo] = ()) -> tuple[list[PodInfo], int, Status | None]:
        """SelectVictimsOnNode on a clone of the node and of the cycle state: (victims most
        important first, how many of them violate a PodDisruptionBudget, None) or a status saying
        why not. `nominated`: the pods nominated to the node that the pod yields to."""
        profile = self.profile
        prio = pod.pod.spec.priority
        potential = [p for p in node.pods.values() if p.pod.spec.priority < prio]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        if profile is None:
            return [], 0, Status(Code.ERROR, "DefaultPreemption is not attached to a profile")
        for v in potential:
            node.remove_pod(v)
            s = run_extension(profile, state, "remove_pod", pod, v, node)
            if s is not None:
                return [], 0, s
        s = run_filters_with_nominated_pods(profile, state, pod, node, nominated)
        if s is not None:
            return [], 0, s
        potential.sort(key=_sort_key)
        # Reprieve the PDB-violating victims first, then the others, each most important first.
        violating, non_violating = split_by_violation(potential, known)
        victims: list[PodInfo] = []

        def reprieve(v: PodInfo) -> bool | Status:
            node.add_pod(v)
            s = run_extension(profile, state, "add_pod", pod, v, node)
            if s is not None:
                return s
            fits = run_filters_with_nominated_pods(profile, state, pod, node, nominated)
            if fits is None:
                return True
            # Any other answer, an error too, keeps the pod a victim (as kube-scheduler's IsSuccess).
            node.remove_pod(v)
            s = run_extension(profile, state, "remove_pod", pod, v, node)
            if s is not None:
                return s
            victims.append(v)
            return False

        num_violating = 0
        for v in violating:
            r = reprieve(v)
            if isinstance(r, Status):
                return [], 0, r
            if not r:
                num_violating += 1
        for v in non_violating:
            r = reprieve(v)
            if isinstance(r, Status):
                return [], 0, r
        if violating and non_violating:
            victims.sort(key=_sort_key)
        return victims, num_violating, None


def new(args: Mapping[str, Any], handle: Handle | None = None, pdbs: PDBLister | None = None) -> DefaultPreemption:
    """The plugin from its args ({} for the defaults); PodDisruptionBudgets from `pdbs` (the
    scheduler's PDB informer), none without it."""
    return DefaultPreemption(typed(args), handle, pdbs=pdbs)
