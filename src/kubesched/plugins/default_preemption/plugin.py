"""DefaultPreemption: when a pod fits nowhere, find a node where evicting lower-priority pods makes
it fit, nominate the pod there and delete those victims (kube-scheduler v1.37.2
defaultpreemption/default_preemption.go and preemption/preemption.go, single pods only).

The choice is synchronous, in PostFilter: the dry run clones each candidate node's NodeInfo and the
CycleState, removes every lower-priority pod (telling the PreFilter extensions, duck-typed
`remove_pod`/`add_pod`), checks the pod fits with the profile's filters, then reprieves the victims
from the most important down while the pod still fits. The nomination goes back to the failure
handler in the CycleState (NOMINATED_NODE_KEY, kube-scheduler's PostFilterResult), which writes
status.nominatedNodeName in the same patch as the PodScheduled condition; the victims are deleted
(with the Preempted event) in the background through the handle's `spawn` port, as kube-scheduler's
async preemption does.

Not implemented: PodDisruptionBudgets (every victim counts as non-violating), nominated pods in the
dry run's filters (kubesched has no nominator), extenders, preempting a pod waiting at Permit in
memory (it is deleted like the others), clearing lower-priority pods' nominations, and pod groups.
A victim this plugin deleted also counts as "terminating by preemption" from memory, before the
informer brings its DisruptionTarget condition.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NOMINATED_NODE_KEY
from kubesched.framework.profile import Profile
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.default_preemption.args import DefaultPreemptionArgs, typed

NAME = "DefaultPreemption"

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."

# Past this many remembered victims, forget those no longer in the snapshot.
_PREEMPTED_KEEP = 1000

log = logging.getLogger(__name__)


@dataclass
class Candidate:
    """A node and the pods to evict there, most important first."""

    name: str
    victims: list[PodInfo]
    num_pdb_violations: int = 0


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
                 offset: Callable[[int], int] | None = None) -> None:
        self.args = args or DefaultPreemptionArgs()
        self.handle = handle or Handle()
        self.profile: Profile | None = None
        # kube-scheduler starts the dry run at a random node (rand.Int31n); tests pass a fixed one.
        self.offset: Callable[[int], int] = offset or random.Random().randrange
        # Victims deleted by this plugin (uids), standing in for their DisruptionTarget condition.
        self.preempted: set[str] = set()

    def attach_profile(self, profile: Profile) -> None:
        """The profile whose PreFilter extensions and Filters the dry run runs (build_profile calls it)."""
        self.profile = profile

    # --- PostFilter ---------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        status, candidate, nomination = self.preempt(state, pod, fit_error)
        if nomination is not None:
            state.write(NOMINATED_NODE_KEY, nomination)
        if candidate is not None:
            self._actuate(pod.pod, candidate)
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
                snapshot: Snapshot | None = None) -> tuple[Status, Candidate | None, str | None]:
        """Evaluator.evaluate: the status PostFilter answers (without the "preemption: " prefix),
        the chosen candidate on success, and the nomination (a node, "" to clear, None to leave
        it). No writes."""
        if snapshot is None:
            snapshot = self.handle.snapshot()
        if len(self.preempted) > _PREEMPTED_KEEP:
            present = {p.pod.metadata.uid for ni in snapshot.node_infos for p in ni.pods.values()}
            self.preempted &= present
        latest = self.handle.pods.get(pod.key)
        if latest is not None and latest.metadata.uid == pod.pod.metadata.uid:
            pod = PodInfo(latest)
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
            victims, violations, status = self.select_victims_on_node(state.clone(), pod, ni.clone())
            if status is None and victims:
                (violating if violations else non_violating).append(Candidate(ni.name, victims, violations))
                if non_violating and len(non_violating) + len(violating) >= want:
                    break
                continue
            if status is None:
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{ni.name}"')
            if status.code == Code.ERROR and error is None:
                error = status
            statuses[ni.name] = status
        return non_violating + violating, statuses, error

    def _filters_pass(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """RunFilterPlugins on one node: None when it fits, else the first rejection (or an error)."""
        profile = self.profile
        if profile is None:
            return None
        for pl in profile.filter:
            if pl.name in state.skip_filter_plugins:
                continue
            s = pl.filter(state, pod, node)
            if s is None or s.code == Code.SUCCESS:
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name)
            return Status(Code.ERROR, f'running "{pl.name}" filter plugin: {s.message()}', plugin=pl.name)
        return None

    def _extensions(self, state: CycleState, method: str, pod: PodInfo, other: PodInfo,
                    node: NodeInfo) -> Status | None:
        """RunPreFilterExtensionAddPod / RemovePod over the PreFilter plugins that have them."""
        profile = self.profile
        if profile is None:
            return None
        for pl in profile.pre_filter:
            if pl.name in state.skip_filter_plugins:
                continue
            ext = getattr(pl, method, None)
            if not callable(ext):
                continue
            s = ext(state, pod, other, node)
            if s is not None and s.code != Code.SUCCESS:
                op = "AddPod" if method == "add_pod" else "RemovePod"
                return Status(Code.ERROR, f'running {op} on PreFilter plugin "{pl.name}": {s.message()}',
                              plugin=pl.name)
        return None

    def select_victims_on_node(self, state: CycleState, pod: PodInfo,
                               node: NodeInfo) -> tuple[list[PodInfo], int, Status | None]:
        """SelectVictimsOnNode on a clone of the node and of the cycle state: (victims most
        important first, PDB violations (always 0), None) or a status saying why not."""
        prio = pod.pod.spec.priority
        potential = [p for p in node.pods.values() if p.pod.spec.priority < prio]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        for v in potential:
            node.remove_pod(v)
            s = self._extensions(state, "remove_pod", pod, v, node)
            if s is not None:
                return [], 0, s
        s = self._filters_pass(state, pod, node)
        if s is not None:
            return [], 0, s
        potential.sort(key=_sort_key)
        victims: list[PodInfo] = []
        # No PodDisruptionBudgets: every victim is non-violating.
        for v in potential:
            node.add_pod(v)
            s = self._extensions(state, "add_pod", pod, v, node)
            if s is not None:
                return [], 0, s
            fits = self._filters_pass(state, pod, node)
            if fits is not None:
                if fits.code == Code.ERROR:
                    return [], 0, fits
                node.remove_pod(v)
                s = self._extensions(state, "remove_pod", pod, v, node)
                if s is not None:
                    return [], 0, s
                victims.append(v)
        return victims, 0, None

    # --- the writes ---------------------------------------------------------------------------------

    def _actuate(self, preemptor: Pod, candidate: Candidate) -> None:
        uid = preemptor.metadata.uid
        key = f"{preemptor.metadata.namespace}/{preemptor.metadata.name}"
        self.handle.spawn(self._write(preemptor, candidate), f"preemption/{key}")
        log.info("preempting", extra={"pod": key, "node": candidate.name, "uid": uid,
                                      "victims": [v.key for v in candidate.victims]})

    async def _write(self, preemptor: Pod, candidate: Candidate) -> None:
        """PreemptPod for each victim: the DisruptionTarget condition, then the deletion with the
        Preempted event (the nomination is the failure handler's)."""
        key = f"{preemptor.metadata.namespace}/{preemptor.metadata.name}"
        message = f"Preempted by pod {preemptor.metadata.uid} on node {candidate.name}"
        condition = f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod"
        for v in candidate.victims:
            self.preempted.add(v.pod.metadata.uid)
            s = await self.handle.disrupt_victim(v.pod, condition)
            if s is not None and s.code != Code.SUCCESS:
                log.warning("preempting a victim failed", extra={"pod": key, "victim": v.key,
                                                                 "detail": s.message()})
                continue
            s = await self.handle.delete_victim(v.pod, message)
            if s is not None and s.code != Code.SUCCESS:
                log.warning("preempting a victim failed", extra={"pod": key, "victim": v.key,
                                                                 "detail": s.message()})


def new(args: Mapping[str, Any], handle: Handle | None = None) -> DefaultPreemption:
    """The plugin from its args ({} for the defaults)."""
    return DefaultPreemption(typed(args), handle)
