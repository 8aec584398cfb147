"""Kubernetes protobuf for the two writes every pod costs (the binding and the events.k8s.io/v1
Event), and a reader for the Status the apiserver answers with.

kube-scheduler sends these as protobuf (its --kube-api-content-type default); decoding a JSON body
costs the apiserver several times what decoding protobuf does, and these writes are its per-pod
work. A body is apimachinery's protobuf serializer's: the magic `k8s\\x00`, then a runtime.Unknown
{typeMeta {apiVersion, kind}, raw, contentEncoding, contentType} whose raw is the object as
k8s.io/api's generated.proto describes it. Field numbers and what is written when empty follow the
generated Go marshallers of k8s.io/api v0.37.2: a string or a non-pointer struct field is written
even when empty, a nil pointer is not, a zero Time or MicroTime is an empty message. So the bytes
are the ones kube-scheduler's client sends for the same object (tests/unit/api/data/protobuf_golden.txt).

Patches stay JSON: the apiserver takes no protobuf patch.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
# The Accept of a protobuf write: the answer in protobuf too (client-go asks for it the same way),
# JSON from anything that cannot give it.
ACCEPT = f"{PROTOBUF}, application/json"

_VARINT, _LEN = 0, 2


def _varint(n: int) -> bytes:
    if 0 <= n < 0x80:
        return _SMALL[n]
    if n < 0:
        n += 1 << 64  # int64/int32 negatives: ten bytes of two's complement, as Go writes them
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [bytes((n,)) for n in range(0x80)]


def _message(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | _LEN) + _varint(len(data)) + data


def _string(field: int, text: str) -> bytes:
    return _message(field, text.encode())


def _number(field: int, n: int) -> bytes:
    return _varint(field << 3 | _VARINT) + _varint(n)


# The fields written empty (Go writes a string or a non-pointer struct even when it is empty), once.
_EMPTY = {field: _string(field, "") for field in range(1, 16)}
# ObjectMeta after uid: resourceVersion "", generation 0, creationTimestamp zero
_META_TAIL = _EMPTY[6] + _number(7, 0) + _message(8, b"")
# runtime.Unknown after raw: contentEncoding "", contentType ""
_UNKNOWN_TAIL = _EMPTY[3] + _EMPTY[4]
# Event after type: deprecatedSource (an empty EventSource), deprecatedFirst/LastTimestamp (zero), deprecatedCount
_EVENT_TAIL = _message(12, _EMPTY[1] + _EMPTY[2]) + _message(13, b"") + _message(14, b"") + _number(15, 0)
_REFERENCE_KEYS = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """The body: magic, then runtime.Unknown (contentEncoding and contentType empty, as Go writes them)."""
    return MAGIC + _message(1, _string(1, api_version) + _string(2, kind)) + _message(2, raw) + _UNKNOWN_TAIL


def _object_meta(name: str, namespace: str, uid: str = "") -> bytes:
    # name, generateName, namespace, selfLink, uid, then the empty tail
    return _string(1, name) + _EMPTY[2] + _string(3, namespace) + _EMPTY[4] + _string(5, uid) + _META_TAIL


def _object_reference(ref: Mapping[str, str]) -> bytes:
    return b"".join([_string(i, ref.get(key, "")) for i, key in enumerate(_REFERENCE_KEYS, start=1)])


def _micro_time(text: str | None) -> bytes:
    """metav1.MicroTime (a Timestamp: seconds, nanos) from its RFC 3339 JSON form; empty when unset."""
    if not text:
        return b""
    t = dt.datetime.fromisoformat(text)
    seconds = calendar.timegm(t.utctimetuple())
    return _number(1, seconds) + _number(2, t.microsecond * 1000)


_BINDING_TYPE = _message(1, _string(1, "v1") + _string(2, "Binding"))
_EVENT_TYPE = _message(1, _string(1, "events.k8s.io/v1") + _string(2, "Event"))
# ObjectReference{kind: Node, namespace: "", name: ...}: the part before the name
_NODE_HEAD = _string(1, "Node") + _EMPTY[2]
# ... and after it: uid "", apiVersion v1, resourceVersion "", fieldPath ""
_NODE_TAIL = _EMPTY[4] + _string(5, "v1") + _EMPTY[6] + _EMPTY[7]


def binding(namespace: str, name: str, uid: str, node: str) -> bytes:
    """core/v1 Binding of the pod to `node`: the body of POST pods/{name}/binding."""
    target = _NODE_HEAD + _string(3, node) + _NODE_TAIL
    raw = _message(1, _object_meta(name, namespace, uid)) + _message(2, target)
    return MAGIC + _BINDING_TYPE + _message(2, raw) + _UNKNOWN_TAIL


def event(ev: Mapping[str, Any]) -> bytes:
    """events.k8s.io/v1 Event from its JSON form (as kubesched.api.events.make_event builds it, with
    `series` when it has one): the body of POST events. Fields kubesched never sets (related,
    the deprecated ones) are written empty, as Go writes a zero struct."""
    meta = ev["metadata"]
    parts = [_message(1, _object_meta(meta["name"], meta.get("namespace", ""), meta.get("uid", ""))),
             _message(2, _micro_time(ev.get("eventTime")))]
    if (series := ev.get("series")) is not None:
        last = _micro_time(series.get("lastObservedTime"))
        parts.append(_message(3, _number(1, series.get("count", 0)) + _message(2, last)))
    parts += [_string(4, ev.get("reportingController", "")), _string(5, ev.get("reportingInstance", "")),
              _string(6, ev.get("action", "")), _string(7, ev.get("reason", "")),
              _message(8, _object_reference(ev.get("regarding", {})))]
    if (related := ev.get("related")) is not None:
        parts.append(_message(9, _object_reference(related)))
    parts += [_string(10, ev.get("note", "")), _string(11, ev.get("type", "")), _EVENT_TAIL]
    return MAGIC + _EVENT_TYPE + _message(2, b"".join(parts)) + _UNKNOWN_TAIL


# --- reading -----------------------------------------------------------------------------------


class DecodeError(ValueError):
    pass


def _read_varint(buf: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise DecodeError("truncated or overlong varint")
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i
        shift += 7


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a message: an int for varints, bytes for length-delimited fields;
    fixed-width fields are skipped. Raises DecodeError on bytes that are no protobuf message."""
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, i = _read_varint(buf, i)
            yield field, value
        elif wire == _LEN:
            size, i = _read_varint(buf, i)
            if i + size > len(buf):
                raise DecodeError(f"field {field}: {size} bytes announced, {len(buf) - i} left")
            yield field, buf[i:i + size]
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise DecodeError(f"field {field}: wire type {wire} not supported")
    if i != len(buf):
        raise DecodeError("truncated fixed-width field")


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw) of a protobuf body; DecodeError if it is none."""
    if not body.startswith(MAGIC):
        raise DecodeError("no k8s protobuf magic")
    api_version = kind = ""
    raw = b""
    for field, value in fields(body[len(MAGIC):]):
        if field == 1 and isinstance(value, bytes):
            for f, v in fields(value):
                if isinstance(v, bytes) and f in (1, 2):
                    if f == 1:
                        api_version = v.decode(errors="replace")
                    else:
                        kind = v.decode(errors="replace")
        elif field == 2 and isinstance(value, bytes):
            raw = value
    return api_version, kind, raw


def status(body: bytes) -> tuple[str, str, str, int] | None:
    """(status, message, reason, code) of a protobuf metav1.Status body, or None when the body is
    no protobuf Status."""
    try:
        _, kind, raw = unwrap(body)
        if kind != "Status":
            return None
        out: dict[int, Any] = {}
        for field, value in fields(raw):
            out[field] = value
    except DecodeError:
        return None

    def text(field: int) -> str:
        v = out.get(field, b"")
        return v.decode(errors="replace") if isinstance(v, bytes) else ""

    code = out.get(6, 0)
    return text(2), text(3), text(4), code if isinstance(code, int) else 0
