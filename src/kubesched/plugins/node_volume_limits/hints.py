"""NodeVolumeLimits' queueing hints (kube-scheduler nodevolumelimits/csi.go isSchedulableAfter*):
whether an event may make a pod this plugin rejected fit, given the event's old and new objects."""

from __future__ import annotations

from kubesched.framework.events import QueueingHint
from kubesched.model.objects import Pod
from kubesched.model.storage import CSINode, PersistentVolumeClaim, VolumeAttachment, ephemeral_claim_name
from kubesched.plugins.helper import csi_translation as tr

QUEUE, QUEUE_SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def after_assigned_pod_deleted(pod: Pod, deleted: Pod, new: None) -> QueueingHint:
    """A bound (or nominated) pod that counted volumes against a node's limits."""
    if not deleted.spec.volumes:
        return QUEUE_SKIP
    if not deleted.spec.node_name and not deleted.status.nominated_node_name:
        return QUEUE_SKIP
    for v in deleted.spec.volumes:
        if v.persistent_volume_claim is not None or v.ephemeral is not None or tr.in_tree_plugin(v) is not None:
            return QUEUE
    return QUEUE_SKIP


def after_claim_added(pod: Pod, old: None, new: PersistentVolumeClaim) -> QueueingHint:
    if new.metadata.namespace != pod.metadata.namespace:
        return QUEUE_SKIP
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            name = v.persistent_volume_claim.claim_name
        elif v.ephemeral is not None:
            name = ephemeral_claim_name(pod.metadata.name, v.name)
        else:
            continue
        if name == new.metadata.name:
            return QUEUE
    return QUEUE_SKIP


def after_volume_attachment_deleted(pod: Pod, deleted: VolumeAttachment, new: None) -> QueueingHint:
    """An attachment that may have counted against a limit the pod hit: any, for a pod with a claim;
    its driver's, for a pod with an inline in-tree volume migrated to CSI."""
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            return QUEUE
        plugin = tr.in_tree_plugin(v)
        if plugin is None:
            continue
        # A volume that does not translate is an error, which kube-scheduler answers with Queue.
        tr.inline_volume_handle(plugin, v)
        if deleted.spec.attacher == plugin.csi_driver:
            return QUEUE
    return QUEUE_SKIP


def _limits(csi_node: CSINode) -> dict[str, int]:
    return {d.name: (d.allocatable.count or 0) if d.allocatable is not None else 0 for d in csi_node.spec.drivers}


def after_csi_node_updated(pod: Pod, old: CSINode, new: CSINode) -> QueueingHint:
    """Some driver's allocatable count went up (a driver new on the node counts from 0)."""
    before = _limits(old)
    if any(limit > before.get(name, 0) for name, limit in _limits(new).items()):
        return QUEUE
    return QUEUE_SKIP
