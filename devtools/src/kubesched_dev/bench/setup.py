"""Creates a workload plan's objects before the contender starts: what scheduler_perf's init steps do.

PV/PVC pairs are made as scheduler_perf's CreatePodWithPersistentVolume makes them (claim first,
then its volume, each with its status written after, because a create resets the status), except
that the volume's claimRef carries the claim's uid, as the PV controller leaves a bound pair. The
status is merge-patched: the real PV controller may have touched the claim in between (it marks a
claim whose volume does not exist yet Lost, then Bound again once it does). The contender starts
only once every claim is Bound, so each starts from the same cluster.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec
import orjson

from kubesched.api import ApiClient, ApiError
from kubesched.api.client import MERGE_PATCH
from kubesched_dev.bench import workload
from kubesched_dev.bench.workloads import Plan, SetupObject, claim, volume

CONCURRENCY = 32
BOUND_TIMEOUT_S = 120.0


class _Phase(msgspec.Struct):
    phase: str = ""


class _Claim(msgspec.Struct):
    status: _Phase = msgspec.field(default_factory=_Phase)


class _ClaimList(msgspec.Struct):
    items: list[_Claim] = []


async def _post(client: ApiClient, obj: SetupObject) -> dict[str, Any]:
    resp = await client.request("POST", obj.path, body=obj.body)
    if resp.status == 409:  # a namespace or priority class left by an earlier run on this plane
        return {}
    if not resp.ok:
        raise ApiError.from_response(resp.status, resp.body, method="POST", path=obj.path)
    created: dict[str, Any] = orjson.loads(resp.body)
    if obj.status is not None:
        path = f"{obj.path}/{obj.body['metadata']['name']}/status"
        resp = await client.request("PATCH", path, body={"status": obj.status}, content_type=MERGE_PATCH)
        if not resp.ok:
            raise ApiError.from_response(resp.status, resp.body, method="PATCH", path=path)
    return created


async def _each(items: Iterable[Any], fn: Callable[[Any], Any], concurrency: int = CONCURRENCY) -> None:
    it: Iterator[Any] = iter(items)

    async def worker() -> None:
        for item in it:
            await fn(item)

    async with asyncio.TaskGroup() as tg:
        for _ in range(concurrency):
            tg.create_task(worker())


async def create(client: ApiClient, plan: Plan, progress: Callable[[str], None]) -> None:
    # Namespaces and classes first, in order: the pods after them need them.
    singles = [o for o in plan.setup if not o.path.endswith("/pods")]
    for obj in singles:
        await _post(client, obj)
    pods = [o for o in plan.setup if o.path.endswith("/pods")]
    if pods:
        await _each(pods, lambda o: _post(client, o))
        progress(f"  {len(pods)} pre-bound pods created")
    if plan.pv_node:
        async def pair(pod: str) -> None:
            created = await _post(client, claim(pod))
            await _post(client, volume(pod, plan.pv_node[pod], created.get("metadata", {}).get("uid", "")))

        await _each(plan.pv_node, pair)
        progress(f"  {len(plan.pv_node)} bound PVC/PV pairs created")
        await _wait_claims_bound(client, len(plan.pv_node))


async def _wait_claims_bound(client: ApiClient, want: int) -> None:
    path = f"/api/v1/namespaces/{workload.NAMESPACE}/persistentvolumeclaims"
    deadline = time.monotonic() + BOUND_TIMEOUT_S
    while True:
        claims = msgspec.json.decode(await client.get(path), type=_ClaimList).items
        bound = sum(c.status.phase == "Bound" for c in claims)
        if bound >= want:
            return
        if time.monotonic() > deadline:
            phases = sorted({c.status.phase or "(none)" for c in claims if c.status.phase != "Bound"})
            raise TimeoutError(f"only {bound}/{want} PersistentVolumeClaims Bound after {BOUND_TIMEOUT_S:.0f} s "
                               f"(others: {', '.join(phases)}); see kube-controller-manager's log")
        await asyncio.sleep(0.5)
