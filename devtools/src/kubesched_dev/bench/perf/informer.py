"""The executor's pod informer: every pod of the cluster, by list+watch, in a few slim fields.

scheduler_perf shares one informer between the scheduler and the test; here the scheduler is
another process, so the harness keeps its own. `on_scheduled` hooks see each pod once, the first
time it is seen with a node, as upstream's event handlers count "(old has no node) and new has one".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from kubesched.api import ApiClient, ApiConnectionError, ApiError
from kubesched.model.objects import ListMeta

log = logging.getLogger(__name__)


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    resourceVersion: str = ""
    labels: dict[str, str] = {}


class _Spec(msgspec.Struct):
    nodeName: str = ""


class _Cond(msgspec.Struct):
    type: str = ""


class _Status(msgspec.Struct):
    conditions: list[_Cond] = []


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)
    status: _Status = msgspec.field(default_factory=_Status)


class _PodList(msgspec.Struct):
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[_Pod] = []


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


@dataclass
class PodState:
    namespace: str
    name: str
    labels: dict[str, str]
    node: str
    attempted: bool  # has a PodScheduled condition: went through a scheduling cycle at least once


ScheduledHook = Callable[[PodState], None]


def labels_match(labels: dict[str, str], required: dict[str, str] | None) -> bool:
    return all(labels.get(k) == v for k, v in (required or {}).items())


class PodInformer:
    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self.pods: dict[tuple[str, str], PodState] = {}
        self.hooks: list[ScheduledHook] = []
        self._rv = ""
        self._task: asyncio.Task[None] | None = None
        self._list = msgspec.json.Decoder(_PodList)
        self._event = msgspec.json.Decoder(_Event)
        self._pod = msgspec.json.Decoder(_Pod)

    async def start(self) -> None:
        await self._relist()
        self._task = asyncio.create_task(self._run(), name="perf/informer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def check(self) -> None:
        if self._task is not None and self._task.done() and not self._task.cancelled():
            self._task.result()

    def _saw(self, p: _Pod) -> None:
        key = (p.metadata.namespace, p.metadata.name)
        old = self.pods.get(key)
        new = PodState(p.metadata.namespace, p.metadata.name, p.metadata.labels, p.spec.nodeName,
                       any(c.type == "PodScheduled" for c in p.status.conditions))
        self.pods[key] = new
        if new.node and (old is None or not old.node):
            for hook in self.hooks:
                hook(new)

    async def _relist(self) -> None:
        params: dict[str, str | int] = {"limit": 1000}
        seen: set[tuple[str, str]] = set()
        rv = ""
        while True:
            page = self._list.decode(await self.client.get("/api/v1/pods", params))
            for p in page.items:
                seen.add((p.metadata.namespace, p.metadata.name))
                self._saw(p)
            rv = rv or page.metadata.resource_version
            if not page.metadata.continue_:
                break
            params["continue"] = page.metadata.continue_
        for key in set(self.pods) - seen:
            del self.pods[key]
        self._rv = rv

    async def _run(self) -> None:
        while True:
            try:
                await self._watch()
            except ApiError as e:
                if e.status != 410:
                    raise
                await self._relist()
            except ApiConnectionError as e:
                log.warning("perf informer: %s; watching again", e)
                await asyncio.sleep(0.2)

    async def _watch(self) -> None:
        params: dict[str, str | int] = {"watch": "1", "allowWatchBookmarks": "true", "resourceVersion": self._rv,
                                        "timeoutSeconds": 1800}
        async with self.client.stream("/api/v1/pods", params) as lines:
            async for line in lines:
                ev = self._event.decode(line)
                if ev.type == "ERROR":
                    raise ApiError(410, "Expired", "watch expired")
                p = self._pod.decode(ev.object)
                self._rv = p.metadata.resourceVersion or self._rv
                if ev.type in ("ADDED", "MODIFIED"):
                    self._saw(p)
                elif ev.type == "DELETED":
                    self.pods.pop((p.metadata.namespace, p.metadata.name), None)

    def select(self, namespace: str | None, labels: dict[str, str] | None = None) -> list[PodState]:
        return [p for p in self.pods.values()
                if (namespace is None or p.namespace == namespace) and labels_match(p.labels, labels)]

    def counts(self, namespace: str, labels: dict[str, str] | None = None) -> tuple[int, int]:
        """(scheduled, attempted but not scheduled) pods of a namespace, as getScheduledPods splits them."""
        scheduled = attempted = 0
        for p in self.select(namespace, labels):
            if p.node:
                scheduled += 1
            elif p.attempted:
                attempted += 1
        return scheduled, attempted
