"""The pod-group scheduling cycle (kube-scheduler schedule_one_podgroup.go, without composite
groups, placements or pod-group preemption's victims): a PodGroup's queued pods are scheduled
together against one snapshot, each assumed as it is placed so the next one sees it, and
GangScheduling's placement check stops the cycle once minCount can no longer be met. Then every
assumption is undone: when the group as a whole succeeded, its placed pods are assumed again one by
one through Reserve and Permit into their binding cycles (GangScheduling's Permit lets them go
together once minCount are scheduled); otherwise none of them is, and each pod is told why — its
own FitError, or the group's reason. The PodGroup's PodGroupInitiallyScheduled condition says how
the attempt ended.

The whole cycle is synchronous code, so nothing changes the cache while it runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.queue import QueuedPodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.pod_groups import PodGroupManager, pod_group_key, pod_group_name
from kubesched.framework.runtime.framework import run_reserve, run_unreserve
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import ScheduleResult, schedule_pod
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod
from kubesched.model.workload import (
    POD_GROUP_INITIALLY_SCHEDULED,
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    Condition,
    PodGroup,
)
from kubesched.plugins.gang_scheduling import NAME as GANG_SCHEDULING
from kubesched.plugins.gang_scheduling import placement_feasible
from kubesched.scheduler.schedule_one import Cycles, _failure

log = logging.getLogger("kubesched")

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
NO_VICTIMS = "pod group preemption: No preemption victims found for incoming preemptor"
PREEMPT_NEVER = "pod group preemption: not eligible due to preemptionPolicy=Never."

# Write a PodGroup's condition in the background (api/pod_group_status.write_pod_group_condition).
ConditionWriter = Callable[[PodGroup, Condition], Coroutine[Any, Any, None]]


def is_pod_group_member(pod: Pod) -> bool:
    return pod_group_name(pod) is not None


@dataclass
class _PodResult:
    info: QueuedPodInfo
    pod_info: PodInfo
    state: CycleState
    started: float
    result: ScheduleResult | FitError | None = None  # None: not evaluated
    status: Status | None = None  # the pod's own failure (Reserve's rejection or an error)
    elapsed: float = 0.0

    @property
    def placed(self) -> bool:
        return isinstance(self.result, ScheduleResult) and self.status is None


@dataclass
class GroupOutcome:
    """How the group's algorithm ended: `status` None is success; `unprocessed` the status the
    pods it never reached take (kube-scheduler's completePodGroupAlgorithmResult)."""

    status: Status | None
    unprocessed: Status | None = None
    results: list[_PodResult] = field(default_factory=list)


def _unschedulable(reasons: Sequence[str], *, with_error: bool) -> Status:
    # A status WithError(errPodGroupUnschedulable): the error's text comes first in its message.
    return Status(Code.UNSCHEDULABLE, ", ".join([POD_GROUP_UNSCHEDULABLE, *reasons] if with_error else reasons))


@dataclass
class PodGroupCycles:
    cycles: Cycles
    pod_groups: PodGroupManager
    write_condition: ConditionWriter
    spawn: Callable[[Coroutine[Any, Any, Any], str], object]

    def schedule_group(self, first: QueuedPodInfo) -> None:
        """The cycle for the group of `first`, just popped: its other queued pods come along."""
        cycles = self.cycles
        pod = first.pod
        namespace, name = pod.metadata.namespace, pod_group_name(pod) or ""
        key = pod_group_key(pod)
        members = [first, *cycles.queue.pop_members(
            lambda p: pod_group_key(p) == key and p.spec.scheduler_name == pod.spec.scheduler_name,
            first.scheduling_cycle)]
        members.sort(key=lambda i: (-i.priority, i.timestamp))
        group = self.pod_groups.pod_group(namespace, name)
        begun = [(info, cycles._begin(info)) for info in members]
        pods = [_PodResult(info, c[1], c[2], c[3]) for info, c in begun if c is not None]
        if not pods:
            return
        profile = next(c[0] for _, c in begun if c is not None)
        if group is None:
            message = f'podgroup.scheduling.k8s.io "{name}" not found'
            for r in pods:
                cycles._failed(r.info, profile, message, reason=REASON_SCHEDULER_ERROR, started=r.started)
            return
        outcome = self.run_algorithm(profile, group, pods)
        self._submit(profile, group, outcome)

    def run_algorithm(self, profile: Profile, group: PodGroup, pods: list[_PodResult]) -> GroupOutcome:
        """Place the pods one by one, each assumed in the cache for the next; undo every
        assumption before returning."""
        cycles = self.cycles
        gang = profile.plugin(GANG_SCHEDULING) is not None
        meta = group.metadata
        remaining, scheduled = len(pods), self.pod_groups.state(meta.namespace, meta.name).scheduled_pods_count()
        outcome = GroupOutcome(None, results=pods)
        feasible = placement_feasible(group, remaining, scheduled) if gang else None
        if feasible is not None and feasible.code == Code.UNSCHEDULABLE:
            outcome.status = _unschedulable(feasible.reasons, with_error=True)
            outcome.unprocessed = outcome.status
            return outcome
        assumed: list[tuple[_PodResult, str]] = []
        any_scheduled = False
        try:
            for r in pods:
                try:
                    r.result = schedule_pod(profile, cycles.cache.snapshot(), r.pod_info, rng=cycles.rng,
                                            cursor=cycles.cursor,
                                            percentage_of_nodes_to_score=cycles.percentage_of_nodes_to_score,
                                            state=r.state)
                except SchedulingError as exc:
                    r.status = Status(Code.ERROR, str(exc))
                    outcome.status = Status(Code.ERROR, f"failed to schedule other pod from a pod group: {exc}")
                    break
                finally:
                    r.elapsed = time.perf_counter() - r.started
                if isinstance(r.result, ScheduleResult):
                    node = r.result.suggested_host
                    cycles.cache.assume_pod(r.pod_info, node)
                    reserved = run_reserve(profile, r.state, r.pod_info, node)
                    if reserved is not None:
                        run_unreserve(profile, r.state, r.pod_info, node)
                        cycles.cache.forget_pod(r.pod_info)
                        r.status = reserved
                        if not reserved.is_rejected():
                            outcome.status = Status(Code.ERROR, "failed to schedule other pod from a pod group: "
                                                    + reserved.message())
                            break
                    else:
                        assumed.append((r, node))
                remaining -= 1
                scheduled += r.placed
                feasible = placement_feasible(group, remaining, scheduled) if gang else None
                outcome.status = feasible
                if feasible is not None and feasible.code == Code.UNSCHEDULABLE:
                    break
                any_scheduled = any_scheduled or r.placed
        finally:
            for r, node in reversed(assumed):
                run_unreserve(profile, r.state, r.pod_info, node)
                cycles.cache.forget_pod(r.pod_info)
        status = outcome.status
        if status is not None and status.code == Code.WAIT:
            outcome.status = _unschedulable(status.reasons, with_error=True)
        elif status is None and not any_scheduled:
            outcome.status = _unschedulable([], with_error=True)
        if outcome.unprocessed is None:
            outcome.unprocessed = outcome.status
        if outcome.status is not None and outcome.status.code == Code.UNSCHEDULABLE:
            # PodGroupPostFilter: DefaultPreemption's pod-group preemption.
            preemption = self._pod_group_post_filter(profile, group, pods)
            if preemption is not None:
                outcome.status = Status(Code.UNSCHEDULABLE, f"{outcome.status.message()}, {preemption}")
        return outcome

    def _pod_group_post_filter(self, profile: Profile, group: PodGroup, pods: list[_PodResult]) -> str | None:
        """kube-scheduler's DefaultPreemption.PodGroupPostFilter, as far as kubesched goes: it finds
        no victims when no pod of lower priority runs; preempting for a whole group is not done."""
        if not any(pl.name == "DefaultPreemption" for pl in profile.post_filter):
            return None
        policy = group.spec.preemption_policy or pods[0].pod_info.pod.spec.preemption_policy
        if policy == "Never":
            return PREEMPT_NEVER
        priority = group.spec.priority if group.spec.priority is not None else pods[0].pod_info.pod.spec.priority
        snapshot = self.cycles.cache.snapshot()
        lower = any(p.pod.spec.priority < priority for ni in snapshot.node_infos for p in ni.pods.values())
        if lower:
            log.warning("pod-group preemption is not implemented: the group stays unschedulable",
                        extra={"podGroup": group.key})
        return NO_VICTIMS

    def _submit(self, profile: Profile, group: PodGroup, outcome: GroupOutcome) -> None:
        cycles = self.cycles
        status = outcome.status
        rejectors = {p for r in outcome.results if isinstance(r.result, FitError)
                     for p in r.result.diagnosis.unschedulable_plugins}
        for r in outcome.results:
            if status is not None and status.code == Code.ERROR:
                message = (r.status or status).message()
                cycles._failed(r.info, profile, message, reason=REASON_SCHEDULER_ERROR, started=r.started)
            elif r.placed:
                assert isinstance(r.result, ScheduleResult)
                if status is None:
                    cycles._decided(r.info, profile, r.pod_info, r.state, r.started, r.elapsed, r.result, None)
                else:
                    # Placed, but the group was not: back with the plugins that turned its others away.
                    r.info.unschedulable_plugins = frozenset(rejectors or {GANG_SCHEDULING})
                    cycles.stats.unschedulable += 1
                    cycles._failed(r.info, profile, f"{POD_GROUP_UNSCHEDULABLE}, {status.message()}",
                                   reason=REASON_UNSCHEDULABLE, started=r.started)
            elif isinstance(r.result, FitError):
                r.info.unschedulable_plugins = set(r.result.diagnosis.unschedulable_plugins)
                cycles.stats.unschedulable += 1
                cycles._failed(r.info, profile, r.result.message(), reason=REASON_UNSCHEDULABLE,
                               nominated_node=None, started=r.started)
            elif r.status is not None and isinstance(r.result, ScheduleResult):
                # Turned away at Reserve: as kube-scheduler reports it, a FitError over its one node.
                r.info.unschedulable_plugins = frozenset({r.status.plugin} if r.status.plugin else ())
                message, reason = _failure(r.pod_info, r.result.suggested_host, r.status)
                cycles._failed(r.info, profile, message, reason=reason, started=r.started)
            else:
                unprocessed = outcome.unprocessed or status
                assert unprocessed is not None
                r.info.unschedulable_plugins = frozenset(rejectors or {GANG_SCHEDULING})
                cycles.stats.unschedulable += 1
                cycles._failed(r.info, profile, unprocessed.message(), reason=REASON_UNSCHEDULABLE,
                               nominated_node=None, started=r.started)
        if status is None:
            condition = Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="True", reason=REASON_SCHEDULED)
        elif status.code == Code.ERROR:
            condition = Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="False", reason=REASON_SCHEDULER_ERROR,
                                  message=status.message())
        else:
            condition = Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="False", reason=REASON_UNSCHEDULABLE,
                                  message=status.message())
        self.spawn(self.write_condition(group, condition), f"podgroup-status/{group.key}")
