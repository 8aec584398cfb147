"""The whole-group cycle for scheduler-plugins' Coscheduling groups (PodGroup CRD,
scheduling.x-k8s.io/v1alpha1): where scheduler-plugins schedules a group pod by pod, each placed pod
waiting at Permit on a node it holds until minMember are placed (its issues #114, #117, #713: two
gangs each holding part of the room wait on each other until the timeout, again and again; #930:
partial binds), kubesched takes the group's queued pods out together and places them against one
snapshot with the pod-group cycle's algorithm (scheduler/podgroup_algorithm.py), minMember as the
placement check. Either minMember fit, and then they are assumed, reserved and permitted together
(Coscheduling's Permit lets them go as the last arrives, within the same cycle); or none of them is
assumed and no node is held: each is told why and the group is rejected as Coscheduling's
PostFilter does (backed off, sorted after the others of its priority).

Coscheduling's PreFilter verdicts are the group's (its siblings, gates, minResources, backoff):
when it turns the group away, each pod goes through the algorithm on its own, so it is told in
scheduler-plugins' words; no pod gets past PreFilter then. A group whose PodGroup is not known is
scheduled pod by pod, as scheduler-plugins does (Permit turns each away).

A group that does not fit preempts as a gang on the Workload API does (scheduler/podgroup_preemption.py,
with DefaultPreemption in the profile): for all its pods or not at all, its priority the lowest of
its pods'; its pods wait at DefaultPreemption's PreEnqueue until the victims are going. Where
scheduler-plugins lets each pod preempt on its own (DefaultPreemption runs before Coscheduling's
PostFilter), which evicts for a group that may never complete. Not in this cycle: extenders.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.queue import QueuedPodInfo
from kubesched.framework.fit_error import FitError
from kubesched.framework.pod_groups import NoPodGroups, PodGroupManager
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import ScheduleResult
from kubesched.framework.status import Code, Status
from kubesched.model.coscheduling import POD_GROUP_LABEL, CoPodGroup
from kubesched.model.objects import Pod
from kubesched.model.workload import REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE
from kubesched.plugins.coscheduling import NAME as COSCHEDULING
from kubesched.plugins.coscheduling.core import pod_group_full_name
from kubesched.plugins.coscheduling.plugin import TRIAL, Coscheduling
from kubesched.plugins.default_preemption.executor import coscheduling_hold
from kubesched.scheduler.podgroup_algorithm import POD_GROUP_UNSCHEDULABLE, GroupOutcome, Placer, PodResult
from kubesched.scheduler.podgroup_preemption import GroupPreemptor, PodGroupPreemption
from kubesched.scheduler.schedule_one import Cycles, _failure
from kubesched.scheduler.schedule_one_podgroup import begin_group

REJECTED = "rejection in the whole-group cycle"


@dataclass
class Told:
    """What the cycle writes for a pod it does not send on: message, reason, the plugins it waits
    on, and its nomination ("" clears it, None keeps it)."""

    message: str
    plugins: set[str]
    reason: str = REASON_UNSCHEDULABLE
    nominated: str | None = ""


def _reserve_rejection(r: PodResult) -> Told | None:
    """Turned away at Reserve: as kube-scheduler reports it, a FitError over its one node."""
    if not isinstance(r.result, ScheduleResult) or r.status is None:
        return None
    message, reason, diagnosis = _failure(r.pod_info, r.result.suggested_host, r.status)
    return Told(message, set(diagnosis.unschedulable_plugins) if diagnosis is not None else set(), reason)


def member_failure(r: PodResult, status: Status | None, unprocessed: Status | None, rejectors: set[str],
                   preempting: bool) -> Told | None:
    """A member's outcome as the Workload API's pod-group cycle writes it (schedule_one_podgroup.py):
    None when it goes on as a single pod's cycle would (placed in a placed group, or its own
    FitError then)."""
    rejected = _reserve_rejection(r)
    if status is None or (rejected is not None and status.code != Code.ERROR):
        return rejected
    nominated = r.nominated_node if preempting else None
    if status.code == Code.ERROR:
        # An error leaves no rejector (ClearRejectorPlugins): the pod backs off as one.
        return Told((r.status or status).message(), set(), REASON_SCHEDULER_ERROR)
    if r.placed:
        # Placed, but the group was not: back with the plugins that turned its others away.
        if preempting:
            return Told(status.message(), rejectors or {COSCHEDULING}, nominated=nominated)
        return Told(f"{POD_GROUP_UNSCHEDULABLE}, {status.message()}", rejectors or {COSCHEDULING})
    if isinstance(r.result, FitError):
        return Told(r.result.message(), set(r.result.diagnosis.unschedulable_plugins), nominated=nominated)
    return Told((unprocessed or status).message(), rejectors or {COSCHEDULING}, nominated=nominated)

@dataclass
class CoGroupCycles:
    cycles: Cycles
    spawn: Callable[[Coroutine[Any, Any, Any], str], object] | None = None
    # The Workload API's groups (GenericWorkload on): victims in them count as pod-group preemption counts them.
    pod_groups: PodGroupManager = field(default_factory=NoPodGroups)

    def __post_init__(self) -> None:
        c = self.cycles
        self.placer = Placer(c.cache, NoPodGroups(), c.rng, c.cursor, c.percentage_of_nodes_to_score)
        handle = next(iter(c.profiles.values())).handle if c.profiles else None
        self.preemption = None if handle is None or self.spawn is None else PodGroupPreemption(
            Placer(c.cache, self.pod_groups, c.rng, c.cursor, c.percentage_of_nodes_to_score),
            self.pod_groups, handle, self.spawn)

    def plugin(self, pod: Pod) -> Coscheduling | None:
        """The Coscheduling plugin of the pod's profile, when it is in a group of it."""
        if POD_GROUP_LABEL not in pod.metadata.labels:
            return None
        profile = self.cycles.profiles.get(pod.spec.scheduler_name)
        plugin = None if profile is None else profile.plugin(COSCHEDULING)
        return plugin if isinstance(plugin, Coscheduling) else None

    def schedule_group(self, first: QueuedPodInfo) -> None:
        """The cycle for the group of `first`, just popped: its other queued pods come along."""
        cycles = self.cycles
        plugin = self.plugin(first.pod)
        assert plugin is not None
        full, group = plugin.manager.pod_group(first.pod)
        if group is None:
            cycles.schedule_one(first)
            return
        begun = begin_group(cycles, first, lambda p: pod_group_full_name(p) == full)
        if begun is None:
            return
        profile, pods = begun
        for r in pods:
            r.state.write(TRIAL, True)
        if plugin.manager.pre_filter(first.pod, cycles.cache.snapshot().node_infos) is not None:
            self._one_by_one(profile, plugin, pods)
            return
        scheduled = plugin.manager.assigned_count(full)

        def place(trial: list[PodResult]) -> GroupOutcome:
            for r in trial:
                r.state.write(TRIAL, True)
            return self.placer.place_with(profile, trial, scheduled,
                                          lambda remaining, done: plugin.placement_feasible(group, remaining, done))

        outcome = place(pods)
        preempting = self._preempt(profile, group, pods, outcome, place)
        for r in pods:
            r.state.write(TRIAL, False)
        status = outcome.status
        rejectors = {p for r in pods if isinstance(r.result, FitError)
                     for p in r.result.diagnosis.unschedulable_plugins}
        for r in pods:
            told = member_failure(r, status, outcome.unprocessed, rejectors, preempting)
            if told is None:
                assert r.result is not None
                cycles._decided(r.info, profile, r.pod_info, r.state, r.started, r.elapsed, r.result, None)
            else:
                self._failed(profile, r, told.message, told.plugins, told.reason, told.nominated)
        if status is not None and not preempting:
            plugin.reject_group(first.pod, group, REJECTED)

    def _preempt(self, profile: Profile, group: CoPodGroup, pods: list[PodResult], outcome: GroupOutcome,
                 place: Callable[[list[PodResult]], GroupOutcome]) -> bool:
        """Pod-group preemption for a group the algorithm could not place; its message joins the
        outcome's, and whether victims are going for it (the pods nominated)."""
        status = outcome.status
        if status is None or status.code != Code.UNSCHEDULABLE or self.preemption is None:
            return False
        if not any(pl.name == "DefaultPreemption" for pl in profile.post_filter):
            return False
        first = pods[0].info.pod
        full = pod_group_full_name(first)
        preemptor = GroupPreemptor(group.metadata.uid, full, min(r.pod_info.pod.spec.priority for r in pods), place,
                                   hold=coscheduling_hold(first.metadata.namespace, group.metadata.name),
                                   is_member=lambda p: pod_group_full_name(p) == full)
        post = self.preemption.post_filter_for(profile, preemptor, pods)
        if post.code == Code.ERROR:
            outcome.status = post
            return False
        outcome.status = Status(Code.UNSCHEDULABLE, f"{status.message()}, {post.message()}")
        return post.code == Code.SUCCESS

    def _one_by_one(self, profile: Profile, plugin: Coscheduling, pods: list[PodResult]) -> None:
        """Each pod through the algorithm alone: PreFilter turns it away with its own message."""
        for r in pods:
            placed = self.placer.place_with(profile, [r], 0, lambda remaining, done: None)
            if isinstance(r.result, ScheduleResult) and placed.status is None:
                # The group's verdict cannot differ between its pods; should it, hold none.
                self._failed(profile, r, POD_GROUP_UNSCHEDULABLE, {COSCHEDULING})
                continue
            if isinstance(r.result, FitError):
                self._failed(profile, r, r.result.message(), set(r.result.diagnosis.unschedulable_plugins))
            else:
                self._failed(profile, r, (r.status.message() if r.status else POD_GROUP_UNSCHEDULABLE),
                             set(), reason="SchedulerError")
        group = plugin.manager.pod_group(pods[0].info.pod)[1]
        if group is not None:
            plugin.reject_group(pods[0].info.pod, group, REJECTED)

    def _failed(self, profile: Profile, r: PodResult, message: str, plugins: set[str],
                reason: str = REASON_UNSCHEDULABLE, nominated_node: str | None = "") -> None:
        if reason == REASON_UNSCHEDULABLE:
            self.cycles.stats.unschedulable += 1
        self.cycles._failed(r.info, profile, message, reason=reason, started=r.started, nominated_node=nominated_node,
                            rejectors=(frozenset(plugins), frozenset()))
