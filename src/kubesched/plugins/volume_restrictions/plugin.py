"""VolumeRestrictions (kube-scheduler v1.37 volumerestrictions/volume_restrictions.go): PreFilter,
Filter, AddPod / RemovePod for preemption.

Two rules. In-tree disks a node cannot mount twice: GCE PD (unless every mount is read-only), AWS EBS
(never twice), Ceph RBD (a shared monitor, same pool and image, unless both read-only), ISCSI (same
IQN unless both read-only): a node holding a pod with such a disk rejects another pod using it.
And a ReadWriteOncePod claim already used by a pod anywhere in the cluster (bound or assumed)
rejects the pod on every node, Unschedulable so preemption may free it.
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
from kubesched.model.objects import Pod, Volume
from kubesched.model.storage import READ_WRITE_ONCE_POD, PersistentVolumeClaim
from kubesched.plugins.helper.storage_lister import StorageLister, claim_not_found, no_storage

NAME = "VolumeRestrictions"
PRE_FILTER_KEY = "PreFilter" + NAME

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod")


@dataclass(slots=True)
class PreFilterState:
    # Names only, not namespaces, as kube-scheduler keeps them (preFilterState.readWriteOncePodPVCs).
    read_write_once_pod_claims: frozenset[str]
    conflicting_claim_refs: int

    def clone(self) -> PreFilterState:
        return PreFilterState(self.read_write_once_pod_claims, self.conflicting_claim_refs)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        self.conflicting_claim_refs += multiplier * sum(
            1 for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
            and v.persistent_volume_claim.claim_name in self.read_write_once_pod_claims)


def needs_restrictions_check(volume: Volume) -> bool:
    return (volume.gce_persistent_disk is not None or volume.aws_elastic_block_store is not None
            or volume.rbd is not None or volume.iscsi is not None)


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Whether `volume` cannot be mounted on a node where `pod` already mounts its volumes."""
    for existing in pod.spec.volumes:
        disk, other = volume.gce_persistent_disk, existing.gce_persistent_disk
        if disk is not None and other is not None and disk.pd_name == other.pd_name and not (
                disk.read_only and other.read_only):
            return True
        ebs, other_ebs = volume.aws_elastic_block_store, existing.aws_elastic_block_store
        if ebs is not None and other_ebs is not None and ebs.volume_id == other_ebs.volume_id:
            return True
        iscsi, other_iscsi = volume.iscsi, existing.iscsi
        if iscsi is not None and other_iscsi is not None and iscsi.iqn == other_iscsi.iqn and not (
                iscsi.read_only and other_iscsi.read_only):
            return True
        rbd, other_rbd = volume.rbd, existing.rbd
        if (rbd is not None and other_rbd is not None and not set(rbd.monitors).isdisjoint(other_rbd.monitors)
                and rbd.pool == other_rbd.pool and rbd.image == other_rbd.image
                and not (rbd.read_only and other_rbd.read_only)):
            return True
    return False


def satisfies_volume_conflicts(pod: Pod, node: NodeInfo) -> bool:
    for volume in pod.spec.volumes:
        if not needs_restrictions_check(volume):
            continue
        for existing in node.pods.values():
            if is_volume_conflict(volume, existing.pod):
                return False
    return True


class VolumeRestrictions:
    name = NAME

    def __init__(self, storage: StorageLister | None = None) -> None:
        self.storage: StorageLister = storage if storage is not None else no_storage()

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        on, r = ClusterEventWithHint, EventResource
        return (
            # A pod using the disk or the claim went away. Pod updates cannot help: spec.volumes is immutable.
            on(ClusterEvent(r.ASSIGNED_POD, ActionType.DELETE), after_assigned_pod_deleted),
            on(ClusterEvent(r.NODE, ActionType.ADD)),
            # The claim, missing at PreFilter, was created.
            on(ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), after_claim_added),
        )

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        p = pod.pod
        volumes = p.spec.volumes
        if not volumes:
            return None, SKIP
        needs_check = any(needs_restrictions_check(v) for v in volumes)
        namespace = p.metadata.namespace
        rwop: set[str] = set()
        for v in volumes:
            if v.persistent_volume_claim is None:
                continue
            name = v.persistent_volume_claim.claim_name
            claim = self.storage.claim(namespace, name)
            if claim is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, claim_not_found(name))
            if READ_WRITE_ONCE_POD in claim.spec.access_modes:
                rwop.add(claim.metadata.name)
        conflicts = sum(1 for name in rwop if snapshot.is_pvc_used_by_pods(f"{namespace}/{name}"))
        if not needs_check and conflicts == 0:
            return None, SKIP
        state.write(PRE_FILTER_KEY, PreFilterState(frozenset(rwop), conflicts))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not satisfies_volume_conflicts(pod.pod, node):
            return Status(Code.UNSCHEDULABLE, REASON_DISK_CONFLICT)
        s = state.get(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState):
            return Status(Code.ERROR, f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        if s.conflicting_claim_refs > 0:
            return Status(Code.UNSCHEDULABLE, REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    # PreFilterExtensions, for preemption: the claims' users as if pod_to_add / pod_to_remove were (not) there.

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        return self._update(state, pod_to_add, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._update(state, pod_to_remove, -1)

    def _update(self, state: CycleState, pod: PodInfo, multiplier: int) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState):
            return Status(Code.ERROR, f'cannot read "{PRE_FILTER_KEY}" from cycleState')
        s.update_with_pod(pod.pod, multiplier)
        return None


# --- queueing hints (kube-scheduler volume_restrictions.go isSchedulableAfter*) ----------------------

def _claims(pod: Pod) -> set[str]:
    return {v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim is not None}


def after_claim_added(pod: Pod, old: None, new: PersistentVolumeClaim) -> QueueingHint:
    if new.metadata.namespace == pod.metadata.namespace and new.metadata.name in _claims(pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_assigned_pod_deleted(pod: Pod, deleted: Pod, new: None) -> QueueingHint:
    """A pod of the same namespace whose in-tree disk conflicted with the pod's, or that used one of
    its claims (kube-scheduler does not read the claim's access modes here, to keep hints cheap)."""
    if deleted.metadata.namespace != pod.metadata.namespace:
        return QueueingHint.QUEUE_SKIP
    if any(needs_restrictions_check(v) and is_volume_conflict(v, deleted) for v in pod.spec.volumes):
        return QueueingHint.QUEUE
    if not _claims(pod).isdisjoint(_claims(deleted)):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any], storage: StorageLister | None = None) -> VolumeRestrictions:
    return VolumeRestrictions(storage)
