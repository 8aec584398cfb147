"""VolumeRestrictions, VolumeZone and NodeVolumeLimits on the real plane, side by side with the
reference kube-scheduler: a missing claim, a ReadWriteOncePod claim in use, a zone-labelled PV, a
CSINode limit reached. Each row's claims are bound to their PVs by the real PV controller (pre-bound both ways, so
the claims end up fully bound: volumeName and pv.kubernetes.io/bind-completed), then each scheduler
decides the same pod: the same node when one fits, kube-scheduler's whole message when none does.

The rows run one after another on a plane of their own, each with its own nodes, so `0/N nodes`
counts exactly the row's nodes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import NodeSpec, parse
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    compare_failure_message,
    container,
    create_nodes,
    create_pod,
    delete_nodes,
    delete_pod_now,
    latest_event,
    node_manifest,
    own_plane,
    pod_manifest,
    wait_bound,
)

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
DRIVER = "limits.csi.example.com"
RWOP_REASON = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
               "in-use by another pod")


@dataclass(frozen=True)
class Claim:
    """A claim and the PV it is pre-bound to: a CSI volume of DRIVER when `csi`, else a hostPath."""

    name: str
    access_mode: str = "ReadWriteOnce"
    pv_labels: dict[str, str] = field(default_factory=dict)
    csi: bool = False


@dataclass(frozen=True)
class Row:
    nodes: dict[str, dict[str, str]]  # short name -> labels
    claims: tuple[Claim, ...]
    pod_claims: tuple[str, ...]  # the claims the decided pod mounts
    expect: str | None  # the only node that fits, or None
    occupants: tuple[tuple[str, str], ...] = ()  # (node, claim): pods already running there
    csi_limit: int | None = None  # a CSINode on every node, DRIVER allowed this many volumes
    reasons: tuple[str, ...] = ()
    # A node eight times the size, so that it alone scores best where several fit (twice the cpu can
    # round to the same score).
    big: str = ""


ROWS = [
    # VolumeRestrictions' PreFilter looks the claim up first: its not-found is the whole reason.
    pytest.param(Row({"a": {}, "b": {}}, (), ("missing",), None,
                     reasons=('persistentvolumeclaim "missing" not found',)),
                 id="missing-claim"),
    pytest.param(Row({"a": {}, "b": {}}, (Claim("data", "ReadWriteOncePod"),), ("data",), None,
                     occupants=(("a", "data"),), reasons=("2 " + RWOP_REASON,)),
                 id="rwop-claim-in-use"),
    pytest.param(Row({"a": {}, "b": {}}, (Claim("data", "ReadWriteOncePod"),), ("data",), "b", big="b"),
                 id="rwop-claim-free"),
    pytest.param(Row({"a": {ZONE: "z1", REGION: "r1"}, "b": {ZONE: "z2", REGION: "r1"}},
                     (Claim("data", pv_labels={ZONE: "z2"}),), ("data",), "b"),
                 id="zone-labelled-pv-pins-its-zone"),
    pytest.param(Row({"a": {ZONE: "z1"}, "b": {ZONE: "z2"}},
                     (Claim("data", pv_labels={"failure-domain.beta.kubernetes.io/zone": "z3__z1"}),), ("data",),
                     "a"),
                 id="beta-multi-zone-label-matches-the-ga-node-label"),
    pytest.param(Row({"a": {ZONE: "z1"}, "b": {ZONE: "z2"}}, (Claim("data", pv_labels={ZONE: "z3"}),),
                     ("data",), None, reasons=("2 node(s) had no available volume zone",)),
                 id="zone-labelled-pv-no-node-in-its-zone"),
    pytest.param(Row({"a": {}, "b": {}}, (Claim("one", csi=True), Claim("two", csi=True)), ("two",), "b",
                     occupants=(("a", "one"),), csi_limit=1),
                 id="csinode-limit-reached-on-one-node"),
    pytest.param(Row({"a": {}, "b": {}}, (Claim("one", csi=True), Claim("two", csi=True), Claim("three", csi=True)),
                     ("two",), None, occupants=(("a", "one"), ("b", "three")), csi_limit=1,
                     reasons=("2 node(s) exceed max volume count",)),
                 id="csinode-limit-reached-everywhere"),
    # Both nodes full; on a, the pod's volume is the one already there, so it adds nothing.
    pytest.param(Row({"a": {}, "b": {}}, (Claim("one", csi=True), Claim("three", csi=True)), ("one",), "a",
                     occupants=(("a", "one"), ("b", "three")), csi_limit=1),
                 id="csinode-limit-a-shared-volume-counts-once"),
]


@pytest.fixture(scope="module")
def volume_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    # A plane needs one node to start; it is removed so that rows count only their own nodes.
    with own_plane("volumes", parse({"nodes": [{"name": "volumes-base"}]}, "volumes")) as kube:
        kube.delete("/api/v1/nodes/volumes-base")
        wait_for("the base node gone", lambda: not kube.get("/api/v1/nodes")["items"])
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("volumes")) / "kubesched.log")
        try:
            yield kube
        finally:
            proc.stop()


def _pv(name: str, claim: Claim, ns: str, claim_name: str) -> dict[str, Any]:
    source: dict[str, Any] = ({"csi": {"driver": DRIVER, "volumeHandle": f"handle-{name}"}} if claim.csi
                              else {"hostPath": {"path": f"/tmp/{name}"}})
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": dict(claim.pv_labels)},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": [claim.access_mode], "storageClassName": "",
                     "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim_name},
                     **source}}


def _claim(claim: Claim, pv: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim.name},
            "spec": {"accessModes": [claim.access_mode], "storageClassName": "", "volumeName": pv,
                     "resources": {"requests": {"storage": "1Gi"}}}}


def _fully_bound(kube: Kube, ns: str, name: str) -> bool:
    pvc = kube.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")
    return bool(pvc.get("status", {}).get("phase") == "Bound"
                and "pv.kubernetes.io/bind-completed" in (pvc["metadata"].get("annotations") or {}))


def _csi_node(name: str, limit: int) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": limit}}]}}


def _spec(claims: tuple[str, ...]) -> dict[str, Any]:
    return {"containers": [container(cpu="100m", memory="64Mi")],
            "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]}


@pytest.mark.parametrize("row", ROWS)
def test_volume_row(volume_plane: Kube, row: Row, request: pytest.FixtureRequest) -> None:
    kube = volume_plane
    rid: str = request.node.callspec.id
    ns = kube.namespace(f"vol-{rid}")
    names = {short: f"{rid}-{short}" for short in row.nodes}
    pvs = [f"{rid}-{c.name}" for c in row.claims]
    create_nodes(kube, [node_manifest(NodeSpec(names[s], dict(labels), (), {
        "cpu": "32" if s == row.big else "4", "memory": "64Gi" if s == row.big else "8Gi", "pods": "110"}))
        for s, labels in row.nodes.items()])
    try:
        if row.csi_limit is not None:
            for name in names.values():
                kube.create("/apis/storage.k8s.io/v1/csinodes", _csi_node(name, row.csi_limit))
        for claim, pv in zip(row.claims, pvs, strict=True):
            kube.create("/api/v1/persistentvolumes", _pv(pv, claim, ns, claim.name))
            kube.create(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", _claim(claim, pv))
        for claim in row.claims:
            wait_for(f"claim {ns}/{claim.name} bound by the PV controller",
                     functools.partial(_fully_bound, kube, ns, claim.name), timeout=60)
        for i, (node, claim_name) in enumerate(row.occupants):
            create_pod(kube, ns, pod_manifest(f"occupant-{i}", "nobody",
                                              {**_spec((claim_name,)), "nodeName": names[node]}))
        # Both schedulers learn of the claims, PVs, CSINodes and occupants through their own watches.
        wait_for("the occupants running", lambda: all(
            p.get("status", {}).get("phase") == "Running" for p in kube.pods(ns)), timeout=30)
        spec = _spec(row.pod_claims)
        if row.expect is not None:
            _compare_choice(kube, ns, spec, names[row.expect])
        else:
            compare_failure_message(kube, ns, pod_manifest("ref", None, spec), pod_manifest("ours", KUBESCHED, spec),
                                    row.reasons)
    finally:
        kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
        wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=30)
        kube.delete(f"/api/v1/namespaces/{ns}/persistentvolumeclaims")
        for pv in pvs:
            kube.delete(f"/api/v1/persistentvolumes/{pv}")
        if row.csi_limit is not None:
            for name in names.values():
                kube.delete(f"/apis/storage.k8s.io/v1/csinodes/{name}")
        delete_nodes(kube, list(names.values()))


def _compare_choice(kube: Kube, ns: str, spec: dict[str, Any], expect: str) -> None:
    # One after the other, the reference's pod deleted first: a bound pod holds the claim and its volume.
    create_pod(kube, ns, pod_manifest("ref", None, spec))
    ref_node = wait_bound(kube, ns, "ref")
    assert ref_node == expect, f"row broken: kube-scheduler chose {ref_node}, the row expects {expect}"
    delete_pod_now(kube, ns, "ref")
    create_pod(kube, ns, pod_manifest("ours", KUBESCHED, spec))
    our_node = wait_bound(kube, ns, "ours")
    assert our_node == ref_node, f"kubesched chose {our_node}, kube-scheduler chose {ref_node}"
    scheduled = wait_for("kubesched's Scheduled event", lambda: latest_event(kube, ns, "ours", "Scheduled"))
    assert scheduled["reportingController"] == KUBESCHED
