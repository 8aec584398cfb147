"""`kubesched simulate` and `kubesched snapshot` against the session plane, as subprocesses: a batch
simulated equals the same batch scheduled for real by `kubesched run` (placements where forced, the
whole message where nothing fits), and neither command writes anything."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched_dev.localcluster.topology import NodeSpec
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    bound_pods,
    container,
    create_nodes,
    delete_nodes,
    events,
    node_manifest,
    poll,
    scheduled_condition,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def cli(plane: Kube, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched", *args, f"--kubeconfig={plane.kubeconfig}"],
                          capture_output=True, text=True, timeout=120, input=stdin)


def simulate_json(plane: Kube, *args: str, stdin: str | None = None) -> dict[str, Any]:
    proc = cli(plane, "simulate", *args, "-o", "json", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def batch(ns: str, selector: dict[str, str]) -> list[dict[str, Any]]:
    """Seven 1-cpu replicas that exactly fill 4 + 2 + 1 cpu, then a 3-cpu pod that fits nowhere after them."""
    spec = {"schedulerName": KUBESCHED, "nodeSelector": selector, "terminationGracePeriodSeconds": 0}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fill", "namespace": ns},
         "spec": {"replicas": 7, "selector": {"matchLabels": {"app": "fill"}},
                  "template": {"metadata": {"labels": {"app": "fill"}},
                               "spec": {**spec, "containers": [container(cpu="1", memory="128Mi")]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "too-big", "namespace": ns},
         "spec": {**spec, "containers": [container(cpu="3", memory="128Mi")]}},
    ]


def _nodes(plane: Kube, tag: str, cpus: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Nodes `<tag>-<short>` with these cpus, labelled simulate-test=<tag>: (the label, the names)."""
    label = {"simulate-test": tag}
    names = [f"{tag}-{short}" for short in cpus]
    create_nodes(plane, [node_manifest(NodeSpec(n, dict(label), (), {"cpu": c, "memory": "8Gi", "pods": "110"}))
                         for n, c in zip(names, cpus.values(), strict=True)])
    return label, names


def _clean_up(plane: Kube, ns: str, nodes: list[str], owner: str) -> None:
    """The owner first (its controller would recreate the pods), then the pods, then the nodes."""
    plane.delete(owner)
    plane.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not plane.pods(ns), timeout=60)
    delete_nodes(plane, nodes)


def test_simulated_batch_equals_a_real_run(plane: Kube, kubesched: KubeschedProcess, tmp_path: Path) -> None:
    ns = plane.namespace("simulate-batch")
    cpus = {"a": "4", "b": "2", "c": "1"}
    label, names = _nodes(plane, "simbatch", cpus)
    try:
        manifests = batch(ns, label)
        path = tmp_path / "batch.yaml"
        path.write_text(yaml.safe_dump_all(manifests))
        before_events = events(plane, ns)
        sim = simulate_json(plane, "-f", str(path))
        table = cli(plane, "simulate", "-f", "-", stdin=path.read_text())
        assert table.returncode == 0, table.stderr

        # Nothing written: no pod, no Deployment, no event in the namespace.
        assert plane.pods(ns) == []
        assert plane.get(f"/apis/apps/v1/namespaces/{ns}/deployments")["items"] == []
        assert events(plane, ns) == before_events == []

        pods = sim["pods"]
        assert len(pods) == 8
        assert all({"pod", "node", "message"} <= set(p) for p in pods)
        fill = [p for p in pods if p["pod"].startswith(f"{ns}/fill-")]
        want = {names[0]: 4, names[1]: 2, names[2]: 1}
        assert {n: sum(1 for p in fill if p["node"] == n) for n in names} == want
        (big,) = [p for p in pods if p["pod"] == f"{ns}/too-big"]
        assert big["node"] is None
        assert "3 Insufficient cpu" in big["message"]
        for p in pods:
            assert p["pod"] in table.stdout

        # The same batch for real: the Deployment first, the big pod once its replicas are bound.
        plane.create(f"/apis/apps/v1/namespaces/{ns}/deployments", manifests[0])
        wait_for("the 7 replicas bound", lambda: len(bound_pods(plane, ns)) == 7, timeout=60)
        real = {n: sum(1 for p in bound_pods(plane, ns) if p["spec"]["nodeName"] == n) for n in names}
        assert real == want
        plane.create(f"/api/v1/namespaces/{ns}/pods", manifests[1])

        def message() -> str:
            cond = scheduled_condition(plane.get(f"/api/v1/namespaces/{ns}/pods/too-big")) or {}
            return str(cond.get("message") or "")
        wait_for("too-big's PodScheduled=False", message, timeout=30)
        # kubesched retries on cluster events: give its message a moment to settle before comparing.
        poll(lambda: message() == big["message"], timeout=10)
        assert message() == big["message"]
    finally:
        _clean_up(plane, ns, names, f"/apis/apps/v1/namespaces/{ns}/deployments/fill")


def test_snapshot_drain_and_template_nodes(plane: Kube, tmp_path: Path) -> None:
    ns = plane.namespace("simulate-whatif")
    label, names = _nodes(plane, "simwhat", {"a": "4", "b": "4"})
    try:
        # On a: a pod bound by nobody (spec.nodeName), and a DaemonSet's pod (the DaemonSet covers both nodes).
        plane.create(f"/apis/apps/v1/namespaces/{ns}/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agents"},
            "spec": {"selector": {"matchLabels": {"role": "agent"}}, "template": {
                "metadata": {"labels": {"role": "agent"}},
                "spec": {"nodeSelector": label, "terminationGracePeriodSeconds": 0,
                         "containers": [container(cpu="100m", memory="64Mi")]}}}})
        plane.create(f"/api/v1/namespaces/{ns}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
                     "spec": {"nodeName": names[0], "containers": [container(cpu="3", memory="128Mi")],
                              "terminationGracePeriodSeconds": 0}})
        wait_for("the app and two DaemonSet pods bound", lambda: len(bound_pods(plane, ns)) == 3, timeout=60)
        agent_on_a = next(f"{ns}/{p['metadata']['name']}" for p in bound_pods(plane, ns)
                          if p["spec"]["nodeName"] == names[0] and p["metadata"]["name"] != "app")
        snap = cli(plane, "snapshot")
        assert snap.returncode == 0, snap.stderr
        doc = json.loads(snap.stdout)
        assert doc["kind"] == "ClusterSnapshot"
        assert doc["formatVersion"] == 1
        assert {"nodes", "pods", "jobs", "namespaces", "services", "replicasets", "statefulsets",
                "replicationcontrollers"} <= set(doc["objects"])
        assert set(names) <= {n["metadata"]["name"] for n in doc["objects"]["nodes"]}
        assert {f"{ns}/app", agent_on_a} <= {f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                                                 for p in doc["objects"]["pods"]}
        file = tmp_path / "cluster.json"
        file.write_text(snap.stdout)

        template = tmp_path / "node.yaml"
        template.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Node",
                                            "metadata": {"name": "extra", "labels": dict(label)},
                                            "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}))
        wanted = tmp_path / "big.yaml"
        wanted.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
                                          "spec": {"nodeSelector": label,
                                                   "containers": [container(cpu="10", memory="1Gi")]}}))
        sim = simulate_json(plane, "-f", str(wanted), "--snapshot", str(file), "-n", ns, "--drain", names[0],
                            "--add-nodes", "2", "--node-template", str(template))
        by_pod = {p["pod"]: p for p in sim["pods"]}
        # The drained node's app pod is placed again (on b, or an added node); the DaemonSet's pod stays.
        assert by_pod[f"{ns}/app"]["replaces"] == names[0]
        assert by_pod[f"{ns}/app"]["node"] not in (None, names[0])
        assert agent_on_a not in by_pod
        assert by_pod[f"{ns}/big"]["node"] in ("extra-1", "extra-2")
        assert sim["addedNodes"] == ["extra-1", "extra-2"]
        nodes = {n["name"]: n for n in sim["nodes"]}
        assert nodes[names[0]]["drained"]
        assert nodes[names[0]]["pods"] == [agent_on_a]

        # The live cluster is untouched: a is not cordoned, the app pod is still on it, no node was added.
        live = plane.get(f"/api/v1/nodes/{names[0]}")
        assert not live["spec"].get("unschedulable")
        assert plane.get(f"/api/v1/namespaces/{ns}/pods/app")["spec"]["nodeName"] == names[0]
        assert plane.request("GET", "/api/v1/nodes/extra-1")[0] == 404
        # (The DaemonSet's pods have their own events, from kube-scheduler and the controller.)
        assert [e for e in events(plane, ns) if e.get("reportingController") == KUBESCHED] == []
        assert plane.request("GET", f"/api/v1/namespaces/{ns}/pods/big")[0] == 404

        bad = cli(plane, "simulate", "-f", str(wanted), "--snapshot", str(file), "--drain", "no-such-node")
        assert bad.returncode != 0
        assert "--drain: no node 'no-such-node'" in bad.stderr
    finally:
        _clean_up(plane, ns, names, f"/apis/apps/v1/namespaces/{ns}/daemonsets/agents")


def test_read_only_identity_suffices(plane: Kube, tmp_path: Path) -> None:
    """deploy/rbac-readonly.yaml (list, watch, and get on pods) is all snapshot, simulate and shadow need."""
    plane.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac-readonly.yaml"))
    kubeconfig = plane.service_account_kubeconfig("kube-system", "kubesched-readonly", tmp_path / "ro.kubeconfig")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kubesched", *args, f"--kubeconfig={kubeconfig}"],
                              capture_output=True, text=True, timeout=120, input="")

    snap = run("snapshot")
    assert snap.returncode == 0, snap.stderr
    assert json.loads(snap.stdout)["objects"]["nodes"]
    pod = yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": [container(cpu="100m")]}})
    sim = subprocess.run([sys.executable, "-m", "kubesched", "simulate", "-f", "-", "-o", "json",
                          f"--kubeconfig={kubeconfig}"], capture_output=True, text=True, timeout=120, input=pod)
    assert sim.returncode == 0, sim.stderr
    assert json.loads(sim.stdout)["pods"][0]["node"]
    log = tmp_path / "shadow.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "kubesched", "shadow", f"--kubeconfig={kubeconfig}"],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_for("the shadow watching", lambda: "shadow watching binds" in log.read_text() or proc.poll(),
                     timeout=60)
            time.sleep(1)  # its watches open
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "forbidden" not in text.lower(), text
    assert " 403" not in text, text


# --- pod groups, on the gated plane (GenericWorkload on) ---------------------------------------------

PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"


def _gang_job(ns: str, scheduler: str, count: int, cpu: str) -> list[dict[str, Any]]:
    """A PodGroup of minCount `count` and a Job of `count` pods joining it."""
    return [
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g", "namespace": ns},
         "spec": {"schedulingPolicy": {"gang": {"minCount": count}}}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": ns},
         "spec": {"parallelism": count, "completions": count, "backoffLimit": 0, "template": {"spec": {
             "schedulerName": scheduler, "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
             "schedulingGroup": {"podGroupName": "g"}, "containers": [container(cpu=cpu)]}}}},
    ]


@pytest.mark.parametrize(("count", "placed"), [
    pytest.param(4, False, id="room-for-3-of-4-places-none"),
    pytest.param(3, True, id="gang-of-3-fits-whole"),
])
def test_a_gang_job_simulated_as_kube_scheduler_places_it(gated_plane: Kube, tmp_path: Path, count: int,
                                                          placed: bool) -> None:
    """The same PodGroup and Job simulated, then created for kube-scheduler: as many pods bound as
    simulated, and its PodGroup condition begins with the simulated group's reason (kube-scheduler
    adds what pod-group preemption found; simulate evicts nothing)."""
    kube = gated_plane
    ns = kube.namespace(f"sim-gang-{count}")
    manifests = tmp_path / "gang.yaml"
    manifests.write_text(yaml.safe_dump_all(_gang_job(ns, "default-scheduler", count, "3")))
    try:
        doc = simulate_json(kube, "-f", str(manifests), "--feature-gates=GenericWorkload=true")
        (group,) = doc["groups"]
        assert (group["group"], group["minCount"], group["placed"]) == (f"{ns}/g", count, placed)
        nodes = [p["node"] for p in doc["pods"]]
        assert all(p["group"] == f"{ns}/g" for p in doc["pods"])
        if placed:
            assert len(set(nodes)) == 3
            assert None not in nodes
        else:
            assert nodes == [None] * count
            assert group["message"] == "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
        table = cli(kube, "simulate", "-f", str(manifests), "--feature-gates=GenericWorkload=true")
        assert table.returncode == 0, table.stderr
        assert f"{ns}/g" in table.stdout
        assert not kube.pods(ns)  # simulate wrote nothing

        kube.kubectl("apply", "-f", str(manifests))

        def condition() -> dict[str, Any] | None:
            pg = kube.get(f"{PODGROUPS.format(ns=ns)}/g")
            return next((c for c in (pg.get("status") or {}).get("conditions") or []
                         if c["type"] == "PodGroupInitiallyScheduled"), None)
        seen = wait_for("kube-scheduler's PodGroup condition", condition, timeout=60)
        assert (seen["status"] == "True") == placed, seen
        assert seen.get("message", "").startswith(group["message"]), (seen, group)
        if placed:
            wait_for("the gang bound", lambda: len(bound_pods(kube, ns)) == count, timeout=30)
        else:
            time.sleep(2)
            assert not bound_pods(kube, ns)
    finally:
        kube.delete(f"/apis/batch/v1/namespaces/{ns}/jobs/train?propagationPolicy=Background")
        for p in kube.pods(ns):
            kube.delete(f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}?gracePeriodSeconds=0")
        wait_for(f"the pods of {ns} to be gone", lambda: not kube.pods(ns), timeout=30)
