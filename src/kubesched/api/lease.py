"""A coordination.k8s.io/v1 Lease as a leader-election lock, as client-go's resourcelock.LeaseLock:
the record lives in the Lease's spec, and every update is conditional on the resourceVersion last
read or written, so two candidates can never both win the same round."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from kubesched.api.client import ApiClient
from kubesched.api.errors import ApiError

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """client-go's LeaderElectionRecord. Times stay the strings the apiserver holds: candidates judge
    expiry by their own clock when the record last changed, never by another host's timestamps."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: str
    renew_time: str
    lease_transitions: int


class LeaseConflict(Exception):
    """The lease changed since it was read (409), or was created by another candidate first."""


class LeaseLock(Protocol):
    """What the elector needs of a lock; `request_timeout` bounds each request (seconds)."""

    def describe(self) -> str: ...

    async def get(self, request_timeout: float) -> LeaseRecord | None: ...

    async def create(self, record: LeaseRecord, request_timeout: float) -> None: ...

    async def update(self, record: LeaseRecord, request_timeout: float) -> None: ...


def micro_time(at: datetime) -> str:
    """metav1.MicroTime's wire form (RFC 3339, microseconds, UTC)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ApiLeaseLock:
    """A LeaseLock on the apiserver through the project's ApiClient (its credentials, TLS, rate limit)."""

    def __init__(self, client: ApiClient, namespace: str, name: str) -> None:
        self._client = client
        self.namespace = namespace
        self.name = name
        self._collection = LEASES.format(namespace=namespace)
        # The Lease as last read or written: its resourceVersion makes the next update conditional.
        self._lease: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self, request_timeout: float) -> LeaseRecord | None:
        resp = await self._client.request("GET", f"{self._collection}/{self.name}", request_timeout=request_timeout)
        if resp.status == 404:
            self._lease = None
            return None
        self._raise_unless_ok(resp.status, resp.body, "GET")
        self._lease = orjson.loads(resp.body)
        return record_of(self._lease)

    async def create(self, record: LeaseRecord, request_timeout: float) -> None:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec_of(record)}
        resp = await self._client.request("POST", self._collection, body=body, request_timeout=request_timeout)
        self._raise_unless_ok(resp.status, resp.body, "POST")
        self._lease = orjson.loads(resp.body)

    async def update(self, record: LeaseRecord, request_timeout: float) -> None:
        if self._lease is None:
            # as client-go: an update is only ever made against a version this candidate has seen
            raise LeaseConflict(f"lease {self.describe()} not read yet")
        body = {**self._lease, "spec": spec_of(record)}
        resp = await self._client.request("PUT", f"{self._collection}/{self.name}", body=body,
                                          request_timeout=request_timeout)
        self._raise_unless_ok(resp.status, resp.body, "PUT")
        self._lease = orjson.loads(resp.body)

    def _raise_unless_ok(self, status: int, body: bytes, method: str) -> None:
        if 200 <= status < 300:
            return
        error = ApiError.from_response(status, body, method=method, path=f"{self._collection}/{self.name}")
        if status == 409:
            raise LeaseConflict(str(error))
        raise error


def spec_of(record: LeaseRecord) -> dict[str, Any]:
    return {"holderIdentity": record.holder_identity, "leaseDurationSeconds": record.lease_duration_seconds,
            "acquireTime": record.acquire_time, "renewTime": record.renew_time,
            "leaseTransitions": record.lease_transitions}


def record_of(lease: dict[str, Any]) -> LeaseRecord:
    spec = lease.get("spec") or {}
    return LeaseRecord(holder_identity=spec.get("holderIdentity") or "",
                       lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
                       acquire_time=spec.get("acquireTime") or "", renew_time=spec.get("renewTime") or "",
                       lease_transitions=int(spec.get("leaseTransitions") or 0))
