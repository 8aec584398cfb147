"""kube-scheduler's volumebinding test objects (binder_test.go's makeTestPV / makeTestPVC and its
named claims and PVs), built with tests/builders.py, for the VolumeBinding tests."""

from __future__ import annotations

from kubesched.model.objects import LabelSelector, Node, ObjectMeta
from kubesched.model.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    VOLUME_AVAILABLE,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorLabelRequirement,
    TopologySelectorTerm,
)
from tests.builders import make_node, make_pv, make_pvc, make_storage_class, term

NS = "testns"
NODE_LABEL = "nodeKey"
WAIT = "waitClass"
IMMEDIATE = "immediateClass"
WAIT_PROVISIONER = "waitClassWithProvisioner"
TOPOLOGY_MISMATCH = "topologyMismatchClass"
PROVISIONER = "test-provisioner"

UNBOUND, PREBOUND, BOUND, SELECTED_NODE = range(4)


def pvc(name: str, size: str, state: int = UNBOUND, pv_name: str = "", rv: str = "1",
        cls: str | None = WAIT, node: str = "") -> PersistentVolumeClaim:
    """makeTestPVC: uid pvc-uid in testns, Filesystem mode."""
    b = make_pvc(name, NS).request(size).storage_class(cls)
    if state == SELECTED_NODE:
        b.annotation(ANN_SELECTED_NODE, node)
    if state == BOUND:
        b.annotation(ANN_BIND_COMPLETED, "yes")
    if state in (BOUND, PREBOUND):
        b.volume_name(pv_name)
    claim = b.obj()
    claim.metadata.uid = "pvc-uid"
    claim.metadata.resource_version = rv
    claim.spec.volume_mode = "Filesystem"
    return claim


def pv(name: str, node: str, capacity: str, rv: str = "1", bound_to: PersistentVolumeClaim | None = None,
       cls: str = WAIT) -> PersistentVolume:
    """makeTestPV: Available, Filesystem, node affinity nodeKey In [node] when a node is given."""
    b = make_pv(name).capacity(capacity).storage_class(cls).phase(VOLUME_AVAILABLE)
    if node:
        b.node_affinity(term((NODE_LABEL, "In", [node])))
    if bound_to is not None:
        b.claim_ref(bound_to.metadata.namespace, bound_to.metadata.name, bound_to.metadata.uid)
    volume = b.obj()
    volume.metadata.uid = ""
    volume.metadata.resource_version = rv
    volume.spec.volume_mode = "Filesystem"
    if bound_to is not None:
        volume.metadata.annotations = {ANN_BOUND_BY_CONTROLLER: "yes"}
    return volume


def node(name: str, **labels: str) -> Node:
    b = make_node(name).label(NODE_LABEL, name)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def classes() -> list[StorageClass]:
    wait_provisioner = make_storage_class(WAIT_PROVISIONER, PROVISIONER, "WaitForFirstConsumer")
    mismatch = make_storage_class(TOPOLOGY_MISMATCH, PROVISIONER, "WaitForFirstConsumer")
    mismatch.allowed_topologies = [TopologySelectorTerm(match_label_expressions=[
        TopologySelectorLabelRequirement(key="nodeKey", values=["node-x"])])]
    return [make_storage_class(IMMEDIATE, binding_mode="Immediate"),
            make_storage_class(WAIT, binding_mode="WaitForFirstConsumer"), wait_provisioner, mismatch]


def capacity(name: str, cls: str, node_name: str | None, cap: str | None,
             max_size: str | None = None) -> CSIStorageCapacity:
    """makeCapacity: nodeTopology matching the node's nodeKey label, none for network-attached."""
    topology = None if node_name is None else LabelSelector(match_labels={NODE_LABEL: node_name})
    return CSIStorageCapacity(metadata=ObjectMeta(name=name, namespace=NS), storage_class_name=cls,
                              node_topology=topology, capacity=cap, maximum_volume_size=max_size)


# binder_test.go's named claims and PVs.
unbound_pvc = pvc("unbound-pvc", "1G")
unbound_pvc2 = pvc("unbound-pvc2", "5G")
prebound_pvc = pvc("prebound-pvc", "1G", PREBOUND, "pv-node1a")
bound_pvc = pvc("bound-pvc", "1G", BOUND, "pv-bound")
immediate_unbound_pvc = pvc("immediate-unbound-pvc", "1G", cls=IMMEDIATE)
immediate_bound_pvc = pvc("immediate-bound-pvc", "1G", BOUND, "pv-bound-immediate", cls=IMMEDIATE)
provisioned_pvc = pvc("provisioned-pvc", "1Gi", cls=WAIT_PROVISIONER)
provisioned_pvc2 = pvc("provisioned-pvc2", "1Gi", cls=WAIT_PROVISIONER)
no_provisioner_pvc = pvc("no-provisioner-pvc", "1Gi")
topology_mismatch_pvc = pvc("topo-pvc", "1Gi", cls=TOPOLOGY_MISMATCH)
selected_node_pvc = pvc("provisioned-pvc", "1Gi", SELECTED_NODE, cls=WAIT_PROVISIONER, node="node1")

pv_node1a = pv("pv-node1a", "node1", "5G")
pv_node1b = pv("pv-node1b", "node1", "10G")
pv_node2 = pv("pv-node2", "node2", "1G")
pv_bound = pv("pv-bound", "node1", "1G", bound_to=bound_pvc)
pv_node1a_bound = pv("pv-node1a", "node1", "5G", bound_to=unbound_pvc)
pv_bound_immediate = pv("pv-bound-immediate", "node1", "1G", bound_to=immediate_bound_pvc, cls=IMMEDIATE)
pv_bound_immediate_node2 = pv("pv-bound-immediate", "node2", "1G", bound_to=immediate_bound_pvc, cls=IMMEDIATE)
