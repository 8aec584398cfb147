"""scheduler_perf's storage set-up: `createPods` with PersistentVolume and PersistentVolumeClaim
templates (runners.go CreatePodWithPersistentVolume, bindVolume true) and `createNodes` with a
`nodeAllocatableStrategy` (NodeAllocatableStrategy: the node patch, then the node's CSINode).

One difference from upstream, for the plane's sake: upstream leaves the volume's claimRef without
the claim's uid; here the PV controller of kube-controller-manager runs (scheduler_perf runs none),
and it would write every such volume again to fill the uid in while the contender schedules, so
the uid of the claim just created is set, as that controller leaves a bound pair.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson

from kubesched.api import ApiClient, ApiError
from kubesched.api.client import MERGE_PATCH
from kubesched_dev.bench.perf import objects
from kubesched_dev.bench.perf.creates import create_with_retries

MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
_RETRIES = 5


def volume_for(template: dict[str, Any], namespace: str, i: int, claim_uid: str = "") -> dict[str, Any]:
    """getCustomVolumeFactory's volume i, named and bound as CreatePodWithPersistentVolume binds it."""
    pv = copy.deepcopy(template)
    name = f"{namespace}-vol-{i}"
    pv.setdefault("metadata", {})["name"] = name
    spec = pv.setdefault("spec", {})
    if spec.get("csi") is not None:
        spec["csi"]["volumeHandle"] = name
    elif spec.get("awsElasticBlockStore") is not None:
        spec["awsElasticBlockStore"]["volumeID"] = f"vol-{i}"
    ref = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": f"pvc-{i}", "apiVersion": "v1"}
    if claim_uid:
        ref["uid"] = claim_uid
    spec["claimRef"] = ref
    return pv


def claim_for(template: dict[str, Any], namespace: str, i: int) -> dict[str, Any]:
    pvc = copy.deepcopy(template)
    pvc.setdefault("metadata", {})["name"] = f"pvc-{i}"
    pvc.setdefault("spec", {})["volumeName"] = f"{namespace}-vol-{i}"
    return pvc


def with_claim(pod: dict[str, Any], i: int) -> dict[str, Any]:
    """The pod's volumes are replaced by the one claim, as upstream's strategy does."""
    pod.setdefault("spec", {})["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]
    return pod


async def _bound(client: ApiClient, path: str) -> None:
    # A create resets the status, so it is written after, as upstream's UpdateStatus does.
    await client.call("PATCH", f"{path}/status", body={"status": {"phase": "Bound"}}, content_type=MERGE_PATCH)


class PodVolumes:
    """One createPods op's claim/volume pairs: pod i gets claim pvc-i bound to volume <ns>-vol-i."""

    def __init__(self, client: ApiClient, namespace: str, claim_template: str, volume_template: str) -> None:
        self.client, self.namespace = client, namespace
        self.claim_template = objects.from_file(claim_template)
        self.volume_template = objects.from_file(volume_template)

    async def attach(self, i: int, pod: dict[str, Any]) -> dict[str, Any]:
        claims = f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims"
        pvc = claim_for(self.claim_template, self.namespace, i)
        created = await create_with_retries(self.client, claims, pvc)
        await _bound(self.client, f"{claims}/pvc-{i}")
        uid = orjson.loads(created).get("metadata", {}).get("uid", "") if created else ""
        pv = volume_for(self.volume_template, self.namespace, i, uid)
        await create_with_retries(self.client, "/api/v1/persistentvolumes", pv)
        await _bound(self.client, f"/api/v1/persistentvolumes/{pv['metadata']['name']}")
        return with_claim(pod, i)


def allocatable_patch(strategy: dict[str, Any]) -> dict[str, Any]:
    """PreparePatch's two-way merge patch. Sent to the node itself, as upstream sends it, where the
    apiserver keeps the old status (nodeStrategy.PrepareForUpdate): the patch changes nothing, and
    what the workloads rely on is the CSINode."""
    return {"status": {"allocatable": dict(strategy.get("nodeAllocatable") or {})}}


def csi_node(strategy: dict[str, Any], node: str) -> dict[str, Any]:
    """createCSINode's object."""
    drivers = [{"name": name, "allocatable": alloc, "nodeID": node}
               for name, alloc in (strategy.get("csiNodeAllocatable") or {}).items()]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node,
                         "annotations": {MIGRATED_PLUGINS_ANNOTATION: ",".join(strategy.get("migratedPlugins") or [])}},
            "spec": {"drivers": drivers}}


def updated_csi_node(strategy: dict[str, Any], existing: dict[str, Any]) -> dict[str, Any]:
    """updateCSINode: each driver's allocatable set (a missing driver appended), the annotation set."""
    obj = copy.deepcopy(existing)
    drivers: list[dict[str, Any]] = obj.setdefault("spec", {}).setdefault("drivers", []) or []
    obj["spec"]["drivers"] = drivers
    for name, alloc in (strategy.get("csiNodeAllocatable") or {}).items():
        for d in drivers:
            if d.get("name") == name:
                d["allocatable"] = alloc
                break
        else:
            drivers.append({"name": name, "allocatable": alloc})
    obj.setdefault("metadata", {}).setdefault("annotations", {})[MIGRATED_PLUGINS_ANNOTATION] = \
        ",".join(strategy.get("migratedPlugins") or [])
    return obj


async def prepare_node(client: ApiClient, strategy: dict[str, Any], node: str) -> None:
    """DoPrepareNode with a NodeAllocatableStrategy: the node patch, then its CSINode created or updated."""
    await client.call("PATCH", f"/api/v1/nodes/{node}", body=allocatable_patch(strategy), content_type=MERGE_PATCH)
    path = "/apis/storage.k8s.io/v1/csinodes"
    for attempt in range(_RETRIES):
        method, url = "GET", f"{path}/{node}"
        resp = await client.request(method, url)
        if resp.status == 404:
            method, url = "POST", path
            resp = await client.request(method, url, body=csi_node(strategy, node))
        elif resp.ok:
            method, url = "PUT", f"{path}/{node}"
            resp = await client.request(method, url, body=updated_csi_node(strategy, orjson.loads(resp.body)))
        if resp.ok:
            return
        # 409: created by something else since the GET, or changed since: read again, as upstream retries.
        if resp.status != 409 or attempt == _RETRIES - 1:
            raise ApiError.from_response(resp.status, resp.body, method=method, path=url)
        await asyncio.sleep(0.1)
