"""DynamicResources' claim writes: Update and UpdateStatus become merge patches of exactly what the
plugin changed, on the resourceVersion it decided on; Unreserve a strategic merge patch."""

from __future__ import annotations

from typing import Any, cast

import orjson

from kubesched.api.client import MERGE_PATCH, STRATEGIC_MERGE_PATCH, ApiClient, Response
from kubesched.api.resource_claims import ResourceClaimApi
from kubesched.framework.handle import WriteFailure
from tests.unit.plugins.dynamic_resources.dra_builders import ALLOCATED_CLAIM, IN_USE_CLAIM, PENDING_CLAIM, from_claim

PATH = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/my-pod-my-resource"
CONFLICT = orjson.dumps({"kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409,
                         "message": "the object has been modified"})


class FakeClient:
    def __init__(self, status: int = 200, body: bytes | None = None) -> None:
        self.calls: list[tuple[str, str, Any, str]] = []
        self.status, self.body = status, body

    async def request(self, method: str, path: str, *, body: bytes | None = None,
                      content_type: str = "application/json", **_: Any) -> Response:
        self.calls.append((method, path, orjson.loads(body) if body else None, content_type))
        return Response(self.status, self.body if self.body is not None else orjson.dumps(
            {"metadata": {"name": "my-pod-my-resource", "namespace": "default", "resourceVersion": "9"}}))


async def test_finalizer_update_is_a_merge_patch_on_the_version() -> None:
    client = FakeClient()
    written = await ResourceClaimApi(cast(ApiClient, client)).update(
        from_claim(PENDING_CLAIM).finalizer("resource.kubernetes.io/delete-protection").obj())
    assert not isinstance(written, WriteFailure)
    assert written.metadata.resource_version == "9"
    assert client.calls == [("PATCH", PATH, {"metadata": {
        "resourceVersion": "1", "finalizers": ["resource.kubernetes.io/delete-protection"]}}, MERGE_PATCH)]


async def test_status_update_writes_allocation_and_reservation() -> None:
    client = FakeClient()
    await ResourceClaimApi(cast(ApiClient, client)).update_status(IN_USE_CLAIM)
    method, path, body, content_type = client.calls[0]
    assert (method, path, content_type) == ("PATCH", PATH + "/status", MERGE_PATCH)
    assert body["metadata"] == {"resourceVersion": "1"}
    assert body["status"]["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": "1234"}]
    assert body["status"]["allocation"]["devices"]["results"] == [
        {"request": "req-1", "driver": "some-driver", "pool": "worker", "device": "instance-1"}]
    # No device status to keep: cleared, as UpdateStatus with none would.
    assert body["status"]["devices"] is None


async def test_deallocation_clears_the_status() -> None:
    client = FakeClient()
    cleared = from_claim(ALLOCATED_CLAIM).allocation(None).obj()
    await ResourceClaimApi(cast(ApiClient, client)).update_status(cleared)
    assert client.calls[0][2]["status"] == {"allocation": None, "reservedFor": None, "devices": None}


async def test_unreserve_is_a_strategic_merge_patch() -> None:
    client = FakeClient()
    await ResourceClaimApi(cast(ApiClient, client)).unreserve(IN_USE_CLAIM, "1234")
    assert client.calls == [("PATCH", PATH + "/status", {
        "metadata": {"uid": "uid-my-pod-my-resource"},
        "status": {"reservedFor": [{"$patch": "delete", "uid": "1234"}]}}, STRATEGIC_MERGE_PATCH)]


async def test_a_conflict_is_a_write_failure() -> None:
    failure = await ResourceClaimApi(cast(ApiClient, FakeClient(409, CONFLICT))).update_status(IN_USE_CLAIM)
    assert isinstance(failure, WriteFailure)
    assert failure.conflict
    assert failure.message == "the object has been modified"
