"""kubesched.api against the real local control plane: informers, 410 relist, binding, events,
the PodScheduled condition, and the TLS trap of an environment CA bundle."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
import pytest

from kubesched.api import (
    PODS,
    ApiClient,
    Binder,
    BindResult,
    EventRecorder,
    Handlers,
    Informer,
    load_kubeconfig,
    set_pod_unschedulable,
)
from kubesched.api.informer import ObjectList
from kubesched.api.tasks import TaskSet
from kubesched.model.objects import Node, Pod
from tests.integration.kube import Kube, wait_for

pytestmark = pytest.mark.integration

NOBODY = "kubesched-api-test-nobody"  # a scheduler name no scheduler serves: our pods stay put


def pod_manifest(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"schedulerName": NOBODY, "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    }


@pytest.fixture
def ns(plane: Kube) -> str:
    return plane.namespace(f"api-{uuid.uuid4().hex[:8]}")


@pytest.fixture
async def client(plane: Kube, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ApiClient]:
    # The trap on this machine: an environment CA bundle that does not contain the plane's CA.
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    async with ApiClient(load_kubeconfig(plane.kubeconfig), qps=-1) as c:
        yield c


async def eventually(what: str, check: Callable[[], Any], within: float = 20.0) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {value!r}")
        await asyncio.sleep(0.1)


class Seen:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def handlers(self) -> Handlers[Pod]:
        return Handlers(
            add=lambda p: self.events.append(("add", p.metadata.name)),
            update=lambda o, n: self.events.append(("update", n.metadata.name)),
            delete=lambda p: self.events.append(("delete", p.metadata.name)),
        )


async def test_get_nodes_decodes_into_structs(client: ApiClient) -> None:
    body = await client.get("/api/v1/nodes")
    nodes = msgspec.json.decode(body, type=ObjectList[Node])
    assert {n.name for n in nodes.items} >= {"kind-worker", "kind-worker2", "kind-worker3"}


async def test_informer_lists_and_watches(plane: Kube, client: ApiClient, ns: str) -> None:
    plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("before"))
    seen = Seen()
    informer = Informer(client, PODS, Pod, seen.handlers(), field_selector=f"metadata.namespace={ns}")
    tasks = TaskSet()
    tasks.spawn(informer.run(), "test/informer")
    try:
        await asyncio.wait_for(informer.wait_synced(), 20)
        assert ("add", "before") in seen.events
        plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("after"))
        await eventually("the watch to deliver the new pod", lambda: ("add", "after") in seen.events)
        pod = informer.get(f"{ns}/after")
        assert pod is not None
        assert pod.spec.scheduler_name == NOBODY
        plane.delete(f"/api/v1/namespaces/{ns}/pods/after")
        await eventually("the deletion", lambda: informer.get(f"{ns}/after") is None)
    finally:
        await tasks.cancel()


async def _synced_then_stopped(client: ApiClient, ns: str, seen: Seen) -> Informer[Pod]:
    informer = Informer(client, PODS, Pod, seen.handlers(), field_selector=f"metadata.namespace={ns}")
    tasks = TaskSet()
    tasks.spawn(informer.run(), "test/informer")
    await asyncio.wait_for(informer.wait_synced(), 20)
    await tasks.cancel()
    return informer


def _delete_now(plane: Kube, ns: str, name: str) -> None:
    plane.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", {"gracePeriodSeconds": 0})
    wait_for("the pod to vanish", lambda: plane.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")[0] == 404)


async def test_restart_from_old_version_misses_no_deletion(plane: Kube, client: ApiClient, ns: str) -> None:
    """Watching again from a very old resourceVersion: depending on the apiserver's window this is a
    410 and a relist, or a replay of history; either way the deletion made while away arrives."""
    for name in ("keep", "gone"):
        plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(name))
    seen = Seen()
    informer = await _synced_then_stopped(client, ns, seen)
    _delete_now(plane, ns, "gone")
    informer.resource_version = "1"
    tasks = TaskSet()
    tasks.spawn(informer.run(), "test/informer-again")
    try:
        await eventually("the missed deletion", lambda: ("delete", "gone") in seen.events)
        assert informer.get(f"{ns}/keep") is not None
        assert informer.get(f"{ns}/gone") is None
    finally:
        await tasks.cancel()


async def test_relist_delivers_deletions_made_during_the_gap(plane: Kube, client: ApiClient, ns: str) -> None:
    """The path a 410 takes (a fresh plane keeps its whole history in the watch cache, so a real
    410 cannot be provoked quickly; the unit tests drive the 410 itself with a scripted server)."""
    for name in ("keep", "gone", "changed"):
        plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(name))
    seen = Seen()
    informer = await _synced_then_stopped(client, ns, seen)
    seen.events.clear()
    _delete_now(plane, ns, "gone")
    plane.request("PATCH", f"/api/v1/namespaces/{ns}/pods/changed", {"metadata": {"labels": {"x": "y"}}},
                  content_type="application/merge-patch+json")
    plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("new"))
    await informer._list_and_sync()
    assert sorted(seen.events) == [("add", "new"), ("delete", "gone"), ("update", "changed")]


# Both encodings of the writes (clientConnection.contentType): protobuf, kube-scheduler's default, and JSON.
ENCODINGS = [pytest.param(True, id="protobuf"), pytest.param(False, id="json")]


@pytest.mark.parametrize("use_protobuf", ENCODINGS)
async def test_binding_outcomes(plane: Kube, client: ApiClient, ns: str, use_protobuf: bool) -> None:
    created = plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("b"))
    uid = created["metadata"]["uid"]
    binder = Binder(client, use_protobuf=use_protobuf)

    wrong_uid = await binder.bind(ns, "b", "00000000-0000-0000-0000-000000000000", "kind-worker")
    assert wrong_uid.result is BindResult.CONFLICT, wrong_uid

    first = await binder.bind(ns, "b", uid, "kind-worker")
    assert first.result is BindResult.BOUND, first
    assert first.status == 201
    assert plane.get(f"/api/v1/namespaces/{ns}/pods/b")["spec"]["nodeName"] == "kind-worker"

    second = await binder.bind(ns, "b", uid, "kind-worker2")
    assert second.result is BindResult.CONFLICT, second
    assert second.status == 409
    # The apiserver's Status, read whichever encoding it answered in.
    assert second.message == ('Operation cannot be fulfilled on pods/binding "b": pod b is already assigned to node '
                              '"kind-worker"'), second

    missing = await binder.bind(ns, "no-such-pod", "u", "kind-worker")
    assert missing.result is BindResult.NOT_FOUND, missing


@pytest.mark.parametrize("use_protobuf", ENCODINGS)
async def test_events_and_condition_are_visible(plane: Kube, client: ApiClient, ns: str, use_protobuf: bool) -> None:
    created = plane.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("e"))
    pod = msgspec.json.decode(msgspec.json.encode(created), type=Pod)
    message = ("0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu. "
               "preemption: not tried")
    recorder = EventRecorder(client, "kubesched-api-test", "kubesched-api-test-host", use_protobuf=use_protobuf)
    tasks = TaskSet()
    tasks.spawn(recorder.run(), "test/events")
    try:
        recorder.failed_scheduling(pod, message)
        recorder.failed_scheduling(pod, message)  # a series: count 2
        await asyncio.wait_for(recorder.flush(), 20)
        assert recorder.failed == 0
        assert await set_pod_unschedulable(client, pod, message)
    finally:
        await tasks.cancel()

    events = plane.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    [event] = [e for e in events if e["regarding"]["name"] == "e"]
    assert event["reason"] == "FailedScheduling"
    assert event["type"] == "Warning"
    assert event["action"] == "Scheduling"
    assert event["note"] == message
    assert event["reportingController"] == "kubesched-api-test"
    assert event["reportingInstance"] == "kubesched-api-test-host"
    assert event["regarding"] == {"kind": "Pod", "namespace": ns, "name": "e", "uid": created["metadata"]["uid"],
                                  "apiVersion": "v1", "resourceVersion": created["metadata"]["resourceVersion"]}
    assert event["eventTime"].endswith("Z"), event["eventTime"]
    assert event["series"]["count"] == 2
    # The core/v1 view that `kubectl describe` shows.
    core = plane.get(f"/api/v1/namespaces/{ns}/events")["items"]
    assert any(e["reason"] == "FailedScheduling" and e["message"] == message for e in core)

    status = plane.get(f"/api/v1/namespaces/{ns}/pods/e")["status"]
    [cond] = [c for c in status["conditions"] if c["type"] == "PodScheduled"]
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    assert cond["observedGeneration"] == created["metadata"].get("generation", 1)

    # Same condition again: nothing to write.
    latest = msgspec.json.decode(msgspec.json.encode(plane.get(f"/api/v1/namespaces/{ns}/pods/e")), type=Pod)
    assert not await set_pod_unschedulable(client, latest, message)
