"""createPods with steadyState (executor.go's createPodsSteadily) and createPodGroups
(runCreatePodGroupsOp): the executor's operations that keep state across requests.

Steady state: every pod of the namespace seen newly scheduled is deleted at once (grace period
0, background propagation) and one more is created, so the scheduler's queue never empties and
the cluster stays about as full as it started, for `duration`; the seed is `count` pods. As
upstream, one pod is handled at a time, and a run in which no pod got scheduled at all fails.

Handling one pod at a time caps the rate at one delete and one create round trip a pod, whatever
the scheduler does: the closing line says how long those took and how many scheduled pods were
already waiting for the harness each time it looked, so a run held by the harness shows it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from kubesched.api import ApiClient, ApiError
from kubesched_dev.bench.perf import objects
from kubesched_dev.bench.perf.informer import PodInformer, PodState

PODGROUP_CACHE_TIMEOUT_S = 10.0
PODGROUP_CREATE_TIMEOUT_S = 20.0
# Client errors a retry cannot fix (IsInvalid, IsBadRequest, IsForbidden).
FINAL_STATUSES = (400, 403, 422)

CreatePods = Callable[[int], Awaitable[None]]


async def create_pods_steadily(client: ApiClient, informer: PodInformer, namespace: str, count: int,
                               duration_s: float, create: CreatePods, progress: Callable[[str], None]) -> int:
    """The pods seen scheduled in the namespace during `duration_s`; `create(n)` makes n pods."""
    scheduled: asyncio.Queue[PodState] = asyncio.Queue()

    def on_scheduled(pod: PodState) -> None:
        if pod.namespace == namespace:
            scheduled.put_nowait(pod)

    informer.hooks.append(on_scheduled)
    seen = 0
    busy = 0.0  # in the delete and create round trips
    waiting = 0  # scheduled pods already queued for the harness, summed over the pods it took
    try:
        await create(count)
        progress(f"  createPods: steady state in {namespace} for {duration_s:g} s")
        deadline = time.monotonic() + duration_s
        while (left := deadline - time.monotonic()) > 0:
            waiting += scheduled.qsize()
            try:
                pod = await asyncio.wait_for(scheduled.get(), left)
            except TimeoutError:
                break
            seen += 1
            began = time.monotonic()
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
            resp = await client.request("DELETE", path, params={"gracePeriodSeconds": 0,
                                                                "propagationPolicy": "Background"})
            if time.monotonic() >= deadline:
                break
            if not resp.ok and resp.status != 404:
                raise ApiError.from_response(resp.status, resp.body, method="DELETE", path=path)
            await create(1)
            busy += time.monotonic() - began
    finally:
        informer.hooks.remove(on_scheduled)
    per_pod = f"{1000 * busy / seen:.0f} ms" if seen else "-"
    progress(f"  createPods: {seen} pod(s) got scheduled in {namespace} in the steady state; the harness's "
             f"delete + create took {per_pod} a pod ({100 * busy / duration_s:.0f} % of the window), "
             f"{waiting / seen if seen else 0:.1f} scheduled pod(s) waiting for it on average")
    if seen == 0:
        raise RuntimeError("no pod at all got scheduled, either because of a problem or because the test "
                           "interval was too small")
    return seen


async def create_pod_groups(client: ApiClient, mapper: objects.RestMapper, namespace: str, count: int,
                            template: str, params: dict[str, Any], progress: Callable[[str], None],
                            sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """`count` PodGroups from the template (env: its templateParams and Index), one after another,
    each retried for 20 s unless the apiserver refuses it for good; then waited for until a list
    shows them all (upstream waits for its scheduler's informer; the contender here is another
    process, so the apiserver's list is what the harness can see)."""
    progress(f"  createPodGroups: {count} PodGroup(s) in {namespace}")
    path = ""
    for index in range(count):
        obj = objects.from_template(template, {**params, "Index": index})
        path = await mapper.path(obj, namespace)
        give_up = time.monotonic() + PODGROUP_CREATE_TIMEOUT_S
        while True:
            resp = await client.request("POST", path, params={"fieldValidation": "Strict"}, body=obj)
            if resp.ok:
                break
            if resp.status in FINAL_STATUSES or time.monotonic() >= give_up:
                raise ApiError.from_response(resp.status, resp.body, method="POST", path=path)
            progress(f"  createPodGroups: {obj.get('metadata', {}).get('name')}: HTTP {resp.status}, retrying in 1 s")
            await sleep(1.0)
    if not path:
        return
    give_up = time.monotonic() + PODGROUP_CACHE_TIMEOUT_S
    while True:
        listed = len(orjson.loads(await client.get(path)).get("items") or [])
        if listed >= count:
            return
        if time.monotonic() >= give_up:
            raise TimeoutError(f"timed out waiting for PodGroups to be cached: {listed}/{count} in {namespace}")
        await sleep(0.1)
