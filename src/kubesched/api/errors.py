"""Errors from the apiserver, carrying its Status."""

from __future__ import annotations

import msgspec

from kubesched.api import protobuf


class Status(msgspec.Struct, omit_defaults=True):
    """metav1.Status, as returned for errors (and for a successful binding)."""

    status: str = ""
    message: str = ""
    reason: str = ""
    code: int = 0


_status_decoder = msgspec.json.Decoder(Status)


def decode_status(body: bytes) -> Status | None:
    """The Status of an answer in JSON or (to a protobuf request) Kubernetes protobuf; None for neither."""
    if body.startswith(protobuf.MAGIC):
        st = protobuf.status(body)
        return None if st is None else Status(status=st[0], message=st[1], reason=st[2], code=st[3])
    try:
        return _status_decoder.decode(body)
    except msgspec.DecodeError:
        return None


class ApiError(Exception):
    """A non-2xx answer: HTTP status, the Status reason (e.g. `AlreadyExists`, `NotFound`,
    `Conflict`, `Expired`) and the apiserver's message."""

    def __init__(self, status: int, reason: str, message: str, *, method: str = "", path: str = "") -> None:
        super().__init__(f"{method} {path}: {status} {reason}: {message}".strip())
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path

    @classmethod
    def from_response(cls, status: int, body: bytes, *, method: str = "", path: str = "") -> ApiError:
        st = decode_status(body)
        if st is not None and (st.message or st.reason):
            return cls(status, st.reason, st.message, method=method, path=path)
        text = body[:500].decode(errors="replace").strip()
        return cls(status, "", text, method=method, path=path)


class ApiConnectionError(Exception):
    """The apiserver could not be reached or dropped the connection."""


class ApiFenced(ApiConnectionError):
    """A write refused by this process itself: it may no longer write (its leader lease is lost)."""
