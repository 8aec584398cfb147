"""GangScheduling (kube-scheduler framework/plugins/gangscheduling, without composite groups):
PreEnqueue holds a gang's pods until their PodGroup exists and minCount of them are known; Permit
holds each assumed pod until minCount are scheduled, then lets them all go; `placement_feasible`
ends a pod-group cycle as soon as minCount can no longer be met."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventNarrowing,
    EventResource,
    QueueingHint,
    Registration,
)
from kubesched.framework.handle import Handle
from kubesched.framework.pod_groups import PodGroupManager, pod_group_name
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod
from kubesched.model.workload import PodGroup
from kubesched.plugins.helper.min_count import min_count_feasible

NAME = "GangScheduling"
# How long a gang's pods wait at Permit for minCount of them to be scheduled.
PERMIT_TIMEOUT = 5 * 60.0

WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"


def _quoted(name: str) -> str:
    # Go's %q: double quotes.
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def placement_feasible(pod_group: PodGroup, remaining: int, scheduled: int) -> Status | None:
    """GangScheduling's PlacementFeasible on the PodGroup's minCount."""
    return min_count_feasible("minCount", pod_group.min_count, remaining, scheduled, NAME)


_NONE: frozenset[tuple[str, str]] = frozenset()


def _pod_group_keys(pod: Pod) -> frozenset[tuple[str, str]]:
    name = pod_group_name(pod)
    return _NONE if name is None else frozenset({(pod.metadata.namespace, name)})


def _added_pod_group(old: Any, new: Any) -> frozenset[tuple[str, str]] | None:
    return _pod_group_keys(new) if isinstance(new, Pod) else None


def _event_group(old: Any, new: Any) -> frozenset[tuple[str, str]] | None:
    return frozenset({(new.metadata.namespace, new.metadata.name)}) if isinstance(new, PodGroup) else None


# The hints below say QUEUE only for a pod of the added pod's, or the PodGroup's, own group: the
# queue asks those alone, not every waiting pod of every gang at each member's arrival.
_ADDED_POD = EventNarrowing("GangScheduling/added pod", _added_pod_group, _pod_group_keys)
_POD_GROUP = EventNarrowing("GangScheduling/pod group", _event_group, _pod_group_keys)


class GangScheduling:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @property
    def groups(self) -> PodGroupManager:
        return self.handle.pod_groups

    def events_to_register(self) -> tuple[Registration, ...]:
        # schedulingGroup is immutable: no pod update can complete a gang.
        return (
            ClusterEventWithHint(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self._after_pod_added,
                                 _ADDED_POD),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), self._after_pod_added,
                                 _ADDED_POD),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), self._after_group_added,
                                 _POD_GROUP),
            ClusterEventWithHint(ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE), self._after_group_updated,
                                 _POD_GROUP),
        )

    def _after_pod_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        name, added = pod_group_name(pod), new
        if name is None or not isinstance(added, Pod) or pod_group_name(added) is None:
            return QueueingHint.QUEUE_SKIP
        namespace = pod.metadata.namespace
        if added.metadata.namespace != namespace or pod_group_name(added) != name:
            return QueueingHint.QUEUE_SKIP
        # kube-scheduler queues every member at each member's arrival, and PreEnqueue holds it again
        # while the gang is short of minCount: the move changes nothing then (the pod stays
        # gated, and no metric counts a pod that stays where it was). Skipped here, as it made a
        # gang of 1,000 cost half a million PreEnqueue runs.
        if self._short_of_min_count(namespace, name):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def _short_of_min_count(self, namespace: str, name: str) -> bool:
        """Whether PreEnqueue holds the group's pods now: no PodGroup, or a gang not yet minCount."""
        group = self.groups.pod_group(namespace, name)
        if group is None:
            return True
        gang = group.spec.scheduling_policy.gang
        return gang is not None and self.groups.members_count(namespace, name) < gang.min_count

    @staticmethod
    def _after_group_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        name = pod_group_name(pod)
        if name is None or not isinstance(new, PodGroup):
            return QueueingHint.QUEUE_SKIP
        same = new.metadata.namespace == pod.metadata.namespace and new.metadata.name == name
        return QueueingHint.QUEUE if same else QueueingHint.QUEUE_SKIP

    @staticmethod
    def _after_group_updated(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if GangScheduling._after_group_added(pod, None, new) is QueueingHint.QUEUE_SKIP:
            return QueueingHint.QUEUE_SKIP
        if not isinstance(old, PodGroup):
            return QueueingHint.QUEUE
        before, after = old.spec.scheduling_policy.gang, new.spec.scheduling_policy.gang
        # Only a lower minCount of a gang can let its waiting pods go.
        if before is None or after is None or after.min_count >= before.min_count:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pre_enqueue(self, pod: Pod) -> Status | None:
        name = pod_group_name(pod)
        if name is None:
            return None
        namespace = pod.metadata.namespace
        group = self.groups.pod_group(namespace, name)
        if group is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          f"waiting for pods's pod group {_quoted(name)} to appear in scheduling queue", plugin=NAME)
        gang = group.spec.scheduling_policy.gang
        if gang is None:
            return None
        if self.groups.members_count(namespace, name) < gang.min_count:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, WAITING_FOR_MIN_COUNT, plugin=NAME)
        return None

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        name = pod_group_name(pod.pod)
        if name is None:
            return None, 0.0
        namespace = pod.pod.metadata.namespace
        group = self.groups.pod_group(namespace, name)
        if group is None:
            return Status(Code.ERROR, f"failed to get podGroup {namespace}/{name}: podgroup.scheduling.k8s.io "
                                      f"{_quoted(name)} not found"), 0.0
        gang = group.spec.scheduling_policy.gang
        if gang is None:
            return None, 0.0
        members = self.groups.state(namespace, name)
        if members.scheduled_pods_count() < gang.min_count:
            # The others may have waited on this one; let them try again now.
            self.handle.activate(members.unscheduled)
            return Status(Code.WAIT, WAITING_AT_PERMIT, plugin=NAME), PERMIT_TIMEOUT
        for assumed in members.assumed:
            waiting = self.handle.waiting_pods.get(assumed.metadata.uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None, 0.0


def new(args: Mapping[str, Any], handle: Handle | None = None) -> GangScheduling:
    return GangScheduling(handle or Handle())
