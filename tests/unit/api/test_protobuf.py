"""kubesched.api.protobuf against the bytes apimachinery's own serializer writes for the same objects
(testdata/protobuf_golden.txt says how they were made)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api import errors, protobuf
from tests.unit.api.protobuf_golden import GOLDEN

UID = "0a1b2c3d-0000-4000-8000-000000000001"




def _event(name: str, reason: str, action: str, type_: str, note: str, resource_version: str,
           series: dict[str, Any] | None = None) -> dict[str, Any]:
    regarding = {"kind": "Pod", "namespace": "default", "name": "p-1", "uid": UID, "apiVersion": "v1"}
    if resource_version:
        regarding["resourceVersion"] = resource_version
    ev: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-12-02T08:26:40.123456Z",
        "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-host-1",
        "action": action, "reason": reason, "regarding": regarding, "note": note, "type": type_,
    }
    if series is not None:
        ev["series"] = series
    return ev


@pytest.mark.parametrize(("golden", "body"), [
    pytest.param("binding", protobuf.binding("default", "p-1", UID, "n1"), id="binding"),
    pytest.param("binding_long_name", protobuf.binding("bench", "p" * 150, "uid", "kwok-node-" + "9" * 140),
                 id="binding-lengths-over-127-bytes"),
    pytest.param("binding_no_uid", protobuf.binding("ns", "p", "", "n"), id="binding-without-uid"),
    pytest.param("event_scheduled", protobuf.event(_event(
        "p-1.18a2b3c4d5e6f708", "Scheduled", "Binding", "Normal", "Successfully assigned default/p-1 to n1", "1234")),
        id="event-scheduled"),
    pytest.param("event_failed_series", protobuf.event(_event(
        "p-1.18a2b3c4d5e6f709", "FailedScheduling", "Scheduling", "Warning",
        "0/3 nodes are available: 3 Insufficient cpu. ünïcödé " + "x" * 200, "",
        series={"count": 2, "lastObservedTime": "2026-12-02T08:27:22.999999Z"})),
        id="event-with-series-unicode-note-no-resource-version"),
])
def test_bodies_are_the_go_serializers_bytes(golden: str, body: bytes) -> None:
    assert body.hex() == GOLDEN[golden].hex()


@pytest.mark.parametrize(("golden", "want"), [
    pytest.param("status_already_exists",
                 ("Failure", 'pods "p-1" is already assigned to node "n1"', "Conflict", 409), id="conflict"),
    pytest.param("status_success", ("Success", "", "", 201), id="success"),
    pytest.param("binding", None, id="not-a-status"),
])
def test_status_is_read_from_a_protobuf_answer(golden: str, want: tuple[str, str, str, int] | None) -> None:
    assert protobuf.status(GOLDEN[golden]) == want


@pytest.mark.parametrize("body", [
    pytest.param(b"", id="empty"),
    pytest.param(b'{"kind":"Status"}', id="json"),
    pytest.param(protobuf.MAGIC + b"\x0a\x05\x0a", id="truncated"),
    pytest.param(protobuf.MAGIC + b"\x0f", id="wire-type-7"),
    pytest.param(protobuf.MAGIC + b"\x08" + b"\xff" * 11, id="overlong-varint"),
])
def test_status_of_bytes_that_are_no_protobuf_status_is_none(body: bytes) -> None:
    assert protobuf.status(body) is None


@pytest.mark.parametrize(("body", "want"), [
    pytest.param(GOLDEN["status_already_exists"], (409, "Conflict", 'pods "p-1" is already assigned to node "n1"'),
                 id="protobuf-status"),
    pytest.param(b'{"kind":"Status","status":"Failure","reason":"NotFound","message":"gone","code":404}',
                 (404, "NotFound", "gone"), id="json-status"),
    pytest.param(b"upstream connect error", (502, "", "upstream connect error"), id="text"),
])
def test_api_errors_read_either_encoding(body: bytes, want: tuple[int, str, str]) -> None:
    err = errors.ApiError.from_response(want[0], body, method="POST", path="/x")
    assert (err.status, err.reason, err.message) == want


@pytest.mark.parametrize(("n", "want"), [
    pytest.param(0, b"\x00", id="zero"),
    pytest.param(127, b"\x7f", id="one-byte-max"),
    pytest.param(128, b"\x80\x01", id="two-bytes"),
    pytest.param(300, b"\xac\x02", id="300"),
    pytest.param(-1, b"\xff" * 9 + b"\x01", id="negative-is-ten-bytes"),
])
def test_varint(n: int, want: bytes) -> None:
    assert protobuf._varint(n) == want
