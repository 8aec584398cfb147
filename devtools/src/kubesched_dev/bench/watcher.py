"""Who got bound when: a list+watch of the bench namespace's pods, decoded into tiny structs.

The watcher must have finished its initial list before the contender starts: a pod bound before
the list is returned shows up already bound, with no time of its own, and a harness that counts
those as bound "now" reports several times the real rate. `start()` returns only once the list
is in and the watch is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import msgspec

from kubesched.api import ApiClient, ApiConnectionError, ApiError
from kubesched_dev.bench.slim import Pod, PodList
from kubesched_dev.bench.workload import NAMESPACE

log = logging.getLogger(__name__)


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


class _Status(msgspec.Struct):
    code: int = 0
    message: str = ""


class WatchExpired(Exception):
    pass


class Watcher:
    def __init__(self, client: ApiClient, on_bound: Callable[[str, str, float], None] | None = None) -> None:
        self.client = client
        self.bound_at: dict[str, float] = {}  # pod name -> monotonic time the watcher saw its nodeName
        self.node_of: dict[str, str] = {}
        self.seen: set[str] = set()
        self.bound_before_start = 0  # already bound in the initial list: a harness error if > 0
        self._on_bound = on_bound
        self._rv = ""
        self._task: asyncio.Task[None] | None = None
        self._watching = asyncio.Event()
        self._list = msgspec.json.Decoder(PodList)
        self._event = msgspec.json.Decoder(_Event)
        self._pod = msgspec.json.Decoder(Pod)
        self._status = msgspec.json.Decoder(_Status)

    async def start(self) -> None:
        await self._relist(initial=True)
        self._task = asyncio.create_task(self._run(), name="bench/watcher")
        waiter = asyncio.create_task(self._watching.wait())
        done, _ = await asyncio.wait({waiter, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if self._task in done:
            waiter.cancel()
            self._task.result()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _saw(self, pod: Pod, now: float) -> None:
        name = pod.metadata.name
        self.seen.add(name)
        if pod.spec.nodeName and name not in self.bound_at:
            self.bound_at[name] = now
            self.node_of[name] = pod.spec.nodeName
            if self._on_bound is not None:
                self._on_bound(name, pod.spec.nodeName, now)

    async def _relist(self, initial: bool = False) -> None:
        params: dict[str, str | int] = {"limit": 1000}
        path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        rv = ""
        while True:
            page = self._list.decode(await self.client.get(path, params))
            now = time.monotonic()
            for pod in page.items:
                if initial and pod.spec.nodeName:
                    self.bound_before_start += 1
                self._saw(pod, now)
            rv = rv or page.metadata.resource_version
            if not page.metadata.continue_:
                break
            params["continue"] = page.metadata.continue_
        self._rv = rv

    async def _run(self) -> None:
        while True:
            try:
                await self._watch()
            except WatchExpired:
                log.info("bench watcher: watch expired; listing again")
                await self._relist()
            except ApiError as e:
                if e.status != 410:
                    raise
                await self._relist()
            except ApiConnectionError as e:
                log.warning("bench watcher: %s; watching again", e)
                await asyncio.sleep(0.2)

    async def _watch(self) -> None:
        params: dict[str, str | int] = {"watch": "1", "allowWatchBookmarks": "true",
                                        "resourceVersion": self._rv, "timeoutSeconds": 1800}
        async with self.client.stream(f"/api/v1/namespaces/{NAMESPACE}/pods", params) as lines:
            self._watching.set()
            async for line in lines:
                ev = self._event.decode(line)
                if ev.type == "ERROR":
                    status = self._status.decode(ev.object)
                    raise WatchExpired(f"{status.code}: {status.message}")
                pod = self._pod.decode(ev.object)
                self._rv = pod.metadata.resourceVersion or self._rv
                if ev.type in ("ADDED", "MODIFIED"):
                    self._saw(pod, time.monotonic())
