"""A pod group's verdict for `explain` and `simulate`, pure: which of its pods would go where, and
why the group as a whole would not be placed.

A Workload API PodGroup (GenericWorkload) runs through the scheduler's own pod-group algorithm
(scheduler/podgroup_algorithm.Placer): the group's pods placed one by one against the cache, each
assumed for the next, GangScheduling's placement check after each, and every assumption undone
before it returns. Each pod's message is the one the pod-group cycle writes (its own FitError, or
the group's reason). Pod-group preemption is not run: it would evict pods.

A scheduler-plugins PodGroup (Coscheduling) goes through the same algorithm with minMember as the
placement check, as kubesched's whole-group cycle schedules it (scheduler/schedule_one_cogroup.py),
with that cycle's messages.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.cache.cache import Cache
from kubesched.backend.queue import QueuedPodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.pod_groups import NoPodGroups, PodGroupManager
from kubesched.framework.runtime.framework import run_reserve, run_unreserve
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import NodeCursor, ScheduleResult
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.model.coscheduling import POD_GROUP_LABEL, CoPodGroup
from kubesched.model.objects import Pod
from kubesched.model.workload import PodGroup
from kubesched.plugins.coscheduling.plugin import TRIAL, Coscheduling
from kubesched.scheduler.podgroup_algorithm import POD_GROUP_UNSCHEDULABLE, Placer, PodResult
from kubesched.scheduler.schedule_one_cogroup import member_failure

WORKLOAD_API = "PodGroup"  # scheduling.k8s.io/v1beta1
COSCHEDULING = "Coscheduling"  # scheduling.x-k8s.io/v1alpha1


@dataclass
class MemberVerdict:
    pod: str  # namespace/name
    node: str | None  # where it would go when the group is placed, or where it fit on its own
    message: str = ""  # why it is not placed (the FailedScheduling message); "" when it is
    fits: bool = False  # it found a node in the group's attempt (placed or not)
    # Where it fits nowhere: each rejected node's reason (the FitError's per-node statuses).
    node_reasons: dict[str, str] = field(default_factory=dict)


@dataclass
class GroupVerdict:
    group: str  # namespace/name
    api: str  # WORKLOAD_API or COSCHEDULING
    policy: str  # "gang" or "basic"
    min_count: int
    queued: int  # members tried in this attempt
    bound: int  # members already on a node
    placed: bool
    message: str = ""  # why the group as a whole is not placed ("" when it is)
    members: list[MemberVerdict] = field(default_factory=list)
    # Each fitting pod's cycle state, PodInfo and node, for assume_placed.
    fitted: list[tuple[CycleState, PodInfo, str]] = field(default_factory=list, repr=False)

    @property
    def fitting(self) -> list[MemberVerdict]:
        return [m for m in self.members if m.fits]


def group_dict(g: GroupVerdict) -> dict[str, Any]:
    """A verdict as explain's `group` and simulate's `groups[]` (docs/tools.md)."""
    return {"group": g.group, "api": g.api, "policy": g.policy, "minCount": g.min_count, "queued": g.queued,
            "bound": g.bound, "placed": g.placed, "message": g.message,
            "pods": [{"pod": m.pod, "node": m.node, "fits": m.fits, "message": m.message,
                      "nodeReasons": m.node_reasons} for m in g.members]}


def co_group_name(pod: Pod) -> str | None:
    name = pod.metadata.labels.get(POD_GROUP_LABEL)
    return f"{pod.metadata.namespace}/{name}" if name else None


def _pod_results(pods: Sequence[Pod]) -> list[PodResult]:
    now = time.perf_counter()
    results = [PodResult(QueuedPodInfo(p, timestamp=float(i)), PodInfo(p), CycleState(), now)
               for i, p in enumerate(pods)]
    # The cycle's member order: priority, then queue time.
    results.sort(key=lambda r: (-r.info.priority, r.info.timestamp))
    return results


def evaluate_pod_group(profile: Profile, cache: Cache, groups: PodGroupManager, group: PodGroup,
                       pods: Sequence[Pod], *, rng: random.Random | None = None, cursor: NodeCursor | None = None,
                       percentage_of_nodes_to_score: int = 0) -> GroupVerdict:
    """The pod-group algorithm over `pods` (the group's queued members), every assumption undone."""
    placer = Placer(cache, groups, rng or random.Random(0), cursor or NodeCursor(), percentage_of_nodes_to_score)
    results = _pod_results(pods)
    outcome = placer.place(profile, group, results)
    meta = group.metadata
    state = groups.state(meta.namespace, meta.name)
    gang = group.spec.scheduling_policy.gang
    status = outcome.status
    verdict = GroupVerdict(group.key, WORKLOAD_API, "basic" if gang is None else "gang", group.min_count,
                           len(results), len(state.assigned), status is None,
                           "" if status is None else status.message())
    for r in results:
        fits = isinstance(r.result, ScheduleResult) and r.status is None
        if status is None:
            message = "" if fits else _own_message(r)
        elif status.code == Code.ERROR:
            message = (r.status or status).message()
        elif fits:
            message = f"{POD_GROUP_UNSCHEDULABLE}, {status.message()}"
        elif isinstance(r.result, FitError) or r.status is not None:
            message = _own_message(r)
        else:
            message = (outcome.unprocessed or status).message()
        verdict.members.append(MemberVerdict(r.pod_info.key, r.node if fits else None, message, fits,
                                             node_reasons(r.result)))
        if fits and r.node is not None:
            verdict.fitted.append((r.state, r.pod_info, r.node))
    return verdict


def node_reasons(result: object) -> dict[str, str]:
    """Each node a FitError's diagnosis rejected, with its status's reasons (sorted by node)."""
    if not isinstance(result, FitError):
        return {}
    statuses = result.diagnosis.node_to_status
    return {name: ", ".join(statuses[name].reasons) or statuses[name].code.name for name in sorted(statuses)}


def _own_message(r: PodResult) -> str:
    if isinstance(r.result, FitError):
        return r.result.message()
    return r.status.message() if r.status is not None else ""


def evaluate_co_group(profile: Profile, cache: Cache, group: CoPodGroup | None, full_name: str, pods: Sequence[Pod],
                      bound: int, *, rng: random.Random | None = None, cursor: NodeCursor | None = None,
                      percentage_of_nodes_to_score: int = 0) -> GroupVerdict:
    """Coscheduling's group through the scheduler's whole-group cycle (scheduler/schedule_one_cogroup.py):
    its pods placed together with minMember as the placement check, every assumption undone, each
    pod told what that cycle writes. Pod-group preemption is not run: it would evict pods."""
    placer = Placer(cache, NoPodGroups(), rng or random.Random(0), cursor or NodeCursor(), percentage_of_nodes_to_score)
    min_member = group.spec.min_member if group is not None else 0
    verdict = GroupVerdict(full_name, COSCHEDULING, "gang", min_member, len(pods), bound, False)
    plugin = profile.plugin(COSCHEDULING)
    results = _pod_results(pods)
    if group is None or not isinstance(plugin, Coscheduling):
        # Scheduled pod by pod, as scheduler-plugins does; Permit turns each away.
        verdict.message = f"PodGroup {full_name} not found"
        for r in results:
            placer.place_with(profile, [r], 0, None)
            fits = isinstance(r.result, ScheduleResult) and r.status is None
            verdict.members.append(MemberVerdict(r.pod_info.key, r.node if fits else None,
                                                 verdict.message if fits else _own_message(r), fits,
                                                 node_reasons(r.result)))
        return verdict
    for r in results:
        r.state.write(TRIAL, True)
    if results and plugin.manager.pre_filter(results[0].pod_info.pod, cache.snapshot().node_infos) is not None:
        # PreFilter turns the group away: each pod is told in its own words, on its own (a pod
        # that fits all the same holds nothing).
        for r in results:
            placer.place_with(profile, [r], 0, None)
            r.state.write(TRIAL, False)
            fits = isinstance(r.result, ScheduleResult) and r.status is None
            verdict.members.append(MemberVerdict(r.pod_info.key, r.node if fits else None,
                                                 POD_GROUP_UNSCHEDULABLE if fits else _own_message(r), fits,
                                                 node_reasons(r.result)))
        verdict.message = next((m.message for m in verdict.members if not m.fits), POD_GROUP_UNSCHEDULABLE)
        return verdict
    outcome = placer.place_with(profile, results, bound,
                                lambda remaining, done: plugin.placement_feasible(group, remaining, done))
    status = outcome.status
    verdict.message = "" if status is None else status.message()
    verdict.placed = status is None
    rejectors = {p for r in results if isinstance(r.result, FitError) for p in r.result.diagnosis.unschedulable_plugins}
    for r in results:
        r.state.write(TRIAL, False)
        fits = isinstance(r.result, ScheduleResult) and r.status is None
        told = member_failure(r, status, outcome.unprocessed, rejectors, preempting=False)
        message = told.message if told is not None else ("" if fits else _own_message(r))
        verdict.members.append(MemberVerdict(r.pod_info.key, r.node if fits else None, message, fits,
                                             node_reasons(r.result)))
        if fits and r.node is not None:
            verdict.fitted.append((r.state, r.pod_info, r.node))
    return verdict


def assume_placed(profile: Profile, cache: Cache, verdict: GroupVerdict) -> None:
    """Assume a placed group's pods on their nodes again, through Reserve with their cycle's state,
    as the cycle does before Permit (for simulate, whose next pods must see them)."""
    if not verdict.placed:
        return
    for state, info, node in verdict.fitted:
        cache.assume_pod(info, node)
        if run_reserve(profile, state, info, node) is not None:
            run_unreserve(profile, state, info, node)
            cache.forget_pod(info)
