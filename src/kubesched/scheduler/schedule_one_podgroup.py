"""The pod-group scheduling cycle (kube-scheduler schedule_one_podgroup.go, without composite
groups or placements): a PodGroup's queued pods are scheduled together against one snapshot, each
assumed as it is placed so the next one sees it, and GangScheduling's placement check stops the
cycle once minCount can no longer be met (scheduler/podgroup_algorithm.py). Then every assumption
is undone: when the group as a whole succeeded, its placed pods are assumed again one by one
through Reserve and Permit into their binding cycles (GangScheduling's Permit lets them go
together once minCount are scheduled); otherwise none of them is, pod-group preemption is tried
(scheduler/podgroup_preemption.py), and each pod is told why — its own FitError, or the group's
reason. The PodGroup's PodGroupInitiallyScheduled condition says how the attempt ended.

The whole cycle is synchronous code, so nothing changes the cache while it runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from kubesched.backend.queue import QueuedPodInfo
from kubesched.framework.fit_error import FitError
from kubesched.framework.pod_groups import PodGroupManager, pod_group_key, pod_group_name
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import ScheduleResult
from kubesched.framework.status import Code, Status
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
from kubesched.scheduler.podgroup_algorithm import POD_GROUP_UNSCHEDULABLE, GroupOutcome, Placer, PodResult
from kubesched.scheduler.podgroup_preemption import PodGroupPreemption
from kubesched.scheduler.schedule_one import NO_REJECTORS, Cycles, _failure

log = logging.getLogger("kubesched")

# Write a PodGroup's condition in the background (api/pod_group_status.write_pod_group_condition).
ConditionWriter = Callable[[PodGroup, Condition], Coroutine[Any, Any, None]]


def is_pod_group_member(pod: Pod) -> bool:
    return pod_group_name(pod) is not None


def begin_group(cycles: Cycles, first: QueuedPodInfo,
                same_group: Callable[[Pod], bool]) -> tuple[Profile, list[PodResult]] | None:
    """`first` and its group's other queued pods of the same scheduler, taken out of the queue
    together, in kube-scheduler's order (priority, then queue time), each cycle begun; None when
    none of them is to be scheduled (deleted, or already assumed)."""
    scheduler = first.pod.spec.scheduler_name
    members = [first, *cycles.queue.pop_members(
        lambda p: same_group(p) and p.spec.scheduler_name == scheduler, first.scheduling_cycle)]
    members.sort(key=lambda i: (-i.priority, i.timestamp))
    begun = [(info, cycles._begin(info)) for info in members]
    pods = [PodResult(info, c[1], c[2], c[3]) for info, c in begun if c is not None]
    if not pods:
        return None
    return next(c[0] for _, c in begun if c is not None), pods


@dataclass
class PodGroupCycles:
    cycles: Cycles
    pod_groups: PodGroupManager
    write_condition: ConditionWriter
    spawn: Callable[[Coroutine[Any, Any, Any], str], object]

    def __post_init__(self) -> None:
        c = self.cycles
        self.placer = Placer(c.cache, self.pod_groups, c.rng, c.cursor, c.percentage_of_nodes_to_score)
        self._pending: dict[str, tuple[PodGroup, Condition]] = {}
        self._writing: set[str] = set()
        handle = next(iter(c.profiles.values())).handle if c.profiles else None
        self.preemption = None if handle is None else PodGroupPreemption(self.placer, self.pod_groups, handle,
                                                                         self.spawn)

    def schedule_group(self, first: QueuedPodInfo) -> None:
        """The cycle for the group of `first`, just popped: its other queued pods come along."""
        cycles = self.cycles
        pod = first.pod
        namespace, name = pod.metadata.namespace, pod_group_name(pod) or ""
        key = pod_group_key(pod)
        group = self.pod_groups.pod_group(namespace, name)
        begun = begin_group(cycles, first, lambda p: pod_group_key(p) == key)
        if begun is None:
            return
        profile, pods = begun
        if group is None:
            # Deleted since the pods were queued: they wait, quietly, for it to come back, as
            # kube-scheduler's queue keeps such pods aside until their PodGroup is observed.
            for r in pods:
                r.info.unschedulable_plugins, r.info.pending_plugins = frozenset({GANG_SCHEDULING}), frozenset()
                cycles.queue.add_unschedulable_if_not_present(r.info, cycles.queue.scheduling_cycle)
            return
        invalid = self._validate(group, pods)
        if invalid is not None:
            for r in pods:
                cycles._failed(r.info, profile, invalid, reason=REASON_SCHEDULER_ERROR, started=r.started)
            self._write(group, Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="False",
                                         reason=REASON_SCHEDULER_ERROR, message=invalid))
            return
        outcome = self.run_algorithm(profile, group, pods)
        self._submit(profile, group, outcome)

    def _validate(self, group: PodGroup, pods: list[PodResult]) -> str | None:
        """validatePodGroup: one scheduler, the group's priority, one preemption policy, also for
        the pods already scheduled."""
        meta = group.metadata
        members = [r.pod_info.pod for r in pods] + self.pod_groups.state(meta.namespace, meta.name).scheduled_pods()
        scheduler = members[0].spec.scheduler_name
        priority = group.spec.priority if group.spec.priority is not None else 0
        policy = ""
        for p in members:
            if p.spec.scheduler_name != scheduler:
                return ("all pods in a single pod group should have the same .spec.schedulerName set, "
                        f'got: "{p.spec.scheduler_name}" and "{scheduler}"')
            if p.spec.priority != priority:
                return ("all pods in a single pod group should have the same priority as the pod group's "
                        f"priority, got {p.spec.priority} and {priority}")
            own = p.spec.preemption_policy or "PreemptLowerPriority"
            if not policy:
                policy = own
            elif own != policy:
                return f"all pods in a single pod group should have the same preemption policy, got {own} and {policy}"
        return None

    def run_algorithm(self, profile: Profile, group: PodGroup, pods: list[PodResult]) -> GroupOutcome:
        """The algorithm, then, when the group is unschedulable, the PodGroupPostFilter plugins
        (DefaultPreemption's pod-group preemption)."""
        outcome = self.placer.place(profile, group, pods)
        status = outcome.status
        if status is None or status.code != Code.UNSCHEDULABLE or self.preemption is None:
            return outcome
        if not any(pl.name == "DefaultPreemption" for pl in profile.post_filter):
            return outcome
        post = self.preemption.post_filter(profile, group, pods)
        if post.code == Code.ERROR:
            outcome.status = post
            return outcome
        outcome.waiting_on_preemption = post.code == Code.SUCCESS
        outcome.status = Status(Code.UNSCHEDULABLE, f"{status.message()}, {post.message()}")
        return outcome

    def _submit(self, profile: Profile, group: PodGroup, outcome: GroupOutcome) -> None:
        cycles = self.cycles
        status = outcome.status
        rejectors = {p for r in outcome.results if isinstance(r.result, FitError)
                     for p in r.result.diagnosis.unschedulable_plugins}
        waiting = outcome.waiting_on_preemption
        for r in outcome.results:
            nominated = r.nominated_node if waiting else None
            if status is not None and status.code == Code.ERROR:
                message = (r.status or status).message()
                cycles._failed(r.info, profile, message, reason=REASON_SCHEDULER_ERROR, started=r.started)
            elif r.placed:
                assert isinstance(r.result, ScheduleResult)
                if status is None:
                    cycles._decided(r.info, profile, r.pod_info, r.state, r.started, r.elapsed, r.result, None)
                    continue
                # Placed, but the group was not: back with the plugins that turned its others away.
                cycles.stats.unschedulable += 1
                message = status.message() if waiting else f"{POD_GROUP_UNSCHEDULABLE}, {status.message()}"
                cycles._failed(r.info, profile, message, reason=REASON_UNSCHEDULABLE,
                               nominated_node=nominated if waiting else "", started=r.started,
                               rejectors=(frozenset(rejectors or {GANG_SCHEDULING}), frozenset()))
            elif isinstance(r.result, FitError):
                cycles.stats.unschedulable += 1
                diagnosis = r.result.diagnosis
                cycles._failed(r.info, profile, r.result.message(), reason=REASON_UNSCHEDULABLE,
                               nominated_node=nominated, started=r.started,
                               rejectors=(frozenset(diagnosis.unschedulable_plugins),
                                          frozenset(diagnosis.pending_plugins)))
            elif r.status is not None and isinstance(r.result, ScheduleResult):
                # Turned away at Reserve: as kube-scheduler reports it, a FitError over its one node
                # (an error: its message, no rejector).
                message, reason, found = _failure(r.pod_info, r.result.suggested_host, r.status)
                cycles._failed(r.info, profile, message, reason=reason, started=r.started,
                               rejectors=NO_REJECTORS if found is None else (
                                   frozenset(found.unschedulable_plugins), frozenset(found.pending_plugins)))
            else:
                unprocessed = outcome.unprocessed or status
                assert unprocessed is not None
                cycles.stats.unschedulable += 1
                cycles._failed(r.info, profile, unprocessed.message(), reason=REASON_UNSCHEDULABLE,
                               nominated_node=nominated, started=r.started,
                               rejectors=(frozenset(rejectors or {GANG_SCHEDULING}), frozenset()))
        if status is None:
            condition = Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="True", reason=REASON_SCHEDULED)
        elif status.code == Code.ERROR:
            condition = Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="False", reason=REASON_SCHEDULER_ERROR,
                                  message=status.message())
        else:
            condition = Condition(type=POD_GROUP_INITIALLY_SCHEDULED, status="False", reason=REASON_UNSCHEDULABLE,
                                  message=status.message())
        self._write(group, condition)

    def _write(self, group: PodGroup, condition: Condition) -> None:
        """One writer a group, the newest condition sent last: two patches of one group in flight
        at once could land in either order, leaving a placed group marked Unschedulable."""
        key = group.key
        self._pending[key] = (group, condition)
        if key not in self._writing:
            self._writing.add(key)
            self.spawn(self._drain(key), f"podgroup-status/{key}")

    async def _drain(self, key: str) -> None:
        try:
            while (next_write := self._pending.pop(key, None)) is not None:
                await self.write_condition(*next_write)
        finally:
            self._writing.discard(key)
            self._pending.pop(key, None)
