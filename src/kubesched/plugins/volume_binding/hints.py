"""VolumeBinding's queueing hints (kube-scheduler volume_binding.go isSchedulableAfter*): whether a
storage event may make a pod this plugin rejected schedulable. Each takes the waiting pod and the
event's old and new objects (old None for an Add)."""

from __future__ import annotations

from kubesched.framework.events import QueueingHint
from kubesched.model.objects import Pod
from kubesched.model.quantity import value
from kubesched.model.storage import (
    ANN_MIGRATED_PLUGINS,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageClass,
    ephemeral_claim_name,
)

QUEUE, QUEUE_SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def claim_names(pod: Pod, *, ephemeral: bool = True) -> list[str]:
    """The claims the pod's volumes name: persistentVolumeClaim ones and, unless told not to, the
    generic ephemeral volumes' <pod>-<volume> claims."""
    names: list[str] = []
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            names.append(v.persistent_volume_claim.claim_name)
        elif ephemeral and v.ephemeral is not None:
            names.append(ephemeral_claim_name(pod.metadata.name, v.name))
    return names


def uses_claim(pod: Pod, claim: PersistentVolumeClaim, *, ephemeral: bool = True) -> bool:
    return (claim.metadata.namespace == pod.metadata.namespace
            and claim.metadata.name in claim_names(pod, ephemeral=ephemeral))


def after_claim_change(pod: Pod, old: PersistentVolumeClaim | None, new: PersistentVolumeClaim) -> QueueingHint:
    """A claim of the pod created or changed: nearly every such change can help."""
    return QUEUE if uses_claim(pod, new) else QUEUE_SKIP


def after_storage_class_change(pod: Pod, old: StorageClass | None, new: StorageClass) -> QueueingHint:
    """A new class, or new allowed topologies (the binding mode is immutable)."""
    if old is None or old.allowed_topologies != new.allowed_topologies:
        return QUEUE
    return QUEUE_SKIP


def after_csi_node_change(pod: Pod, old: CSINode | None, new: CSINode) -> QueueingHint:
    """A new CSINode, or a change of the in-tree plugins migrated on it (which decides how a PV's
    node affinity is read there)."""
    if old is None:
        return QUEUE
    if old.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "") != new.metadata.annotations.get(ANN_MIGRATED_PLUGINS, ""):
        return QUEUE
    return QUEUE_SKIP


def volume_limit(capacity: CSIStorageCapacity) -> str | None:
    """volumeLimit: maximumVolumeSize when set (more precise), else capacity."""
    return capacity.maximum_volume_size if capacity.maximum_volume_size is not None else capacity.capacity


def after_storage_capacity_change(pod: Pod, old: CSIStorageCapacity | None,
                                  new: CSIStorageCapacity) -> QueueingHint:
    """A new capacity object, or a larger volume limit (topology and class are immutable)."""
    if old is None:
        return QUEUE
    old_limit, new_limit = volume_limit(old), volume_limit(new)
    if new_limit is not None and (old_limit is None or value(new_limit) > value(old_limit)):
        return QUEUE
    return QUEUE_SKIP


def after_csi_driver_change(pod: Pod, old: CSIDriver, new: CSIDriver) -> QueueingHint:
    """A driver of the pod's inline CSI volumes that stopped asking for storage capacity checks."""
    for v in pod.spec.volumes:
        if v.csi is None or v.csi.driver != new.metadata.name:
            continue
        if old.spec.storage_capacity and not new.spec.storage_capacity:
            return QUEUE
    return QUEUE_SKIP
