"""VolumeBinding's binder, from kube-scheduler's binder_test.go: PV matching (smallest fitting,
class, access modes, selector, volume mode, node affinity, pre-bound), FindPodVolumes' reasons and
bindings, provisioning (provisioner, allowed topologies, CSIStorageCapacity), assume and revert."""

from __future__ import annotations

import msgspec
import pytest

from kubesched.model.objects import LabelSelector, Pod
from kubesched.model.storage import ANN_SELECTED_NODE, PersistentVolume, PersistentVolumeClaim
from kubesched.plugins.helper.label_selector import SelectorError
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.plugins.volume_binding.assume_cache import AssumeError
from kubesched.plugins.volume_binding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BinderError,
    VolumeBinder,
)
from kubesched.plugins.volume_binding.matching import MatchError, bind_volume_to_claim, find_matching_volume
from tests.builders import label_selector, make_csi_driver, make_pod
from tests.unit import volume_fixtures as f
from tests.unit.volume_fixtures import (
    NS,
    WAIT_PROVISIONER,
    bound_pvc,
    capacity,
    immediate_bound_pvc,
    immediate_unbound_pvc,
    no_provisioner_pvc,
    provisioned_pvc,
    pv,
    pv_bound,
    pv_bound_immediate,
    pv_bound_immediate_node2,
    pv_node1a,
    pv_node1a_bound,
    pv_node1b,
    pv_node2,
    pvc,
    selected_node_pvc,
    topology_mismatch_pvc,
    unbound_pvc,
    unbound_pvc2,
)

NODE1 = f.node("node1")


def pod_with(*claims: PersistentVolumeClaim) -> Pod:
    b = make_pod("test-pod", NS)
    for i, c in enumerate(claims):
        b.volume(f"vol{i}", claim=c.metadata.name)
    return b.obj()


def binder(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume], **extra: object) -> VolumeBinder:
    return VolumeBinder(StaticStorage(volumes=pvs, claims=claims, classes=f.classes(), **extra))  # type: ignore[arg-type]


def find(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume], node: object = NODE1,
         b: VolumeBinder | None = None) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(static bindings as (claim, PV), provisioned claims, reasons)."""
    b = b or binder(claims, pvs)
    pod = pod_with(*claims)
    volumes, reasons = b.find_pod_volumes(pod, b.pod_volume_claims(pod), node)  # type: ignore[arg-type]
    return ([(x.pvc.metadata.name, x.pv.metadata.name) for x in volumes.static_bindings],
            [p.pvc.metadata.name for p in volumes.dynamic_provisions], reasons)


# --- FindMatchingVolume -----------------------------------------------------------------------------

def _with(volume: PersistentVolume, **spec: object) -> PersistentVolume:
    return msgspec.structs.replace(volume, spec=msgspec.structs.replace(volume.spec, **spec))


def _claim_with(claim: PersistentVolumeClaim, **spec: object) -> PersistentVolumeClaim:
    return msgspec.structs.replace(claim, spec=msgspec.structs.replace(claim.spec, **spec))


RWO, ROX = "ReadWriteOnce", "ReadOnlyMany"
_labelled = msgspec.structs.replace(pv_node1b, metadata=msgspec.structs.replace(pv_node1b.metadata,
                                                                                labels={"tier": "gold"}))
_deleting = msgspec.structs.replace(pv_node1a, metadata=msgspec.structs.replace(
    pv_node1a.metadata, deletion_timestamp="2026-01-01T00:00:00Z"))


@pytest.mark.parametrize(("claim", "volumes", "excluded", "want"), [
    pytest.param(unbound_pvc, [pv_node1b, pv_node1a], (), "pv-node1a", id="smallest-that-fits"),
    pytest.param(pvc("big", "6G"), [pv_node1a, pv_node1b], (), "pv-node1b", id="too-small-skipped"),
    pytest.param(unbound_pvc2, [pv_node1b, pv_node1a], (), "pv-node1a", id="equal-size-fits"),
    pytest.param(unbound_pvc, [pv_node1a, pv_node1b], ("pv-node1a",), "pv-node1b", id="excluded-skipped"),
    pytest.param(unbound_pvc, [pv_node2], (), None, id="node-affinity-mismatch"),
    pytest.param(unbound_pvc, [pv("p", "node1", "5G", cls="other")], (), None, id="other-class"),
    pytest.param(pvc("c", "1G", cls=None), [pv("p", "node1", "5G", cls="")], (), "p", id="no-class-matches-no-class"),
    pytest.param(unbound_pvc, [_with(pv_node1a, volume_mode="Block")], (), None, id="volume-mode-mismatch"),
    pytest.param(_claim_with(unbound_pvc, volume_mode=None), [_with(pv_node1a, volume_mode=None)], (), "pv-node1a",
                 id="unset-modes-are-filesystem"),
    pytest.param(_claim_with(unbound_pvc, access_modes=[RWO, ROX]), [_with(pv_node1a, access_modes=[RWO])], (),
                 None, id="access-mode-missing"),
    pytest.param(_claim_with(unbound_pvc, access_modes=[RWO]), [_with(pv_node1a, access_modes=[ROX, RWO])], (),
                 "pv-node1a", id="access-modes-offered"),
    pytest.param(_claim_with(unbound_pvc, selector=label_selector(tier="gold")), [pv_node1a, _labelled], (),
                 "pv-node1b", id="selector-picks-labelled"),
    pytest.param(_claim_with(unbound_pvc, selector=label_selector()), [pv_node1a], (), "pv-node1a",
                 id="empty-selector-selects-all"),
    pytest.param(unbound_pvc, [msgspec.structs.replace(pv_node1a, status=msgspec.structs.replace(
        pv_node1a.status, phase="Released"))], (), None, id="not-available"),
    pytest.param(unbound_pvc, [_deleting], (), None, id="being-deleted"),
    pytest.param(unbound_pvc, [_with(pv_node1a, volume_attributes_class_name="gold")], (), None,
                 id="attributes-class-on-pv-only"),
    pytest.param(_claim_with(unbound_pvc, volume_attributes_class_name="gold"),
                 [pv_node1a, _with(pv_node1b, volume_attributes_class_name="gold")], (), "pv-node1b",
                 id="same-attributes-class"),
    pytest.param(unbound_pvc, [pv("p", "node1", "5G", bound_to=bound_pvc)], (), None, id="bound-to-another-claim"),
    # A PV pre-bound to the claim wins over a smaller one; on a node it does not fit, nothing matches.
    pytest.param(unbound_pvc, [pv("small", "node1", "1G"), pv("pre", "node1", "10G", bound_to=unbound_pvc)], (),
                 "pre", id="prebound-wins"),
    pytest.param(unbound_pvc, [pv("small", "node1", "1G"), pv("pre", "node2", "10G", bound_to=unbound_pvc)], (),
                 None, id="prebound-on-other-node-means-no-match"),
])
def test_find_matching_volume(claim: PersistentVolumeClaim, volumes: list[PersistentVolume],
                              excluded: tuple[str, ...], want: str | None) -> None:
    got = find_matching_volume(claim, volumes, NODE1.metadata.labels, set(excluded))
    assert (got.metadata.name if got else None) == want


def test_equal_sizes_keep_the_first() -> None:
    a, b = pv("a", "node1", "5G"), pv("b", "node1", "5000M")
    assert find_matching_volume(unbound_pvc, [a, b], NODE1.metadata.labels, set()) is a


@pytest.mark.parametrize("selector", [
    pytest.param(label_selector(("k", "In", [])), id="in-without-values"),
    # metav1.LabelSelectorAsSelector checks keys too (labels.NewRequirement's validateLabelKey)
    pytest.param(label_selector("a/b/c"), id="invalid-key"),
])
def test_bad_selector_is_an_error(selector: LabelSelector) -> None:
    claim = _claim_with(unbound_pvc, selector=selector)
    with pytest.raises(MatchError, match="error creating internal label selector for claim: testns/unbound-pvc"):
        find_matching_volume(claim, [pv_node1a], NODE1.metadata.labels, set())
    assert issubclass(SelectorError, ValueError)


def test_bind_volume_to_claim() -> None:
    bound, dirty = bind_volume_to_claim(pv_node1a, unbound_pvc)
    assert dirty
    ref = bound.spec.claim_ref
    assert ref is not None
    assert (ref.namespace, ref.name, ref.uid, ref.kind) == (NS, "unbound-pvc", "pvc-uid", "PersistentVolumeClaim")
    assert bound.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert pv_node1a.spec.claim_ref is None  # the informer's object is untouched
    assert bind_volume_to_claim(pv_node1a_bound, unbound_pvc)[1] is False


# --- FindPodVolumes (binder_test.go TestFindPodVolumesWithoutProvisioning) ---------------------------

@pytest.mark.parametrize(("claims", "pvs", "bindings", "reasons"), [
    pytest.param([bound_pvc], [pv_bound], [], [], id="bound-pvc"),
    pytest.param([bound_pvc], [], [], [ERR_REASON_PV_NOT_EXIST], id="bound-pvc,pv-not-exists"),
    pytest.param([unbound_pvc], [pv_node2, pv_node1a, pv_node1b], [("unbound-pvc", "pv-node1a")], [],
                 id="unbound-pvc,pv-same-node"),
    pytest.param([unbound_pvc], [pv_node2], [], [ERR_REASON_BIND_CONFLICT], id="unbound-pvc,pv-different-node"),
    pytest.param([unbound_pvc, unbound_pvc2], [pv_node1a, pv_node1b],
                 [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], id="two-unbound-pvcs"),
    pytest.param([unbound_pvc2, unbound_pvc], [pv_node1a, pv_node1b],
                 [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [],
                 id="two-unbound-pvcs,order-by-size"),
    pytest.param([unbound_pvc, unbound_pvc2], [pv_node1a], [("unbound-pvc", "pv-node1a")],
                 [ERR_REASON_BIND_CONFLICT], id="two-unbound-pvcs,partial-match"),
    pytest.param([unbound_pvc, bound_pvc], [pv_bound, pv_node1a], [("unbound-pvc", "pv-node1a")], [],
                 id="one-bound,one-unbound"),
    pytest.param([unbound_pvc, bound_pvc], [pv_bound, pv_node2], [], [ERR_REASON_BIND_CONFLICT],
                 id="one-bound,one-unbound,no-match"),
    pytest.param([immediate_bound_pvc], [pv_bound_immediate], [], [], id="immediate-bound-pvc"),
    pytest.param([immediate_bound_pvc], [pv_bound_immediate_node2], [], [ERR_REASON_NODE_CONFLICT],
                 id="immediate-bound-pvc-wrong-node"),
])
def test_find_pod_volumes(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume],
                          bindings: list[tuple[str, str]], reasons: list[str]) -> None:
    got_bindings, provisions, got_reasons = find(claims, pvs)
    assert (got_bindings, provisions, got_reasons) == (bindings, [], reasons)


@pytest.mark.parametrize("claims", [
    pytest.param([f.prebound_pvc], id="prebound-pvc"),
    pytest.param([immediate_unbound_pvc], id="immediate-unbound-pvc"),
    pytest.param([immediate_unbound_pvc, bound_pvc], id="immediate-unbound-pvc,delayed-mode-bound"),
    pytest.param([immediate_unbound_pvc, unbound_pvc], id="immediate-unbound-pvc,delayed-mode-unbound"),
])
def test_unbound_immediate_claims(claims: list[PersistentVolumeClaim]) -> None:
    b = binder(claims, [pv_bound, pv_node1a])
    assert b.pod_volume_claims(pod_with(*claims)).unbound_immediate


def test_claim_missing_from_the_cache_is_an_error() -> None:
    with pytest.raises(BinderError, match='error getting PVC "testns/bound-pvc"'):
        binder([], [pv_bound]).pod_volume_claims(pod_with(bound_pvc))


# --- with provisioning (TestFindPodVolumesWithProvisioning, TestFindPodVolumesWithCSIMigration) ------

@pytest.mark.parametrize(("claims", "pvs", "bindings", "provisions", "reasons"), [
    pytest.param([provisioned_pvc], [], [], ["provisioned-pvc"], [], id="one-provisioned"),
    pytest.param([unbound_pvc, provisioned_pvc], [pv_node1a], [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"],
                 [], id="two-unbound-pvcs,one-matched,one-provisioned"),
    pytest.param([bound_pvc, provisioned_pvc], [pv_bound], [], ["provisioned-pvc"], [],
                 id="one-bound,one-provisioned"),
    pytest.param([unbound_pvc, selected_node_pvc], [pv_node1a], [("unbound-pvc", "pv-node1a")],
                 ["provisioned-pvc"], [], id="one-binding,one-selected-node"),
    pytest.param([no_provisioner_pvc], [], [], [], [ERR_REASON_BIND_CONFLICT], id="invalid-provisioner"),
    pytest.param([topology_mismatch_pvc], [], [], [], [ERR_REASON_BIND_CONFLICT], id="volume-topology-unsatisfied"),
    pytest.param([pvc("p", "1Gi", f.SELECTED_NODE, cls=WAIT_PROVISIONER, node="node2")], [], [], [],
                 [ERR_REASON_BIND_CONFLICT], id="selected-for-another-node"),
])
def test_find_pod_volumes_with_provisioning(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume],
                                            bindings: list[tuple[str, str]], provisions: list[str],
                                            reasons: list[str]) -> None:
    assert find(claims, pvs) == (bindings, provisions, reasons)


def test_a_wait_claim_without_class_is_an_error() -> None:
    claim = pvc("nc", "1Gi", cls="")
    b = binder([claim], [])
    # An empty class is Immediate, so it never reaches provisioning; a missing class errs there.
    assert b.pod_volume_claims(pod_with(claim)).unbound_immediate
    gone = pvc("gone", "1Gi", cls="no-such-class")
    assert binder([gone], []).pod_volume_claims(pod_with(gone)).unbound_immediate  # unknown class: Immediate


# --- CSIStorageCapacity (TestCapacity) ------------------------------------------------------------------

@pytest.mark.parametrize(("capacities", "ok"), [
    pytest.param([capacity("net", WAIT_PROVISIONER, None, "1Gi")], False, id="network-attached-has-no-topology"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node1", "1Gi")], True, id="local-storage"),
    pytest.param([capacity("a", WAIT_PROVISIONER, None, "1Gi"), capacity("b", WAIT_PROVISIONER, "node2", "1Gi"),
                  capacity("c", WAIT_PROVISIONER, "node1", "1Gi")], True, id="multiple"),
    pytest.param([], False, id="no-storage"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node2", "1Gi")], False, id="wrong-node"),
    pytest.param([capacity("net", f.WAIT, "node1", "1Gi")], False, id="wrong-storage-class"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node1", "1Mi")], False, id="insufficient-storage"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node1", "1Gi", "1Mi")], False, id="insufficient-volume-size"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node1", "0Mi")], False, id="zero-storage"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node1", None, "0Mi")], False, id="zero-volume-size"),
    pytest.param([capacity("net", WAIT_PROVISIONER, "node1", None)], False, id="nil-storage"),
])
def test_capacity(capacities: list[object], ok: bool) -> None:
    b = binder([provisioned_pvc], [], csi_drivers=[make_csi_driver(f.PROVISIONER, storage_capacity=True)],
               capacities=capacities)
    _, provisions, reasons = find([provisioned_pvc], [], b=b)
    assert (provisions, reasons) == ((["provisioned-pvc"], []) if ok else ([], [ERR_REASON_NOT_ENOUGH_SPACE]))


def test_capacity_is_only_checked_for_drivers_that_ask() -> None:
    b = binder([provisioned_pvc], [], csi_drivers=[make_csi_driver(f.PROVISIONER, storage_capacity=False)])
    assert find([provisioned_pvc], [], b=b)[1:] == (["provisioned-pvc"], [])


# --- AssumePodVolumes / RevertAssumedPodVolumes / the assume cache ---------------------------------------

def _reserve(b: VolumeBinder, claims: list[PersistentVolumeClaim], node_name: str = "node1") -> object:
    pod = pod_with(*claims)
    volumes, reasons = b.find_pod_volumes(pod, b.pod_volume_claims(pod), f.node(node_name))
    assert not reasons
    assert b.assume_pod_volumes(pod, node_name, volumes) is False
    return volumes


def test_assumed_pv_is_not_given_to_the_next_pod() -> None:
    other = pvc("other", "1G", rv="1")
    b = binder([unbound_pvc, other], [pv_node1a])
    volumes = _reserve(b, [unbound_pvc])
    assumed = b.pv_cache.get("pv-node1a")
    assert assumed is not None
    assert assumed.spec.claim_ref is not None
    assert assumed.spec.claim_ref.name == "unbound-pvc"
    # The next pod's claim finds the PV taken (claimRef to another claim) in the assume cache.
    assert find([other], [], b=b)[2] == [ERR_REASON_BIND_CONFLICT]
    b.revert_assumed(volumes)  # type: ignore[arg-type]
    assert b.pv_cache.get("pv-node1a") is pv_node1a
    assert find([other], [], b=b)[0] == [("other", "pv-node1a")]


def test_assumed_claim_has_its_selected_node() -> None:
    b = binder([provisioned_pvc], [])
    volumes = _reserve(b, [provisioned_pvc])
    got = b.pvc_cache.get(f"{NS}/provisioned-pvc")
    assert got is not None
    assert got.metadata.annotations[ANN_SELECTED_NODE] == "node1"
    b.revert_assumed(volumes)  # type: ignore[arg-type]
    assert ANN_SELECTED_NODE not in (b.pvc_cache.get(f"{NS}/provisioned-pvc") or provisioned_pvc).metadata.annotations


def test_a_newer_informer_version_ends_the_assumption() -> None:
    storage = StaticStorage(volumes=[pv_node1a], claims=[unbound_pvc], classes=f.classes())
    b = VolumeBinder(storage)
    _reserve(b, [unbound_pvc])
    newer = msgspec.structs.replace(pv_node1a, metadata=msgspec.structs.replace(pv_node1a.metadata,
                                                                                resource_version="2"))
    storage.volumes["pv-node1a"] = newer
    assert b.pv_cache.get("pv-node1a") is newer
    assert "pv-node1a" not in b.pv_cache.assumed


def test_assume_out_of_sync_fails_and_reverts() -> None:
    storage = StaticStorage(volumes=[pv_node1a, pv_node1b], claims=[unbound_pvc, unbound_pvc2], classes=f.classes())
    b = VolumeBinder(storage)
    pod = pod_with(unbound_pvc, unbound_pvc2)
    volumes, _ = b.find_pod_volumes(pod, b.pod_volume_claims(pod), NODE1)
    # The second PV changes under the cycle: its assumption fails, the first one is rolled back.
    storage.volumes["pv-node1b"] = msgspec.structs.replace(pv_node1b, metadata=msgspec.structs.replace(
        pv_node1b.metadata, resource_version="2"))
    with pytest.raises(BinderError, match="out of sync"):
        b.assume_pod_volumes(pod, "node1", volumes)
    assert b.pv_cache.assumed == {}


def test_all_bound_needs_no_assumption() -> None:
    b = binder([bound_pvc], [pv_bound])
    pod = pod_with(bound_pvc)
    volumes, _ = b.find_pod_volumes(pod, b.pod_volume_claims(pod), NODE1)
    assert b.assume_pod_volumes(pod, "node1", volumes) is True


def test_assume_cache_refuses_unknown_objects() -> None:
    b = binder([], [])
    with pytest.raises(AssumeError, match='persistentvolumes "pv-node1a" not found'):
        b.pv_cache.assume(pv_node1a)

