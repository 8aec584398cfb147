"""Helpers shared by the scheduling integration tests: pod and node builders, and reading back what a
scheduler wrote (binding, PodScheduled condition, events) so kubesched can be compared with the
reference kube-scheduler running on the same plane."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kubesched.model.quantity import milli_value
from kubesched_dev.localcluster import plane as planes
from kubesched_dev.localcluster.topology import NodeSpec, Topology
from tests.integration.kube import Kube, wait_for

KUBESCHED = "kubesched"
DEFAULT = "default-scheduler"
PREEMPTION = " preemption:"
# Taints the node lifecycle controller puts on a node until kwok reports it Ready.
_TRANSIENT_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def progress(message: str) -> None:
    print(f"[plane] {message}", file=sys.stderr, flush=True)


@contextmanager
def own_plane(tag: str, topology: Topology, *, default_scheduler: bool = True) -> Iterator[Kube]:
    """A plane for one module; failing to start raises, so its tests fail rather than skip."""
    name = f"kubesched-test-{tag}-{os.getpid()}"
    cluster = planes.up(name, topology, default_scheduler=default_scheduler, progress=progress)
    try:
        yield Kube(cluster)
    finally:
        planes.down(name, progress)


def container(name: str = "c", cpu: str | None = None, memory: str | None = None,
              extra: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None} | (extra or {})
    c: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10", **fields}
    if requests:
        # Limits equal to requests, so that extended resources (which need limits) are accepted.
        c["resources"] = {"requests": requests, "limits": dict(requests)}
    return c


def pod_manifest(name: str, scheduler: str | None, spec: dict[str, Any] | None = None,
                 labels: dict[str, str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [container()], "terminationGracePeriodSeconds": 0, **(spec or {})}
    if scheduler is not None:
        body["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}}, "spec": body}


def create_pod(kube: Kube, ns: str, manifest: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = kube.create(f"/api/v1/namespaces/{ns}/pods", manifest)
    return created


def get_pod(kube: Kube, ns: str, name: str) -> dict[str, Any]:
    pod: dict[str, Any] = kube.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    return pod


def delete_pod_now(kube: Kube, ns: str, name: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods/{name}?gracePeriodSeconds=0")
    wait_for(f"pod {ns}/{name} to be gone",
             lambda: kube.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")[0] == 404, timeout=20)


def node_of(kube: Kube, ns: str, name: str) -> str | None:
    node: str | None = get_pod(kube, ns, name)["spec"].get("nodeName")
    return node


def wait_bound(kube: Kube, ns: str, name: str, timeout: float = 20) -> str:
    return wait_for(f"pod {ns}/{name} to be bound", lambda: node_of(kube, ns, name), timeout=timeout)


def scheduled_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    for c in pod.get("status", {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return dict(c)
    return None


def wait_unschedulable(kube: Kube, ns: str, name: str, timeout: float = 20) -> dict[str, Any]:
    """The pod's PodScheduled=False condition once a scheduler has written one."""
    def check() -> dict[str, Any] | None:
        cond = scheduled_condition(get_pod(kube, ns, name))
        return cond if cond and cond.get("status") == "False" and cond.get("message") else None
    return wait_for(f"PodScheduled=False on {ns}/{name}", check, timeout=timeout)


def events(kube: Kube, ns: str, pod: str | None = None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kube.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    return [e for e in items if pod is None or e.get("regarding", {}).get("name") == pod]


def latest_event(kube: Kube, ns: str, pod: str, reason: str) -> dict[str, Any] | None:
    found = [e for e in events(kube, ns, pod) if e.get("reason") == reason]
    # A series keeps its first eventTime; its series.lastObservedTime says when it was last seen.
    found.sort(key=lambda e: (e.get("series") or {}).get("lastObservedTime") or e.get("eventTime") or "")
    return found[-1] if found else None


def wait_event(kube: Kube, ns: str, pod: str, reason: str, timeout: float = 20) -> dict[str, Any]:
    return wait_for(f"a {reason} event for {ns}/{pod}", lambda: latest_event(kube, ns, pod, reason),
                    timeout=timeout)


def node_manifest(spec: NodeSpec, *, unschedulable: bool = False) -> dict[str, Any]:
    manifest = spec.manifest()
    if unschedulable:
        manifest["spec"]["unschedulable"] = True
    return manifest


def node_settled(node: dict[str, Any]) -> bool:
    """Ready, without the lifecycle controller's transient taints, and (if cordoned) with its
    `unschedulable` taint already added: both schedulers then see the node as it will stay."""
    conditions = node.get("status", {}).get("conditions") or []
    taints = {t.get("key") for t in node.get("spec", {}).get("taints") or []}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    cordon_done = not node["spec"].get("unschedulable") or "node.kubernetes.io/unschedulable" in taints
    return ready and cordon_done and not taints.intersection(_TRANSIENT_TAINTS)


def create_nodes(kube: Kube, manifests: list[dict[str, Any]], timeout: float = 30) -> None:
    for m in manifests:
        kube.create("/api/v1/nodes", m)
    names = {m["metadata"]["name"] for m in manifests}

    def settled() -> bool:
        nodes = [n for n in kube.get("/api/v1/nodes")["items"] if n["metadata"]["name"] in names]
        return len(nodes) == len(names) and all(node_settled(n) for n in nodes)
    wait_for(f"nodes {sorted(names)} Ready and untainted", settled, timeout=timeout, interval=0.1)
    # Both schedulers learn of the last node update through their own watches; a short grace keeps a
    # pod created right now from being tried against a stale node.
    time.sleep(0.3)


def delete_nodes(kube: Kube, names: list[str]) -> None:
    for n in names:
        kube.delete(f"/api/v1/nodes/{n}")


def bound_pods(kube: Kube, ns: str) -> list[dict[str, Any]]:
    return [p for p in kube.pods(ns) if p["spec"].get("nodeName")]


def node_totals(pods: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per node: pod count and summed cpu requests (millicores) of the given bound pods."""
    out: dict[str, dict[str, int]] = {}
    for p in pods:
        t = out.setdefault(p["spec"]["nodeName"], {"pods": 0, "cpu_m": 0})
        t["pods"] += 1
        for c in p["spec"]["containers"]:
            cpu = (c.get("resources") or {}).get("requests", {}).get("cpu")
            if cpu:
                t["cpu_m"] += milli_value(cpu)
    return out


def poll(fn: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """True as soon as fn() is; False at the timeout (for checks that report their own failure)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(interval)
    return fn()


def compare_failure_message(kube: Kube, ns: str, ref: dict[str, Any], ours: dict[str, Any],
                            reasons: tuple[str, ...] = (), timeout: float = 6) -> str:
    """Create `ref` (for kube-scheduler) and `ours` (for kubesched), both fitting nowhere, and check
    kubesched writes kube-scheduler's whole message — preemption part included — in the PodScheduled
    condition (same reason) and the FailedScheduling note; `reasons` must be in kube-scheduler's.
    Returns the message."""
    ref_name, our_name = ref["metadata"]["name"], ours["metadata"]["name"]
    create_pod(kube, ns, ref)
    create_pod(kube, ns, ours)

    def condition(name: str) -> dict[str, Any]:
        return scheduled_condition(get_pod(kube, ns, name)) or {}

    def note(name: str, controller: str) -> str:
        ev = latest_event(kube, ns, name, "FailedScheduling")
        return str(ev["note"]) if ev and ev.get("reportingController") == controller else ""

    ref_cond = wait_for("kube-scheduler's PodScheduled condition",
                        lambda: condition(ref_name).get("message") and condition(ref_name))
    want: str = ref_cond["message"]
    for reason in reasons:
        assert reason in want, f"scenario broken: {reason!r} not in kube-scheduler's {want!r}"
    # A first attempt may race the nodes' last update; kubesched retries on node events, so give its
    # message a few seconds to settle on the final one before comparing.
    poll(lambda: condition(our_name).get("message") == want and note(our_name, KUBESCHED) == want, timeout=timeout)
    cond = condition(our_name)
    assert cond.get("message") == want, f"condition: kubesched {cond.get('message')!r}\n  kube-scheduler {want!r}"
    assert cond.get("status") == "False"
    assert cond.get("reason") == ref_cond.get("reason")
    assert note(our_name, KUBESCHED) == want, f"FailedScheduling note {note(our_name, KUBESCHED)!r}, want {want!r}"
    assert note(ref_name, DEFAULT) == want
    assert get_pod(kube, ns, our_name)["spec"].get("nodeName") is None
    assert get_pod(kube, ns, ref_name)["spec"].get("nodeName") is None
    return want


class PodWatch:
    """Every version of the namespace's pods from now on (kwok removes a deleted pod at once, so a
    victim's DisruptionTarget condition and the preemptor's nomination are caught on the way)."""

    def __init__(self, kube: Kube, ns: str) -> None:
        rv = kube.get(f"/api/v1/namespaces/{ns}/pods")["metadata"]["resourceVersion"]
        self._resp = kube.watch(f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}&timeoutSeconds=120")
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with contextlib.suppress(Exception):
            for line in self._resp:
                event = json.loads(line)
                self.seen.append((event["type"], event["object"]))

    def close(self) -> None:
        # The reading thread holds the response's buffer lock until the stream ends (the watch's
        # timeoutSeconds): closing it blocked every case for two minutes. Shutting the socket down
        # ends that read at once.
        sock = getattr(getattr(getattr(self._resp, "fp", None), "raw", None), "_sock", None)
        with contextlib.suppress(Exception):
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            self._resp.close()

    def versions(self, name: str) -> list[dict[str, Any]]:
        return [o for _, o in list(self.seen) if o["metadata"]["name"] == name]

    def deleted(self) -> list[str]:
        return sorted(o["metadata"]["name"] for t, o in list(self.seen) if t == "DELETED")

    def first_nomination(self, name: str) -> str | None:
        for o in self.versions(name):
            if node := (o.get("status") or {}).get("nominatedNodeName"):
                return str(node)
        return None

    def condition(self, name: str, ctype: str) -> dict[str, Any]:
        for o in reversed(self.versions(name)):
            for c in (o.get("status") or {}).get("conditions") or []:
                if c["type"] == ctype:
                    return dict(c)
        return {}
