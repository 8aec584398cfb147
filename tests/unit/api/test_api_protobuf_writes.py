"""The binding and the event as Kubernetes protobuf (clientConnection.contentType, kube-scheduler's
default), answered in protobuf; the series PATCH stays JSON."""

from __future__ import annotations

from typing import Any, cast

import orjson
import pytest

from kubesched.api import ApiClient, Binder, BindResult, EventRecorder, Response, protobuf
from kubesched.api.client import JSON, STRATEGIC_MERGE_PATCH
from tests.builders import make_pod
from tests.unit.api.protobuf_golden import GOLDEN
from tests.unit.api.test_api_events import drain


class RecordingClient:
    def __init__(self, answer: Response) -> None:
        self.answer = answer
        self.calls: list[tuple[str, str, bytes, str, str | None]] = []

    async def request(self, method: str, path: str, *, body: bytes, content_type: str = JSON,
                      accept: str | None = None, **_: Any) -> Response:
        self.calls.append((method, path, body, content_type, accept))
        return self.answer


@pytest.mark.parametrize(("use_protobuf", "want_body", "want_type", "want_accept"), [
    pytest.param(True, protobuf.binding("ns", "p", "u1", "n1"), protobuf.PROTOBUF, protobuf.ACCEPT, id="protobuf"),
    pytest.param(False, orjson.dumps({"apiVersion": "v1", "kind": "Binding",
                                      "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
                                      "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}),
                 JSON, None, id="json"),
])
async def test_binding_body_and_headers(use_protobuf: bool, want_body: bytes, want_type: str,
                                        want_accept: str | None) -> None:
    client = RecordingClient(Response(201, GOLDEN["status_success"]))
    outcome = await Binder(cast(ApiClient, client), use_protobuf=use_protobuf).bind("ns", "p", "u1", "n1")
    assert outcome.result is BindResult.BOUND
    assert client.calls == [("POST", "/api/v1/namespaces/ns/pods/p/binding", want_body, want_type, want_accept)]


async def test_a_protobuf_conflict_reads_as_its_message() -> None:
    client = RecordingClient(Response(409, GOLDEN["status_already_exists"]))
    outcome = await Binder(cast(ApiClient, client), use_protobuf=True).bind("ns", "p", "u1", "n1")
    assert (outcome.result, outcome.status, outcome.message) == (
        BindResult.CONFLICT, 409, 'pods "p-1" is already assigned to node "n1"')


async def test_event_is_protobuf_and_its_series_patch_json() -> None:
    client = RecordingClient(Response(201, b""))
    recorder = EventRecorder(cast(ApiClient, client), "kubesched", "kubesched-host", use_protobuf=True)
    for _ in range(2):
        recorder.failed_scheduling(make_pod("p", "ns").obj(), "0/1 nodes are available: 1 Too many pods.")
    await drain(recorder)
    (post, path, body, content_type, accept), patch = client.calls
    assert (post, path, content_type, accept) == ("POST", "/apis/events.k8s.io/v1/namespaces/ns/events",
                                                  protobuf.PROTOBUF, protobuf.ACCEPT)
    api_version, kind, raw = protobuf.unwrap(body)
    assert (api_version, kind) == ("events.k8s.io/v1", "Event")
    assert b"FailedScheduling" in raw
    assert (patch[0], patch[3], patch[4]) == ("PATCH", STRATEGIC_MERGE_PATCH, None)
    assert orjson.loads(patch[2])["series"]["count"] == 2
