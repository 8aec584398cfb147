"""DynamicResources' writes of a ResourceClaim (the handle's resource_claims port), as kube-scheduler
makes them with Update, UpdateStatus and a strategic merge patch.

kubesched holds slim claims, so it cannot PUT them whole without dropping fields it never read. An
Update becomes a JSON merge patch of exactly what the plugin changed (the finalizers; the status's
allocation and reservedFor) carrying the resourceVersion it decided on: the apiserver then refuses
it with 409 Conflict when the claim changed meanwhile, as it refuses kube-scheduler's Update, and
the plugin reads the claim again and retries as kube-scheduler does.

The claim for a pod's extended resources backed by DRA is the one kube-scheduler creates (a POST of
its metadata and spec) and deletes; the pod's status.extendedResourceClaimStatus is written with a
strategic merge patch of pods/status, as kube-scheduler's PatchPodStatus writes it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api.client import MERGE_PATCH, STRATEGIC_MERGE_PATCH, ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.api.pod_status import patch_pod_status
from kubesched.framework.handle import WriteFailure
from kubesched.model.decode import TolerantDecoder
from kubesched.model.objects import Pod, PodExtendedResourceClaimStatus
from kubesched.model.resource import (
    AllocationResult,
    ClaimMeta,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
)

_CLAIM = TolerantDecoder(ResourceClaim)


class _Meta(msgspec.Struct, rename="camel", omit_defaults=True):
    resource_version: str = ""
    finalizers: list[str] | None = None
    uid: str = ""


class _Status(msgspec.Struct, rename="camel"):
    # null removes (a merge patch's and UpdateStatus's nil)
    allocation: AllocationResult | None
    reserved_for: list[ResourceClaimConsumerReference] | None


class _StatusCleared(_Status, rename="camel"):
    devices: None = None


class _Patch(msgspec.Struct, omit_defaults=True):
    metadata: _Meta
    status: Any = None


def finalizers_patch(claim: ResourceClaim) -> bytes:
    return msgspec.json.encode(_Patch(_Meta(claim.metadata.resource_version, list(claim.metadata.finalizers))))


def status_patch(claim: ResourceClaim) -> bytes:
    """status.allocation and status.reservedFor as the claim has them; status.devices, which only
    drivers write, cleared with them when the claim has none (a deallocation), else left."""
    st = claim.status
    reserved = list(st.reserved_for) or None
    body: _Status = _Status(st.allocation, reserved) if st.devices else _StatusCleared(st.allocation, reserved)
    return msgspec.json.encode(_Patch(_Meta(claim.metadata.resource_version), body))


def unreserve_patch(claim: ResourceClaim, uid: str) -> bytes:
    return msgspec.json.encode({"metadata": {"uid": claim.metadata.uid},
                                "status": {"reservedFor": [{"$patch": "delete", "uid": uid}]}})


class _NewClaim(msgspec.Struct, rename="camel"):
    api_version: str
    kind: str
    metadata: ClaimMeta
    spec: ResourceClaimSpec


def create_body(claim: ResourceClaim) -> bytes:
    """The claim as created: no name, uid, resourceVersion or status (the apiserver sets them)."""
    m = claim.metadata
    meta = ClaimMeta(namespace=m.namespace, generate_name=m.generate_name, labels=dict(m.labels),
                     annotations=dict(m.annotations), owner_references=list(m.owner_references),
                     finalizers=list(m.finalizers))
    return msgspec.json.encode(_NewClaim("resource.k8s.io/v1", "ResourceClaim", meta, claim.spec))


class _ExtendedStatus(msgspec.Struct, rename="camel"):
    extended_resource_claim_status: PodExtendedResourceClaimStatus


class _PodStatusPatch(msgspec.Struct):
    status: _ExtendedStatus


def extended_status_patch(status: PodExtendedResourceClaimStatus) -> bytes:
    return msgspec.json.encode(_PodStatusPatch(_ExtendedStatus(status)))


def _path(namespace: str, name: str, subresource: str = "") -> str:
    path = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"
    return f"{path}/{subresource}" if subresource else path


class ResourceClaimApi:
    """The port on the scheduler's API client."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client

    async def get(self, namespace: str, name: str) -> ResourceClaim | WriteFailure:
        return await self._call("GET", _path(namespace, name), None, "")

    async def update(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        m = claim.metadata
        return await self._call("PATCH", _path(m.namespace, m.name), finalizers_patch(claim), MERGE_PATCH)

    async def update_status(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        m = claim.metadata
        return await self._call("PATCH", _path(m.namespace, m.name, "status"), status_patch(claim), MERGE_PATCH)

    async def unreserve(self, claim: ResourceClaim, uid: str) -> ResourceClaim | WriteFailure:
        m = claim.metadata
        return await self._call("PATCH", _path(m.namespace, m.name, "status"), unreserve_patch(claim, uid),
                                STRATEGIC_MERGE_PATCH)

    async def create(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        path = f"/apis/resource.k8s.io/v1/namespaces/{claim.metadata.namespace}/resourceclaims"
        return await self._call("POST", path, create_body(claim), "application/json")

    async def delete(self, namespace: str, name: str) -> WriteFailure | None:
        path = _path(namespace, name)
        try:
            resp = await self.client.request("DELETE", path)
        except ApiConnectionError as e:
            return WriteFailure(0, str(e))
        if resp.ok or resp.status == 404:
            return None
        refused = ApiError.from_response(resp.status, resp.body, method="DELETE", path=path)
        return WriteFailure(refused.status, refused.message or str(refused))

    async def set_extended_resource_claim_status(self, pod: Pod,
                                                 status: PodExtendedResourceClaimStatus) -> WriteFailure | None:
        try:
            await patch_pod_status(self.client, pod.metadata.namespace, pod.metadata.name,
                                   extended_status_patch(status))
        except ApiConnectionError as e:
            return WriteFailure(0, str(e))
        except ApiError as e:
            return WriteFailure(e.status, e.message or str(e))
        return None

    async def _call(self, method: str, path: str, body: bytes | None,
                    content_type: str) -> ResourceClaim | WriteFailure:
        try:
            if body is None:
                resp = await self.client.request(method, path)
            else:
                resp = await self.client.request(method, path, body=body, content_type=content_type)
        except ApiConnectionError as e:
            return WriteFailure(0, str(e))
        if not resp.ok:
            refused = ApiError.from_response(resp.status, resp.body, method=method, path=path)
            return WriteFailure(refused.status, refused.message or str(refused))
        return _CLAIM.decode(resp.body)
