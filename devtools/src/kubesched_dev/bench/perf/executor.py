"""Runs one workload's unrolled operations against a plane whose scheduler is already running.

Each operation does what scheduler_perf's WorkloadExecutor does with it (executor.go,
operations.go, update.go): namespaces `namespace-<op index>` by default, pods created 30 at a
time and waited for (polled each second, 10 minutes at most) unless skipWaitToCompletion,
barriers over the namespaces whose pods were left unwaited, churn and rate-limited deletions
in the background until the workload ends. Options an operation has but this runner does not
implement are refused by name (`Unsupported`), never ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubesched.api import ApiClient, ApiError
from kubesched.api.client import MERGE_PATCH
from kubesched_dev.bench.perf import claims, objects, pod_ops, volumes
from kubesched_dev.bench.perf.config import UnsupportedOperation, parse_duration
from kubesched_dev.bench.perf.creates import create_with_retries
from kubesched_dev.bench.perf.informer import PodInformer, PodState, labels_match
from kubesched_dev.bench.perf.sampler import SAMPLE_INTERVAL_S, ThroughputSampler

CREATE_PARALLELISM = 30
CREATE_NODE_RETRIES = 5  # node_util.go createNodeRetries
WAIT_TIMEOUT_S = 600.0
POLL_S = 1.0
@dataclass
class Collection:
    """One startCollectingMetrics..stopCollectingMetrics window (or a collectMetrics createPods)."""

    name: str
    namespaces: set[str]
    labels: dict[str, str] | None
    sampler: ThroughputSampler = field(default_factory=ThroughputSampler)
    scheduled: int = 0
    task: asyncio.Task[None] | None = None
    started: float = 0.0
    stopped: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)  # filled by the collect hooks
    base: int = 0  # scheduled when the window opened
    # The window's pod creation (createPods inside it, steady state aside): how many, how long from
    # the window's start until the last was created, and how many measured pods were bound by then.
    # Nearly all bound by then means the harness's creation, not the scheduler, set the pace.
    created: int = 0
    created_s: float = 0.0
    bound_when_created: int = 0

    def creation_done(self, count: int, now: float) -> None:
        self.created += count
        self.created_s = now - self.started
        self.bound_when_created = self.scheduled - self.base

    def on_scheduled(self, pod: PodState) -> None:
        if pod.namespace in self.namespaces and labels_match(pod.labels, self.labels):
            self.scheduled += 1


# Hooks the runner gives: called when a window opens and when it closes (scrapes, CPU readings).
Hook = Callable[[Collection], Awaitable[None]]


async def _nothing(_: Collection) -> None:
    return None


class Executor:
    def __init__(self, client: ApiClient, informer: PodInformer, default_pod_template: str | None,
                 workload_name: str, progress: Callable[[str], None],
                 on_start: Hook = _nothing, on_stop: Hook = _nothing) -> None:
        self.client = client
        self.informer = informer
        self.default_pod_template = default_pod_template
        self.workload_name = workload_name
        self.progress = progress
        self.on_start, self.on_stop = on_start, on_stop
        self.mapper = objects.RestMapper(client)
        self.pending: dict[str, int] = {}  # numPodsScheduledPerNamespace
        self.next_node = 0
        self.background: list[asyncio.Task[None]] = []
        self.collection: Collection | None = None
        self.results: list[Collection] = []

    # --- plumbing ------------------------------------------------------------------------------

    async def run(self, ops: list[dict[str, Any]]) -> list[Collection]:
        try:
            for op in ops:
                self._check_background()
                await getattr(self, f"_op_{op['opcode']}")(op)
            self._check_background()
        finally:
            for t in self.background:
                t.cancel()
            for t in self.background:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await t
            if self.collection is not None and self.collection.task is not None:
                self.collection.task.cancel()
        return self.results

    def _check_background(self) -> None:
        self.informer.check()
        for t in self.background:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise RuntimeError(f"background operation {t.get_name()} failed: {t.exception()}")

    def _spawn(self, name: str, coro: Awaitable[None]) -> None:
        async def wrap() -> None:
            await coro
        self.background.append(asyncio.create_task(wrap(), name=name))

    async def _create_namespace(self, name: str, body: dict[str, Any] | None = None) -> None:
        if name in self.pending:
            return
        ns = dict(body or {"apiVersion": "v1", "kind": "Namespace"})
        ns["metadata"] = {**ns.get("metadata", {}), "name": name}
        resp = await self.client.request("POST", "/api/v1/namespaces", body=ns)
        if not resp.ok and resp.status != 409:
            raise ApiError.from_response(resp.status, resp.body, method="POST", path="/api/v1/namespaces")
        self.pending[name] = 0

    async def _parallel(self, count: int, fn: Callable[[int], Awaitable[None]], width: int) -> None:
        it = iter(range(count))

        async def worker() -> None:
            for i in it:
                await fn(i)

        async with asyncio.TaskGroup() as tg:
            for _ in range(min(width, count)):
                tg.create_task(worker())

    @staticmethod
    def _refuse(op: dict[str, Any], *keys: str) -> None:
        for k in keys:
            if op.get(k):
                raise UnsupportedOperation(f"{op['opcode']} with {k} is not implemented by this runner")

    # --- nodes and namespaces ------------------------------------------------------------------

    async def _op_createNodes(self, op: dict[str, Any]) -> None:
        count = int(op.get("count", 0))
        path = op.get("nodeTemplatePath")
        params = op.get("templateParams") or {}
        prefix = f"node-{op['index']}-"

        async def make(i: int) -> None:
            # PrepareNodes retries any failed create, drawing a new random name each time: five
            # random letters collide now and then among thousands of nodes (409 AlreadyExists).
            for attempt in range(CREATE_NODE_RETRIES):
                node = objects.from_template(path, {**params, "Index": i, "Count": count}) if path \
                    else objects.base_node(prefix)
                resp = await self.client.request("POST", "/api/v1/nodes", body=objects.named_node(node))
                if resp.ok:
                    return
                if attempt == CREATE_NODE_RETRIES - 1:
                    raise ApiError.from_response(resp.status, resp.body, method="POST", path="/api/v1/nodes")

        self.progress(f"  createNodes: {count} node(s)")
        await self._parallel(count, make, CREATE_PARALLELISM)
        # getNodePreparer: one strategy, nodeAllocatableStrategy before the label ones.
        allocatable = op.get("nodeAllocatableStrategy")
        label = None if allocatable else op.get("labelNodePrepareStrategy")
        unique = None if allocatable or label else op.get("uniqueNodeLabelStrategy")
        if allocatable or label or unique:
            names = [n["metadata"]["name"] for n in orjson.loads(await self.client.get("/api/v1/nodes"))["items"]]
            mine = names[self.next_node:self.next_node + count]
        if allocatable:
            self.progress(f"  createNodes: CSINodes for {len(mine)} node(s)")
            await self._parallel(len(mine), lambda i: volumes.prepare_node(self.client, allocatable, mine[i]),
                                 CREATE_PARALLELISM)
        elif label or unique:
            values = itertools.cycle(label["labelValues"]) if label else None
            patches = []
            for name in mine:
                if label and values is not None:
                    patches.append((name, {label["labelKey"]: next(values)}))
                elif unique:
                    patches.append((name, {unique["labelKey"]: str(uuid.uuid4())}))

            async def patch(i: int) -> None:
                name, labels = patches[i]
                await self.client.call("PATCH", f"/api/v1/nodes/{name}", body={"metadata": {"labels": labels}},
                                       content_type=MERGE_PATCH)

            await self._parallel(len(patches), patch, CREATE_PARALLELISM)
        self.next_node += count

    async def _op_createNamespaces(self, op: dict[str, Any]) -> None:
        body = objects.from_file(op["namespaceTemplatePath"]) if op.get("namespaceTemplatePath") else None
        for i in range(int(op.get("count", 0))):
            await self._create_namespace(f"{op['prefix']}-{i}", body)

    # --- pods ----------------------------------------------------------------------------------

    async def _op_createPods(self, op: dict[str, Any]) -> None:
        ns = op.get("namespace") or f"namespace-{op['index']}"
        await self._create_namespace(ns)
        storage = None
        if op.get("persistentVolumeClaimTemplatePath"):  # getPodStrategy: the claim template decides
            storage = volumes.PodVolumes(self.client, ns, op["persistentVolumeClaimTemplatePath"],
                                         op["persistentVolumeTemplatePath"])
        count = int(op.get("count", 0))
        if op.get("collectMetrics"):
            if op.get("skipWaitToCompletion"):
                raise ValueError("collectMetrics and skipWaitToCompletion cannot be true at the same time")
            await self._start_collecting(ns, [ns], None)
        template = op.get("podTemplatePath") or self.default_pod_template
        params, batch = op.get("templateParams") or {}, int(op.get("signatureBatchSize") or 1)
        if op.get("steadyState"):
            d = op.get("duration") or "0"
            await pod_ops.create_pods_steadily(
                self.client, self.informer, ns, count, parse_duration(d) if isinstance(d, str) else float(d),
                lambda n: self.create_pods(ns, n, template, params, batch, quiet=n == 1), self.progress)
        else:
            await self.create_pods(ns, count, template, params, batch,
                                   attach=storage.attach if storage is not None else None)
            if (c := self.collection) is not None and count:
                c.creation_done(count, time.monotonic())
                self.progress(f"  createPods: the last of {c.created} pod(s) created {c.created_s:.1f} s into the "
                              f"window, {100 * c.bound_when_created / c.created:.0f} % of them bound by then")
            if op.get("skipWaitToCompletion"):
                self.pending[ns] = self.pending.get(ns, 0) + count
            else:
                await self._wait(ns, None, count, attempted_too=False)
        if op.get("collectMetrics"):
            await self._stop_collecting()

    async def create_pods(self, ns: str, count: int, template: str | None, params: dict[str, Any],
                          batch: int, quiet: bool = False,
                          attach: Callable[[int, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None) -> None:
        if not quiet:
            self.progress(f"  createPods: {count} pod(s) in {ns}")
        path = f"/api/v1/namespaces/{ns}/pods"

        async def make(i: int) -> None:
            pod = objects.from_template(template, {**params, "Index": i, "Count": count}) if template \
                else objects.base_pod()
            if template:
                objects.signature(pod, i, batch)
            if attach is not None:
                pod = await attach(i, pod)
            await create_with_retries(self.client, path, pod)

        await self._parallel(count, make, CREATE_PARALLELISM if count >= 30 else max(count, 1))

    async def _wait(self, ns: str, labels: dict[str, str] | None, want: int, attempted_too: bool) -> None:
        deadline = time.monotonic() + WAIT_TIMEOUT_S
        last = -1
        while True:
            self._check_background()
            scheduled, attempted = self.informer.counts(ns, labels)
            got = scheduled + attempted if attempted_too else scheduled
            if got >= want:
                return
            if got != last:
                self.progress(f"  namespace {ns}: {'attempted' if attempted_too else 'scheduled'} {got}/{want}")
                last = got
            if time.monotonic() > deadline:
                raise TimeoutError(f"namespace {ns}: only {got}/{want} pods "
                                   f"{'attempted' if attempted_too else 'scheduled'} after {WAIT_TIMEOUT_S:.0f} s")
            await asyncio.sleep(POLL_S)

    async def _op_barrier(self, op: dict[str, Any]) -> None:
        namespaces = list(op.get("namespaces") or [])
        for ns in namespaces:
            if ns not in self.pending:
                raise ValueError(f"unknown namespace {ns}")
        attempted = op.get("stageRequirement") == "Attempted"
        for ns in namespaces or list(self.pending):
            await self._wait(ns, op.get("labelSelector"), self.pending[ns], attempted_too=attempted)
        if not attempted:
            if namespaces:
                for ns in namespaces:
                    self.pending.pop(ns, None)
            else:
                self.pending = {}

    async def _op_deletePods(self, op: dict[str, Any]) -> None:
        ns = op["namespace"]
        sel = op.get("labelSelector") or {}
        victims = [p.name for p in self.informer.select(ns, sel)]
        rate = int(op.get("deletePodsPerSecond") or 0)

        async def delete() -> None:
            if rate > 0:
                for name in victims:
                    await asyncio.sleep(1 / rate)
                    resp = await self.client.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")
                    if not resp.ok and resp.status != 404:
                        raise ApiError.from_response(resp.status, resp.body, method="DELETE", path=name)
                return
            params = {"labelSelector": ",".join(f"{k}={v}" for k, v in sorted(sel.items()))} if sel else None
            await self.client.call("DELETE", f"/api/v1/namespaces/{ns}/pods", params=params)

        if op.get("skipWaitToCompletion"):
            self._spawn(f"deletePods/{op['index']}", delete())
        else:
            await delete()

    # --- other objects ---------------------------------------------------------------------------

    async def _op_createAny(self, op: dict[str, Any]) -> None:
        ns = op.get("namespace") or ""
        if ns:
            await self._create_namespace(ns)
        count = int(op["count"]) if op.get("count") is not None else 1
        params = op.get("templateParams") or {}
        for i in range(count):
            obj = objects.from_template(op["templatePath"], {**params, "Index": i, "Count": count})
            path = await self.mapper.path(obj, ns)
            await self.client.call("POST", path, params={"fieldValidation": "Strict"}, body=obj)
        self.progress(f"  createAny: {count} item(s) from {op['templatePath'].rsplit('/', 1)[-1]}")

    async def _op_updateAny(self, op: dict[str, Any]) -> None:
        ns = op.get("namespace") or ""
        if ns:
            await self._create_namespace(ns)
        count = int(op["count"]) if op.get("count") is not None else 1
        rate = int(op.get("updatePerSecond") or 0)
        subresources = list(op.get("subresources") or [])
        for i in range(count):
            if rate:
                await asyncio.sleep(1 / rate)
            obj = objects.from_template(op["templatePath"], {"Index": i, "Count": count})
            path = f"{await self.mapper.path(obj, ns)}/{obj['metadata']['name']}"
            params = {"fieldValidation": "Strict"}
            # update(obj, subresources...) then UpdateStatus(obj), as the op does
            await self.client.call("PUT", "/".join([path, *subresources]), params=params, body=obj)
            await self.client.call("PUT", f"{path}/status", params=params, body=obj)

    async def _op_createPodGroups(self, op: dict[str, Any]) -> None:
        ns = op["namespace"]
        await self._create_namespace(ns)
        await pod_ops.create_pod_groups(self.client, self.mapper, ns, int(op["count"]), op["templatePath"],
                                        op.get("templateParams") or {}, self.progress)

    async def _op_createResourceClaims(self, op: dict[str, Any]) -> None:
        ns = op["namespace"]
        await self._create_namespace(ns)
        await claims.create_resource_claims(self.client, ns, int(op.get("count", 0)), op["templatePath"],
                                            self.progress)

    async def _op_allocResourceClaims(self, op: dict[str, Any]) -> None:
        await claims.alloc_resource_claims(self.client, op.get("namespace") or "", self.progress)

    async def _op_churn(self, op: dict[str, Any]) -> None:
        mode = op.get("mode")
        number = int(op.get("number") or 0)
        if mode not in ("create", "recreate") or (mode == "recreate" and number == 0):
            raise ValueError(f"churn: invalid mode {mode!r} / number {number}")
        ns = op.get("namespace") or f"namespace-{op['index']}"
        resp = await self.client.request("POST", "/api/v1/namespaces",
                                         body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        if not resp.ok and resp.status != 409:
            raise ApiError.from_response(resp.status, resp.body, method="POST", path="/api/v1/namespaces")
        templates = [objects.from_file(p) for p in op["templatePaths"]]
        collections = []
        for t in templates:
            coll, namespaced = await self.mapper.mapping(t.get("apiVersion", ""), t.get("kind", ""))
            if namespaced:
                prefix, _, res = coll.rpartition("/")
                coll = f"{prefix}/namespaces/{ns}/{res}"
            collections.append(coll)
        interval = (op.get("intervalMilliseconds") or 500) / 1000

        async def create(i: int) -> str:
            resp = await self.client.request("POST", collections[i], body=templates[i])
            return str(orjson.loads(resp.body)["metadata"]["name"]) if resp.ok else ""

        async def churn() -> None:
            live: list[list[str]] = [[""] * max(number, 1) for _ in templates]
            count = 0
            limit = number or 2**31 - 1
            while mode == "recreate" or count < limit:
                await asyncio.sleep(interval)
                for i in range(len(templates)):
                    if mode == "create":
                        await create(i)
                        continue
                    slot = count % number
                    if live[i][slot]:
                        await self.client.request("DELETE", f"{collections[i]}/{live[i][slot]}")
                        live[i][slot] = ""
                    else:
                        live[i][slot] = await create(i)
                count += 1

        self._spawn(f"churn/{op['index']}", churn())

    async def _op_sleep(self, op: dict[str, Any]) -> None:
        d = op.get("duration") or "0"
        await asyncio.sleep(parse_duration(d) if isinstance(d, str) else float(d))

    # --- metrics -------------------------------------------------------------------------------

    async def _op_startCollectingMetrics(self, op: dict[str, Any]) -> None:
        namespaces = list(op.get("namespaces") or [])
        if not namespaces:
            raise ValueError("startCollectingMetrics: namespaces cannot be empty")
        await self._start_collecting(op.get("name") or "", namespaces, op.get("labelSelector"))

    async def _op_stopCollectingMetrics(self, _: dict[str, Any]) -> None:
        await self._stop_collecting()

    async def _start_collecting(self, name: str, namespaces: list[str], labels: dict[str, str] | None) -> None:
        if self.collection is not None:
            raise ValueError("metrics collection is overlapping. Probably second collector was started "
                             "before stopping a previous one")
        c = Collection(f"{self.workload_name}/{name}", set(namespaces), labels)
        # Pods of those namespaces already scheduled count, as upstream's handler added to a synced
        # informer replays them as adds: the sampler starts from that count.
        for p in self.informer.pods.values():
            if p.node:
                c.on_scheduled(p)
        c.base = c.scheduled
        self.informer.hooks.append(c.on_scheduled)
        await self.on_start(c)
        c.started = time.monotonic()
        c.task = asyncio.create_task(self._sample(c), name="perf/throughput")
        self.collection = c

    async def _sample(self, c: Collection) -> None:
        next_tick = time.monotonic() + SAMPLE_INTERVAL_S
        while True:
            await asyncio.sleep(max(0.0, next_tick - time.monotonic()))
            now = time.monotonic()
            c.sampler.tick(now, c.scheduled)
            # A ticker drops the ticks its reader missed rather than delivering them late in a burst.
            next_tick += SAMPLE_INTERVAL_S
            while next_tick <= now:
                next_tick += SAMPLE_INTERVAL_S

    async def _stop_collecting(self) -> None:
        c = self.collection
        if c is None:
            raise ValueError("missing startCollectingMetrics operation before stopping")
        assert c.task is not None
        c.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await c.task
        c.stopped = time.monotonic()
        self.informer.hooks.remove(c.on_scheduled)
        await self.on_stop(c)
        self.results.append(c)
        self.collection = None
