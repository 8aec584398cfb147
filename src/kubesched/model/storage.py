"""Slim typed views of the storage objects the volume plugins read: PersistentVolume,
PersistentVolumeClaim (core/v1), StorageClass, CSINode, CSIDriver, CSIStorageCapacity and
VolumeAttachment (storage.k8s.io/v1). As in objects.py, every field not named is skipped.

Where Go has a pointer whose nil means something different from the zero value (a claim's
storageClassName: nil asks for the default class, "" for no class), the field is `X | None`.
"""

from __future__ import annotations

import msgspec

from kubesched.model.objects import LabelSelector, NodeSelector, ObjectMeta
from kubesched.model.volume_sources import InTreeDiskSources

# Access modes and phases, as the API spells them.
READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

VOLUME_PENDING = "Pending"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
VOLUME_RELEASED = "Released"
VOLUME_FAILED = "Failed"
CLAIM_PENDING = "Pending"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"

VOLUME_BINDING_IMMEDIATE = "Immediate"
VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

# Annotations the PV controller and the scheduler exchange (k8s.io/component-helpers/storage/volume).
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
# The class of a PV or claim from before storageClassName existed; still read first.
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
# CSINode: the in-tree plugins whose volumes the node's CSI drivers serve.
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


class ObjectReference(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""
    resource_version: str = ""


# --- PersistentVolume ----------------------------------------------------------------------------

class CSIPersistentVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    driver: str = ""
    volume_handle: str = ""
    read_only: bool = False
    fs_type: str = ""
    volume_attributes: dict[str, str] = {}


class VolumeNodeAffinity(msgspec.Struct, gc=False, omit_defaults=True):
    required: NodeSelector | None = None


class PersistentVolumeSpec(InTreeDiskSources, rename="camel", gc=False, omit_defaults=True):
    capacity: dict[str, str] = {}
    access_modes: list[str] = []
    storage_class_name: str = ""
    # None means Filesystem (the API's default; older objects may lack it).
    volume_mode: str | None = None
    claim_ref: ObjectReference | None = None
    node_affinity: VolumeNodeAffinity | None = None
    persistent_volume_reclaim_policy: str = ""
    mount_options: list[str] = []
    csi: CSIPersistentVolumeSource | None = None
    # VolumeAttributesClass (GA): a claim binds only a PV of its own attributes class.
    volume_attributes_class_name: str | None = None


class PersistentVolumeStatus(msgspec.Struct, gc=False, omit_defaults=True):
    phase: str = ""


class PersistentVolume(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeSpec = msgspec.field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = msgspec.field(default_factory=PersistentVolumeStatus)

    @property
    def name(self) -> str:
        return self.metadata.name


# --- PersistentVolumeClaim -----------------------------------------------------------------------

class VolumeResourceRequirements(msgspec.Struct, gc=False, omit_defaults=True):
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}


class TypedObjectReference(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    api_group: str | None = None
    kind: str = ""
    name: str = ""
    namespace: str | None = None


class PersistentVolumeClaimSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    access_modes: list[str] = []
    # None and {} differ as in Go: None selects every PV, as does {} (LabelSelectorAsSelector).
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements = msgspec.field(default_factory=VolumeResourceRequirements)
    volume_name: str = ""
    # None asks for the default class; "" asks for no class.
    storage_class_name: str | None = None
    volume_mode: str | None = None
    # A claim populated from a snapshot or another claim; the PV controller never binds such a
    # claim to a static PV, so matching must know of it.
    data_source: TypedObjectReference | None = None
    data_source_ref: TypedObjectReference | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    phase: str = ""
    access_modes: list[str] = []
    capacity: dict[str, str] = {}


class PersistentVolumeClaim(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = msgspec.field(default_factory=PersistentVolumeClaimStatus)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


# --- StorageClass --------------------------------------------------------------------------------

class TopologySelectorLabelRequirement(msgspec.Struct, gc=False, omit_defaults=True):
    key: str = ""
    values: list[str] = []


class TopologySelectorTerm(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    match_label_expressions: list[TopologySelectorLabelRequirement] = []


class StorageClass(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """storage.k8s.io/v1: its fields sit at the top level, not under a spec."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    provisioner: str = ""
    # None is Immediate (the API's default).
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] = []
    reclaim_policy: str | None = None


# --- CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment -------------------------------------

class VolumeNodeResources(msgspec.Struct, gc=False, omit_defaults=True):
    # None: the driver sets no limit.
    count: int | None = None


class CSINodeDriver(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    topology_keys: list[str] = []
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(msgspec.Struct, gc=False, omit_defaults=True):
    drivers: list[CSINodeDriver] = []


class CSINode(msgspec.Struct, gc=False, omit_defaults=True):
    """Named as its node is."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CSINodeSpec = msgspec.field(default_factory=CSINodeSpec)

    @property
    def name(self) -> str:
        return self.metadata.name


class CSIDriverSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    # Both default to what the API defaults them to when absent (true, false).
    attach_required: bool = True
    storage_capacity: bool = False
    pod_info_on_mount: bool | None = None
    # VolumeLimitScaling (alpha): the driver asks that pods wait for it on their node.
    prevent_pod_scheduling_if_missing: bool | None = None


class CSIDriver(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CSIDriverSpec = msgspec.field(default_factory=CSIDriverSpec)

    @property
    def name(self) -> str:
        return self.metadata.name


class CSIStorageCapacity(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """Namespaced, fields at the top level. A missing capacity means "unknown", not zero."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    storage_class_name: str = ""
    node_topology: LabelSelector | None = None
    capacity: str | None = None
    maximum_volume_size: str | None = None


class VolumeAttachmentSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    persistent_volume_name: str | None = None


class VolumeAttachmentSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    attacher: str = ""
    node_name: str = ""
    source: VolumeAttachmentSource = msgspec.field(default_factory=VolumeAttachmentSource)


class VolumeAttachment(msgspec.Struct, gc=False, omit_defaults=True):
    """NodeVolumeLimits counts the CSI volumes attached to a node that no pod there uses any more."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: VolumeAttachmentSpec = msgspec.field(default_factory=VolumeAttachmentSpec)


# --- helpers (k8s.io/component-helpers/storage/volume, storage/ephemeral) -------------------------

def claim_class(claim: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then storageClassName; "" for none."""
    annotated = claim.metadata.annotations.get(ANN_BETA_STORAGE_CLASS)
    if annotated is not None:
        return annotated
    return claim.spec.storage_class_name or ""


def volume_class(volume: PersistentVolume) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then storageClassName."""
    annotated = volume.metadata.annotations.get(ANN_BETA_STORAGE_CLASS)
    if annotated is not None:
        return annotated
    return volume.spec.storage_class_name


def ephemeral_claim_name(pod_name: str, volume_name: str) -> str:
    """ephemeral.VolumeClaimName: the claim the ephemeral-volume controller creates for the volume."""
    return f"{pod_name}-{volume_name}"
