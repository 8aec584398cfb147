"""The storage structs decode the apiserver's JSON (as kubectl get -o json shows it), nulls included,
and the storage informers reach the queue with kube-scheduler's event names."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.api import ApiClient
from kubesched.api.informer import Codec
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.backend.cache.cache import Cache
from kubesched.config import load
from kubesched.framework import events
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.types import PodInfo
from kubesched.model.decode import TolerantDecoder
from kubesched.model.objects import Pod
from kubesched.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.scheduler.eventhandlers import StorageHandlers
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod

PV = {
    "apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "pv-a", "uid": "u1", "resourceVersion": "7", "labels": {"topology.kubernetes.io/zone": "z1"},
                 "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}, "deletionTimestamp": None},
    "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
             "volumeMode": "Filesystem", "persistentVolumeReclaimPolicy": "Retain",
             "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "data", "uid": "c1",
                          "apiVersion": "v1", "resourceVersion": "5"},
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-a"]}]}]}},
             "local": {"path": "/mnt/disks/a"}},
    "status": {"phase": "Bound", "lastPhaseTransitionTime": "2026-01-01T00:00:00Z"},
}
PV_CSI = {"metadata": {"name": "pv-csi"},
          "spec": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4",
                           "volumeAttributes": {"a": "b"}}}}
PV_IN_TREE = {"metadata": {"name": "pv-tree"}, "spec": {
    "gcePersistentDisk": {"pdName": "pd-1", "readOnly": True}, "awsElasticBlockStore": {"volumeID": "aws://z/vol-2"},
    "azureDisk": {"diskName": "d", "diskURI": "uri"}, "cinder": {"volumeID": "c"},
    "rbd": {"monitors": ["m1"], "image": "img"}, "iscsi": {"targetPortal": "t:3260", "iqn": "iqn.x", "lun": 1},
    "vsphereVolume": {"volumePath": "[ds] p"}, "portworxVolume": {"volumeID": "px"},
    "azureFile": {"secretName": "s", "shareName": "sh", "secretNamespace": None}}}
PVC = {
    "metadata": {"name": "data", "namespace": "ns", "annotations": {
        "volume.kubernetes.io/selected-node": "node-a", "pv.kubernetes.io/bind-completed": "yes",
        "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"}},
    "spec": {"accessModes": ["ReadWriteOncePod"], "resources": {"requests": {"storage": "1Gi"}},
             "volumeName": "pv-a", "storageClassName": "local", "volumeMode": "Block",
             "selector": {"matchLabels": {"tier": "db"}},
             "dataSource": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"}},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "10Gi"}},
}
STORAGE_CLASS = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
                 "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer",
                 "reclaimPolicy": "Delete", "parameters": {"x": "y"},
                 "allowedTopologies": [{"matchLabelExpressions": [
                     {"key": "topology.kubernetes.io/zone", "values": ["z1", "z2"]}]}]}
CSI_NODE = {"metadata": {"name": "node-a", "annotations": {
    "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}},
    "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": ["topology.ebs.csi.aws.com/zone"],
                          "allocatable": {"count": 25}},
                         {"name": "nolimit", "nodeID": "n", "topologyKeys": None}]}}
CSI_DRIVER = {"metadata": {"name": "ebs.csi.aws.com"},
              "spec": {"attachRequired": False, "storageCapacity": True, "podInfoOnMount": False,
                       "volumeLifecycleModes": ["Persistent"]}}
CAPACITY = {"metadata": {"name": "cap-1", "namespace": "kube-system"}, "storageClassName": "local",
            "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "z1"}},
            "capacity": "100Gi", "maximumVolumeSize": "50Gi"}
ATTACHMENT = {"metadata": {"name": "csi-123"}, "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "node-a",
                                                         "source": {"persistentVolumeName": "pv-csi"}},
              "status": {"attached": True}}


def _decode(type_: type[Any], obj: dict[str, Any]) -> Any:
    return TolerantDecoder(type_).decode(json.dumps(obj).encode())


def test_persistent_volume() -> None:
    pv = _decode(PersistentVolume, PV)
    assert pv.name == "pv-a"
    assert pv.metadata.labels == {"topology.kubernetes.io/zone": "z1"}
    assert pv.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert pv.spec.capacity == {"storage": "10Gi"}
    assert pv.spec.access_modes == ["ReadWriteOnce"]
    assert (pv.spec.storage_class_name, pv.spec.volume_mode) == ("local", "Filesystem")
    assert pv.spec.persistent_volume_reclaim_policy == "Retain"
    assert pv.spec.claim_ref is not None
    assert (pv.spec.claim_ref.namespace, pv.spec.claim_ref.name, pv.spec.claim_ref.uid) == ("ns", "data", "c1")
    assert pv.spec.node_affinity is not None
    assert pv.spec.node_affinity.required is not None
    term = pv.spec.node_affinity.required.node_selector_terms[0]
    assert term.match_expressions[0].values == ["node-a"]
    assert pv.status.phase == "Bound"
    assert pv.spec.csi is None
    assert pv.spec.gce_persistent_disk is None


def test_persistent_volume_sources() -> None:
    csi = _decode(PersistentVolume, PV_CSI).spec.csi
    assert (csi.driver, csi.volume_handle) == ("ebs.csi.aws.com", "vol-1")
    spec = _decode(PersistentVolume, PV_IN_TREE).spec
    assert (spec.gce_persistent_disk.pd_name, spec.gce_persistent_disk.read_only) == ("pd-1", True)
    assert spec.aws_elastic_block_store.volume_id == "aws://z/vol-2"
    assert (spec.azure_disk.disk_name, spec.azure_disk.disk_uri) == ("d", "uri")
    assert spec.cinder.volume_id == "c"
    assert (spec.rbd.monitors, spec.rbd.image, spec.rbd.pool) == (["m1"], "img", "rbd")
    assert (spec.iscsi.iqn, spec.iscsi.target_portal, spec.iscsi.lun) == ("iqn.x", "t:3260", 1)
    assert spec.vsphere_volume.volume_path == "[ds] p"
    assert spec.portworx_volume.volume_id == "px"
    assert (spec.azure_file.share_name, spec.azure_file.secret_namespace) == ("sh", None)


def test_persistent_volume_claim() -> None:
    pvc = _decode(PersistentVolumeClaim, PVC)
    assert pvc.key == "ns/data"
    assert pvc.metadata.annotations["volume.kubernetes.io/selected-node"] == "node-a"
    assert pvc.spec.access_modes == ["ReadWriteOncePod"]
    assert pvc.spec.resources.requests == {"storage": "1Gi"}
    assert (pvc.spec.volume_name, pvc.spec.storage_class_name, pvc.spec.volume_mode) == ("pv-a", "local", "Block")
    assert pvc.spec.selector is not None
    assert pvc.spec.selector.match_labels == {"tier": "db"}
    assert pvc.spec.data_source is not None
    assert pvc.spec.data_source.kind == "VolumeSnapshot"
    assert pvc.status.phase == "Bound"


@pytest.mark.parametrize(("class_field", "expected"), [
    pytest.param({}, None, id="absent-asks-for-the-default-class"),
    pytest.param({"storageClassName": None}, None, id="null-asks-for-the-default-class"),
    pytest.param({"storageClassName": ""}, "", id="empty-asks-for-no-class"),
])
def test_claim_class_keeps_nil_apart_from_empty(class_field: dict[str, Any], expected: str | None) -> None:
    pvc = _decode(PersistentVolumeClaim, {"metadata": {"name": "c", "namespace": "n"}, "spec": class_field})
    assert pvc.spec.storage_class_name == expected


def test_storage_class() -> None:
    sc = _decode(StorageClass, STORAGE_CLASS)
    assert (sc.metadata.name, sc.provisioner, sc.volume_binding_mode) == (
        "local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer")
    expr = sc.allowed_topologies[0].match_label_expressions[0]
    assert (expr.key, expr.values) == ("topology.kubernetes.io/zone", ["z1", "z2"])
    assert _decode(StorageClass, {"metadata": {"name": "x"}}).volume_binding_mode is None


def test_csi_node() -> None:
    node = _decode(CSINode, CSI_NODE)
    assert node.name == "node-a"
    assert node.metadata.annotations["storage.alpha.kubernetes.io/migrated-plugins"] == "kubernetes.io/aws-ebs"
    limited, unlimited = node.spec.drivers
    assert (limited.name, limited.node_id, limited.topology_keys) == ("ebs.csi.aws.com", "i-1",
                                                                      ["topology.ebs.csi.aws.com/zone"])
    assert limited.allocatable is not None
    assert limited.allocatable.count == 25
    assert unlimited.allocatable is None
    assert unlimited.topology_keys == []


def test_csi_driver() -> None:
    driver = _decode(CSIDriver, CSI_DRIVER)
    assert (driver.name, driver.spec.attach_required, driver.spec.storage_capacity) == ("ebs.csi.aws.com", False, True)
    defaults = _decode(CSIDriver, {"metadata": {"name": "d"}, "spec": {}}).spec
    assert (defaults.attach_required, defaults.storage_capacity) == (True, False)


def test_csi_storage_capacity() -> None:
    cap = _decode(CSIStorageCapacity, CAPACITY)
    assert (cap.metadata.namespace, cap.storage_class_name, cap.capacity, cap.maximum_volume_size) == (
        "kube-system", "local", "100Gi", "50Gi")
    assert cap.node_topology is not None
    assert cap.node_topology.match_labels == {"topology.kubernetes.io/zone": "z1"}
    unknown = _decode(CSIStorageCapacity, {"metadata": {"name": "c"}, "storageClassName": "s", "capacity": None})
    assert (unknown.capacity, unknown.node_topology) == (None, None)


def test_volume_attachment() -> None:
    va = _decode(VolumeAttachment, ATTACHMENT)
    assert (va.spec.attacher, va.spec.node_name, va.spec.source.persistent_volume_name) == (
        "ebs.csi.aws.com", "node-a", "pv-csi")


def test_pod_volumes_decode_claims_ephemeral_and_in_tree_disks() -> None:
    pod = _decode(Pod, {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
        {"name": "gce", "gcePersistentDisk": {"pdName": "pd", "readOnly": True, "partition": 1}},
        {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1"}},
        {"name": "rbd", "rbd": {"monitors": ["a", "b"], "image": "i", "pool": "p", "readOnly": None}},
        {"name": "iscsi", "iscsi": {"targetPortal": "t", "iqn": "q", "lun": 0}},
        {"name": "az", "azureDisk": {"diskName": "d", "diskURI": "u"}},
        {"name": "cfg", "configMap": {"name": "c"}},
    ]}})
    data, scratch, gce, ebs, rbd, iscsi, az, cfg = pod.spec.volumes
    assert data.persistent_volume_claim is not None
    assert data.persistent_volume_claim.claim_name == "data"
    assert scratch.ephemeral is not None
    assert gce.gce_persistent_disk is not None
    assert gce.gce_persistent_disk.pd_name == "pd"
    assert ebs.aws_elastic_block_store is not None
    assert ebs.aws_elastic_block_store.volume_id == "vol-1"
    assert rbd.rbd is not None
    assert (rbd.rbd.monitors, rbd.rbd.pool, rbd.rbd.read_only) == (["a", "b"], "p", False)
    assert iscsi.iscsi is not None
    assert iscsi.iscsi.iqn == "q"
    assert az.azure_disk is not None
    assert az.azure_disk.disk_uri == "u"
    assert (cfg.name, cfg.persistent_volume_claim, cfg.gce_persistent_disk) == ("cfg", None, None)


@pytest.mark.parametrize(("type_", "obj"), [
    pytest.param(PersistentVolume, PV, id="pv"), pytest.param(PersistentVolumeClaim, PVC, id="pvc"),
    pytest.param(StorageClass, STORAGE_CLASS, id="storageclass"), pytest.param(CSINode, CSI_NODE, id="csinode"),
    pytest.param(CSIDriver, CSI_DRIVER, id="csidriver"), pytest.param(CSIStorageCapacity, CAPACITY, id="capacity"),
    pytest.param(VolumeAttachment, ATTACHMENT, id="volumeattachment"),
])
def test_a_list_page_decodes_typed(type_: type[Any], obj: dict[str, Any]) -> None:
    codec: Codec[Any] = Codec(type_)
    meta, items, skipped = codec.decode_list(json.dumps(
        {"metadata": {"resourceVersion": "9"}, "items": [obj, {"metadata": {"name": "bad", "labels": 3}}]}).encode())
    assert meta.resource_version == "9"
    assert len(items) == 1
    assert skipped
    assert skipped[0].key == "bad"


def test_static_storage_keys_objects_as_informers_do() -> None:
    storage = StaticStorage(volumes=[_decode(PersistentVolume, PV)], claims=[_decode(PersistentVolumeClaim, PVC)],
                            classes=[_decode(StorageClass, STORAGE_CLASS)], csi_nodes=[_decode(CSINode, CSI_NODE)],
                            csi_drivers=[_decode(CSIDriver, CSI_DRIVER)],
                            capacities=[_decode(CSIStorageCapacity, CAPACITY)],
                            attachments=[_decode(VolumeAttachment, ATTACHMENT)])
    assert storage.persistent_volume("pv-a") is not None
    assert storage.persistent_volume("nope") is None
    assert storage.claim("ns", "data") is not None
    assert storage.claim("other", "data") is None
    assert storage.storage_class("local") is not None
    assert storage.csi_node("node-a") is not None
    assert storage.csi_driver("ebs.csi.aws.com") is not None
    assert [c.metadata.name for c in storage.storage_capacities()] == ["cap-1"]
    assert [a.metadata.name for a in storage.volume_attachments()] == ["csi-123"]


def test_storage_events_are_labelled_as_kube_scheduler_labels_them() -> None:
    assert ClusterEvent(EventResource.CSI_NODE, ActionType.ADD).label == "storage.k8s.io/CSINodeAdd"
    assert ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.UPDATE).label == "PersistentVolumeClaimUpdate"
    registered = ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE)
    assert registered.matches(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.UPDATE))
    assert not registered.matches(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.DELETE))
    assert not registered.matches(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD))


def test_storage_handlers_report_add_update_delete_with_their_objects() -> None:
    moved: list[tuple[ClusterEvent, tuple[Any, Any] | None]] = []

    def move(event: ClusterEvent, pre_check: Callable[[Pod], bool] | None = None,
             objects: tuple[Any, Any] | None = None) -> int:
        assert pre_check is None
        moved.append((event, objects))
        return 0

    old, new = object(), object()
    handlers = StorageHandlers(move, EventResource.STORAGE_CLASS)
    handlers.on_add(new)
    handlers.on_update(old, new)
    handlers.on_delete(old)
    assert [(e.label, objs) for e, objs in moved] == [
        ("storage.k8s.io/StorageClassAdd", (None, new)), ("storage.k8s.io/StorageClassUpdate", (old, new)),
        ("storage.k8s.io/StorageClassDelete", (old, None))]


def test_the_scheduler_runs_and_wires_every_storage_informer() -> None:
    sched = Scheduler(ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test")), load(None))
    paths = {i.resource.path for i in sched._informers}
    assert {"/api/v1/persistentvolumes", "/api/v1/persistentvolumeclaims", "/apis/storage.k8s.io/v1/storageclasses",
            "/apis/storage.k8s.io/v1/csinodes", "/apis/storage.k8s.io/v1/csidrivers",
            "/apis/storage.k8s.io/v1/csistoragecapacities", "/apis/storage.k8s.io/v1/volumeattachments"} <= paths
    assert sched._informers[-1] is sched.sources.pods  # pods last: their volumes' objects are known first
    for resource, informer in sched.sources.storage_informers:
        assert isinstance(informer.handler, StorageHandlers)
        assert resource in events.STORAGE_RESOURCES
    pv = _decode(PersistentVolume, PV)
    sched.sources.persistent_volumes.store["pv-a"] = pv
    assert sched.sources.storage.persistent_volume("pv-a") is pv


def test_the_snapshot_counts_the_claims_pods_use_across_nodes() -> None:
    cache = Cache()
    for name in ("a", "b"):
        cache.add_node(make_node(name).obj())
    snap = cache.snapshot()
    user = make_pod("user", "ns").volume("v", claim="data").node("a").obj()
    cache.add_pod(user)
    assert snap.is_pvc_used_by_pods("ns/data")
    assert not snap.is_pvc_used_by_pods("other/data")
    assumed = PodInfo(make_pod("second", "ns").volume("v", claim="data").obj())
    cache.assume_pod(assumed, "b")
    assert snap.used_pvcs == {"ns/data": 2}
    cache.remove_pod(user)
    assert snap.used_pvcs == {"ns/data": 1}
    cache.forget_pod(assumed)
    assert not snap.is_pvc_used_by_pods("ns/data")
    assert snap.used_pvcs == {}
    # a rebuilt snapshot (a node added) counts from the node infos
    cache.add_pod(make_pod("third", "ns").volume("v", claim="data").volume("e", ephemeral=True).node("b").obj())
    cache.add_node(make_node("c").obj())
    assert cache.snapshot().used_pvcs == {"ns/data": 1}
