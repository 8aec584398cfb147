"""Coscheduling (scheduler-plugins pkg/coscheduling, v0.34): gang scheduling on scheduler-plugins'
PodGroup CRD, for clusters that move from it to kubesched with their workloads unchanged. Off by
default; enabled by name in a profile, with PrioritySort replaced at queueSort, as
scheduler-plugins' own configuration does. The PodGroup status (phase, running, ...) is kept by
scheduler-plugins' controller, not by the scheduler."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, Registration
from kubesched.framework.fit_error import FitError
from kubesched.framework.handle import Handle, Lister
from kubesched.framework.interface import PreFilterResult, QueuedEntity
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.coscheduling import POD_GROUP_LABEL, CoPodGroup
from kubesched.model.objects import Pod
from kubesched.plugins.coscheduling.args import CoschedulingArgs, typed
from kubesched.plugins.coscheduling.core import PermitStatus, PodGroupManager, pod_group_full_name, wait_time
from kubesched.plugins.helper.min_count import min_count_feasible

NAME = "Coscheduling"
# In a pod's cycle state while the whole-group cycle tries placements it undoes again.
TRIAL = "Coscheduling/trial"


class Coscheduling:
    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle, groups: Lister[CoPodGroup],
                 wall: Callable[[], float] = time.time) -> None:
        self.handle = handle
        self.args = args
        self.schedule_timeout = float(args.permit_waiting_time_seconds)
        self.backoff = float(args.pod_group_backoff_seconds)
        self.reject_threshold = args.pod_group_reject_percentage / 100.0
        self.manager = PodGroupManager(groups, handle.pods, handle.clock, wall, self.schedule_timeout)

    def events_to_register(self) -> tuple[Registration, ...]:
        return (ClusterEvent(EventResource.POD, ActionType.ADD),
                ClusterEvent(EventResource.COSCHEDULING_POD_GROUP, ActionType.ADD | ActionType.UPDATE))

    # --- QueueSort ------------------------------------------------------------------------------

    def less(self, a: QueuedEntity, b: QueuedEntity) -> bool:
        """Priority first, then the group's creation (or last failure), then namespace/name."""
        if a.priority != b.priority:
            return a.priority > b.priority
        pa, pb = cast(Any, a).pod, cast(Any, b).pod
        ta = self.manager.creation_timestamp(pa, _initial_attempt(a))
        tb = self.manager.creation_timestamp(pb, _initial_attempt(b))
        if ta == tb:
            return bool(_key(pa) < _key(pb))
        return ta < tb

    # --- PreFilter, PostFilter ------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        reason = self.manager.pre_filter(pod.pod, snapshot.node_infos)
        if reason is not None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, plugin=NAME)
        return None, None

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        full, group = self.manager.pod_group(pod.pod)
        if group is None:
            return Status(Code.UNSCHEDULABLE, "can not find pod group", plugin=NAME)
        assigned = self.manager.assigned_count(full)
        if assigned >= group.spec.min_member:
            return Status(Code.UNSCHEDULABLE, plugin=NAME)
        not_assigned = (group.spec.min_member - assigned) / group.spec.min_member
        if not_assigned <= self.reject_threshold:
            return Status(Code.UNSCHEDULABLE, plugin=NAME)
        self.reject_group(pod.pod, group, "optimistic rejection in PostFilter")
        return Status(Code.UNSCHEDULABLE, f"PodGroup {full} gets rejected due to Pod {pod.pod.metadata.name} is "
                                          "unschedulable even after PostFilter", plugin=NAME)

    def reject_group(self, pod: Pod, group: CoPodGroup, message: str) -> None:
        """The group failed: its waiting pods rejected, the group backed off (args'
        podGroupBackoffSeconds, once all its pods exist) and sorted after the others of its priority."""
        full = pod_group_full_name(pod)
        self._reject_waiting(pod, group.metadata.name, message)
        if self.backoff > 0 and len(self.manager.siblings(pod)) >= group.spec.min_member:
            self.manager.back_off(full, self.backoff)
        self.manager.delete_permitted(full)
        self.manager.mark_failure(full)

    # --- the whole-group cycle (scheduler/schedule_one_cogroup.py) ------------------------------

    def placement_feasible(self, group: CoPodGroup, remaining: int, scheduled: int) -> Status | None:
        """GangScheduling's PlacementFeasible on minMember."""
        return min_count_feasible("minMember", group.spec.min_member, remaining, scheduled, NAME)

    # --- Reserve, Permit ------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        full, group = self.manager.pod_group(pod.pod)
        if group is None:
            return
        if state.get(TRIAL):
            # A placement the whole-group cycle tries and takes back: nothing failed.
            self.manager.unreserve(pod.pod)
            return
        self.manager.unreserve(pod.pod)
        self._reject_waiting(pod.pod, group.metadata.name, "rejection in Unreserve")
        self.manager.delete_permitted(full)
        self.manager.mark_failure(full)

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        status, first = self.manager.permit(pod.pod)
        if status is PermitStatus.POD_GROUP_NOT_SPECIFIED:
            return None, 0.0
        if status is PermitStatus.POD_GROUP_NOT_FOUND:
            return Status(Code.UNSCHEDULABLE, "PodGroup not found", plugin=NAME), 0.0
        full, group = self.manager.pod_group(pod.pod)
        if status is PermitStatus.WAIT:
            if first:
                self.handle.activate([p for p in self.manager.siblings(pod.pod)
                                      if p.metadata.uid != pod.pod.metadata.uid])
            return Status(Code.WAIT, plugin=NAME), wait_time(group, self.schedule_timeout)
        self.manager.clear_failure(full)
        for waiting in self.handle.waiting_pods:
            held = self.handle.pods.get(waiting.key)
            if held is not None and pod_group_full_name(held) == full:
                waiting.allow(NAME)
        return None, 0.0

    def _reject_waiting(self, pod: Pod, group: str, message: str) -> None:
        for waiting in self.handle.waiting_pods:
            held = self.handle.pods.get(waiting.key)
            if (held is not None and held.metadata.namespace == pod.metadata.namespace
                    and held.metadata.labels.get(POD_GROUP_LABEL) == group):
                waiting.reject(NAME, message)


def _initial_attempt(entity: QueuedEntity) -> float:
    first = getattr(entity, "initial_attempt_timestamp", None)
    return entity.timestamp if first is None else float(first)


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


class _NoGroups:
    """Without the PodGroup CRD's informer: no group is known."""

    def get(self, key: str) -> CoPodGroup | None:
        return None

    def list(self) -> list[CoPodGroup]:
        return []


def new(args: Mapping[str, Any], handle: Handle | None = None, *,
        groups: Lister[CoPodGroup] | None = None) -> Coscheduling:
    return Coscheduling(typed(args), handle or Handle(), groups if groups is not None else _NoGroups())
