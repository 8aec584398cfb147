"""500 small pods at once on the seed-kind plane, whose three workers have 330 pod slots, with only
kubesched scheduling: exactly 330 bound, the rest Pending for kube-scheduler's reasons; and the same
with kubesched SIGKILLed and restarted mid-run: nothing double-bound, overcommitted or lost.

Both tests use one plane of their own (no default scheduler), one after the other, each with its
own kubesched process, and each leaves the plane empty of pods.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.http import create_all, tls_context
from kubesched_dev.localcluster.topology import seed_kind
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    bound_pods,
    container,
    events,
    node_totals,
    own_plane,
    pod_manifest,
    scheduled_condition,
)

# Each test's own waits add up to ~7 min at worst (kubesched's sync, binding, settling, cleanup).
pytestmark = pytest.mark.timeout(600)

PODS = 500
SLOTS = 330  # 3 workers x 110 pods; the control-plane node is tainted
WORKERS = {"kind-worker", "kind-worker2", "kind-worker3"}
# kube-scheduler v1.37.2 writes this (no pod has a lower priority than another: nothing to preempt).
FULL = ("0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Too many pods. preemption: 0/4 nodes are "
        "available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.")


@pytest.fixture(scope="module")
def seed_plane() -> Iterator[Kube]:
    with own_plane("scale", seed_kind(), default_scheduler=False) as kube:
        yield kube


def _create_pods(kube: Kube, ns: str, count: int) -> None:
    pki = Path(kube.cluster.dir) / "pki"
    ctx = tls_context(pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
    pods = (pod_manifest(f"p-{i:03d}", KUBESCHED, {"containers": [container(cpu="10m", memory="16Mi")]})
            for i in range(count))
    asyncio.run(create_all(kube.server, ctx, f"/api/v1/namespaces/{ns}/pods", pods, lambda n: None))


def _settled(kube: Kube, ns: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(bound, pending) once SLOTS pods are bound and every other one carries the full-plane message."""
    pods = kube.pods(ns)
    bound = [p for p in pods if p["spec"].get("nodeName")]
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    done = len(pods) == PODS and len(bound) >= SLOTS and all(
        (scheduled_condition(p) or {}).get("message") == FULL for p in pending)
    return (bound, pending) if done else None


def _check_outcome(kube: Kube, ns: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    settled = wait_for(f"{SLOTS} bound and the rest Pending with {FULL!r}", lambda: _settled(kube, ns),
                       timeout=120, interval=1)
    bound, pending = settled
    assert len(bound) == SLOTS, f"{len(bound)} pods bound; the workers have {SLOTS} pod slots"
    assert len(pending) == PODS - SLOTS
    nodes = {n["metadata"]["name"]: n for n in kube.get("/api/v1/nodes")["items"]}
    every_bound = bound_pods(kube, ns)
    for node, totals in node_totals(every_bound).items():
        assert node in WORKERS, f"{totals['pods']} pod(s) on {node}"
        allocatable = nodes[node]["status"]["allocatable"]
        assert totals["pods"] <= int(allocatable["pods"]), (node, totals)
        assert totals["cpu_m"] <= int(allocatable["cpu"]) * 1000, (node, totals)
    for p in pending:
        cond = scheduled_condition(p) or {}
        assert (cond.get("status"), cond.get("reason"), cond.get("message")) == ("False", "Unschedulable", FULL), \
            (p["metadata"]["name"], cond)
    return bound, pending


def _check_events(kube: Kube, ns: str, bound: list[dict[str, Any]], pending: list[dict[str, Any]],
                  *, every_bind_reported: bool) -> None:
    evs = events(kube, ns)
    scheduled = Counter(e["regarding"]["name"] for e in evs if e["reason"] == "Scheduled")
    node_of = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in bound}
    twice = {name: n for name, n in scheduled.items() if n > 1}
    assert not twice, f"pods reported Scheduled more than once (bound twice?): {twice}"
    assert set(scheduled) <= set(node_of), f"Scheduled events for unbound pods: {set(scheduled) - set(node_of)}"
    if every_bind_reported:
        assert set(scheduled) == set(node_of)
    for e in evs:
        if e["reason"] == "Scheduled":
            name = e["regarding"]["name"]
            assert e["note"] == f"Successfully assigned {ns}/{name} to {node_of[name]}", e["note"]
            assert e["reportingController"] == KUBESCHED
    failed = {e["regarding"]["name"]: e for e in evs if e["reason"] == "FailedScheduling"}
    missing = {p["metadata"]["name"] for p in pending} - set(failed)
    assert not missing, f"pending pods without a FailedScheduling event: {sorted(missing)[:5]}"
    for p in pending:
        name = p["metadata"]["name"]
        assert failed[name]["note"] in (FULL,), failed[name]["note"]


def _cleanup(kube: Kube, ns: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=120, interval=1)


def _log_entries(proc: KubeschedProcess) -> list[dict[str, Any]]:
    out = []
    for raw in proc.log().splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out


def test_500_pods_fill_330_slots(seed_plane: Kube, tmp_path: Path) -> None:
    kube = seed_plane
    ns = kube.namespace("fill")
    proc = KubeschedProcess(kube, [], tmp_path / "kubesched.log")
    try:
        started = time.monotonic()
        _create_pods(kube, ns, PODS)
        created = time.monotonic() - started
        wait_for(f"{SLOTS} pods bound", lambda: len(bound_pods(kube, ns)) >= SLOTS, timeout=120, interval=0.2)
        filled = time.monotonic() - started
        bound, pending = _check_outcome(kube, ns)
        print(f"\n{PODS} pods created in {created:.1f} s, {SLOTS} bound after {filled:.1f} s, "
              f"all decided and reported after {time.monotonic() - started:.1f} s", flush=True)
        time.sleep(1)  # nothing more may be bound once the plane is full
        assert len(bound_pods(kube, ns)) == SLOTS
        wait_for("every Scheduled event written", lambda: sum(
            e["reason"] == "Scheduled" for e in events(kube, ns)) >= SLOTS, timeout=30)
        _check_events(kube, ns, bound, pending, every_bind_reported=True)
        assert proc.proc.poll() is None, "kubesched exited"
        assert not [e for e in _log_entries(proc) if e.get("level") == "error"], proc.log()[-3000:]
    finally:
        proc.stop()
        _cleanup(kube, ns)


def test_sigkill_and_restart_mid_run(seed_plane: Kube, tmp_path: Path) -> None:
    kube = seed_plane
    ns = kube.namespace("restart")
    first = KubeschedProcess(kube, [], tmp_path / "first.log")
    second: KubeschedProcess | None = None
    try:
        creator = threading.Thread(target=_create_pods, args=(kube, ns, PODS))
        creator.start()
        wait_for("kubesched in mid-run", lambda: len(bound_pods(kube, ns)) >= 60, timeout=60, interval=0.05)
        first.stop(signal.SIGKILL)
        at_kill = len(bound_pods(kube, ns))
        assert at_kill < SLOTS, "kubesched finished before it was killed: nothing was cut short"
        second = KubeschedProcess(kube, [], tmp_path / "second.log")
        creator.join()
        bound, pending = _check_outcome(kube, ns)
        time.sleep(1)
        assert len(bound_pods(kube, ns)) == SLOTS
        # A bind the killed process sent may have landed with its Scheduled event lost: not every
        # bound pod need have an event, but none may have two.
        _check_events(kube, ns, bound, pending, every_bind_reported=False)
        entries = _log_entries(second)
        conflicts = [e for e in entries if e.get("msg") == "binding skipped" and e.get("status") == 409]
        node_of = {f"{ns}/{p['metadata']['name']}": p["spec"]["nodeName"] for p in bound}
        for e in conflicts:
            assert e["pod"] in node_of, f"a bind conflict left {e['pod']} unbound"
        assert not [e for e in entries if e.get("level") == "error"], second.log()[-3000:]
        print(f"\nkilled with {at_kill} bound; the restarted kubesched met {len(conflicts)} bind conflict(s)",
              flush=True)
    finally:
        first.stop()
        if second is not None:
            second.stop()
        _cleanup(kube, ns)
