"""When an unschedulable pod is tried again, side by side with the reference kube-scheduler, on a
plane of two nodes (2 cpu each):

- an edit of the pod itself is an event only when it is one a plugin that rejected the pod registered
  (kube-scheduler's PodSchedulingPropertiesChange and queueing hints): an annotation added to a pod
  InterPodAffinity rejected makes no new attempt, the label change that lifts the anti-affinity does;
- a pod nominated to a node that goes away frees that room at once for the pods of lower or equal
  priority (kube-scheduler's AssignedPodDelete from deletePodFromSchedulingQueue): the pod it kept out
  is tried again after its backoff, not after the 5 minutes of the unschedulable pods' flush.

Each scenario runs once per scheduler, each in a namespace of its own on empty nodes; the pods
already there are bound through spec.nodeName by no scheduler.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kubesched_dev.localcluster.topology import NodeSpec, Topology
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    DEFAULT,
    KUBESCHED,
    container,
    create_pod,
    events,
    get_pod,
    own_plane,
    pod_manifest,
    poll,
)

NODES = ("n1", "n2")
CAPACITY = {"cpu": "2", "memory": "8Gi", "pods": "110"}
CLASSES = {"rq-mid": 20, "rq-high": 1000}
# Longer than the first backoff (1 s) and a resync of the informers, far shorter than the flush.
RETRY_WITHIN = 10.0

T = TypeVar("T")


@pytest.fixture(scope="module")
def requeue_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    nodes = tuple(NodeSpec(n, {}, (), dict(CAPACITY)) for n in NODES)
    with own_plane("requeue", Topology("two-nodes", nodes)) as kube:
        for name, value in CLASSES.items():
            kube.create("/apis/scheduling.k8s.io/v1/priorityclasses", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value})
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("requeue")) / "kubesched.log")
        try:
            yield kube
        finally:
            proc.stop()


def _pod(name: str, cpu: str, scheduler: str | None, *, node: str | None = None, priority: str | None = None,
         labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [container(cpu=cpu, memory="64Mi")], **spec}
    if node is not None:
        body["nodeName"] = node
    if priority is not None:
        body["priorityClassName"] = priority
    return pod_manifest(name, None if scheduler == DEFAULT else scheduler, body, labels)


def _patch(kube: Kube, ns: str, name: str, body: dict[str, Any], status: bool = False) -> None:
    path = f"/api/v1/namespaces/{ns}/pods/{name}" + ("/status" if status else "")
    kube.request("PATCH", path, body, content_type="application/merge-patch+json")


def _attempts(kube: Kube, ns: str, pod: str) -> int:
    """How many failed attempts the FailedScheduling events show: the first is an event, the second
    makes it a series of 2 (later ones are only counted in the scheduler's memory for a while)."""
    return sum((e.get("series") or {}).get("count", 1) for e in events(kube, ns, pod)
               if e.get("reason") == "FailedScheduling")


def _occupy(kube: Kube, ns: str, *pods: dict[str, Any]) -> None:
    for p in pods:
        create_pod(kube, ns, p)
    wait_for("occupants running", lambda: sum(p.get("status", {}).get("phase") == "Running"
                                              for p in kube.pods(ns)) == len(pods), timeout=30)
    time.sleep(1.0)  # both schedulers' informers have them


def _clean(kube: Kube, ns: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=60)
    time.sleep(1.0)


def _side_by_side(kube: Kube, tag: str, run: Callable[[Kube, str, str], T]) -> dict[str, T]:
    seen: dict[str, T] = {}
    for who, scheduler in (("ref", DEFAULT), ("ours", KUBESCHED)):
        ns = kube.namespace(f"rq-{tag}-{who}")
        try:
            seen[who] = run(kube, ns, scheduler)
        finally:
            _clean(kube, ns)
    return seen


def _run_pod_edits(kube: Kube, ns: str, scheduler: str) -> dict[str, Any]:
    """n1's pod keeps pods labelled team=a away (required anti-affinity), n2 is full; the incoming
    team=a pod fits nowhere. Its annotation is edited, then its label."""
    keeper = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"team": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    _occupy(kube, ns, _pod("keeper", "100m", "nobody", node="n1", affinity=keeper),
            _pod("full", "2", "nobody", node="n2"))
    create_pod(kube, ns, _pod("p", "1", scheduler, labels={"team": "a"}))
    wait_for("the first FailedScheduling", lambda: _attempts(kube, ns, "p"))
    time.sleep(2.0)  # past its backoff: a move now would be tried at once
    out: dict[str, Any] = {"first": _attempts(kube, ns, "p")}
    _patch(kube, ns, "p", {"metadata": {"annotations": {"kubesched.test/note": "edited"}}})
    poll(lambda: _attempts(kube, ns, "p") > out["first"], timeout=RETRY_WITHIN)
    out["after_annotation"] = (_attempts(kube, ns, "p"), get_pod(kube, ns, "p")["spec"].get("nodeName"))
    _patch(kube, ns, "p", {"metadata": {"labels": {"team": "b"}}})
    poll(lambda: bool(get_pod(kube, ns, "p")["spec"].get("nodeName")), timeout=RETRY_WITHIN)
    out["after_label"] = get_pod(kube, ns, "p")["spec"].get("nodeName")
    return out


def test_only_an_edit_a_rejecting_plugin_registered_retries_the_pod(requeue_plane: Kube) -> None:
    seen = _side_by_side(requeue_plane, "edits", _run_pod_edits)
    assert seen["ref"] == {"first": 1, "after_annotation": (1, None), "after_label": "n1"}, seen
    assert seen["ours"] == seen["ref"]


def _run_nominated_deleted(kube: Kube, ns: str, scheduler: str) -> dict[str, Any]:
    """A high-priority pod nominated to the empty n1 (as preemption leaves it, held by a gate) keeps
    a lower-priority pod out of n1, n2 being full; then the nominated pod is deleted."""
    _occupy(kube, ns, _pod("full", "2", "nobody", node="n2", priority="rq-high"))
    held = _pod("nominated", "2", scheduler, priority="rq-high", schedulingGates=[{"name": "kubesched.test/hold"}])
    create_pod(kube, ns, held)
    _patch(kube, ns, "nominated", {"status": {"nominatedNodeName": "n1"}}, status=True)
    time.sleep(1.0)
    create_pod(kube, ns, _pod("lower", "1", scheduler, priority="rq-mid"))
    wait_for("the lower pod's FailedScheduling", lambda: _attempts(kube, ns, "lower"))
    time.sleep(2.0)  # past its backoff
    out: dict[str, Any] = {"kept_out": get_pod(kube, ns, "lower")["spec"].get("nodeName")}
    kube.delete(f"/api/v1/namespaces/{ns}/pods/nominated?gracePeriodSeconds=0")
    poll(lambda: bool(get_pod(kube, ns, "lower")["spec"].get("nodeName")), timeout=RETRY_WITHIN)
    out["after_delete"] = get_pod(kube, ns, "lower")["spec"].get("nodeName")
    return out


def test_a_nominated_pod_deleted_frees_its_room_for_lower_priority_pods_at_once(requeue_plane: Kube) -> None:
    seen = _side_by_side(requeue_plane, "nominated", _run_nominated_deleted)
    assert seen["ref"] == {"kept_out": None, "after_delete": "n1"}, seen
    assert seen["ours"] == seen["ref"]
