"""R3 of the reliability suite (issue 15): a watch that expires. kubesched is stopped (SIGSTOP) while
the kube-apiserver restarts and pods and nodes are deleted and changed, then continued: its watches
find the new apiserver, which no longer serves their resourceVersion (410 Gone), so it lists again
and must see every change — the next pods fit exactly where the deleted ones were, and nothing
stale is left in its cache or queue (its cache comparer, /debug/kubesched/state, says so).

One plane of its own (restarting the session plane's apiserver would disturb other tests).
"""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster import plane as planes
from kubesched_dev.localcluster import procs
from kubesched_dev.localcluster.topology import NodeSpec, Topology
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    bound_pods,
    container,
    create_nodes,
    create_pod,
    node_manifest,
    own_plane,
    pod_manifest,
    wait_unschedulable,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SLOTS = 10  # pods a node takes
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": str(SLOTS)}
NODES = ("n1", "n2", "n3", "n4")
# After the changes: n1 emptied, n2 full, n3 cordoned, n4 deleted, n5 new and empty.
AFTER = ("0/4 nodes are available: 1 node(s) were unschedulable, 3 Too many pods. preemption: 0/4 nodes are "
         "available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.")


@pytest.fixture(scope="module")
def small_plane() -> Iterator[Kube]:
    topology = Topology("r3", tuple(NodeSpec(n, capacity=dict(CAPACITY)) for n in NODES))
    with own_plane("r3", topology, default_scheduler=False) as kube:
        yield kube


def _debug_state(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/kubesched/state", timeout=10) as resp:
        state: dict[str, Any] = json.loads(resp.read())
    return state


def _pod(name: str) -> dict[str, Any]:
    return pod_manifest(name, KUBESCHED, {"containers": [container(cpu="10m", memory="16Mi")]})


def _delete_now(kube: Kube, path: str) -> None:
    kube.delete(f"{path}?gracePeriodSeconds=0")


def test_stopped_through_an_apiserver_restart_relists_and_sees_every_change(
        small_plane: Kube, tmp_path: Path) -> None:
    kube = small_plane
    ns = kube.namespace("r3")
    port = procs.free_port()
    proc = KubeschedProcess(kube, [f"--serve-address=127.0.0.1:{port}"], tmp_path / "kubesched.log")
    try:
        for i in range(SLOTS * len(NODES)):
            create_pod(kube, ns, _pod(f"fill-{i:02d}"))
        wait_for("the plane full", lambda: len(bound_pods(kube, ns)) == SLOTS * len(NODES), timeout=60)
        for name in ("extra-0", "extra-1"):
            create_pod(kube, ns, _pod(name))
            wait_unschedulable(kube, ns, name)
        node_of = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in bound_pods(kube, ns)}

        proc.proc.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        # Before the restart: n1 emptied.
        for name, node in node_of.items():
            if node == "n1":
                _delete_now(kube, f"/api/v1/namespaces/{ns}/pods/{name}")
        took = planes.restart(kube.cluster.name, "kube-apiserver", progress=lambda m: None)
        # After it: n4 and its pods gone, n3 cordoned, n5 new, a pending pod deleted.
        for name, node in node_of.items():
            if node == "n4":
                _delete_now(kube, f"/api/v1/namespaces/{ns}/pods/{name}")
        kube.delete("/api/v1/nodes/n4")
        status, body = kube.request("PATCH", "/api/v1/nodes/n3", {"spec": {"unschedulable": True}},
                                    content_type="application/merge-patch+json")
        assert status == 200, body
        create_nodes(kube, [node_manifest(NodeSpec("n5", capacity=dict(CAPACITY)))])
        _delete_now(kube, f"/api/v1/namespaces/{ns}/pods/extra-0")
        wait_for("the deletions done", lambda: len(kube.pods(ns)) == SLOTS * 2 + 1, timeout=30)
        proc.proc.send_signal(signal.SIGCONT)
        print(f"\napiserver restarted in {took:.1f} s; kubesched stopped for {time.monotonic() - stopped:.1f} s",
              flush=True)

        # The 20 free slots (n1 and n5): extra-1 and 19 new pods take them all, and nothing else.
        for i in range(SLOTS * 2 - 1):
            create_pod(kube, ns, _pod(f"next-{i:02d}"))
        wait_for("the free slots taken", lambda: len(bound_pods(kube, ns)) == SLOTS * 4, timeout=60)
        placed = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in bound_pods(kube, ns)}
        fresh = {name: node for name, node in placed.items() if name.startswith(("next-", "extra-"))}
        assert sorted(fresh.values()) == ["n1"] * SLOTS + ["n5"] * SLOTS, fresh
        # One more fits nowhere, and kubesched counts the nodes as they now are.
        create_pod(kube, ns, _pod("one-too-many"))
        cond = wait_unschedulable(kube, ns, "one-too-many")
        wait_for("the final message", lambda: wait_unschedulable(kube, ns, "one-too-many")["message"] == AFTER,
                 timeout=15)
        assert cond["reason"] == "Unschedulable"

        state = wait_for("the cache comparer's ok", lambda: (s := _debug_state(port))["comparison"]["ok"] and s,
                         timeout=15)
        sizes = state["sizes"]
        print(f"relists {state['relists']}; sizes {sizes}", flush=True)
        api_pods = kube.get("/api/v1/pods")["items"]
        assert sizes["informer/pods"] == len(api_pods)
        assert sizes["informer/nodes"] == sizes["cache_nodes"] == 4
        assert sizes["cache_pods"] == SLOTS * 4
        assert sizes["cache_assumed_pods"] == 0
        assert sizes["queue_unschedulable"] + sizes["queue_backoff"] + sizes["queue_active"] == 1
        assert state["relists"]["informer/pods"] >= 1, state["relists"]  # the 410 was met, and handled
        assert state["relists"]["informer/nodes"] >= 1, state["relists"]
        assert proc.proc.poll() is None, "kubesched exited"
        errors = [line for line in proc.log().splitlines() if '"level":"error"' in line or "Traceback" in line]
        assert not errors, errors[:5]
    finally:
        if proc.proc.poll() is None:
            proc.proc.send_signal(signal.SIGCONT)
        proc.stop()
