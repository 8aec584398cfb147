"""NodeVolumeLimits (kube-scheduler v1.37 nodevolumelimits/csi.go, CSILimits): PreFilter and Filter.

A node's CSINode says how many volumes each CSI driver may attach there (allocatable.count). The
pod fits when, per driver, the unique volumes ("driver/handle") of the pods on the node (bound and
assumed), plus the node's VolumeAttachments no pod there accounts for, plus the pod's own new ones,
stay within the limit. A claim's volume is its PV's CSI source, or the CSI translation of its
in-tree source; a claim not bound yet counts under its class's provisioner with a handle of its
own. A driver whose CSIDriver sets preventPodSchedulingIfMissing must be on the node
(VolumeLimitScaling, beta and on in v1.37).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod, Volume
from kubesched.model.storage import CSINode, PersistentVolumeClaim, VolumeAttachment, claim_class, ephemeral_claim_name
from kubesched.plugins.helper import csi_translation as tr
from kubesched.plugins.helper.storage_lister import StorageLister, claim_not_found, no_storage
from kubesched.plugins.node_volume_limits import hints

NAME = "NodeVolumeLimits"
PRE_FILTER_KEY = "PreFilter" + NAME

REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

# volume unique name ("driver/handle") -> driver
Volumes = dict[str, str]


class _LookupError(Exception):
    """An error Filter returns; `not_found` for a missing claim (UnschedulableAndUnresolvable)."""

    def __init__(self, message: str, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


@dataclass(frozen=True, slots=True)
class NewVolumes:
    """The pod's own CSI volumes, and the drivers among them whose CSIDriver says pods must wait for
    the driver on their node (preventPodSchedulingIfMissing)."""

    volumes: Volumes
    must_be_installed: tuple[str, ...]


@dataclass(slots=True)
class PreFilterState:
    # The node's VolumeAttachments, by node name (kube-scheduler's VolumeAttachment indexer).
    attachments: dict[str, list[VolumeAttachment]]
    # The pod's own volumes, by whether the node has a CSINode (the only thing they depend on).
    new_volumes: dict[bool, NewVolumes | _LookupError] = field(default_factory=dict)


def is_migration_on(csi_node: CSINode | None, plugin_name: str) -> bool:
    """isCSIMigrationOn: for the five plugins, on any node that has a CSINode."""
    return csi_node is not None and plugin_name in tr.MIGRATION_ON


def _controlled_by(claim: PersistentVolumeClaim, pod: Pod) -> bool:
    return any(ref.controller and ref.uid == pod.metadata.uid for ref in claim.metadata.owner_references)


class CSILimits:
    name = NAME

    def __init__(self, storage: StorageLister | None = None, volume_id_prefix: str | None = None) -> None:
        self.storage: StorageLister = storage if storage is not None else no_storage()
        # Keeps the made-up handles of unbound claims apart from real volume handles.
        self.volume_id_prefix = volume_id_prefix if volume_id_prefix is not None else uuid.uuid4().hex

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        on, r = ClusterEventWithHint, EventResource
        return (
            # No hint: any new CSINode can make pods its drivers' volumes rejected fit.
            on(ClusterEvent(r.CSI_NODE, ActionType.ADD)),
            on(ClusterEvent(r.CSI_NODE, ActionType.UPDATE), hints.after_csi_node_updated),
            on(ClusterEvent(r.ASSIGNED_POD, ActionType.DELETE), hints.after_assigned_pod_deleted),
            on(ClusterEvent(r.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), hints.after_claim_added),
            on(ClusterEvent(r.VOLUME_ATTACHMENT, ActionType.DELETE), hints.after_volume_attachment_deleted),
        )

    # --- PreFilter / Filter -----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        if not any(v.persistent_volume_claim is not None or v.ephemeral is not None
                   or tr.in_tree_plugin(v) is not None for v in pod.pod.spec.volumes):
            return None, SKIP
        state.write(PRE_FILTER_KEY, PreFilterState(self._attachments_by_node()))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        p = pod.pod
        if not p.spec.volumes:
            return None
        s = state.get(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState):
            s = PreFilterState(self._attachments_by_node())
        csi_node = self.storage.csi_node(node.name)
        found = s.new_volumes.get(csi_node is not None)
        if found is None:
            found = s.new_volumes[csi_node is not None] = self._new_volumes(p, csi_node)
        if isinstance(found, _LookupError):
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if found.not_found else Code.ERROR
            return Status(code, str(found))
        if not found.volumes:
            return None
        for driver in found.must_be_installed:
            if csi_node is None or not any(d.name == driver for d in csi_node.spec.drivers):
                return Status(Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node")
        # Most nodes of most clusters: no CSINode, or no limits in it; nothing more to count.
        limits = volume_limits(csi_node)
        if not limits:
            return None
        new_volumes = dict(found.volumes)
        attached: Volumes = {}
        try:
            for existing in node.pods.values():
                self._attachable_volumes(existing.pod, csi_node, False, attached)
        except _LookupError as err:
            return Status(Code.ERROR, str(err))
        counts: dict[str, int] = {}
        for unique_name, driver in attached.items():
            # A volume the node already has is not new, whoever else uses it.
            new_volumes.pop(unique_name, None)
            counts[driver] = counts.get(driver, 0) + 1
        for unique_name, driver in self._attached_elsewhere(s.attachments.get(node.name, ())).items():
            if unique_name not in attached:
                counts[driver] = counts.get(driver, 0) + 1
        wanted: dict[str, int] = {}
        for driver in new_volumes.values():
            wanted[driver] = wanted.get(driver, 0) + 1
        for driver, count in wanted.items():
            limit = limits.get(driver)
            if limit is not None and counts.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    def _attachments_by_node(self) -> dict[str, list[VolumeAttachment]]:
        out: dict[str, list[VolumeAttachment]] = {}
        for va in self.storage.volume_attachments():
            out.setdefault(va.spec.node_name, []).append(va)
        return out

    def _new_volumes(self, pod: Pod, csi_node: CSINode | None) -> NewVolumes | _LookupError:
        volumes: Volumes = {}
        try:
            self._attachable_volumes(pod, csi_node, True, volumes)
        except _LookupError as err:
            return err
        # checkCSIDriverOnNode: only a CSIDriver asking for it keeps pods off nodes without it.
        drivers = dict.fromkeys(volumes.values())
        must = tuple(d for d in drivers if (c := self.storage.csi_driver(d)) is not None
                     and c.spec.prevent_pod_scheduling_if_missing)
        return NewVolumes(volumes, must)

    def _attached_elsewhere(self, attachments: Iterable[VolumeAttachment]) -> Volumes:
        """getNodeVolumeAttachmentInfo: the CSI volumes the node's VolumeAttachments hold."""
        out: Volumes = {}
        for va in attachments:
            pv_name = va.spec.source.persistent_volume_name
            if not va.spec.attacher or pv_name is None:
                continue
            pv = self.storage.persistent_volume(pv_name)
            if pv is None or pv.spec.csi is None:
                continue
            out[f"{va.spec.attacher}/{pv.spec.csi.volume_handle}"] = va.spec.attacher
        return out

    # --- which volumes a pod attaches (filterAttachableVolumes) ------------------------------------

    def _attachable_volumes(self, pod: Pod, csi_node: CSINode | None, new_pod: bool, result: Volumes) -> None:
        """Adds the pod's CSI volumes to result. Raises _LookupError as kube-scheduler returns errors."""
        namespace = pod.metadata.namespace
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is not None:
                claim_name = v.persistent_volume_claim.claim_name
                ephemeral = False
            elif v.ephemeral is not None:
                claim_name = ephemeral_claim_name(pod.metadata.name, v.name)
                ephemeral = True
            else:
                self._inline_volume(v, csi_node, pod, result)
                continue
            if not claim_name:
                raise _LookupError("PersistentVolumeClaim had no name")
            claim = self.storage.claim(namespace, claim_name)
            if claim is None:
                if new_pod:
                    raise _LookupError(f"looking up PVC {namespace}/{claim_name}: {claim_not_found(claim_name)}",
                                       not_found=True)
                continue
            if ephemeral and (claim.metadata.namespace != namespace or not _controlled_by(claim, pod)):
                raise _LookupError(f"PVC {claim.metadata.namespace}/{claim.metadata.name} was not created for pod "
                                   f"{namespace}/{pod.metadata.name} (pod is not owner)")
            driver, handle = self._claim_volume(csi_node, claim)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver

    def _inline_volume(self, v: Volume, csi_node: CSINode | None, pod: Pod, result: Volumes) -> None:
        """checkAttachableInlineVolume: a migratable in-tree inline volume counts for its CSI driver."""
        plugin = tr.in_tree_plugin(v)
        if plugin is None or not is_migration_on(csi_node, plugin.name):
            return
        try:
            handle = tr.inline_volume_handle(plugin, v)
        except tr.TranslationError as err:
            raise _LookupError(f"converting volume({v.name}) from inline to csi: {err}") from None
        if handle is not None:
            result[f"{plugin.csi_driver}/{handle}"] = plugin.csi_driver

    def _claim_volume(self, csi_node: CSINode | None, claim: PersistentVolumeClaim) -> tuple[str, str]:
        """getCSIDriverInfo: (driver, volume handle) of a claim, ("", "") when it does not count."""
        pv_name = claim.spec.volume_name
        pv = self.storage.persistent_volume(pv_name) if pv_name else None
        if pv is None:
            # Not bound, or bound to a PV not seen (deleted, or pre-bound to one not created yet).
            return self._class_volume(csi_node, claim)
        if pv.spec.csi is not None:
            return pv.spec.csi.driver, pv.spec.csi.volume_handle
        plugin = tr.in_tree_plugin(pv.spec)
        if plugin is None or not is_migration_on(csi_node, plugin.name):
            return "", ""
        try:
            handle = tr.pv_volume_handle(plugin, pv)
        except tr.TranslationError:
            return "", ""
        if handle is None:
            return "", ""
        return plugin.csi_driver, handle

    def _class_volume(self, csi_node: CSINode | None, claim: PersistentVolumeClaim) -> tuple[str, str]:
        """getCSIDriverInfoFromSC: an unbound claim counts under its class's provisioner."""
        class_name = claim_class(claim)
        if not class_name:
            return "", ""  # an Immediate claim with no class must be bound before scheduling
        sc = self.storage.storage_class(class_name)
        if sc is None:
            return "", ""
        handle = f"{self.volume_id_prefix}-{claim.metadata.namespace}/{claim.metadata.name}"
        provisioner = sc.provisioner
        if tr.is_migratable_plugin_name(provisioner):
            driver = tr.csi_driver_of(provisioner)
            if not is_migration_on(csi_node, provisioner) or driver is None:
                return "", ""
            return driver, handle
        return provisioner, handle


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: driver -> how many volumes it may attach; a driver absent has no limit."""
    if csi_node is None:
        return {}
    return {d.name: d.allocatable.count for d in csi_node.spec.drivers
            if d.allocatable is not None and d.allocatable.count is not None}


def new(args: Mapping[str, Any], storage: StorageLister | None = None) -> CSILimits:
    return CSILimits(storage)
