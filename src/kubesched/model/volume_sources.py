"""The in-tree disk sources the volume plugins read, shared by a pod's inline volumes and a
PersistentVolume's spec (core/v1 gives both the same shapes, or near enough for what is read).

VolumeRestrictions compares GCE PD / AWS EBS / RBD / ISCSI disks between pods; NodeVolumeLimits
translates the in-tree sources csi-translation-lib migrates to their CSI driver and volume handle.
Only the fields those two read are named.
"""

from __future__ import annotations

import msgspec


class GCEPersistentDiskVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    pd_name: str = ""
    fs_type: str = ""
    partition: int = 0
    read_only: bool = False


class AWSElasticBlockStoreVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    partition: int = 0
    read_only: bool = False


class AzureDiskVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    disk_name: str = ""
    disk_uri: str = msgspec.field(default="", name="diskURI")
    caching_mode: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None
    kind: str | None = None


class AzureFileVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """Pod and PV shapes merged: a PV's source also has secretNamespace."""

    secret_name: str = ""
    share_name: str = ""
    read_only: bool = False
    secret_namespace: str | None = None


class CinderVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    read_only: bool = False


class VsphereVirtualDiskVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    volume_path: str = ""
    fs_type: str = ""
    storage_policy_name: str = ""
    storage_policy_id: str = msgspec.field(default="", name="storagePolicyID")


class PortworxVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    read_only: bool = False


class RBDVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    monitors: list[str] = []
    image: str = ""
    # The API defaults pool to "rbd"; an object read from the apiserver always carries it.
    pool: str = "rbd"
    read_only: bool = False


class ISCSIVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    target_portal: str = ""
    iqn: str = ""
    lun: int = 0
    read_only: bool = False


class CSIVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """A pod's inline CSI volume (CSI ephemeral): counted by no plugin, named so it is known."""

    driver: str = ""
    read_only: bool | None = None


class InTreeDiskSources(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """The in-tree disk sources a pod's Volume and a PersistentVolumeSpec share, so the plugins read
    either through one type (csi-translation-lib translates both)."""

    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = msgspec.field(
        default=None, name="gcePersistentDisk")
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = msgspec.field(
        default=None, name="awsElasticBlockStore")
    azure_disk: AzureDiskVolumeSource | None = None
    azure_file: AzureFileVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    vsphere_volume: VsphereVirtualDiskVolumeSource | None = None
    portworx_volume: PortworxVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
