"""scheduler_perf's ResourceClaim operations (dra.go): createResourceClaims and allocResourceClaims.

allocResourceClaims fills a cluster with allocated devices faster than pod scheduling would: each
unallocated claim in turn, against the devices every claim allocated so far holds, is given to
the structured allocator on the nodes in a fresh random order, and the first node where it fits
wins; its allocation is written into the claim's status.allocation (no allocationTimestamp, no
reservedFor: upstream writes the allocator's result as it is). kubesched's own structured
allocator (a port of k8s.io/dynamic-resource-allocation's, which upstream's op calls) decides,
with kube-scheduler's default DRA features.
"""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import msgspec
import orjson

from kubesched.api import ApiClient
from kubesched.api.client import MERGE_PATCH
from kubesched.model.resource import AllocationResult, DeviceClass, ResourceClaim, ResourceSlice
from kubesched.plugins.dynamic_resources.allocator import AllocatedState, Allocator, NodeView
from kubesched.plugins.dynamic_resources.cel.cache import CelSelectorCache
from kubesched.plugins.dynamic_resources.counters import CounterTracker
from kubesched.plugins.dynamic_resources.results import allocation_result
from kubesched.plugins.dynamic_resources.selectors import SelectorCache
from kubesched.plugins.dynamic_resources.state import Features
from kubesched.plugins.dynamic_resources.tracker import contribution
from kubesched_dev.bench.perf import objects

RESOURCE = "/apis/resource.k8s.io/v1"
CREATE_WORKERS = 30
T = TypeVar("T")


class AllocationFailed(RuntimeError):
    pass


def allocate(claims: Sequence[ResourceClaim], slices: Sequence[ResourceSlice], classes: Sequence[DeviceClass],
             nodes: Sequence[NodeView], rng: random.Random, selectors: SelectorCache | None = None,
             features: Features | None = None) -> list[tuple[int, AllocationResult]]:
    """(index in `claims`, allocation) for every claim not allocated yet, in order, as
    allocResourceClaimsOp.run computes them; AllocationFailed when one fits on no node."""
    features = features or Features()
    selectors = selectors if selectors is not None else CelSelectorCache()
    by_name = {c.metadata.name: c for c in classes}
    state = AllocatedState()

    def hold(allocation: AllocationResult) -> None:
        c = contribution(allocation, features.consumable_capacity)
        state.allocated_devices.update(c.dedicated)
        state.allocated_shared_device_ids.update(c.shared)
        for device, consumed in c.capacity:
            held = state.aggregated_capacity.setdefault(device, {})
            for name, amount in consumed.items():
                held[name] = held.get(name, 0) + amount

    for claim in claims:
        if claim.status.allocation is not None:
            hold(claim.status.allocation)
    # NewAllocator for each claim, as upstream: what it derives from the slices is the same each
    # time, so it is built once and copied with fresh counters over the state as it now is.
    base = Allocator(slices, by_name, state, selectors, features)
    out: list[tuple[int, AllocationResult]] = []
    for i, claim in enumerate(claims):
        if claim.status.allocation is not None:
            continue
        allocator = copy.copy(base)
        allocator.counters = CounterTracker(state.is_allocated)
        for node in shuffled(nodes, rng):
            found = allocator.allocate(node, [claim])
            if found is not None:
                result = allocation_result(found[0])
                hold(result)
                out.append((i, result))
                break
        else:
            raise AllocationFailed(f"Could not allocate claim {i} out of {len(claims)}")
    return out


def shuffled(items: Sequence[T], rng: random.Random) -> Iterator[T]:
    """The items in a uniformly random order, drawn as they are needed (Fisher-Yates from the
    front): the first node usually fits, so most of a full shuffle would go unused."""
    pool = list(items)
    for k in range(len(pool)):
        j = rng.randrange(k, len(pool))
        pool[k], pool[j] = pool[j], pool[k]
        yield pool[k]


async def _list(client: ApiClient, path: str) -> list[Any]:
    items: list[Any] = []
    params: dict[str, str | int] = {"limit": 500}
    while True:
        page = orjson.loads(await client.get(path, params))
        items += page.get("items") or []
        cont = (page.get("metadata") or {}).get("continue")
        if not cont:
            return items
        params["continue"] = cont


def _decode(obj: Any, kind: type[T]) -> T:
    """As the scheduler's informers decode it."""
    return msgspec.json.decode(orjson.dumps(obj), type=kind)


async def alloc_resource_claims(client: ApiClient, namespace: str, progress: Callable[[str], None],
                                rng: random.Random | None = None) -> None:
    claims_path = f"{RESOURCE}/namespaces/{namespace}/resourceclaims" if namespace else f"{RESOURCE}/resourceclaims"
    raw = await _list(client, claims_path)
    progress(f"  allocResourceClaims: allocating {len(raw)} ResourceClaims")
    claims = [_decode(c, ResourceClaim) for c in raw]
    slices = [_decode(s, ResourceSlice) for s in await _list(client, f"{RESOURCE}/resourceslices")]
    classes = [_decode(c, DeviceClass) for c in await _list(client, f"{RESOURCE}/deviceclasses")]
    nodes = [NodeView(n["metadata"]["name"], n["metadata"].get("labels") or {})
             for n in await _list(client, "/api/v1/nodes")]
    # Upstream writes each allocation before computing the next; here all are computed first
    # (the same results: each depends only on the earlier ones) and then written, 30 at a time.
    found = iter(allocate(claims, slices, classes, nodes, rng or random.Random()))

    async def write() -> None:
        for i, allocation in found:
            m = claims[i].metadata
            body = {"status": {"allocation": msgspec.to_builtins(allocation)}}
            await client.call("PATCH", f"{RESOURCE}/namespaces/{m.namespace}/resourceclaims/{m.name}/status",
                              body=body, content_type=MERGE_PATCH)

    async with asyncio.TaskGroup() as tg:
        for _ in range(CREATE_WORKERS):
            tg.create_task(write())


async def create_resource_claims(client: ApiClient, namespace: str, count: int, template_path: str,
                                 progress: Callable[[str], None]) -> None:
    """createResourceClaimsOp: `count` copies of the claim in the file (not a template), 30 at a time."""
    claim = objects.from_file(template_path)
    path = f"{RESOURCE}/namespaces/{namespace}/resourceclaims"
    progress(f"  createResourceClaims: {count} claim(s) in {namespace}")
    pending = iter(range(count))

    async def worker() -> None:
        for _ in pending:
            await client.call("POST", path, body=claim)

    async with asyncio.TaskGroup() as tg:
        for _ in range(min(count, CREATE_WORKERS)):
            tg.create_task(worker())
