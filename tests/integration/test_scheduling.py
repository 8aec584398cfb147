"""kubesched on the real plane, side by side with the reference kube-scheduler (`default-scheduler`):
where it places pods, what it writes when it cannot, whom it leaves alone, and how it stops.

The small per-plugin scenarios are in test_scheduling_scenarios.py; 500 pods and kill/restart in
test_scheduling_scale.py.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import NodeSpec, seed_kind
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    DEFAULT,
    KUBESCHED,
    PREEMPTION,
    bound_pods,
    container,
    create_nodes,
    create_pod,
    delete_nodes,
    events,
    get_pod,
    node_manifest,
    own_plane,
    pod_manifest,
    poll,
    scheduled_condition,
    wait_bound,
    wait_event,
    wait_unschedulable,
)

WORKERS = {"kind-worker", "kind-worker2", "kind-worker3"}
CONTROL_PLANE = "kind-control-plane"


def nginx_deployment(name: str, scheduler: str | None) -> dict[str, Any]:
    """The seed's nginx Deployment (3 replicas, no requests), optionally for another scheduler."""
    spec: dict[str, Any] = {"containers": [{"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def delete_all_pods(kube: Kube, ns: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=60)


def small(name: str, scheduler: str | None, **spec: Any) -> dict[str, Any]:
    return pod_manifest(name, scheduler, {"containers": [container(cpu="10m", memory="16Mi")], **spec})


# --- the seed's demo, on a fresh seed-kind plane --------------------------------------------------------


@pytest.fixture(scope="module")
def fresh_seed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kube, KubeschedProcess]]:
    # The shared plane's workers carry other tests' pods by now; the demo's spread is about empty workers.
    with own_plane("demo", seed_kind()) as kube:
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("demo")) / "kubesched.log")
        try:
            yield kube, proc
        finally:
            proc.stop()


def test_nginx_replicas_one_per_worker_like_kube_scheduler(fresh_seed: tuple[Kube, KubeschedProcess]) -> None:
    kube, _ = fresh_seed
    ns = kube.namespace("nginx")

    def placed(app: str) -> list[dict[str, Any]] | None:
        pods = kube.pods(ns, f"app={app}")
        return pods if len(pods) == 3 and all(p["spec"].get("nodeName") for p in pods) else None

    kube.create(f"/apis/apps/v1/namespaces/{ns}/deployments", nginx_deployment("ours", KUBESCHED))
    ours = wait_for("3 nginx replicas bound by kubesched", lambda: placed("ours"), timeout=60)
    assert sorted(p["spec"]["nodeName"] for p in ours) == sorted(WORKERS), \
        "kubesched must put one replica on each worker and none on the tainted control-plane node"
    for p in ours:
        name, node = p["metadata"]["name"], p["spec"]["nodeName"]
        ev = wait_event(kube, ns, name, "Scheduled")
        assert ev["reportingController"] == KUBESCHED
        assert ev["type"] == "Normal"
        assert ev["action"] == "Binding"
        assert ev["note"] == f"Successfully assigned {ns}/{name} to {node}"
        assert all(e["reportingController"] == KUBESCHED for e in events(kube, ns, name)
                   if e.get("reason") in ("Scheduled", "FailedScheduling"))

    # The reference on the same plane, now one replica per worker heavier, spreads the same way.
    kube.create(f"/apis/apps/v1/namespaces/{ns}/deployments", nginx_deployment("ref", None))
    ref = wait_for("3 nginx replicas bound by kube-scheduler", lambda: placed("ref"), timeout=60)
    assert sorted(p["spec"]["nodeName"] for p in ref) == sorted(WORKERS)
    running = wait_for("kubesched's replicas Running", lambda: all(
        p["status"].get("phase") == "Running" for p in kube.pods(ns, "app=ours")), timeout=30)
    assert running


# --- on the shared seed-kind plane --------------------------------------------------------------------


@pytest.fixture
def extra_nodes(plane: Kube) -> Iterator[list[str]]:
    """Names of nodes a test adds to the shared plane; they are deleted afterwards."""
    added: list[str] = []
    yield added
    delete_nodes(plane, added)


def test_cordoned_node_gets_nothing(plane: Kube, kubesched: KubeschedProcess, extra_nodes: list[str]) -> None:
    ns = plane.namespace("sched-cordon")
    # Far bigger than the workers: cordoned or not, it is every pod's best-scoring node.
    node = "sched-cordoned"
    extra_nodes.append(node)
    create_nodes(plane, [node_manifest(NodeSpec(node, {}, (), {"cpu": "64", "memory": "128Gi", "pods": "110"}),
                                       unschedulable=True)])
    try:
        for i in range(4):
            create_pod(plane, ns, small(f"ours-{i}", KUBESCHED))
            create_pod(plane, ns, small(f"ref-{i}", None))
        pinned = {"nodeSelector": {"kubernetes.io/hostname": node}}
        create_pod(plane, ns, small("ours-pinned", KUBESCHED, **pinned))
        create_pod(plane, ns, small("ref-pinned", None, **pinned))
        for i in range(4):
            assert wait_bound(plane, ns, f"ours-{i}") in WORKERS
            assert wait_bound(plane, ns, f"ref-{i}") in WORKERS

        ref = wait_unschedulable(plane, ns, "ref-pinned")["message"]
        want = ref
        assert "node(s) were unschedulable" in want, ref
        ours = wait_unschedulable(plane, ns, "ours-pinned")
        assert (ours["reason"], ours["message"]) == ("Unschedulable", want)
        ev = wait_event(plane, ns, "ours-pinned", "FailedScheduling")
        assert (ev["reportingController"], ev["note"]) == (KUBESCHED, want)

        # Uncordoned, it takes both pinned pods: kubesched noticed the node change.
        plane.request("PATCH", f"/api/v1/nodes/{node}", {"spec": {"unschedulable": False}},
                      content_type="application/merge-patch+json")
        assert wait_bound(plane, ns, "ours-pinned", timeout=15) == node
        assert wait_bound(plane, ns, "ref-pinned", timeout=15) == node
    finally:
        delete_all_pods(plane, ns)


def test_too_big_pod_waits_with_kube_scheduler_message_then_takes_a_new_node(
        plane: Kube, kubesched: KubeschedProcess, extra_nodes: list[str]) -> None:
    ns = plane.namespace("sched-toobig")
    spec = {"containers": [container(cpu="5", memory="1Gi")]}
    try:
        create_pod(plane, ns, pod_manifest("ref", None, spec))
        create_pod(plane, ns, pod_manifest("ours", KUBESCHED, spec))
        ref_cond = wait_unschedulable(plane, ns, "ref")
        assert PREEMPTION in ref_cond["message"]
        want = ref_cond["message"]
        assert "Insufficient cpu" in want, want

        ours = wait_unschedulable(plane, ns, "ours")
        assert ours["status"] == "False"
        assert ours["reason"] == "Unschedulable"
        assert ours["message"] == want, \
            f"condition: kubesched {ours['message']!r}, kube-scheduler {ref_cond['message']!r}"
        ev = wait_event(plane, ns, "ours", "FailedScheduling")
        assert ev["reportingController"] == KUBESCHED
        assert ev["type"] == "Warning"
        assert ev["note"] == want, f"event: kubesched {ev['note']!r}, kube-scheduler {ref_cond['message']!r}"
        ref_ev = wait_event(plane, ns, "ref", "FailedScheduling")
        assert ref_ev["note"] == want
        time.sleep(1)
        assert get_pod(plane, ns, "ours")["spec"].get("nodeName") is None

        node = "sched-big"
        extra_nodes.append(node)
        added = time.monotonic()
        plane.create("/api/v1/nodes", NodeSpec(node, {}, (), {"cpu": "16", "memory": "32Gi", "pods": "110"}).manifest())
        assert wait_bound(plane, ns, "ours", timeout=15) == node
        elapsed = time.monotonic() - added
        assert elapsed < 5, f"kubesched bound the pod {elapsed:.1f} s after a node that fits it was added"
        print(f"\nbound {elapsed:.1f} s after the node was added", flush=True)
        assert wait_bound(plane, ns, "ref", timeout=15) == node
        scheduled = wait_event(plane, ns, "ours", "Scheduled")
        assert scheduled["note"] == f"Successfully assigned {ns}/ours to {node}"
    finally:
        delete_all_pods(plane, ns)


def test_default_scheduler_pods_are_never_touched(plane: Kube, kubesched: KubeschedProcess) -> None:
    ns = plane.namespace("sched-hands-off")
    try:
        create_pod(plane, ns, small("fits", None))
        create_pod(plane, ns, pod_manifest("too-big", None, {"containers": [container(cpu="100")]}))
        create_pod(plane, ns, small("named-default", DEFAULT))
        create_pod(plane, ns, small("someone-else", "someone-else"))
        # A kubesched pod alongside proves kubesched was watching this namespace all along.
        create_pod(plane, ns, small("ours", KUBESCHED))
        wait_bound(plane, ns, "ours")
        for name in ("fits", "named-default"):
            wait_bound(plane, ns, name)
            ev = wait_event(plane, ns, name, "Scheduled")
            assert ev["reportingController"] == DEFAULT
        cond = wait_unschedulable(plane, ns, "too-big")
        assert PREEMPTION in cond["message"], cond["message"]
        time.sleep(2)  # room for a kubesched that wrongly took them to show itself

        for e in events(plane, ns):
            if e["regarding"]["name"] != "ours":
                assert e["reportingController"] != KUBESCHED, e
        too_big = get_pod(plane, ns, "too-big")
        assert too_big["spec"].get("nodeName") is None
        assert PREEMPTION in (scheduled_condition(too_big) or {}).get("message", "")
        other = get_pod(plane, ns, "someone-else")
        assert other["spec"].get("nodeName") is None
        assert scheduled_condition(other) is None, "nobody may write a condition on another scheduler's pod"
        assert not events(plane, ns, "someone-else")
        for name in ("fits", "too-big", "named-default", "someone-else"):
            assert f"{ns}/{name}" not in kubesched.log()
    finally:
        delete_all_pods(plane, ns)


def _log_lines(proc: KubeschedProcess) -> list[dict[str, Any]]:
    lines = []
    for raw in proc.log().splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue
    return lines


def test_sigterm_lets_in_flight_binds_finish(plane: Kube, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    ns = plane.namespace("sched-sigterm")
    name = "kubesched-sigterm"
    total = 150
    for i in range(total):
        create_pod(plane, ns, small(f"p-{i:03d}", name))
    # One bind at a time while all pods are already queued: decisions outrun binds, so SIGTERM
    # surely finds binds waiting in flight.
    proc = start_kubesched(f"--scheduler-name={name}", "--binds-in-flight=1", "--log-level=debug")
    try:
        wait_for("kubesched's first binds", lambda: proc.log().count('"msg":"bound"') >= 3, timeout=30,
                 interval=0.01)
        proc.proc.send_signal(signal.SIGTERM)
        code = proc.stop(timeout=30)
        lines = _log_lines(proc)
        msgs = [entry.get("msg") for entry in lines]
        assert code == 0, f"kubesched exited {code} after SIGTERM:\n{proc.log()[-3000:]}"
        assert "kubesched stopped" in msgs, proc.log()[-3000:]
        stopping = msgs.index("stopping: letting in-flight binds finish")
        after = [e for e in lines[stopping:] if e.get("msg") == "bound"]
        assert after, "no bind was in flight at SIGTERM: the test did not exercise what it claims"
        assert not [e for e in lines if e.get("msg") in ("binding failed", "scheduling cycle failed")]

        stopped = next(e for e in lines if e.get("msg") == "kubesched stopped")
        bound = bound_pods(plane, ns)
        assert stopped["scheduled"] == len(bound), (stopped, len(bound))
        logged = sorted(e["pod"] for e in lines if e.get("msg") == "bound")
        assert logged == sorted(f"{ns}/{p['metadata']['name']}" for p in bound)
        scheduled = [e for e in events(plane, ns) if e.get("reason") == "Scheduled"]
        assert sorted(e["regarding"]["name"] for e in scheduled) == sorted(p["metadata"]["name"] for p in bound), \
            "each pod bound before exit needs its Scheduled event, sent before exit"
        time.sleep(1)
        assert len(bound_pods(plane, ns)) == len(bound), "a pod was bound after kubesched had exited"
    finally:
        proc.stop()
        delete_all_pods(plane, ns)


def test_sigterm_when_idle_exits_zero(plane: Kube, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    proc = start_kubesched("--scheduler-name=kubesched-idle")
    started = time.monotonic()
    assert proc.stop(signal.SIGTERM) == 0, proc.log()[-2000:]
    assert time.monotonic() - started < 10
    assert poll(lambda: "kubesched stopped" in proc.log(), timeout=1), proc.log()[-2000:]
