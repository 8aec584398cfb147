"""POST pods/{name}/binding, with a bounded number in flight.

Success is 201 with a Status body (not a Binding: typed Python clients choke on it and raise
although the pod is bound). 409 means the pod is already bound (or was replaced: the uid in the
binding's metadata makes a namesake fail), 404 that it is gone; both are final, so the scheduler
forgets the pod instead of retrying.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass

import orjson

from kubesched.api import protobuf
from kubesched.api.client import JSON, ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError

log = logging.getLogger(__name__)

DEFAULT_MAX_IN_FLIGHT = 64


class BindResult(enum.Enum):
    BOUND = "Bound"
    CONFLICT = "Conflict"  # 409: already bound, or the uid no longer matches
    NOT_FOUND = "NotFound"  # 404: the pod is gone
    ERROR = "Error"  # anything else; worth a retry after backoff


@dataclass(frozen=True, slots=True)
class BindOutcome:
    result: BindResult
    status: int = 0  # HTTP status; 0 when the request never got an answer
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.result is BindResult.BOUND


def binding_body(namespace: str, name: str, uid: str, node: str) -> bytes:
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
    )


class Binder:
    """`use_protobuf`: send the binding as Kubernetes protobuf and take the answer in it
    (clientConnection.contentType application/vnd.kubernetes.protobuf, kube-scheduler's default)."""

    def __init__(self, client: ApiClient, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT, *,
                 use_protobuf: bool = False) -> None:
        self.client = client
        self._slots = asyncio.Semaphore(max_in_flight)
        self._encode = protobuf.binding if use_protobuf else binding_body
        self._content_type = protobuf.PROTOBUF if use_protobuf else JSON
        self._accept: str | None = protobuf.ACCEPT if use_protobuf else None

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> BindOutcome:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        body = self._encode(namespace, name, uid, node)
        async with self._slots:
            try:
                resp = await self.client.request("POST", path, body=body, content_type=self._content_type,
                                                 accept=self._accept)
            except ApiConnectionError as e:
                return BindOutcome(BindResult.ERROR, 0, str(e))
            except Exception as e:
                # Credentials that cannot be refreshed, a transport's RuntimeError on a reset
                # connection: the binding did not happen, which the scheduler must be told.
                return BindOutcome(BindResult.ERROR, 0, f"{type(e).__name__}: {e}")
        if resp.ok:
            return BindOutcome(BindResult.BOUND, resp.status)
        err = ApiError.from_response(resp.status, resp.body, method="POST", path=path)
        if resp.status == 409:
            return BindOutcome(BindResult.CONFLICT, 409, err.message)
        if resp.status == 404:
            return BindOutcome(BindResult.NOT_FOUND, 404, err.message)
        return BindOutcome(BindResult.ERROR, resp.status, err.message)
