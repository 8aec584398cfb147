"""VolumeBinding's writes (the handle's write_volume / write_claim ports): a PV bound to a claim
and a claim given its selected node, as kube-scheduler's binder writes them with an Update.

kubesched holds slim objects, so it cannot PUT them whole without dropping fields it never read;
it sends a JSON merge patch of exactly what the binder changed (a PV's claimRef and annotations, a
claim's annotations) with the resourceVersion it decided on. The apiserver then refuses the write
(409 Conflict) when the object changed meanwhile, as it refuses kube-scheduler's Update.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from kubesched.api.client import MERGE_PATCH, ApiClient
from kubesched.api.errors import ApiError
from kubesched.model.decode import TolerantDecoder
from kubesched.model.storage import PersistentVolume, PersistentVolumeClaim

_PV = TolerantDecoder(PersistentVolume)
_PVC = TolerantDecoder(PersistentVolumeClaim)


def volume_patch(pv: PersistentVolume) -> bytes:
    """The merge patch that writes the PV's claimRef and annotations as `pv` has them."""
    ref = pv.spec.claim_ref
    body: dict[str, Any] = {
        "metadata": {"resourceVersion": pv.metadata.resource_version, "annotations": pv.metadata.annotations},
        "spec": {"claimRef": None if ref is None else msgspec.to_builtins(ref)},
    }
    return orjson.dumps(body)


def claim_patch(pvc: PersistentVolumeClaim) -> bytes:
    """The merge patch that writes the claim's annotations as `pvc` has them."""
    return orjson.dumps({"metadata": {"resourceVersion": pvc.metadata.resource_version,
                                      "annotations": pvc.metadata.annotations}})


async def write_volume(client: ApiClient, pv: PersistentVolume) -> PersistentVolume:
    """Raises ApiError (409 when the PV changed since `pv`'s version) or ApiConnectionError."""
    path = f"/api/v1/persistentvolumes/{pv.metadata.name}"
    resp = await client.request("PATCH", path, body=volume_patch(pv), content_type=MERGE_PATCH)
    if not resp.ok:
        raise ApiError.from_response(resp.status, resp.body, method="PATCH", path=path)
    return _PV.decode(resp.body)


async def write_claim(client: ApiClient, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    meta = pvc.metadata
    path = f"/api/v1/namespaces/{meta.namespace}/persistentvolumeclaims/{meta.name}"
    resp = await client.request("PATCH", path, body=claim_patch(pvc), content_type=MERGE_PATCH)
    if not resp.ok:
        raise ApiError.from_response(resp.status, resp.body, method="PATCH", path=path)
    return _PVC.decode(resp.body)
