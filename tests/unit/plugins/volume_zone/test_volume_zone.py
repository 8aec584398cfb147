"""VolumeZone: kube-scheduler's volume_zone_test.go cases (TestSingleZone, TestMultiZone,
TestWithBinding)."""

from __future__ import annotations

import pytest

from kubesched.framework import Code, CycleState, PodInfo
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo
from kubesched.model.storage import StorageClass
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.plugins.volume_zone import REASON_CONFLICT, VolumeZone
from kubesched.plugins.volume_zone.plugin import (
    BETA_REGION,
    BETA_ZONE,
    REGION,
    ZONE,
    after_claim_change,
    after_storage_class_added,
    after_volume_change,
    label_zones,
)
from tests.builders import make_node, make_pod, make_pv, make_pvc, make_storage_class
from tests.unit.scheduling_helpers import snapshot_with

SKIP = Status(Code.SKIP)
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT)


SINGLE = StaticStorage(
    volumes=[make_pv("Vol_1").label(BETA_ZONE, "us-west1-a").obj(),
             make_pv("Vol_2").label(BETA_REGION, "us-west1").label("uselessLabel", "none").obj(),
             make_pv("Vol_3").label(BETA_REGION, "us-west1").obj(),
             make_pv("Vol_Stable_1").label(ZONE, "us-west1-a").obj(),
             make_pv("Vol_Stable_2").label(REGION, "us-west1").label("uselessLabel", "none").obj(),
             make_pv("Vol_Stable_3").label(ZONE, "us-west1-a").label(REGION, "us-west1-a").obj()],
    claims=[make_pvc(f"PVC_{n}").volume_name(f"Vol_{n}").obj()
            for n in ("1", "2", "3", "Stable_1", "Stable_2", "Stable_3")]
    + [make_pvc("PVC_4").volume_name("Vol_not_exist").obj()])

MULTI = StaticStorage(
    volumes=[make_pv("Vol_1").label(BETA_ZONE, "us-west1-a").obj(),
             make_pv("Vol_2").label(BETA_ZONE, "us-west1-b").label("uselessLabel", "none").obj(),
             make_pv("Vol_3").label(BETA_ZONE, "us-west1-c__us-west1-a").obj(),
             make_pv("Vol_Stable_1").label(ZONE, "us-west1-a").obj(),
             make_pv("Vol_Stable_2").label(ZONE, "us-west1-c__us-west1-a").obj()],
    claims=[make_pvc(f"PVC_{n}").volume_name(f"Vol_{n}").obj() for n in ("1", "2", "3", "Stable_1", "Stable_2")])

_WAIT = make_storage_class("Class_Wait", binding_mode="WaitForFirstConsumer")
_IMMEDIATE_UNSET = StorageClass(metadata=make_storage_class("Class_Immediate").metadata)  # no volumeBindingMode
BINDING = StaticStorage(
    volumes=[make_pv("Vol_1").label(BETA_ZONE, "us-west1-a").obj()],
    claims=[make_pvc("PVC_1").volume_name("Vol_1").obj(), make_pvc("PVC_NoSC").storage_class("Class_0").obj(),
            make_pvc("PVC_EmptySC").obj(), make_pvc("PVC_WaitSC").storage_class("Class_Wait").obj(),
            make_pvc("PVC_ImmediateSC").storage_class("Class_Immediate").obj()],
    classes=[_WAIT, _IMMEDIATE_UNSET])


def _run(storage: StaticStorage, claim: str | None, **node_labels: str) -> tuple[Status | None, Status | None]:
    """(PreFilter, Filter) as kube-scheduler's tests run them: Filter runs even after a Skip."""
    plugin = VolumeZone(storage)
    pod = make_pod("pod_1")
    if claim is not None:
        pod.volume("v", claim=claim)
    info = PodInfo(pod.obj())
    node = make_node("host1")
    for k, v in node_labels.items():
        node.label(k, v)
    state = CycleState()
    _, pre = plugin.pre_filter(state, info, snapshot_with([node]))
    return pre, plugin.filter(state, info, NodeInfo(node.obj()))


def _labels(**kw: str) -> dict[str, str]:
    names = {"beta_zone": BETA_ZONE, "beta_region": BETA_REGION, "zone": ZONE, "region": REGION}
    return {names.get(k, k): v for k, v in kw.items()}


@pytest.mark.parametrize(("claim", "labels", "want_pre", "want"), [
    pytest.param(None, _labels(beta_zone="us-west1-a"), SKIP, None, id="pod-without-volume"),
    pytest.param("PVC_1", {}, None, None, id="node-without-labels"),
    pytest.param("PVC_1", _labels(beta_zone="us-west1-a", uselessLabel="none"), None, None,
                 id="beta-zone-label-matched"),
    pytest.param("PVC_2", _labels(beta_region="us-west1", uselessLabel="none"), None, None,
                 id="beta-region-label-matched"),
    pytest.param("PVC_2", _labels(beta_region="no_us-west1", uselessLabel="none"), None, CONFLICT,
                 id="beta-region-label-doesnt-match"),
    pytest.param("PVC_1", _labels(beta_zone="no_us-west1-a", uselessLabel="none"), None, CONFLICT,
                 id="beta-zone-label-doesnt-match"),
    pytest.param("PVC_Stable_1", _labels(zone="us-west1-a", uselessLabel="none"), None, None, id="zone-label-matched"),
    pytest.param("PVC_Stable_2", _labels(region="us-west1", uselessLabel="none"), None, None,
                 id="region-label-matched"),
    pytest.param("PVC_Stable_2", _labels(region="no_us-west1", uselessLabel="none"), None, CONFLICT,
                 id="region-label-doesnt-match"),
    pytest.param("PVC_Stable_1", _labels(zone="no_us-west1-a", uselessLabel="none"), None, CONFLICT,
                 id="zone-label-doesnt-match"),
    pytest.param("PVC_Stable_3", _labels(zone="us-west1-a"), None, CONFLICT,
                 id="pv-with-zone-and-region-node-zone-only"),
    pytest.param("PVC_Stable_1", _labels(beta_zone="us-west1-a"), None, CONFLICT,
                 id="pv-with-zone-node-with-beta-zone"),
    pytest.param("PVC_1", _labels(zone="us-west1-a"), None, None, id="pv-with-beta-label-node-with-ga-label-matched"),
    pytest.param("PVC_1", _labels(zone="us-west1-b"), None, CONFLICT,
                 id="pv-with-beta-label-node-with-ga-label-dont-match"),
    pytest.param("PVC_4", _labels(zone="us-west1-b"),
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'),
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolume "Vol_not_exist" not found'),
                 id="pv-not-found"),
    pytest.param("PVC_missing", {},
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "PVC_missing" not found'),
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "PVC_missing" not found'),
                 id="claim-not-found"),
])
def test_single_zone(claim: str | None, labels: dict[str, str], want_pre: Status | None,
                     want: Status | None) -> None:
    assert _run(SINGLE, claim, **labels) == (want_pre, want)


@pytest.mark.parametrize(("claim", "labels", "want"), [
    pytest.param("PVC_3", {}, None, id="node-without-labels"),
    pytest.param("PVC_3", _labels(beta_zone="us-west1-a", uselessLabel="none"), None, id="beta-zone-label-matched"),
    pytest.param("PVC_1", _labels(beta_zone="us-west1-b", uselessLabel="none"), CONFLICT,
                 id="beta-zone-label-doesnt-match"),
    pytest.param("PVC_Stable_2", _labels(zone="us-west1-a", uselessLabel="none"), None, id="zone-label-matched"),
    pytest.param("PVC_Stable_1", _labels(zone="us-west1-b", uselessLabel="none"), CONFLICT,
                 id="zone-label-doesnt-match"),
])
def test_multi_zone(claim: str, labels: dict[str, str], want: Status | None) -> None:
    assert _run(MULTI, claim, **labels) == (None, want)


_TEST_NODE = _labels(beta_zone="us-west1-a", uselessLabel="none")


def _unresolvable(message: str) -> tuple[Status, Status]:
    return (Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message))


@pytest.mark.parametrize(("claim", "want"), [
    pytest.param("PVC_1", (None, None), id="label-zone-failure-domain-matched"),
    pytest.param("PVC_EmptySC", _unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
                 id="unbound-volume-empty-storage-class"),
    # kube-scheduler's fake lister says "storageclasses"; its real lister (and so the plane) "storageclass".
    pytest.param("PVC_NoSC", _unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
                 id="unbound-volume-no-storage-class"),
    pytest.param("PVC_ImmediateSC", _unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
                 id="unbound-volume-immediate-binding-mode"),
    pytest.param("PVC_WaitSC", (SKIP, None), id="unbound-volume-wait-binding-mode"),
])
def test_with_binding(claim: str, want: tuple[Status | None, Status | None]) -> None:
    assert _run(BINDING, claim, **_TEST_NODE) == want


def test_an_immediate_class_with_the_mode_set_rejects_an_unbound_claim() -> None:
    storage = StaticStorage(claims=[make_pvc("c").storage_class("fast").obj()], classes=[make_storage_class("fast")])
    assert _run(storage, "c", **_TEST_NODE) == _unresolvable("PersistentVolume had no name")


@pytest.mark.parametrize(("value", "want"), [
    pytest.param("a", frozenset({"a"}), id="one"),
    pytest.param("a__b", frozenset({"a", "b"}), id="two"),
    pytest.param(" a __ b ", frozenset({"a", "b"}), id="trimmed"),
    pytest.param("a____b", None, id="empty-element-ignores-the-label"),
    pytest.param("", None, id="empty"),
])
def test_label_zones(value: str, want: frozenset[str] | None) -> None:
    assert label_zones(value) == want


def test_events_to_register() -> None:
    assert [(e.event, e.hint) for e in VolumeZone().events_to_register()] == [
        (ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), after_storage_class_added),
        (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), None),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE), after_claim_change),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE), after_volume_change)]
