"""`kubesched explain` against the seed-kind plane (a tainted control-plane node, three workers),
as a subprocess: every node listed with its verdicts, the message kubesched itself writes, and
nothing written to the apiserver."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    DEFAULT,
    KUBESCHED,
    container,
    create_pod,
    delete_pod_now,
    events,
    get_pod,
    pod_manifest,
    wait_unschedulable,
)

pytestmark = pytest.mark.integration

NOBODY = "nobody-runs-this"
NODES = {"kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3"}


def explain(plane: Kube, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched", "explain", f"--kubeconfig={plane.kubeconfig}", *args],
                          capture_output=True, text=True, timeout=timeout)


def explain_json(plane: Kube, *args: str, timeout: float = 60) -> dict[str, Any]:
    proc = explain(plane, *args, "-o", "json", timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_pending_pod_explained_without_writes(plane: Kube) -> None:
    ns = plane.namespace("explain-pending")
    create_pod(plane, ns, pod_manifest("web", NOBODY, {"containers": [container(cpu="500m", memory="256Mi")]}))
    try:
        before_pod = get_pod(plane, ns, "web")
        before_events = len(events(plane, ns))
        doc = explain_json(plane, "web", "-n", ns)
        table = explain(plane, "web", "-n", ns)
        assert table.returncode == 0, table.stderr

        assert {"pod", "profile", "nodes", "selected", "message"} <= set(doc)
        assert doc["pod"] == f"{ns}/web"
        # schedulerName names no profile: the first one, kubesched's default.
        assert doc["profile"] == KUBESCHED
        nodes = {n["name"]: n for n in doc["nodes"]}
        assert set(nodes) == NODES
        for n in nodes.values():
            assert {"name", "feasible", "filters", "scores", "total"} <= set(n)
            assert all({"plugin", "code", "reasons"} <= set(f) for f in n["filters"])
            if n["feasible"]:
                assert n["scores"]
                assert n["total"] == sum(s["normalized"] * s["weight"] for s in n["scores"])
            else:
                reported = [f for f in n["filters"] if f["reported"]]
                assert len(reported) == 1
                assert reported[0]["code"] != "Success"
        taint = next(f for f in nodes["kind-control-plane"]["filters"] if f["reported"])
        assert taint["plugin"] == "TaintToleration"
        assert doc["selected"]
        assert set(doc["selected"]) <= {name for name, n in nodes.items() if n["feasible"]}
        assert doc["message"] == ""
        for name in NODES:
            assert name in table.stdout

        # Nothing written: the pod is untouched and unbound, and no event appeared.
        after_pod = get_pod(plane, ns, "web")
        assert after_pod["metadata"]["resourceVersion"] == before_pod["metadata"]["resourceVersion"]
        assert not after_pod["spec"].get("nodeName")
        assert len(events(plane, ns)) == before_events
    finally:
        delete_pod_now(plane, ns, "web")


def test_message_is_the_one_kubesched_writes(plane: Kube, kubesched: KubeschedProcess) -> None:
    ns = plane.namespace("explain-nowhere")
    create_pod(plane, ns, pod_manifest("huge", KUBESCHED, {"containers": [container(cpu="64")]}))
    try:
        written = wait_unschedulable(plane, ns, "huge")["message"]
        doc = explain_json(plane, "huge", "-n", ns)
        assert doc["message"] == written
        assert doc["message"].startswith("0/4 nodes are available:")
        assert doc["selected"] == []
        assert {n["name"] for n in doc["nodes"]} == NODES
        for n in doc["nodes"]:
            assert not n["feasible"]
            assert any(f["reported"] and f["code"] != "Success" for f in n["filters"])
            # Every node lacks the cpu, whichever filter is reported.
            assert any(f["plugin"] == "NodeResourcesFit" and f["reasons"] == ["Insufficient cpu"]
                       for f in n["filters"])
        table = explain(plane, "huge", "-n", ns)
        assert f"message: {written}" in table.stdout
    finally:
        delete_pod_now(plane, ns, "huge")


def test_errors_name_the_pod_and_the_profiles(plane: Kube) -> None:
    missing = explain(plane, "no-such-pod", "-n", "default")
    assert missing.returncode != 0
    assert 'pod "no-such-pod" not found in namespace "default"' in missing.stderr
    ns = plane.namespace("explain-errors")
    create_pod(plane, ns, pod_manifest("p", NOBODY))
    try:
        unknown = explain(plane, "p", "-n", ns, "--profile", "nope")
        assert unknown.returncode != 0
        assert "no profile 'nope'; the profiles are: kubesched" in unknown.stderr
    finally:
        delete_pod_now(plane, ns, "p")


# --- a pod of a gang, on the gated plane (GenericWorkload on) ---------------------------------------

GATE = "--feature-gates=GenericWorkload=true"
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"


def _gang(kube: Kube, ns: str, scheduler: str, min_count: int, count: int, cpu: str) -> None:
    kube.create(PODGROUPS.format(ns=ns), {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                          "metadata": {"name": "g"},
                                          "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}})
    for i in range(count):
        create_pod(kube, ns, pod_manifest(f"p{i}", scheduler, {"containers": [container(cpu=cpu)],
                                                                "schedulingGroup": {"podGroupName": "g"}}))


def _group_condition_message(kube: Kube, ns: str) -> str | None:
    pg = kube.get(f"{PODGROUPS.format(ns=ns)}/g")
    for c in (pg.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodGroupInitiallyScheduled":
            return str(c.get("message", ""))
    return None


def test_a_gang_pod_gets_the_group_verdict_kube_scheduler_writes(gated_plane: Kube) -> None:
    """Room for 3 of 4: explain says which three fit where, why the fourth fits nowhere (node by
    node), and the group's reason, which is kube-scheduler's PodGroup condition message before its
    pod-group preemption part (explain preempts nothing)."""
    kube = gated_plane
    ref = kube.namespace("explain-gang-ref")
    _gang(kube, ref, DEFAULT, 4, 4, "3")
    written = wait_for("kube-scheduler's PodGroup condition", lambda: _group_condition_message(kube, ref), timeout=30)
    ns = kube.namespace("explain-gang")
    _gang(kube, ns, NOBODY, 4, 4, "3")
    try:
        # Three runs of the CLI on a shared machine: each gets room for a slow start.
        doc = explain_json(kube, "p0", "-n", ns, GATE, timeout=180)
        group = doc["group"]
        assert (group["group"], group["api"], group["minCount"], group["queued"], group["bound"], group["placed"]) == (
            f"{ns}/g", "PodGroup", 4, 4, 0, False)
        assert group["message"] == "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
        assert written.startswith(group["message"]), (written, group["message"])
        fitting = [p for p in group["pods"] if p["fits"]]
        assert len({p["node"] for p in fitting}) == 3
        assert {p["node"] for p in fitting} <= NODES - {"kind-control-plane"}
        (nowhere,) = [p for p in group["pods"] if not p["fits"]]
        assert nowhere["message"] == "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu."
        assert set(nowhere["nodeReasons"]) == NODES
        table = explain(kube, "p0", "-n", ns, GATE, timeout=180)
        assert f"GROUP {ns}/g   PodGroup (gang, min 4)   4 queued, 0 bound" in table.stdout
        assert f"group: not placed: {group['message']}" in table.stdout
        # Without the gate the group is only named.
        alone = explain_json(kube, "p0", "-n", ns, timeout=180)
        assert alone["group"] is None
        assert any("GenericWorkload=true" in n for n in alone["notes"])
        assert not [p for p in kube.pods(ns) if p["spec"].get("nodeName")]
    finally:
        for n in (ref, ns):
            kube.delete(f"/api/v1/namespaces/{n}")
