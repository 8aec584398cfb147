"""In-tree PVs read as CSI ones where the node migrated their plugin: csi-translation-lib's topology
translation (in_tree_volume_test.go TestTranslateTopologyFromInTreeToCSI, TestAddTopology) and the
binder's use of it (binder_test.go TestFindPodVolumesWithCSIMigration, TestCheckBindingsWithCSIMigration)."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.framework.handle import Handle, Lister
from kubesched.framework.status import SchedulingError
from kubesched.model.objects import Node, NodeSelectorRequirement, NodeSelectorTerm, Pod
from kubesched.model.storage import (
    ANN_MIGRATED_PLUGINS,
    ANN_SELECTED_NODE,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
)
from kubesched.model.volume_sources import (
    AWSElasticBlockStoreVolumeSource,
    GCEPersistentDiskVolumeSource,
    RBDVolumeSource,
)
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.plugins.volume_binding import new, parse_args
from kubesched.plugins.volume_binding.batch import filter_rows
from kubesched.plugins.volume_binding.binder import (
    ERR_REASON_NODE_CONFLICT,
    BinderError,
    BindingInfo,
    DynamicProvision,
    PodVolumes,
    VolumeBinder,
)
from kubesched.plugins.volume_binding.migration import (
    AWS_EBS_TOPOLOGY_KEY,
    BETA_REGION,
    BETA_ZONE,
    GCE_PD_TOPOLOGY_KEY,
    REGION,
    ZONE,
    migrated_on_node,
    translate_topology,
    try_translate_pv_to_csi,
)
from kubesched.plugins.volume_binding.plugin import NAME
from kubesched.plugins.volume_binding.prebind import VolumeBindingWaiter
from tests.builders import NodeBuilder, make_csi_node, make_node, make_pod, make_pv
from tests.unit import volume_fixtures as f
from tests.unit.scheduling_helpers import snapshot_with
from tests.unit.volume_fixtures import BOUND, NS, UNBOUND, WAIT, WAIT_PROVISIONER, pvc

GCE_PD = "kubernetes.io/gce-pd"


def _req(key: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator="In", values=list(values))


def _pv(labels: dict[str, str], *terms: NodeSelectorTerm, gce: bool = True) -> PersistentVolume:
    b = make_pv("gcepd")
    for k, v in labels.items():
        b.label(k, v)
    if terms:
        b.node_affinity(*terms)
    volume = b.obj()
    if gce:
        volume.spec.gce_persistent_disk = GCEPersistentDiskVolumeSource(pd_name="test-disk", fs_type="ext4")
    return volume


_GA_LABELS = {ZONE: "us-east1-a", REGION: "us-east1"}


def _terms(pv_affinity: object) -> list[list[tuple[str, str, list[str]]]]:
    assert pv_affinity is not None
    required = pv_affinity.required  # type: ignore[attr-defined]
    return [[(r.key, r.operator, r.values) for r in t.match_expressions] for t in required.node_selector_terms]


@pytest.mark.parametrize(("pv", "key", "want"), [
    pytest.param(_pv(_GA_LABELS, NodeSelectorTerm(match_expressions=[_req(ZONE, "us-east1-a"),
                                                                    _req(REGION, "us-east1")])),
                 GCE_PD_TOPOLOGY_KEY,
                 [[(GCE_PD_TOPOLOGY_KEY, "In", ["us-east1-a"]), (REGION, "In", ["us-east1"])]],
                 id="Replace GA Kubernetes Zone Topology to GCE CSI Topology"),
    pytest.param(_pv(_GA_LABELS, NodeSelectorTerm(match_expressions=[_req(BETA_ZONE, "us-west2-b"),
                                                                    _req(BETA_REGION, "us-west2")])),
                 GCE_PD_TOPOLOGY_KEY,
                 [[(GCE_PD_TOPOLOGY_KEY, "In", ["us-west2-b"]), (REGION, "In", ["us-west2"])]],
                 id="Replace Beta Kubernetes Topology to GCE CSI Topology and upgrade region label"),
    # addTopology, from the zone label when the affinity names no zone
    pytest.param(_pv({BETA_ZONE: "us-east-1", BETA_REGION: "us-east-1a"}), GCE_PD_TOPOLOGY_KEY,
                 [[(GCE_PD_TOPOLOGY_KEY, "In", ["us-east-1"])]], id="zone label added to a PV without affinity"),
    pytest.param(_pv({ZONE: "us-central1-f__us-central1-a__ __us-central1-c"}), AWS_EBS_TOPOLOGY_KEY,
                 [[(AWS_EBS_TOPOLOGY_KEY, "In", ["us-central1-a", "us-central1-c", "us-central1-f"])]],
                 id="unsorted and whitespace-named zones"),
    pytest.param(_pv({ZONE: "z1"}, NodeSelectorTerm(match_expressions=[_req("kubernetes.io/hostname", "n1")]),
                     NodeSelectorTerm(match_expressions=[_req("kubernetes.io/hostname", "n2")])),
                 GCE_PD_TOPOLOGY_KEY,
                 [[("kubernetes.io/hostname", "In", ["n1"]), (GCE_PD_TOPOLOGY_KEY, "In", ["z1"])],
                  [("kubernetes.io/hostname", "In", ["n2"]), (GCE_PD_TOPOLOGY_KEY, "In", ["z1"])]],
                 id="the zone is added to every term"),
])
def test_translate_topology(pv: PersistentVolume, key: str, want: list[list[tuple[str, str, list[str]]]]) -> None:
    before = msgspec.json.encode(pv)
    assert _terms(translate_topology(pv, key)) == want
    assert msgspec.json.encode(pv) == before  # the PV itself is left as it was (Go translates a deep copy)


@pytest.mark.parametrize("zones", [pytest.param(" ", id="only whitespace-named zones"),
                                   pytest.param("", id="empty zones")])
def test_no_valid_zone_adds_nothing(zones: str) -> None:
    assert translate_topology(_pv({ZONE: zones}), GCE_PD_TOPOLOGY_KEY) is None


@pytest.mark.parametrize(("annotation", "want"), [
    pytest.param(None, False, id="no annotation"),
    pytest.param("", False, id="empty"),
    pytest.param(GCE_PD, True, id="listed"),
    pytest.param(f"kubernetes.io/aws-ebs,{GCE_PD}", True, id="listed second"),
    pytest.param(f"kubernetes.io/aws-ebs, {GCE_PD}", False, id="not trimmed, as Go splits it"),
])
def test_migrated_on_node(annotation: str | None, want: bool) -> None:
    node = make_csi_node("node1", annotations=None if annotation is None else {ANN_MIGRATED_PLUGINS: annotation})
    assert migrated_on_node(GCE_PD, node) is want
    assert migrated_on_node(GCE_PD, None) is False


def test_a_pv_that_does_not_translate_is_an_error_where_migrated() -> None:
    pv = make_pv("ebs").obj()
    pv.spec = PersistentVolumeSpec(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="aws://zone/x"))
    migrated = make_csi_node("node1", annotations={ANN_MIGRATED_PLUGINS: "kubernetes.io/aws-ebs"})
    assert try_translate_pv_to_csi(pv, None) is pv
    with pytest.raises(Exception, match=r"^could not translate pv: failed to translate Kubernetes ID to EBS Volume "
                                        r"ID Invalid format for AWS volume \(aws://zone/x\)$"):
        try_translate_pv_to_csi(pv, migrated)


# --- the binder (binder_test.go's CSI migration fixtures) ------------------------------------------------------

ZONE1_LABELS = {BETA_ZONE: "us-east-1", BETA_REGION: "us-east-1a"}
NODE1_ZONE1 = make_node("node1").label("topology.gke.io/zone", "us-east-1").obj()
NODE1_ZONE2 = make_node("node1").label("topology.gke.io/zone", "us-east-2").obj()
CSI_NODE1_MIGRATED = make_csi_node("node1", annotations={ANN_MIGRATED_PLUGINS: GCE_PD})
CSI_NODE1_NOT_MIGRATED = make_csi_node("node1", annotations={ANN_MIGRATED_PLUGINS: ""})

BOUND_MIGRATION_PVC = pvc("pvc-migration-bound", "1G", BOUND, "pv-migration-bound")
PROV_MIGRATION_PVC_BOUND = pvc("pvc-migration-provisioned", "1Gi", BOUND, "pv-migration-bound", cls=WAIT_PROVISIONER)
UNBOUND_PVC = pvc("unbound-pvc", "1G", UNBOUND)


def migration_pv(claim: PersistentVolumeClaim, migration_enabled: bool = True) -> PersistentVolume:
    """makeTestPVForCSIMigration: zone1 labels, no node affinity, a GCE PD (migrated) or an RBD disk."""
    volume = f.pv("pv-migration-bound", "", "1G", bound_to=claim, cls=WAIT)
    volume.metadata.labels = dict(ZONE1_LABELS)
    if migration_enabled:
        volume.spec.gce_persistent_disk = GCEPersistentDiskVolumeSource(pd_name="test-disk", fs_type="ext4")
    else:
        volume.spec.rbd = RBDVolumeSource(image="test-disk")
    return volume


def _binder(pvs: list[PersistentVolume], claims: list[PersistentVolumeClaim],
            csi_nodes: list[CSINode]) -> VolumeBinder:
    return VolumeBinder(StaticStorage(volumes=pvs, claims=claims, classes=f.classes(), csi_nodes=csi_nodes))


def _pod(*claims: PersistentVolumeClaim) -> Pod:
    b = make_pod("test-pod", NS).node("node1")
    for i, c in enumerate(claims):
        b.volume(f"vol{i}", claim=c.metadata.name)
    return b.obj()


@pytest.mark.parametrize(("node", "csi_nodes", "reasons"), [
    pytest.param(NODE1_ZONE1, [CSI_NODE1_MIGRATED], [], id="pvc-bound"),
    pytest.param(NODE1_ZONE1, [CSI_NODE1_NOT_MIGRATED], [], id="pvc-bound,csinode-not-migrated"),
    pytest.param(NODE1_ZONE1, [], [], id="pvc-bound,missing-csinode"),
    pytest.param(NODE1_ZONE2, [CSI_NODE1_MIGRATED], [ERR_REASON_NODE_CONFLICT], id="pvc-bound,node-different-zone"),
    # not in kube-scheduler's table: without migration the zone is not read at all
    pytest.param(NODE1_ZONE2, [CSI_NODE1_NOT_MIGRATED], [], id="pvc-bound,node-different-zone,not-migrated"),
])
def test_find_pod_volumes_with_csi_migration(node: Node, csi_nodes: list[CSINode], reasons: list[str]) -> None:
    b = _binder([migration_pv(BOUND_MIGRATION_PVC)], [BOUND_MIGRATION_PVC], csi_nodes)
    pod = _pod(BOUND_MIGRATION_PVC)
    _, got = b.find_pod_volumes(pod, b.pod_volume_claims(pod), node)
    assert got == reasons


def test_a_bound_pv_that_does_not_translate_fails_the_filter_with_an_error() -> None:
    claim = BOUND_MIGRATION_PVC
    volume = migration_pv(claim)
    volume.metadata.labels = {BETA_ZONE: "us-east1-a__europe-west1-b"}  # two regions: GCE PD's handle fails
    b = _binder([volume], [claim], [CSI_NODE1_MIGRATED])
    pod = _pod(claim)
    with pytest.raises(BinderError, match=r"^could not translate pv: failed to get region from zones: multiple or "
                                          r"no regions gotten from zones"):
        b.find_pod_volumes(pod, b.pod_volume_claims(pod), NODE1_ZONE1)


class _Store(Lister[object]):
    def __init__(self, objs: dict[str, object]) -> None:
        self.objs = objs

    def get(self, key: str) -> object | None:
        return self.objs.get(key)

    def list(self) -> list[object]:
        return list(self.objs.values())


def _waiter(b: VolumeBinder, node: Node, pod: Pod) -> VolumeBindingWaiter:
    async def unused(*args: object) -> object:
        raise AssertionError("no write expected")

    return VolumeBindingWaiter(b, _Store({f"{NS}/test-pod": pod}), _Store({"node1": node}),  # type: ignore[arg-type]
                               unused, unused, unused, lambda: 0.0)  # type: ignore[arg-type]


def _provisioned(claim: PersistentVolumeClaim) -> PersistentVolumeClaim:
    meta = claim.metadata
    return msgspec.structs.replace(claim, metadata=msgspec.structs.replace(
        meta, annotations={**meta.annotations, ANN_SELECTED_NODE: "node1"}))


@pytest.mark.parametrize(("pvs", "claims", "bindings", "provisioned", "node", "csi_nodes", "fails", "bound"), [
    pytest.param([migration_pv(BOUND_MIGRATION_PVC)], [_provisioned(PROV_MIGRATION_PVC_BOUND)], [],
                 [_provisioned(PROV_MIGRATION_PVC_BOUND)], NODE1_ZONE1, [CSI_NODE1_MIGRATED], False, True,
                 id="provisioning-pvc-bound"),
    pytest.param([migration_pv(UNBOUND_PVC)], [UNBOUND_PVC], [UNBOUND_PVC], [], NODE1_ZONE1, [CSI_NODE1_MIGRATED],
                 False, False, id="binding-node-pv-same-zone"),
    pytest.param([migration_pv(UNBOUND_PVC)], [UNBOUND_PVC], [UNBOUND_PVC], [], NODE1_ZONE1, [], False, False,
                 id="binding-without-csinode"),
    pytest.param([migration_pv(UNBOUND_PVC)], [UNBOUND_PVC], [UNBOUND_PVC], [], NODE1_ZONE1,
                 [CSI_NODE1_NOT_MIGRATED], False, False, id="binding-non-migrated-plugin"),
    pytest.param([migration_pv(UNBOUND_PVC)], [UNBOUND_PVC], [UNBOUND_PVC], [], NODE1_ZONE2, [CSI_NODE1_MIGRATED],
                 True, False, id="binding-node-pv-in-different-zones"),
    pytest.param([migration_pv(UNBOUND_PVC, migration_enabled=False)], [UNBOUND_PVC], [UNBOUND_PVC], [],
                 NODE1_ZONE2, [CSI_NODE1_MIGRATED], False, False, id="binding-node-pv-different-zones-migration-off"),
])
def test_check_bindings_with_csi_migration(pvs: list[PersistentVolume], claims: list[PersistentVolumeClaim],
                                           bindings: list[PersistentVolumeClaim],
                                           provisioned: list[PersistentVolumeClaim], node: Node,
                                           csi_nodes: list[CSINode], fails: bool, bound: bool) -> None:
    b = _binder(pvs, claims, csi_nodes)
    pod = _pod()
    volumes = PodVolumes([BindingInfo(c, pvs[0]) for c in bindings], [DynamicProvision(c) for c in provisioned])
    waiter = _waiter(b, node, pod)
    if fails:
        with pytest.raises(BinderError, match=r'^binding volumes: pv "pv-migration-bound" node affinity doesn\'t match '
                                              r'node "node1": no matching NodeSelectorTerms$'):
            waiter.check_bindings(pod, "node1", volumes)
        return
    assert waiter.check_bindings(pod, "node1", volumes) is bound


def test_the_plugins_batch_filter_reads_a_migrated_pv_per_node() -> None:
    """Two nodes in zone us-east-1: only the one whose CSINode migrated GCE PD reads the PV's zone
    under topology.gke.io/zone, which it lacks; the other never reads the zone."""
    nodes: list[Node | NodeBuilder] = [make_node("migrated").label(ZONE, "us-east-1"),
                                       make_node("plain").label(ZONE, "us-east-1")]
    st = StaticStorage(volumes=[migration_pv(BOUND_MIGRATION_PVC)], claims=[BOUND_MIGRATION_PVC], classes=f.classes(),
                       csi_nodes=[make_csi_node("migrated", annotations={ANN_MIGRATED_PLUGINS: GCE_PD})])
    pl = new(parse_args({}, "", []), Handle(), st)
    pod = PodInfo(_pod(BOUND_MIGRATION_PVC))
    snap = snapshot_with(nodes)
    state = CycleState()
    assert pl.pre_filter(state, pod, snap)[1] is None
    mask = pl.filter_batch(state, pod, snap, snap.all_rows)
    assert mask is not None
    assert mask.tolist() == [False, True]
    statuses = pl.filter_statuses(state, pod, snap, snap.all_rows[:1])
    assert [s.reasons for s in statuses if s is not None] == [(ERR_REASON_NODE_CONFLICT,)]


# --- the batch filter against the node-by-node one (binder.go checkBoundClaims per node) ----------

GKE_ZONE = "topology.gke.io/zone"
MIGRATED_GCE = {ANN_MIGRATED_PLUGINS: GCE_PD}


@pytest.mark.parametrize(("nodes", "csi_nodes"), [
    pytest.param([make_node("a").label(GKE_ZONE, "us-east-1"), make_node("b").label(GKE_ZONE, "us-east-2"),
                  make_node("c"), make_node("d").label(GKE_ZONE, "us-east-1")],
                 [make_csi_node("a", annotations=MIGRATED_GCE), make_csi_node("b", annotations=MIGRATED_GCE),
                  make_csi_node("c", annotations=MIGRATED_GCE)],
                 id="migrated-in-zone,other-zone,no-label;no-csinode"),
    pytest.param([make_node("a"), make_node("b").label(GKE_ZONE, "us-east-2")],
                 [make_csi_node("a", annotations={ANN_MIGRATED_PLUGINS: ""}),
                  make_csi_node("b", annotations={ANN_MIGRATED_PLUGINS: "kubernetes.io/aws-ebs"})],
                 id="no-node-migrated-gce"),
    pytest.param([make_node("a"), make_node("b")], [], id="no-csinode-at-all"),
    pytest.param([make_node("a").label(GKE_ZONE, "us-east-1")],
                 [make_csi_node("a", annotations=MIGRATED_GCE), make_csi_node("gone", annotations=MIGRATED_GCE)],
                 id="a-csinode-of-no-node"),
])
def test_the_batch_filter_of_a_migratable_pv_agrees_with_the_per_node_filter(
        nodes: list[NodeBuilder], csi_nodes: list[CSINode]) -> None:
    st = StaticStorage(volumes=[migration_pv(BOUND_MIGRATION_PVC)], claims=[BOUND_MIGRATION_PVC], classes=f.classes(),
                       csi_nodes=csi_nodes)
    pl = new(parse_args({}, "", []), Handle(), st)
    pod = PodInfo(_pod(BOUND_MIGRATION_PVC))
    snap = snapshot_with(list(nodes))
    batch_state, node_state = CycleState(), CycleState()
    assert pl.pre_filter(batch_state, pod, snap)[1] is None
    assert pl.pre_filter(node_state, pod, snap)[1] is None
    claims = batch_state.read(NAME).claims
    assert filter_rows(pl.binder, claims, snap, snap.all_rows) is not None  # the columns, not node by node
    mask = pl.filter_batch(batch_state, pod, snap, snap.all_rows)
    assert mask is not None
    per_node = [pl.filter(node_state, pod, ni) for ni in snap.node_infos]
    assert mask.tolist() == [s is None for s in per_node]
    rejected = np.flatnonzero(~mask)
    assert pl.filter_statuses(batch_state, pod, snap, rejected) == [per_node[r] for r in rejected.tolist()]


def test_a_pv_that_does_not_translate_on_a_migrated_node_fails_the_batch_filter_as_the_per_node_one() -> None:
    volume = migration_pv(BOUND_MIGRATION_PVC)
    volume.metadata.labels = {BETA_ZONE: "us-east1-a__europe-west1-b"}  # two regions: GCE PD's handle fails
    st = StaticStorage(volumes=[volume], claims=[BOUND_MIGRATION_PVC], classes=f.classes(),
                       csi_nodes=[make_csi_node("b", annotations=MIGRATED_GCE)])
    pl = new(parse_args({}, "", []), Handle(), st)
    pod = PodInfo(_pod(BOUND_MIGRATION_PVC))
    snap = snapshot_with([make_node("a"), make_node("b")])
    state = CycleState()
    assert pl.pre_filter(state, pod, snap)[1] is None
    assert filter_rows(pl.binder, state.read(NAME).claims, snap, snap.all_rows) is None
    with pytest.raises(SchedulingError, match=r"could not translate pv: failed to get region from zones"):
        pl.filter_batch(state, pod, snap, snap.all_rows)
