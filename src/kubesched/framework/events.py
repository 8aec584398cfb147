"""Cluster events and which plugins they concern (kube-scheduler framework/events.go, EnqueueExtensions).

Each plugin that can reject a pod declares, in `events_to_register`, the events that can make a pod
it rejected schedulable. The queue moves an unschedulable pod on an event only if one of the
plugins that rejected it registered a matching event, so a completed Job pod wakes the pods waiting
for resources, not the thousands waiting for a taint to go. kube-scheduler then asks each plugin's
queueing hint about the event's objects: a registration may carry a hint (ClusterEventWithHint),
a function of (the waiting pod, the old object, the new object) that says QUEUE or QUEUE_SKIP. A
registration without one, or a hint that raises, moves the pod (kube-scheduler's
defaultQueueingHintFn, and its treatment of a hint's error). The old object is None for an Add, the
new one None for a Delete.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

from kubesched.framework.resources import milli_of, pod_requests, quantity
from kubesched.model.objects import Node, Pod


class ActionType(enum.IntFlag):
    """kube-scheduler's ActionType bits, in its order: the order matters to `matches`."""

    ADD = enum.auto()
    DELETE = enum.auto()
    UPDATE_NODE_ALLOCATABLE = enum.auto()
    UPDATE_NODE_LABEL = enum.auto()
    UPDATE_NODE_TAINT = enum.auto()  # taints, or spec.unschedulable turned off
    UPDATE_NODE_CONDITION = enum.auto()
    UPDATE_NODE_ANNOTATION = enum.auto()
    UPDATE_NODE_DECLARED_FEATURE = enum.auto()
    UPDATE_NODE_PREEMPTION_POLICY = enum.auto()
    UPDATE_POD_LABEL = enum.auto()
    UPDATE_POD_SCALE_DOWN = enum.auto()
    UPDATE_POD_SCALE_UP = enum.auto()
    UPDATE_POD_TOLERATION = enum.auto()
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = enum.auto()
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = enum.auto()
    ALL = (1 << 15) - 1
    UPDATE = ALL ^ 0b11  # everything but ADD and DELETE


class EventResource(enum.StrEnum):
    POD = "Pod"  # matches the three below
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    TARGET_POD = "TargetPod"
    NODE = "Node"
    JOB = "Job"  # kubesched's: the CronJob pool waits for a pod's owner Job
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "storage.k8s.io/CSINode"
    CSI_DRIVER = "storage.k8s.io/CSIDriver"
    VOLUME_ATTACHMENT = "storage.k8s.io/VolumeAttachment"
    CSI_STORAGE_CAPACITY = "storage.k8s.io/CSIStorageCapacity"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    POD_GROUP = "scheduling.k8s.io/PodGroup"
    # scheduler-plugins' PodGroup CRD, as its Coscheduling plugin names it.
    COSCHEDULING_POD_GROUP = "podgroups.v1alpha1.scheduling.x-k8s.io"
    RESOURCE_CLAIM = "resource.k8s.io/ResourceClaim"
    RESOURCE_SLICE = "resource.k8s.io/ResourceSlice"
    DEVICE_CLASS = "resource.k8s.io/DeviceClass"
    WILDCARD = "*"


_POD_KINDS = (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD)


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: EventResource
    action_type: ActionType
    custom_label: str = ""

    @property
    def is_wildcard(self) -> bool:
        return self.resource is EventResource.WILDCARD and self.action_type == ActionType.ALL

    @property
    def label(self) -> str:
        """As kube-scheduler logs it (AssignedPodDelete, NodeUpdateNodeTaint...)."""
        if self.custom_label:
            return self.custom_label
        action = self.action_type
        name = "All" if action == ActionType.ALL else "Update" if action == ActionType.UPDATE else (
            "".join(part.capitalize() for part in (action.name or str(int(action))).split("_")))
        return f"{self.resource}{name}"

    def matches(self, incoming: ClusterEvent) -> bool:
        """kube-scheduler MatchClusterEvents, self being the registered event: the incoming one is the
        same or more specific (a general Update only matches a registered general Update)."""
        if self.is_wildcard:
            return True
        r = self.resource
        same_resource = (r is EventResource.WILDCARD or r == incoming.resource
                         or (r is EventResource.POD and incoming.resource in _POD_KINDS))
        return (same_resource and bool(self.action_type & incoming.action_type)
                and incoming.action_type <= self.action_type)

    def __str__(self) -> str:
        return self.label


class QueueingHint(enum.Enum):
    """kube-scheduler's fwk.QueueingHint."""

    QUEUE_SKIP = 0
    QUEUE = 1


# (pod waiting, old object or None, new object or None) -> whether the event may make it schedulable.
QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True, eq=False)
class EventNarrowing:
    """Which waiting pods an event's hint can say QUEUE for, so the queue asks only those, not
    every unschedulable pod on every event (one claim's status change among thousands waiting).

    The contract, for a hint that carries it: the hint says QUEUE_SKIP for a pod none of whose
    `pod_keys` is in `event_keys(old, new)`; `event_keys` returns None when the event may concern
    any pod. A pod's keys may depend on the pod alone (the queue computes them when it parks one).
    kubesched's own: kube-scheduler asks every pod."""

    name: str
    event_keys: Callable[[Any, Any], frozenset[Any] | None]
    pod_keys: Callable[[Pod], frozenset[Any]]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A registered event with its queueing hint (kube-scheduler fwk.ClusterEventWithHint), and
    optionally which pods the hint can queue (`narrowing`)."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None
    narrowing: EventNarrowing | None = None

    def matches(self, incoming: ClusterEvent) -> bool:
        return self.event.matches(incoming)

    @property
    def label(self) -> str:
        return self.event.label

    def __str__(self) -> str:
        return self.event.label


# What a plugin's events_to_register may list.
Registration = ClusterEvent | ClusterEventWithHint


def hint_of(registration: Registration) -> QueueingHintFn | None:
    return registration.hint if isinstance(registration, ClusterEventWithHint) else None


def narrowing_of(registration: Registration) -> EventNarrowing | None:
    """A registration's narrowing, only when it has a hint to keep to it."""
    if isinstance(registration, ClusterEventWithHint) and registration.hint is not None:
        return registration.narrowing
    return None


WILDCARD = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
NODE_DELETE = ClusterEvent(EventResource.NODE, ActionType.DELETE)
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
ASSIGNED_POD_SCALE_DOWN = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN)
UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
JOB_ADD = ClusterEvent(EventResource.JOB, ActionType.ADD, custom_label="JobAdd")
# The storage objects' events are plain Add / Update / Delete, as kube-scheduler's handlers for
# them report (eventhandlers.go buildEvtResHandler): no finer update kinds.
STORAGE_RESOURCES = (EventResource.PERSISTENT_VOLUME, EventResource.PERSISTENT_VOLUME_CLAIM,
                     EventResource.CSI_NODE, EventResource.CSI_DRIVER, EventResource.VOLUME_ATTACHMENT,
                     EventResource.CSI_STORAGE_CAPACITY, EventResource.STORAGE_CLASS)
# Special moves: every pod, whatever rejected it.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, custom_label="UnschedulableTimeout")
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, custom_label="ForceActivate")


@runtime_checkable
class EnqueueExtensions(Protocol):
    """A plugin that says which events can make a pod it rejected schedulable."""

    def events_to_register(self) -> Sequence[Registration]: ...


def registered_events(plugins: Iterable[object]) -> dict[str, tuple[Registration, ...]]:
    """Plugin name -> its events (with their hints), for the plugins that can reject a pod. A plugin
    that does not say gets every event, as kube-scheduler registers a plugin without
    EnqueueExtensions."""
    out: dict[str, tuple[Registration, ...]] = {}
    for pl in plugins:
        name = getattr(pl, "name", None)
        if not isinstance(name, str) or name in out:
            continue
        out[name] = tuple(pl.events_to_register()) if isinstance(pl, EnqueueExtensions) else (WILDCARD,)
    return out


# --- what changed in an update (kube-scheduler NodeSchedulingPropertiesChange / PodSchedulingPropertiesChange)


def _amounts(resources: Mapping[str, str]) -> dict[str, Decimal]:
    # Compared as quantities, as equality.Semantic does: 1000m is 1.
    return {name: quantity(text) for name, text in resources.items()}


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """The specific Node/Update events of a node update; none for a heartbeat or an image change."""
    actions: list[ActionType] = []
    if old.spec.unschedulable != new.spec.unschedulable and not new.spec.unschedulable:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if _amounts(old.status.allocatable) != _amounts(new.status.allocatable):
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if old.metadata.labels != new.metadata.labels:
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if old.spec.taints != new.spec.taints:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if ({c.type: c.status for c in old.status.conditions} != {c.type: c.status for c in new.status.conditions}):
        actions.append(ActionType.UPDATE_NODE_CONDITION)
    if old.metadata.annotations != new.metadata.annotations:
        actions.append(ActionType.UPDATE_NODE_ANNOTATION)
    # Compared as lists, as kube-scheduler does: the apiserver keeps them sorted.
    if old.status.declared_features != new.status.declared_features:
        actions.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return [ClusterEvent(EventResource.NODE, a) for a in actions]


def _scaled_past(a: Mapping[str, Decimal], b: Mapping[str, Decimal]) -> bool:
    """Some request of a is gone from b or larger than b's (compared in millis, as Go does)."""
    return any(name not in b or milli_of(q) > milli_of(b[name]) for name, q in a.items())


def _request_inputs(pod: Pod) -> tuple[object, ...]:
    """Everything pod_requests reads; equal inputs give equal requests."""
    spec, status = pod.spec, pod.status
    resize = [c for c in status.conditions if c.type == "PodResizePending"]
    return (spec.containers, spec.init_containers, spec.overhead, spec.resources, status.container_statuses,
            status.init_container_statuses, status.resources, status.allocated_resources, resize)


def same_for_scheduling(old: Pod, new: Pod) -> bool:
    """Whether every field a plugin or the cache reads of a bound pod is unchanged."""
    return (old.spec == new.spec and old.metadata.labels == new.metadata.labels
            and old.metadata.deletion_timestamp == new.metadata.deletion_timestamp
            and old.metadata.namespace == new.metadata.namespace
            and new.status.phase not in ("Succeeded", "Failed")  # a finished pod leaves the cache
            and _request_inputs(old) == _request_inputs(new))


def _generated_claims_changed(old: Pod, new: Pod) -> bool:
    """resourceclaim.PodStatusEqual / PodExtendedStatusEqual: both are compared whole, in order."""
    a, b = old.status, new.status
    return ((a.resource_claim_statuses or []) != (b.resource_claim_statuses or [])
            or a.extended_resource_claim_status != b.extended_resource_claim_status)


def _request_actions(old: Pod, new: Pod) -> tuple[ActionType, ...]:
    # Most updates of a pod are its phase and conditions; parsing its quantities twice for each of
    # them was a measurable share of the CPU a pod costs.
    if _request_inputs(old) == _request_inputs(new):
        return ()
    old_reqs, new_reqs = pod_requests(old), pod_requests(new)
    down = (ActionType.UPDATE_POD_SCALE_DOWN,) if _scaled_past(old_reqs, new_reqs) else ()
    up = (ActionType.UPDATE_POD_SCALE_UP,) if _scaled_past(new_reqs, old_reqs) else ()
    return down + up


def pod_scheduling_properties_change(new: Pod, old: Pod, target: bool) -> list[ClusterEvent]:
    """kube-scheduler PodSchedulingPropertiesChange: the UpdatePodXYZ events of a pod's update, in
    its extractors' order (labels, scale down, scale up, scheduling gates eliminated, tolerations,
    generated resource claims), on AssignedPod when the pod is bound, else TargetPod when the
    update is the queued pod's own (`target`), else UnscheduledPod; the general Update when none
    fits (an annotation or a status change), which only a registration of the general Update
    matches."""
    resource = (EventResource.ASSIGNED_POD if new.spec.node_name
                else EventResource.TARGET_POD if target else EventResource.UNSCHEDULED_POD)
    actions: list[ActionType] = []
    if old.metadata.labels != new.metadata.labels:
        actions.append(ActionType.UPDATE_POD_LABEL)
    actions.extend(_request_actions(old, new))
    if old.spec.scheduling_gates and not new.spec.scheduling_gates:
        actions.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    # API validation only lets tolerations be added, so a new length is every change.
    if len(old.spec.tolerations) != len(new.spec.tolerations):
        actions.append(ActionType.UPDATE_POD_TOLERATION)
    if _generated_claims_changed(old, new):
        actions.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    if not actions:
        actions.append(ActionType.UPDATE)
    return [ClusterEvent(resource, a) for a in actions]


def assigned_pod_update_events(old: Pod, new: Pod) -> list[ClusterEvent]:
    """The AssignedPod/Update events of a bound pod's update; the general Update when none fits."""
    return pod_scheduling_properties_change(new, old, target=False)
