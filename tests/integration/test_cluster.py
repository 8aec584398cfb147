"""The local control plane itself: nodes, real controllers, the reference scheduler, lifecycle."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster import plane as planes
from kubesched_dev.localcluster import procs
from kubesched_dev.localcluster.topology import uniform
from tests.integration.kube import Kube, wait_for

WORKERS = {"kind-worker", "kind-worker2", "kind-worker3"}


def nginx_deployment(name: str, scheduler: str | None, replicas: int = 3) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "nginx", "image": "nginx:1.27",
                                            "ports": [{"containerPort": 80}]}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


def kubesched_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched", *args], capture_output=True, text=True,
                          timeout=300)


def test_seed_kind_nodes_ready_with_labels_and_taint(plane: Kube) -> None:
    out = plane.kubectl("get", "nodes", "--no-headers")
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert rows == {"kind-control-plane": "Ready", **{w: "Ready" for w in WORKERS}}
    nodes = {n["metadata"]["name"]: n for n in plane.get("/api/v1/nodes")["items"]}
    cp = nodes["kind-control-plane"]
    assert cp["metadata"]["labels"]["tier"] == "control"
    assert "node-role.kubernetes.io/control-plane" in cp["metadata"]["labels"]
    assert cp["spec"]["taints"] == [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    tiers = {n: nodes[n]["metadata"]["labels"]["tier"] for n in WORKERS}
    assert tiers == {"kind-worker": "normal", "kind-worker2": "normal", "kind-worker3": "cronjob"}
    for n in nodes.values():
        assert n["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}


def test_deployment_for_kubesched_stays_pending_and_default_scheduler_binds(plane: Kube) -> None:
    ns = plane.namespace("cluster-deploy")
    plane.create(f"/apis/apps/v1/namespaces/{ns}/deployments", nginx_deployment("waiting", "kubesched"))
    plane.create(f"/apis/apps/v1/namespaces/{ns}/deployments", nginx_deployment("placed", None))

    placed = wait_for("3 Running pods of the default-scheduler Deployment", lambda: (
        pods if len(pods := plane.pods(ns, "app=placed")) == 3
        and all(p["status"].get("phase") == "Running" for p in pods) else None), timeout=60)
    assert {p["spec"]["nodeName"] for p in placed} <= WORKERS
    waiting = wait_for("3 pods of the kubesched Deployment", lambda: (
        pods if len(pods := plane.pods(ns, "app=waiting")) == 3 else None))
    time.sleep(2)  # give any scheduler that wrongly takes them time to do so
    for p in plane.pods(ns, "app=waiting"):
        assert p["spec"].get("nodeName") is None, p["metadata"]["name"]
        assert p["status"]["phase"] == "Pending"
    assert len(waiting) == 3


def test_cronjob_makes_job_and_pod_within_70s(plane: Kube) -> None:
    ns = plane.namespace("cluster-cron")
    plane.create(f"/apis/batch/v1/namespaces/{ns}/cronjobs", {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
        "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "20"]}]}}}}},
    })
    jobs = wait_for("a Job from the CronJob", lambda: plane.get(f"/apis/batch/v1/namespaces/{ns}/jobs")["items"],
                    timeout=70, interval=1)
    assert jobs[0]["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    pods = wait_for("the Job's Pod", lambda: plane.pods(ns), timeout=15)
    assert pods[0]["metadata"]["ownerReferences"][0]["kind"] == "Job"


def _ports_free(ports: list[int]) -> bool:
    return not any(procs.port_in_use(p) for p in ports)


def test_two_named_clusters_side_by_side_and_down_leaves_nothing() -> None:
    names = [f"kubesched-test-pair-{os.getpid()}-{i}" for i in (1, 2)]
    clusters = [planes.up(n, uniform(2), progress=lambda m: None) for n in names]
    try:
        a, b = clusters
        assert a.server != b.server
        assert set(a.ports.values()).isdisjoint(b.ports.values())
        planes.down(a.name, lambda m: None)
        assert not any(procs.alive(pid, a.dir) for pid in a.pids.values())
        assert _ports_free(list(a.ports.values()))
        assert not Path(a.dir).exists()
        kb = Kube(b)
        assert len(kb.get("/api/v1/nodes")["items"]) == 2
        kb.namespace("still-works")
    finally:
        for n in names:
            planes.down(n, lambda m: None)
    for c in clusters:
        assert not any(procs.alive(pid, c.dir) for pid in c.pids.values())
        assert _ports_free(list(c.ports.values()))


def test_thousand_nodes_all_ready() -> None:
    name = f"kubesched-test-1000-{os.getpid()}"
    started = time.monotonic()
    c = planes.up(name, uniform(1000), default_scheduler=False, progress=lambda m: None)
    try:
        elapsed = time.monotonic() - started
        nodes = Kube(c).get("/api/v1/nodes")["items"]
        ready = [n for n in nodes if any(x["type"] == "Ready" and x["status"] == "True"
                                         for x in n["status"]["conditions"])]
        assert len(ready) == 1000
        print(f"\n--nodes 1000: up with all nodes Ready in {elapsed:.1f} s", file=sys.stderr)
    finally:
        planes.down(name, lambda m: None)


def test_taken_api_port_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(planes.ClusterError, match=rf"--api-port {port}: port {port} .* already in use"):
            planes.up(f"kubesched-test-port-{os.getpid()}", uniform(1), api_port=port, progress=lambda m: None)


def test_running_cluster_is_refused_and_stale_one_recovered(plane: Kube) -> None:
    with pytest.raises(planes.ClusterError, match="is already running"):
        planes.up(plane.cluster.name, uniform(1), progress=lambda m: None)

    name = f"kubesched-test-stale-{os.getpid()}"
    stale_dir = planes.cluster_dir(name)
    stale_dir.mkdir(parents=True)
    dead = planes.Cluster(name=name, dir=str(stale_dir), pids={"etcd": 2**22 - 1}, ports={"etcd": 1})
    (stale_dir / "state.json").write_text(json.dumps(dead.__dict__))
    messages: list[str] = []
    c = planes.up(name, uniform(1), default_scheduler=False, progress=messages.append)
    try:
        assert any("stale" in m for m in messages), messages
        assert len(Kube(c).get("/api/v1/nodes")["items"]) == 1
    finally:
        planes.down(name, lambda m: None)


def test_cli_bad_topology_field_names_it(tmp_path: Path) -> None:
    bad = tmp_path / "topo.yaml"
    bad.write_text("nodes:\n  - name: a\n    taints: [{key: x, effect: Sometimes}]\n")
    proc = kubesched_cli("cluster", "up", "--name", "never-started", "--topology", str(bad))
    assert proc.returncode != 0
    assert 'nodes[0].taints[0].effect: Unsupported value: \'Sometimes\': supported values: "NoSchedule"' \
        in proc.stderr, proc.stderr


def test_cli_status_and_list(plane: Kube) -> None:
    proc = kubesched_cli("cluster", "status", "--name", plane.cluster.name)
    assert proc.returncode == 0, proc.stderr
    assert "running" in proc.stdout
    assert "kube-apiserver" in proc.stdout
    listed = kubesched_cli("cluster", "list").stdout
    assert f"{plane.cluster.name}\trunning\t{plane.server}" in listed
