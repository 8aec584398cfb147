"""VolumeZone (kube-scheduler v1.37 volumezone/volume_zone.go): PreFilter and Filter.

The zone and region labels of the PVs a pod's bound claims use (topology.kubernetes.io/* and the
beta failure-domain.beta.kubernetes.io/* keys; a value may list zones joined by "__") must match
the node's: a node that carries none of the four labels is not constrained. A claim not bound yet
is skipped when its class binds WaitForFirstConsumer (VolumeBinding decides it); any other unbound
claim, a missing claim, PV or class rejects the pod, UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.model.storage import (
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    claim_class,
)
from kubesched.plugins.helper.storage_lister import (
    StorageLister,
    claim_not_found,
    no_storage,
    storage_class_not_found,
    volume_not_found,
)

NAME = "VolumeZone"
PRE_FILTER_KEY = "PreFilter" + NAME

REASON_CONFLICT = "node(s) had no available volume zone"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
# In kube-scheduler's order: the order the PV's labels are checked in.
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_REGION: REGION, BETA_ZONE: ZONE}
# cloud-provider's LabelMultiZoneDelimiter.
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


def label_zones(value: str) -> frozenset[str] | None:
    """volumehelpers.LabelZonesToSet; None when an element is empty (the label is then ignored)."""
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    out: list[PVTopology] = []
    labels = pv.metadata.labels
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        zones = label_zones(value)
        if zones is not None:
            out.append(PVTopology(pv.metadata.name, key, zones))
    return out


class VolumeZone:
    name = NAME

    def __init__(self, storage: StorageLister | None = None) -> None:
        self.storage: StorageLister = storage if storage is not None else no_storage()

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return (
            # A WaitForFirstConsumer class that was missing (the binding mode is immutable).
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), after_storage_class_added),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            # A claim created, or given its volume.
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update), after_claim_change),
            # A PV created, or its zone labels changed.
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update), after_volume_change),
        )

    def topologies(self, pod: PodInfo) -> tuple[list[PVTopology], Status | None]:
        """getPVbyPod: the zone constraints of the pod's bound claims, or why there can be none."""
        out: list[PVTopology] = []
        namespace = pod.pod.metadata.namespace
        for v in pod.pod.spec.volumes:
            if v.persistent_volume_claim is None:
                continue
            name = v.persistent_volume_claim.claim_name
            if not name:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no name")
            claim = self.storage.claim(namespace, name)
            if claim is None:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, claim_not_found(name))
            pv_name = claim.spec.volume_name
            if not pv_name:
                class_name = claim_class(claim)
                if not class_name:
                    return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                      "PersistentVolumeClaim had no pv name and storageClass name")
                sc = self.storage.storage_class(class_name)
                if sc is None:
                    return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, storage_class_not_found(class_name))
                if sc.volume_binding_mode is None:
                    return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                      f'VolumeBindingMode not set for StorageClass "{class_name}"')
                if sc.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolume had no name")
            pv = self.storage.persistent_volume(pv_name)
            if pv is None:
                return [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, volume_not_found(pv_name))
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        found, status = self.topologies(pod)
        if status is not None:
            return None, status
        if not found:
            return None, SKIP
        state.write(PRE_FILTER_KEY, tuple(found))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not pod.pod.spec.volumes:
            return None
        found = state.get(PRE_FILTER_KEY)
        if found is None:
            # Filter without PreFilter (kube-scheduler computes them here then).
            topologies, status = self.topologies(pod)
            if status is not None:
                return status
            found = tuple(topologies)
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None
        for t in found:
            value = labels.get(t.key)
            if value is None:
                value = labels.get(_GA.get(t.key, t.key))
            if value is None or value not in t.values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT)
        return None


# --- queueing hints (kube-scheduler volume_zone.go isSchedulableAfter*) -----------------------------

def after_claim_change(pod: Pod, old: PersistentVolumeClaim | None, new: PersistentVolumeClaim) -> QueueingHint:
    """A claim one of the pod's persistentVolumeClaim volumes names (not its ephemeral ones)."""
    if new.metadata.namespace == pod.metadata.namespace and any(
            v.persistent_volume_claim is not None and v.persistent_volume_claim.claim_name == new.metadata.name
            for v in pod.spec.volumes):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_storage_class_added(pod: Pod, old: None, new: StorageClass) -> QueueingHint:
    if new.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_volume_change(pod: Pod, old: PersistentVolume | None, new: PersistentVolume) -> QueueingHint:
    """A new PV, or one whose zone and region labels changed (its node affinity is immutable)."""
    if old is None or pv_topologies(old) != pv_topologies(new):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any], storage: StorageLister | None = None) -> VolumeZone:
    return VolumeZone(storage)
