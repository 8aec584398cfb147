"""Events like client-go's tools/events, and the PodScheduled condition patch."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any, cast

import orjson
import pytest

from kubesched.api import pod_status
from kubesched.api.binder import binding_body
from kubesched.api.client import ApiClient, Response
from kubesched.api.errors import ApiConnectionError
from kubesched.api.events import NOTE_LENGTH_LIMIT, EventRecorder, event_name, truncate_note
from kubesched.api.pod_status import ConditionWriter, pod_scheduled_patch
from kubesched.model.objects import ObjectMeta, Pod, PodCondition, PodStatus

NOW = dt.datetime(2026, 11, 29, 16, 0, 0, tzinfo=dt.UTC)


def make_pod(conditions: list[PodCondition] | None = None, nominated: str = "", generation: int = 1) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="ns", uid="u1", resource_version="5", generation=generation),
        status=PodStatus(phase="Pending", conditions=conditions or [], nominated_node_name=nominated),
    )


def test_truncate_note() -> None:
    assert truncate_note("short") == "short"
    long = "x" * 2000
    out = truncate_note(long)
    assert len(out.encode()) == NOTE_LENGTH_LIMIT
    assert out.endswith("x ...")


def test_event_name_is_hex_nanos() -> None:
    assert event_name("p", 255) == "p.ff"
    assert len(event_name("a" * 250, 1 << 60)) == 36  # too long for a name: a uuid


def test_condition_patch_new() -> None:
    patch = pod_scheduled_patch(make_pod(), "Unschedulable", "0/3 nodes are available: ...", NOW)
    assert patch is not None
    assert orjson.loads(patch) == {"status": {
        "$setElementOrder/conditions": [{"type": "PodScheduled"}],
        "conditions": [{"lastProbeTime": None, "lastTransitionTime": "2026-11-29T16:00:00Z",
                        "message": "0/3 nodes are available: ...", "observedGeneration": 1,
                        "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}],
    }}


def test_condition_patch_unchanged_is_none() -> None:
    cond = PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message="m",
                        observed_generation=1)
    assert pod_scheduled_patch(make_pod([cond]), "Unschedulable", "m", NOW) is None


def test_condition_patch_new_message_keeps_transition_time() -> None:
    conds = [PodCondition(type="Initialized", status="True"),
             PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message="old",
                          observed_generation=1)]
    patch = pod_scheduled_patch(make_pod(conds, nominated="n1"), "Unschedulable", "new", NOW)
    assert patch is not None
    assert orjson.loads(patch) == {"status": {
        "$setElementOrder/conditions": [{"type": "Initialized"}, {"type": "PodScheduled"}],
        "conditions": [{"message": "new", "type": "PodScheduled"}],
        "nominatedNodeName": None,
    }}


def test_only_nominated_node_cleared() -> None:
    cond = PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message="m",
                        observed_generation=1)
    patch = pod_scheduled_patch(make_pod([cond], nominated="n1"), "Unschedulable", "m", NOW)
    assert patch is not None
    assert orjson.loads(patch) == {"status": {"nominatedNodeName": None}}


def test_binding_body() -> None:
    assert orjson.loads(binding_body("ns", "p", "u1", "n1")) == {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any, str]] = []

    async def request(self, method: str, path: str, *, body: bytes | None = None,
                      content_type: str = "application/json", **_: Any) -> Response:
        self.calls.append((method, path, orjson.loads(body) if body else None, content_type))
        return Response(201 if method == "POST" else 200, b"{}")


async def drain(recorder: EventRecorder) -> None:
    task = asyncio.create_task(recorder.run())
    try:
        await asyncio.wait_for(recorder.flush(), 5)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_scheduled_event_fields() -> None:
    client = FakeClient()
    recorder = EventRecorder(cast(ApiClient, client), "kubesched", "kubesched-host")
    recorder.scheduled(make_pod(), "node-1")
    await drain(recorder)
    [(method, path, body, _)] = client.calls
    assert (method, path) == ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events")
    assert body["metadata"]["name"].startswith("p.")
    assert body["eventTime"].endswith("Z")
    assert len(body["eventTime"]) == len("2026-11-29T16:00:00.000000Z")
    assert {k: body[k] for k in ("reportingController", "reportingInstance", "action", "reason", "note",
                                 "type", "regarding")} == {
        "reportingController": "kubesched", "reportingInstance": "kubesched-host",
        "action": "Binding", "reason": "Scheduled", "type": "Normal",
        "note": "Successfully assigned ns/p to node-1",
        "regarding": {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u1", "apiVersion": "v1",
                      "resourceVersion": "5"},
    }


async def test_repeats_become_a_series() -> None:
    client = FakeClient()
    recorder = EventRecorder(cast(ApiClient, client), "kubesched", "i")
    for _ in range(4):
        recorder.failed_scheduling(make_pod(), "0/1 nodes are available: 1 Too many pods.")
    await drain(recorder)
    assert [c[0] for c in client.calls] == ["POST", "PATCH"]
    name = client.calls[0][2]["metadata"]["name"]
    _, path, body, content_type = client.calls[1]
    assert path.endswith(f"/events/{name}")
    assert content_type == "application/strategic-merge-patch+json"
    assert body["series"]["count"] == 2
    # Quiet for 6 minutes: the final count is sent once and the series forgotten.
    recorder.finish_series(dt.datetime.now().timestamp() + 400)
    await drain(recorder)
    assert client.calls[-1][2]["series"]["count"] == 4
    assert len(client.calls) == 3


async def test_full_queue_drops_and_counts() -> None:
    recorder = EventRecorder(cast(ApiClient, FakeClient()), "kubesched", "i", max_queued=2)
    for _ in range(5):
        recorder.failed_scheduling(make_pod(), "m")  # same pod, same key: only the first two enqueue
    pods = [Pod(metadata=ObjectMeta(name=f"p{i}", namespace="ns", uid=f"u{i}")) for i in range(3)]
    for p in pods:
        recorder.scheduled(p, "n")
    assert recorder.dropped == 3


async def test_scheduled_events_are_not_kept_for_series() -> None:
    """A pod is bound once, so its Scheduled event never repeats: keeping it (as client-go does)
    held 6-12 minutes of binds, most of the soak's memory."""
    client = FakeClient()
    recorder = EventRecorder(cast(ApiClient, client), "kubesched", "i")
    for i in range(3):
        recorder.scheduled(Pod(metadata=ObjectMeta(name=f"p{i}", namespace="ns", uid=f"u{i}")), "n")
    assert recorder.series_count == 0
    recorder.failed_scheduling(make_pod(), "0/1 nodes are available: 1 Too many pods.")
    assert recorder.series_count == 1
    await drain(recorder)
    assert [(c[0], c[2]["reason"]) for c in client.calls] == [("POST", "Scheduled")] * 3 + [
        ("POST", "FailedScheduling")]


async def test_event_controller_per_profile() -> None:
    client = FakeClient()
    recorder = EventRecorder(cast(ApiClient, client), "kubesched", "kubesched-h")
    recorder.scheduled(make_pod(), "n1", controller="batch-scheduler")
    await drain(recorder)
    body = client.calls[0][2]
    assert body["reportingController"] == "batch-scheduler"
    assert body["reportingInstance"].startswith("batch-scheduler-")


async def test_condition_writer_keeps_latest_message_per_pod() -> None:
    client = FakeClient()
    writer = ConditionWriter(cast(ApiClient, client), workers=1)
    writer.submit(make_pod(), "first")
    writer.submit(make_pod(), "second")
    task = asyncio.create_task(writer.run())
    try:
        await asyncio.wait_for(writer.flush(), 5)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    [(method, path, body, content_type)] = client.calls
    assert (method, path) == ("PATCH", "/api/v1/namespaces/ns/pods/p/status")
    assert content_type == "application/strategic-merge-patch+json"
    assert body["status"]["conditions"][0]["message"] == "second"
    assert writer.written == 1


class AwayClient(FakeClient):
    """An apiserver that refuses connections for the first `away` requests (restarting)."""

    def __init__(self, away: int) -> None:
        super().__init__()
        self.away = away

    async def request(self, method: str, path: str, *, body: bytes | None = None,
                      content_type: str = "application/json", **kw: Any) -> Response:
        if self.away > 0:
            self.away -= 1
            raise ApiConnectionError("connecting to 127.0.0.1:6443: ConnectionRefusedError")
        return await super().request(method, path, body=body, content_type=content_type, **kw)


async def test_condition_writer_keeps_a_condition_through_an_apiserver_restart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """R2's finding: a condition written while the apiserver restarted was logged and dropped, leaving
    an unschedulable pod with no PodScheduled condition until its next attempt (up to 5 minutes)."""
    monkeypatch.setattr(pod_status, "CONDITION_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(pod_status, "_RETRY_DELAYS", ())
    client = AwayClient(away=3)
    writer = ConditionWriter(cast(ApiClient, client), workers=1)
    writer.submit(make_pod(), "0/3 nodes are available: ...")
    task = asyncio.create_task(writer.run())
    try:
        for _ in range(500):
            if writer.written:
                break
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert (writer.written, writer.retried, writer.failed) == (1, 3, 0)
    [(_, _, body, _)] = client.calls
    assert body["status"]["conditions"][0]["message"] == "0/3 nodes are available: ..."


async def test_a_pod_bound_meanwhile_gets_no_late_condition(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real time: the first attempt is awaited through the writer's queue, and the retry's
    timer, set far off, is fired by hand once the pod is bound."""
    monkeypatch.setattr(pod_status, "CONDITION_RETRY_SECONDS", 3600.0)
    monkeypatch.setattr(pod_status, "_RETRY_DELAYS", ())
    client = AwayClient(away=1)
    writer = ConditionWriter(cast(ApiClient, client), workers=1)
    writer.submit(make_pod(), "unschedulable")
    task = asyncio.create_task(writer.run())
    try:
        await asyncio.wait_for(writer.flush(), 5)  # the first attempt failed, its retry is on the timer
        assert writer.retried == 1
        writer.discard("u1")  # the next attempt bound it
        writer._requeue("u1")  # the retry's timer fires
        await asyncio.wait_for(writer.flush(), 5)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert client.calls == []


def test_a_written_event_is_kept_as_its_json_and_read_back_whole() -> None:
    import asyncio

    from kubesched.api.events import _Cached

    event = {"metadata": {"name": "p.1", "namespace": "default"}, "note": "n", "regarding": {"uid": "u"}}
    cached = _Cached(dict(event), 1.0)

    async def wait_then_read() -> dict[str, object]:
        waiter = asyncio.ensure_future(cached.wait_written())
        await asyncio.sleep(0)
        assert not waiter.done()
        cached.mark_written()
        await waiter
        return cached.event

    assert asyncio.run(wait_then_read()) == event
    assert isinstance(cached._event, bytes)
    assert len(cached._event) < 200


@pytest.mark.parametrize(("nominated", "with_nomination", "left"), [
    pytest.param("n1", False, ("p", None, "", "n1"), id="the-nomination-is-still-written"),
    pytest.param("n1", True, None, id="superseded-by-the-binding-cycles"),
    pytest.param("", False, None, id="nothing-to-nominate"),
])
def test_discard_keeps_only_a_pending_nomination_unless_told(nominated: str, with_nomination: bool,
                                                             left: tuple[str, None, str, str] | None) -> None:
    writer = ConditionWriter(cast(ApiClient, None))
    writer.submit(make_pod(), "0/3 nodes are available: ...", nominated_node=nominated)
    writer.discard("u1", with_nomination=with_nomination)
    pending = writer._pending.get("u1")
    assert (None if pending is None else (pending[0].metadata.name, *pending[1:])) == left
