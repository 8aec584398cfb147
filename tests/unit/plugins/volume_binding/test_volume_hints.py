"""The volume plugins' queueing hints, from kube-scheduler's own tables (volume_binding_test.go
TestIsSchedulableAfter*, volume_zone_test.go, csi_test.go TestCSILimits*QHint,
volume_restrictions_test.go Test_isSchedulableAfter*), and the queue asking them."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.cache import Cache
from kubesched.backend.queue import SchedulingQueue
from kubesched.backend.queue.clock import FakeClock
from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.model.objects import ObjectMeta, Pod, Volume
from kubesched.model.storage import (
    ANN_MIGRATED_PLUGINS,
    CSINode,
    CSINodeDriver,
    CSINodeSpec,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
    VolumeNodeResources,
)
from kubesched.model.volume_sources import (
    AWSElasticBlockStoreVolumeSource,
    CSIVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    RBDVolumeSource,
)
from kubesched.plugins.node_volume_limits import hints as limits
from kubesched.plugins.volume_binding import hints as binding
from kubesched.plugins.volume_restrictions import VolumeRestrictions
from kubesched.plugins.volume_restrictions.plugin import after_assigned_pod_deleted, after_claim_added
from kubesched.plugins.volume_zone import VolumeZone
from kubesched.plugins.volume_zone import plugin as zone
from kubesched.scheduler.eventhandlers import ClusterEventHandlers
from tests.builders import make_csi_driver, make_node, make_pod, make_pv, make_pvc, make_volume_attachment

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _pvc(name: str, namespace: str = "default") -> PersistentVolumeClaim:
    return make_pvc(name, namespace).obj()


def _with_volumes(pod: Pod, *volumes: Volume) -> Pod:
    pod.spec.volumes.extend(volumes)
    return pod


# --- VolumeBinding ---------------------------------------------------------------------------------------------

def _csi_node(migrated: str | None) -> CSINode:
    annotations = {} if migrated is None else {ANN_MIGRATED_PLUGINS: migrated}
    return CSINode(metadata=ObjectMeta(name="csinode-a", annotations=annotations))


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(None, _csi_node(None), QUEUE, id="CSINode is newly created"),
    pytest.param(_csi_node("test1"), _csi_node("test1, test2"), QUEUE,
                 id="CSINode's migrated-plugins annotations is added"),
    pytest.param(_csi_node("test1"), _csi_node("test2"), QUEUE, id="CSINode's migrated-plugins annotation is updated"),
    pytest.param(_csi_node("test1"), _csi_node("test1"), SKIP,
                 id="CSINode is updated but migrated-plugins annotation gets unchanged"),
])
def test_binding_after_csi_node_change(old: CSINode | None, new: CSINode, want: QueueingHint) -> None:
    assert binding.after_csi_node_change(make_pod("pod-a").obj(), old, new) is want


@pytest.mark.parametrize(("pod", "old", "new", "want"), [
    pytest.param(make_pod("pod-a").volume("e").obj(), _pvc("pvc-b"), _pvc("pvc-b"), SKIP,
                 id="pod has no pvc or ephemeral volumes"),
    pytest.param(make_pod("pod-a", "ns-a").volume("a", claim="pvc-a").volume("b", claim="pvc-b").obj(), None,
                 _pvc("pvc-b"), SKIP,
                 id="pvc with the same name as the one used by the pod in a different namespace is modified"),
    pytest.param(make_pod("pod-a").volume("a", claim="pvc-a").volume("c", claim="pvc-c").obj(), _pvc("pvc-b"),
                 _pvc("pvc-b"), SKIP, id="pod has no pvc that is being modified"),
    pytest.param(make_pod("pod-a").volume("ephemeral-a", ephemeral=True).volume("ephemeral-c", ephemeral=True).obj(),
                 _pvc("pod-a-ephemeral-b"), _pvc("pod-a-ephemeral-b"), SKIP,
                 id="pod has no generic ephemeral volume that is being modified"),
    pytest.param(make_pod("pod-a").volume("a", claim="pvc-a").volume("b", claim="pvc-b").obj(), _pvc("pvc-b"),
                 _pvc("pvc-b"), QUEUE, id="pod has the pvc that is being modified"),
    pytest.param(make_pod("pod-a").volume("ephemeral-a", ephemeral=True).volume("ephemeral-b", ephemeral=True).obj(),
                 _pvc("pod-a-ephemeral-b"), _pvc("pod-a-ephemeral-b"), QUEUE,
                 id="pod has the generic ephemeral volume that is being modified"),
])
def test_binding_after_claim_change(pod: Pod, old: PersistentVolumeClaim | None, new: PersistentVolumeClaim,
                                    want: QueueingHint) -> None:
    assert binding.after_claim_change(pod, old, new) is want


_HOST_TOPOLOGY = [TopologySelectorTerm(match_label_expressions=[
    TopologySelectorLabelRequirement(key="kubernetes.io/hostname", values=["node-a"])])]


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(None, StorageClass(metadata=ObjectMeta(name="sc-a")), QUEUE,
                 id="When a new StorageClass is created, it returns Queue"),
    pytest.param(StorageClass(metadata=ObjectMeta(name="sc-a")),
                 StorageClass(metadata=ObjectMeta(name="sc-a"), allowed_topologies=_HOST_TOPOLOGY), QUEUE,
                 id="When the AllowedTopologies are changed, it returns Queue"),
    pytest.param(StorageClass(metadata=ObjectMeta(name="sc-a")), StorageClass(metadata=ObjectMeta(name="sc-a")), SKIP,
                 id="When there are no changes to the StorageClass, it returns QueueSkip"),
])
def test_binding_after_storage_class_change(old: StorageClass | None, new: StorageClass, want: QueueingHint) -> None:
    assert binding.after_storage_class_change(make_pod("pod-a").obj(), old, new) is want


def _cap(capacity: int | None = None, maximum: int | None = None) -> CSIStorageCapacity:
    return CSIStorageCapacity(metadata=ObjectMeta(name="cap-a"), capacity=None if capacity is None else str(capacity),
                              maximum_volume_size=None if maximum is None else str(maximum))


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(None, _cap(), QUEUE, id="When a new CSIStorageCapacity is created, it returns Queue"),
    pytest.param(_cap(), _cap(100), QUEUE, id="When the volume limit is increase(Capacity set), it returns Queue"),
    pytest.param(_cap(), _cap(maximum=100), QUEUE,
                 id="When the volume limit is increase(MaximumVolumeSize set), it returns Queue"),
    pytest.param(_cap(50), _cap(100), QUEUE,
                 id="When the volume limit is increase(Capacity increase), it returns Queue"),
    pytest.param(_cap(100, 50), _cap(100), QUEUE,
                 id="When the volume limit is increase(MaximumVolumeSize unset), it returns Queue"),
    pytest.param(_cap(100, 50), _cap(100, 60), QUEUE,
                 id="When the volume limit is increase(MaximumVolumeSize increase), it returns Queue"),
    pytest.param(_cap(100, 50), _cap(100, 50), SKIP,
                 id="When there are no changes to the CSIStorageCapacity, it returns QueueSkip"),
    pytest.param(_cap(100), _cap(100), SKIP, id="When the volume limit is equal(Capacity), it returns QueueSkip"),
    pytest.param(_cap(100, 50), _cap(50), SKIP,
                 id="When the volume limit is equal(MaximumVolumeSize unset), it returns QueueSkip"),
    pytest.param(_cap(100), _cap(90), SKIP, id="When the volume limit is decrease(Capacity), it returns QueueSkip"),
    pytest.param(_cap(maximum=100), _cap(maximum=90), SKIP,
                 id="When the volume limit is decrease(MaximumVolumeSize), it returns QueueSkip"),
])
def test_binding_after_storage_capacity_change(old: CSIStorageCapacity | None, new: CSIStorageCapacity,
                                               want: QueueingHint) -> None:
    assert binding.after_storage_capacity_change(make_pod("pod-a").obj(), old, new) is want


def _csi_pod(driver: str) -> Pod:
    return _with_volumes(make_pod("pod-a").obj(), Volume(name="csi", csi=CSIVolumeSource(driver=driver)))


@pytest.mark.parametrize(("pod", "old_capacity", "new_name", "new_capacity", "want"), [
    pytest.param(make_pod("pod-a").obj(), False, "test1", True, SKIP, id="pod has no CSIDriver"),
    pytest.param(_csi_pod("test1"), True, "test2", False, SKIP,
                 id="driver name in pod and csidriver name are different"),
    pytest.param(_csi_pod("test1"), False, "test1", False, SKIP, id="original StorageCapacity is false"),
    pytest.param(_csi_pod("test1"), True, "test1", False, QUEUE, id="modified StorageCapacity is nil"),
    pytest.param(_csi_pod("test1"), True, "test1", True, SKIP, id="modified StorageCapacity is true"),
])
def test_binding_after_csi_driver_change(pod: Pod, old_capacity: bool, new_name: str, new_capacity: bool,
                                         want: QueueingHint) -> None:
    # kubesched reads a missing storageCapacity as the false the API defaults it to: Go's nil cases
    # ("original StorageCapacity is nil") are the false ones here.
    old, new = make_csi_driver(new_name, storage_capacity=old_capacity), make_csi_driver(new_name,
                                                                                        storage_capacity=new_capacity)
    assert binding.after_csi_driver_change(pod, old, new) is want


# --- VolumeZone ------------------------------------------------------------------------------------------------

def _zone_pod(claim: str) -> Pod:
    return make_pod("pod_1").volume("v", claim=claim).obj()


def _bound_claim(name: str, namespace: str = "default", volume: str = "Vol_1") -> PersistentVolumeClaim:
    return make_pvc(name, namespace).volume_name(volume).obj()


@pytest.mark.parametrize(("pod", "old", "new", "want"), [
    pytest.param(make_pod("pod_1").obj(), None, _bound_claim("PVC_1"), SKIP, id="pvc-was-added-but-pod-refers-no-pvc"),
    pytest.param(_zone_pod("PVC_2"), None, _bound_claim("PVC_1"), SKIP,
                 id="pvc-was-added-and-pod-was-bound-to-different-pvc"),
    pytest.param(_zone_pod("PVC_1"), None, _bound_claim("PVC_1", "ns1"), SKIP,
                 id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns"),
    pytest.param(_zone_pod("PVC_1"), None, _bound_claim("PVC_1"), QUEUE,
                 id="pvc-was-added-and-pod-was-bound-to-the-pvc"),
    pytest.param(_zone_pod("PVC_1"), _bound_claim("PVC_1", volume=""), _bound_claim("PVC_1"), QUEUE,
                 id="pvc-was-updated-and-pod-was-bound-to-the-pvc"),
    pytest.param(make_pod("pod_1").obj(), _bound_claim("PVC_1", volume=""), _bound_claim("PVC_1"), SKIP,
                 id="pvc-was-updated-but-pod-refers-no-pvc"),
    # kube-scheduler's VolumeZone reads persistentVolumeClaim volumes only, not ephemeral ones.
    pytest.param(make_pod("pod_1").volume("e", ephemeral=True).obj(), None, _bound_claim("pod_1-e"), SKIP,
                 id="ephemeral-claims-are-not-read"),
])
def test_zone_after_claim_change(pod: Pod, old: PersistentVolumeClaim | None, new: PersistentVolumeClaim,
                                 want: QueueingHint) -> None:
    assert zone.after_claim_change(pod, old, new) is want


@pytest.mark.parametrize(("mode", "want"), [
    pytest.param(None, SKIP, id="sc-doesn't-have-volume-binding-mode"),
    pytest.param("Immediate", SKIP, id="sc-is-immediate"),
    pytest.param("WaitForFirstConsumer", QUEUE, id="new-sc-is-wait-for-first-consumer-mode"),
])
def test_zone_after_storage_class_added(mode: str | None, want: QueueingHint) -> None:
    sc = StorageClass(metadata=ObjectMeta(name="SC_1"), volume_binding_mode=mode)
    assert zone.after_storage_class_added(_zone_pod("PVC_1"), None, sc) is want


def _zoned_pv(**labels: str) -> PersistentVolume:
    b = make_pv("Vol_1")
    for key, value in labels.items():
        b.label(key.replace("BETA_ZONE", zone.BETA_ZONE).replace("GA_ZONE", zone.ZONE), value)
    return b.obj()


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(None, _zoned_pv(BETA_ZONE="us-west1-b"), QUEUE, id="new-pv-was-added"),
    pytest.param(_zoned_pv(BETA_ZONE="us-west1-a"), _zoned_pv(BETA_ZONE="us-west1-b"), QUEUE,
                 id="pv-was-updated-and-changed-topology"),
    pytest.param(_zoned_pv(BETA_ZONE="us-west1-a"), _zoned_pv(BETA_ZONE="us-west1-a", GA_ZONE="zone"), QUEUE,
                 id="pv-was-updated-and-added-topology-label"),
    pytest.param(_zoned_pv(BETA_ZONE="us-west1-a", GA_ZONE="zone"), _zoned_pv(BETA_ZONE="us-west1-a", GA_ZONE="zone"),
                 SKIP, id="pv-was-updated-but-no-topology-is-changed"),
    pytest.param(_zoned_pv(BETA_ZONE="a__b"), _zoned_pv(BETA_ZONE="b__a"), SKIP, id="same-zones-in-another-order"),
])
def test_zone_after_volume_change(old: PersistentVolume | None, new: PersistentVolume, want: QueueingHint) -> None:
    assert zone.after_volume_change(_zone_pod("PVC_1"), old, new) is want


# --- NodeVolumeLimits ------------------------------------------------------------------------------------------

def _bound(pod: Pod, node: str = "csiNode") -> Pod:
    pod.spec.node_name = node
    return pod


_EBS = Volume(name="ebs", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="test"))
_GCE = Volume(name="gce", gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="test"))
_PVC1 = make_pod("x").volume("v", claim="pvc1").obj().spec.volumes[0]


@pytest.mark.parametrize(("deleted", "want"), [
    pytest.param(_bound(make_pod("d").volume("v", claim="placeholder").obj()), QUEUE,
                 id="return a Queue when a deleted pod has a PVC"),
    pytest.param(_bound(_with_volumes(make_pod("d").obj(), _EBS)), QUEUE,
                 id="return a Queue when a deleted pod has a inline migratable volume"),
    pytest.param(_bound(make_pod("d").obj()), SKIP, id="return a QueueSkip when a deleted pod doesn't have any volume"),
    pytest.param(make_pod("d").volume("v", claim="csi-ebs.csi.aws.com-0").obj(), SKIP,
                 id="return a QueueSkip when a deleted pod is not scheduled."),
])
def test_limits_after_assigned_pod_deleted(deleted: Pod, want: QueueingHint) -> None:
    pod = make_pod("p").volume("v", claim="csi-ebs.csi.aws.com-2").obj()
    assert limits.after_assigned_pod_deleted(pod, deleted, None) is want


def test_limits_counts_a_deleted_pod_that_was_only_nominated() -> None:
    deleted = make_pod("d").volume("v", claim="c").obj()
    deleted.status.nominated_node_name = "csiNode"
    assert limits.after_assigned_pod_deleted(make_pod("p").obj(), deleted, None) is QUEUE


@pytest.mark.parametrize(("pod", "added", "want"), [
    pytest.param(make_pod("p", "ns1").obj(), _pvc("", "ns2"), SKIP,
                 id="a pod isn't in the same namespace as an added PVC"),
    pytest.param(make_pod("p", "ns1").volume("v", claim="pvc1").obj(), _pvc("pvc1", "ns1"), QUEUE,
                 id="a pod is in the same namespace as an added PVC"),
    pytest.param(make_pod("pod1", "ns1").volume("ephemeral", ephemeral=True).obj(), _pvc("pod1-ephemeral", "ns1"),
                 QUEUE, id="a pod has an ephemeral volume related to an added PVC"),
    pytest.param(make_pod("p", "ns1").volume("v", claim="pvc1").obj(), _pvc("pvc2", "ns1"), SKIP,
                 id="a pod doesn't have the same PVC as an added PVC"),
    pytest.param(make_pod("p", "ns1").obj(), _pvc("pvc2", "ns1"), SKIP, id="a pod doesn't have any PVC attached"),
])
def test_limits_after_claim_added(pod: Pod, added: PersistentVolumeClaim, want: QueueingHint) -> None:
    assert limits.after_claim_added(pod, None, added) is want


@pytest.mark.parametrize(("volumes", "attacher", "want"), [
    pytest.param([_PVC1], "test.storage.gke.io", QUEUE,
                 id="a pod has PVC when VolumeAttachment is deleting"),
    pytest.param([_EBS], "ebs.csi.aws.com", QUEUE,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is "
                    "deleting (match)"),
    pytest.param([_GCE], "ebs.csi.aws.com", SKIP,
                 id="a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is "
                    "deleting (no match)"),
    pytest.param([_EBS, _PVC1], "ebs.csi.aws.com", QUEUE,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) "
                    "is deleting"),
    pytest.param([_EBS, _PVC1], "test.storage.gke.io", QUEUE,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment "
                    "(AWSEBSDriver)  is deleting"),
    pytest.param([], "test.storage.gke.io", SKIP, id="a pod has no PVC when VolumeAttachment is deleting"),
])
def test_limits_after_volume_attachment_deleted(volumes: list[Volume], attacher: str, want: QueueingHint) -> None:
    pod = _with_volumes(make_pod("p", "ns1").obj(), *volumes)
    va = make_volume_attachment("volumeattachment1", attacher, "fake-node", "pv1")
    assert limits.after_volume_attachment_deleted(pod, va, None) is want


def test_limits_volume_attachment_hint_raises_on_a_volume_that_does_not_translate() -> None:
    """kube-scheduler returns Queue with the error; the queue turns a raising hint into Queue."""
    bad = Volume(name="ebs", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="aws://zone/bad"))
    with pytest.raises(Exception, match="Invalid format for AWS volume"):
        limits.after_volume_attachment_deleted(_with_volumes(make_pod("p").obj(), bad),
                                               make_volume_attachment("va", "x", "n", None), None)


def _limits_node(count: int | None, driver: str = "ebs.csi.aws.com") -> CSINode:
    return CSINode(metadata=ObjectMeta(name="test-node"), spec=CSINodeSpec(drivers=[CSINodeDriver(
        name=driver, node_id="test-node", allocatable=None if count is None else VolumeNodeResources(count=count))]))


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(_limits_node(1), _limits_node(2), QUEUE, id="limit raised, queue"),
    pytest.param(_limits_node(2), _limits_node(1), SKIP, id="limit decreased, skip queueing"),
    pytest.param(_limits_node(1), _limits_node(1), SKIP, id="limit unchanged, skip queueing"),
    pytest.param(_limits_node(1), _limits_node(1, "other.csi"), QUEUE, id="a new driver counts from zero"),
    pytest.param(_limits_node(1), _limits_node(None), SKIP, id="no count is zero"),
])
def test_limits_after_csi_node_updated(old: CSINode, new: CSINode, want: QueueingHint) -> None:
    pod = make_pod("test-pod", "ns1").volume("v", claim="csi-ebs.csi.aws.com-0").obj()
    assert limits.after_csi_node_updated(pod, old, new) is want


# --- VolumeRestrictions ----------------------------------------------------------------------------------------

def _disk_pod(name: str, volume: Volume) -> Pod:
    return _with_volumes(make_pod(name).obj(), volume)


_GCE_FOO = Volume(name="d", gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="foo"))
_GCE_BAR = Volume(name="d", gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="bar"))
_AWS_FOO = Volume(name="d", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="foo"))
_AWS_BAR = Volume(name="d", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="bar"))
_RBD = Volume(name="d", rbd=RBDVolumeSource(monitors=["a", "b"], pool="foo", image="bar"))
_RBD_2 = Volume(name="d", rbd=RBDVolumeSource(monitors=["c", "d"], pool="foo", image="bar"))
_ISCSI = Volume(name="d", iscsi=ISCSIVolumeSource(target_portal="127.0.0.1:3260",
                                                  iqn="iqn.2016-12.server:storage.target01"))
_ISCSI_2 = Volume(name="d", iscsi=ISCSIVolumeSource(target_portal="127.0.0.1:3260",
                                                    iqn="iqn.2017-12.server:storage.target01"))


@pytest.mark.parametrize(("pod", "deleted", "want"), [
    pytest.param(_disk_pod("p", _GCE_FOO), _disk_pod("d", _GCE_FOO), QUEUE, id="queue-new-object-gcedisk-conflict"),
    pytest.param(_disk_pod("p", _GCE_FOO), _disk_pod("d", _GCE_BAR), SKIP, id="skip-new-object-gcedisk-no-conflict"),
    pytest.param(_disk_pod("p", _AWS_FOO), _disk_pod("d", _AWS_FOO), QUEUE, id="queue-new-object-awsdisk-conflict"),
    pytest.param(_disk_pod("p", _AWS_FOO), _disk_pod("d", _AWS_BAR), SKIP, id="skip-new-object-awsdisk-no-conflict"),
    pytest.param(_disk_pod("p", _RBD), _disk_pod("d", _RBD), QUEUE, id="queue-new-object-rbddisk-conflict"),
    pytest.param(_disk_pod("p", _RBD), _disk_pod("d", _RBD_2), SKIP, id="skip-new-object-rbddisk-no-conflict"),
    pytest.param(_disk_pod("p", _ISCSI), _disk_pod("d", _ISCSI), QUEUE, id="queue-new-object-iscsidisk-conflict"),
    pytest.param(_disk_pod("p", _ISCSI), _disk_pod("d", _ISCSI_2), SKIP, id="skip-new-object-iscsidisk-no-conflict"),
    pytest.param(make_pod("pod1").volume("v", claim="claim-rwop").obj(),
                 make_pod("pod2").volume("v", claim="claim-rwop").obj(), QUEUE, id="queue-has-same-claim"),
    pytest.param(make_pod("pod1").volume("v", claim="claim-1-rwop").obj(),
                 make_pod("pod2").volume("v", claim="claim-2-rwop").obj(), SKIP, id="skip-no-same-claim"),
    pytest.param(_disk_pod("p", _GCE_FOO), _with_volumes(make_pod("d", "other").obj(), _GCE_FOO), SKIP,
                 id="skip-another-namespace"),
])
def test_restrictions_after_assigned_pod_deleted(pod: Pod, deleted: Pod, want: QueueingHint) -> None:
    assert after_assigned_pod_deleted(pod, deleted, None) is want


_ONE_CLAIM = make_pod("pod-with-one-pvc").volume("v", claim="claim-with-rwx-1").node("node-1").obj()
_TWO_CLAIMS = (make_pod("pod-with-two-pvcs").volume("a", claim="claim-with-rwx-1").volume("b", claim="claim-with-rwx-2")
               .node("node-1").obj())


@pytest.mark.parametrize(("pod", "added", "want"), [
    pytest.param(_TWO_CLAIMS, _pvc("claim-with-rwx-1"), QUEUE, id="queue-new-object-pvc-belong-pod"),
    pytest.param(_ONE_CLAIM, _pvc("claim-with-rwx-2"), SKIP, id="skip-new-object-unused"),
    pytest.param(make_pod("pod-with-one-pvc", "kube-system").volume("v", claim="claim-with-rwx-1").obj(),
                 _pvc("claim-with-rwx-1"), SKIP, id="skip-new-object-namespace-not-equal-pod"),
])
def test_restrictions_after_claim_added(pod: Pod, added: PersistentVolumeClaim, want: QueueingHint) -> None:
    assert after_claim_added(pod, None, added) is want


# --- the queue asks the hints ----------------------------------------------------------------------------------

PVC_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)
SC_ADD = ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD)


def _queue_with(events: dict[str, Any]) -> tuple[SchedulingQueue, FakeClock]:
    clock = FakeClock()
    return SchedulingQueue(clock, plugin_events={"default-scheduler": events}), clock


def _park(queue: SchedulingQueue, pod: Pod, *plugins: str) -> None:
    queue.add(pod)
    info = queue.pop_nowait()
    assert isinstance(info, QueuedPodInfo)
    info.unschedulable_plugins = set(plugins)
    queue.add_unschedulable_if_not_present(info)
    assert queue.where(pod.metadata.uid) == "unschedulable"


def test_the_queue_moves_a_pod_only_when_a_rejecting_plugins_hint_says_queue() -> None:
    queue, _ = _queue_with({"VolumeZone": VolumeZone().events_to_register()})
    user, other = make_pod("user").volume("v", claim="data").obj(), make_pod("other").volume("v", claim="x").obj()
    _park(queue, user, "VolumeZone")
    _park(queue, other, "VolumeZone")
    assert queue.move_all_to_active_or_backoff(PVC_ADD, objects=(None, _pvc("data"))) == 1
    assert queue.where(user.metadata.uid) != "unschedulable"
    assert queue.where(other.metadata.uid) == "unschedulable"
    # The same event reported without its objects moves on interest alone.
    assert queue.move_all_to_active_or_backoff(PVC_ADD) == 1


def test_a_registration_without_a_hint_or_a_failing_hint_queues() -> None:
    def broken(pod: Pod, old: Any, new: Any) -> QueueingHint:
        raise TypeError("unexpected objects are passed")

    queue, _ = _queue_with({"NoHint": (ClusterEventWithHint(SC_ADD),),
                            "Broken": (ClusterEventWithHint(SC_ADD, broken),),
                            "Skips": (ClusterEventWithHint(SC_ADD, lambda p, o, n: SKIP),)})
    a, b, c = make_pod("a").obj(), make_pod("b").obj(), make_pod("c").obj()
    _park(queue, a, "NoHint")
    _park(queue, b, "Broken")
    _park(queue, c, "Skips")
    sc = StorageClass(metadata=ObjectMeta(name="sc"))
    assert queue.move_all_to_active_or_backoff(SC_ADD, objects=(None, sc)) == 2
    assert queue.where(c.metadata.uid) == "unschedulable"


def test_a_pod_rejected_by_two_plugins_moves_when_either_says_queue() -> None:
    queue, _ = _queue_with({"Skips": (ClusterEventWithHint(SC_ADD, lambda p, o, n: SKIP),),
                            "Queues": (ClusterEventWithHint(SC_ADD, lambda p, o, n: QUEUE),)})
    pod = make_pod("a").obj()
    _park(queue, pod, "Skips", "Queues")
    assert queue.move_all_to_active_or_backoff(SC_ADD, objects=(None, object())) == 1


def test_an_assigned_pods_deletion_reaches_the_hints_with_the_deleted_pod() -> None:
    """handlers.pod_deleted reports AssignedPodDelete with the deleted pod as the old object: the pod
    VolumeRestrictions rejected for a disk stays unless the deleted pod held that disk; the pod a
    plugin without a hint rejected moves."""

    queue, _ = _queue_with({"VolumeRestrictions": VolumeRestrictions().events_to_register(),
                            "NodeResourcesFit": (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),)})
    cache = Cache()
    cache.add_node(make_node("n1").obj())
    handlers = ClusterEventHandlers(cache, queue, {"default-scheduler"})
    disk, cpu = _disk_pod("disk", _GCE_FOO), make_pod("cpu").obj()
    _park(queue, disk, "VolumeRestrictions")
    _park(queue, cpu, "NodeResourcesFit")
    unrelated = make_pod("unrelated").node("n1").obj()
    cache.add_pod(unrelated)
    handlers.pod_deleted(unrelated)
    assert queue.where(disk.metadata.uid) == "unschedulable"
    assert queue.where(cpu.metadata.uid) != "unschedulable"
    holder = _with_volumes(make_pod("holder").node("n1").obj(), _GCE_FOO)
    cache.add_pod(holder)
    handlers.pod_deleted(holder)
    assert queue.where(disk.metadata.uid) != "unschedulable"
