"""In-tree volume -> CSI driver and volume handle, as k8s.io/csi-translation-lib v0.37 translates
them, for the plugins NodeVolumeLimits counts (isCSIMigrationOn: AWS EBS, GCE PD, Azure Disk,
OpenStack Cinder, Portworx). vSphere and Azure File are migratable too (so a pod using them is not
skipped at PreFilter) but never counted: kube-scheduler has their migration off.

csi-translation-lib looks the plugin up in a Go map, so a volume naming two in-tree sources is
translated by whichever the map yields first; here the order below decides (the API forbids two).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from kubesched.model.storage import PersistentVolume
from kubesched.model.volume_sources import InTreeDiskSources

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
CINDER = "kubernetes.io/cinder"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"

UNSPECIFIED = "UNSPECIFIED"
_ZONAL = "projects/{}/zones/{}/disks/{}"
_REGIONAL = "projects/{}/regions/{}/disks/{}"
_MULTI_ZONE_DELIMITER = "__"
_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_ZONE = "topology.kubernetes.io/zone"


class TranslationError(Exception):
    """csi-translation-lib's error, worded as it words it."""


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    name: str
    csi_driver: str
    has_source: Callable[[InTreeDiskSources], bool]


PLUGINS = (
    InTreePlugin(GCE_PD, "pd.csi.storage.gke.io", lambda s: s.gce_persistent_disk is not None),
    InTreePlugin(AWS_EBS, "ebs.csi.aws.com", lambda s: s.aws_elastic_block_store is not None),
    InTreePlugin(CINDER, "cinder.csi.openstack.org", lambda s: s.cinder is not None),
    InTreePlugin(AZURE_DISK, "disk.csi.azure.com", lambda s: s.azure_disk is not None),
    InTreePlugin(AZURE_FILE, "file.csi.azure.com", lambda s: s.azure_file is not None),
    InTreePlugin(VSPHERE, "csi.vsphere.vmware.com", lambda s: s.vsphere_volume is not None),
    InTreePlugin(PORTWORX, "pxd.portworx.com", lambda s: s.portworx_volume is not None),
)
_BY_NAME = {p.name: p for p in PLUGINS}

# isCSIMigrationOn's switch: the plugins whose volumes count against their CSI driver's limit.
MIGRATION_ON = frozenset({AWS_EBS, PORTWORX, GCE_PD, AZURE_DISK, CINDER})


def in_tree_plugin(source: InTreeDiskSources) -> InTreePlugin | None:
    """The migratable in-tree plugin of a pod's inline volume or a PV (GetInTreePluginNameFromSpec);
    None when it is not one (IsInlineMigratable / IsPVMigratable false)."""
    for plugin in PLUGINS:
        if plugin.has_source(source):
            return plugin
    return None


def is_migratable_plugin_name(name: str) -> bool:
    return name in _BY_NAME


def csi_driver_of(in_tree_name: str) -> str | None:
    plugin = _BY_NAME.get(in_tree_name)
    return None if plugin is None else plugin.csi_driver


def _ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<vol-id> or a bare vol-id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _ebs_handle(volume_id: str) -> str:
    try:
        return _ebs_volume_id(volume_id)
    except TranslationError as err:
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {err}") from None


def _azure_disk_handle(source: InTreeDiskSources) -> str:
    disk = source.azure_disk
    assert disk is not None
    if disk.kind is not None and disk.kind.lower() != "managed":
        raise TranslationError(f"kind({disk.kind}) is not supported in csi migration")
    return disk.disk_uri


def _gce_region(zones: list[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(f"failed to get region from zones: zone in unexpected format, expected: "
                                   f"{{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"failed to get region from zones: multiple or no regions gotten from zones, "
                               f"got: {sorted(regions)}")
    return regions.pop()


def _handle(plugin: InTreePlugin, source: InTreeDiskSources, pv: PersistentVolume | None) -> str | None:
    """The CSI volume handle of the translated volume; None when the translation has no CSI source."""
    if plugin.name == AWS_EBS:
        assert source.aws_elastic_block_store is not None
        return _ebs_handle(source.aws_elastic_block_store.volume_id)
    if plugin.name == GCE_PD:
        assert source.gce_persistent_disk is not None
        pd = source.gce_persistent_disk.pd_name
        if pv is None:
            return _ZONAL.format(UNSPECIFIED, UNSPECIFIED, pd)
        labels = pv.metadata.labels
        zones = (labels.get(_BETA_ZONE) or labels.get(_ZONE) or "").split(_MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return _ZONAL.format(UNSPECIFIED, zones[0], pd)
        if len(zones) > 1:
            return _REGIONAL.format(UNSPECIFIED, _gce_region(zones), pd)
        return _ZONAL.format(UNSPECIFIED, UNSPECIFIED, pd)
    if plugin.name == AZURE_DISK:
        return _azure_disk_handle(source)
    if plugin.name == CINDER:
        assert source.cinder is not None
        return source.cinder.volume_id
    if plugin.name == PORTWORX:
        assert source.portworx_volume is not None
        return source.portworx_volume.volume_id
    # vSphere and Azure File are never counted (MIGRATION_ON), so never translated here.
    return None


def inline_volume_handle(plugin: InTreePlugin, source: InTreeDiskSources) -> str | None:
    """TranslateInTreeInlineVolumeToCSI's volume handle. Raises TranslationError."""
    return _handle(plugin, source, None)


def pv_volume_handle(plugin: InTreePlugin, pv: PersistentVolume) -> str | None:
    """TranslateInTreePVToCSI's volume handle (GCE PD's depends on the PV's zone labels).
    Raises TranslationError."""
    return _handle(plugin, pv.spec, pv)
