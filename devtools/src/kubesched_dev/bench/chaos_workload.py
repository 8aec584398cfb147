"""The cluster, pods and checks of the reliability runs (bench/chaos.py): a nearly full cluster with
a CronJob pool, pods created through faults (every create retried until the apiserver has it), and
the invariants read back from the apiserver, independent of what any scheduler believes.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kubesched.api import ApiClient, ApiConnectionError, ApiError
from kubesched_dev.bench import capacity
from kubesched_dev.localcluster.topology import NodeSpec, Taint, Topology

NAMESPACE = "chaos"
POOL = "cronjob"
POOL_KEY = "kubesched.io/pool"  # the pool's node label, taint key and pod annotation
RETRY_DELAY = 0.5


def topology(nodes: int, pool_nodes: int, slots: int) -> Topology:
    cap = {"cpu": "4", "memory": "32Gi", "pods": str(slots)}
    general = [NodeSpec(f"node-{i:04d}", capacity=dict(cap)) for i in range(nodes)]
    pool = [NodeSpec(f"pool-{i:03d}", labels={POOL_KEY: POOL}, taints=(Taint(POOL_KEY, POOL, "NoSchedule"),),
                     capacity=dict(cap)) for i in range(pool_nodes)]
    return Topology(f"chaos-{nodes}+{pool_nodes}", tuple(general + pool))


@dataclass(frozen=True)
class PodPlan:
    name: str
    pool: bool


def plan(nodes: int, pool_nodes: int, slots: int, fill: float, prefix: str = "p") -> list[PodPlan]:
    """`fill` of the general slots and of the pool's slots, pool pods spread evenly through the run."""
    general, pooled = int(nodes * slots * fill), int(pool_nodes * slots * fill)
    total = general + pooled
    out: list[PodPlan] = []
    for i in range(total):
        # Bresenham: pool pod i where the running share of pool pods falls behind pooled/total.
        is_pool = pooled > 0 and (i + 1) * pooled // total > i * pooled // total
        out.append(PodPlan(f"{prefix}-{i:05d}", is_pool))
    return out


def manifest(pod: PodPlan, scheduler_name: str) -> dict[str, Any]:
    annotations = {POOL_KEY: POOL} if pod.pool else {}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod.name, "namespace": NAMESPACE, "annotations": annotations,
                     "labels": {"app": "chaos"}},
        "spec": {"schedulerName": scheduler_name, "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]},
    }


async def _retrying(what: str, call: Callable[[], Any], ok: tuple[int, ...], deadline: float) -> None:
    """Until the apiserver answers one of `ok`: it may be restarting (connection refused, 5xx, 429)."""
    while True:
        try:
            resp = await call()
            if resp.ok or resp.status in ok:
                return
            if resp.status < 500 and resp.status != 429:
                raise ApiError.from_response(resp.status, resp.body, method=what, path="")
        except ApiConnectionError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: the apiserver did not take it within the run's time")
        await asyncio.sleep(RETRY_DELAY)


async def create_namespace(client: ApiClient) -> None:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    await _retrying("create namespace", lambda: client.request("POST", "/api/v1/namespaces", body=body), (409,),
                    time.monotonic() + 120)


async def create(client: ApiClient, pod: PodPlan, scheduler_name: str, deadline: float) -> None:
    """409 after a retry: the first attempt landed although its answer was lost."""
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    body = manifest(pod, scheduler_name)
    await _retrying(f"create pod {pod.name}", lambda: client.request("POST", path, body=body), (409,), deadline)


async def delete(client: ApiClient, name: str, deadline: float) -> None:
    path = f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"
    await _retrying(f"delete pod {name}", lambda: client.request("DELETE", path, params={"gracePeriodSeconds": 0}),
                    (404,), deadline)


async def create_at_rate(client: ApiClient, pods: list[PodPlan], scheduler_name: str, rate: float,
                         deadline: float, created: list[str], concurrency: int = 32) -> None:
    """At most `rate` a second (0: as fast as it goes), `concurrency` in flight; `created` grows.
    No catching up after an outage: the pods keep arriving at `rate` once the apiserver is back."""
    slots = asyncio.Semaphore(concurrency)
    due = time.monotonic()

    async def one(p: PodPlan) -> None:
        try:
            await create(client, p, scheduler_name, deadline)
            created.append(p.name)
        finally:
            slots.release()

    async with asyncio.TaskGroup() as tg:
        for p in pods:
            if rate > 0:
                if (delay := due - time.monotonic()) > 0:
                    await asyncio.sleep(delay)
                due = max(due, time.monotonic() - 1.0) + 1 / rate
            await slots.acquire()
            tg.create_task(one(p))


# --- reading back ---------------------------------------------------------------------------------

class _Meta(msgspec.Struct):
    name: str = ""
    annotations: dict[str, str] = {}
    labels: dict[str, str] = {}
    deletionTimestamp: str | None = None


class _Spec(msgspec.Struct):
    nodeName: str = ""


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)


class _Node(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)


class _PodList(msgspec.Struct):
    items: list[_Pod] = []


class _NodeList(msgspec.Struct):
    items: list[_Node] = []


async def pods(client: ApiClient) -> list[_Pod]:
    """The run's pods from the watch cache (cheap; fine for polling); [] while the apiserver is away."""
    try:
        body = await client.get(f"/api/v1/namespaces/{NAMESPACE}/pods", {"resourceVersion": "0"})
    except (ApiConnectionError, ApiError):
        return []
    return msgspec.json.decode(body, type=_PodList).items


async def bound_count(client: ApiClient) -> int | None:
    try:
        body = await client.get(f"/api/v1/namespaces/{NAMESPACE}/pods", {"resourceVersion": "0"})
    except (ApiConnectionError, ApiError):
        return None
    return sum(1 for p in msgspec.json.decode(body, type=_PodList).items if p.spec.nodeName)


@dataclass
class Invariants:
    pods: int = 0
    bound: int = 0
    overcommitted: dict[str, list[str]] = field(default_factory=dict)
    pool_violations: list[str] = field(default_factory=list)  # "pod on node (why)"

    @property
    def ok(self) -> bool:
        return self.bound == self.pods and not self.overcommitted and not self.pool_violations


async def invariants(client: ApiClient) -> Invariants:
    """All bound, no node over its allocatable cpu, memory or pods, and the pool kept: pool pods only
    on pool nodes, no other pod there. Read from the apiserver itself (a consistent list)."""
    pod_items = msgspec.json.decode(await client.get(f"/api/v1/namespaces/{NAMESPACE}/pods"), type=_PodList).items
    node_items = msgspec.json.decode(await client.get("/api/v1/nodes"), type=_NodeList).items
    pool_nodes = {n.metadata.name for n in node_items if n.metadata.labels.get(POOL_KEY) == POOL}
    live = [p for p in pod_items if p.metadata.deletionTimestamp is None]
    result = Invariants(pods=len(live), bound=sum(1 for p in live if p.spec.nodeName))
    for p in live:
        node = p.spec.nodeName
        if not node:
            continue
        wants_pool = p.metadata.annotations.get(POOL_KEY) == POOL
        if wants_pool and node not in pool_nodes:
            result.pool_violations.append(f"{p.metadata.name} on {node} (a pool pod outside the pool)")
        elif not wants_pool and node in pool_nodes:
            result.pool_violations.append(f"{p.metadata.name} on {node} (reserved for the pool)")
    result.overcommitted = (await capacity.check(client, NAMESPACE)).overcommitted
    return result


def rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def debug_state(port: int) -> dict[str, Any] | None:
    """kubesched's /debug/kubesched/state, or None if it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/debug/kubesched/state", timeout=5) as resp:
            state: dict[str, Any] = json.loads(resp.read())
    except (OSError, ValueError):
        return None
    return state
