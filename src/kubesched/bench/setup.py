"""Creates a workload plan's objects before the contender starts: what scheduler_perf's init steps do.

PV/PVC pairs are made as scheduler_perf's CreatePodWithPersistentVolume makes them (claim first,
then its volume, each with its status written after, because a create resets the status), except
that the volume's claimRef carries the claim's uid, as the PV controller leaves a bound pair.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from kubesched.api import ApiClient, ApiError

from .workloads import Plan, SetupObject, claim, volume

CONCURRENCY = 32


async def _post(client: ApiClient, obj: SetupObject) -> dict[str, Any]:
    resp = await client.request("POST", obj.path, body=obj.body)
    if resp.status == 409:  # a namespace or priority class left by an earlier run on this plane
        return {}
    if not resp.ok:
        raise ApiError.from_response(resp.status, resp.body, method="POST", path=obj.path)
    created: dict[str, Any] = orjson.loads(resp.body)
    if obj.status is not None:
        name = obj.body["metadata"]["name"]
        path = f"{obj.path}/{name}/status"
        created["status"] = obj.status
        resp = await client.request("PUT", path, body=created)
        if not resp.ok:
            raise ApiError.from_response(resp.status, resp.body, method="PUT", path=path)
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
