"""The logic-free binder: the API writes a scheduler must make per pod and nothing else.

One list of the pending pods with our scheduler name (then a watch for new ones), and for each:
POST the binding, round-robin over the nodes, and POST a `Scheduled` event beside it. 64 keep-alive
HTTP/1.1 connections for binds and 16 for events, no client-side rate limit, orjson bodies, uvloop:
the best settings measured on this machine. Run as its own process (`python -m kubesched_dev.bench.limit`)
so its CPU and memory are measured like any other contender's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import signal
import socket
import sys
import time
from collections.abc import Iterator

import msgspec
import orjson
import uvloop

from kubesched.api import ApiClient, load_config
from kubesched.api.binder import binding_body
from kubesched.api.events import micro_time
from kubesched_dev.bench.slim import Meta, Pod, PodList

CONNECTIONS = 64
# Events go out beside the binds, as a scheduler sends them (kube-scheduler's broadcaster, kubesched's
# recorder): a bind never waits for the previous pod's event.
EVENT_WORKERS = 16


class _NodeList(msgspec.Struct):
    items: list[Pod] = []  # only metadata.name is read


class _Event(msgspec.Struct):
    type: str
    object: Pod


def scheduled_event(pod: Meta, node: str, controller: str, instance: str) -> bytes:
    now = time.time()
    return orjson.dumps({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": f"{pod.name}.{time.time_ns():x}", "namespace": pod.namespace},
        "eventTime": micro_time(now), "reportingController": controller, "reportingInstance": instance,
        "action": "Binding", "reason": "Scheduled", "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": pod.namespace, "name": pod.name, "uid": pod.uid,
                      "apiVersion": "v1", "resourceVersion": pod.resourceVersion},
        "note": f"Successfully assigned {pod.namespace}/{pod.name} to {node}",
    })


class LimitBinder:
    def __init__(self, client: ApiClient, scheduler_name: str) -> None:
        self.client = client
        self.scheduler_name = scheduler_name
        self.instance = f"{scheduler_name}-{socket.gethostname()}"
        self.queue: asyncio.Queue[Meta] = asyncio.Queue()
        self.events: asyncio.Queue[tuple[Meta, str]] = asyncio.Queue()
        self.bound = 0
        self.failed = 0
        self._nodes: Iterator[str] = iter(())

    async def run(self) -> None:
        nodes = msgspec.json.decode(await self.client.get("/api/v1/nodes"), type=_NodeList)
        self._nodes = itertools.cycle([n.metadata.name for n in nodes.items])
        selector = f"spec.schedulerName={self.scheduler_name},spec.nodeName="
        rv = await self._list(selector)
        print(f"ready: {self.queue.qsize()} pending pods, {len(nodes.items)} nodes", flush=True)
        async with asyncio.TaskGroup() as tg:
            for _ in range(CONNECTIONS):
                tg.create_task(self._worker())
            for _ in range(EVENT_WORKERS):
                tg.create_task(self._event_worker())
            tg.create_task(self._watch(selector, rv))

    async def _list(self, selector: str) -> str:
        params: dict[str, str | int] = {"fieldSelector": selector, "limit": 1000}
        rv = ""
        while True:
            page = msgspec.json.decode(await self.client.get("/api/v1/pods", params), type=PodList)
            for pod in page.items:
                self.queue.put_nowait(pod.metadata)
            rv = rv or page.metadata.resource_version
            if not page.metadata.continue_:
                return rv
            params["continue"] = page.metadata.continue_

    async def _watch(self, selector: str, rv: str) -> None:
        # Steady mode: pods keep arriving after the list.
        params: dict[str, str | int] = {"watch": "1", "fieldSelector": selector, "resourceVersion": rv,
                                        "timeoutSeconds": 3600}
        decoder = msgspec.json.Decoder(_Event)
        async with self.client.stream("/api/v1/pods", params) as lines:
            async for line in lines:
                with contextlib.suppress(msgspec.ValidationError):
                    ev = decoder.decode(line)
                    if ev.type == "ADDED" and not ev.object.spec.nodeName:
                        self.queue.put_nowait(ev.object.metadata)

    async def _worker(self) -> None:
        while True:
            pod = await self.queue.get()
            node = next(self._nodes)
            path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
            resp = await self.client.request("POST", path, body=binding_body(pod.namespace, pod.name, pod.uid, node))
            if not resp.ok:
                self.failed += 1
                continue
            self.bound += 1
            self.events.put_nowait((pod, node))

    async def _event_worker(self) -> None:
        while True:
            pod, node = await self.events.get()
            await self.client.request("POST", f"/apis/events.k8s.io/v1/namespaces/{pod.namespace}/events",
                                      body=scheduled_event(pod, node, self.scheduler_name, self.instance))


async def _main(kubeconfig: str, scheduler_name: str) -> None:
    async with ApiClient(load_config(kubeconfig), qps=-1, burst=0, max_connections=CONNECTIONS + EVENT_WORKERS + 2,
                         user_agent="kubesched-bench-limit") as client:
        binder = LimitBinder(client, scheduler_name)
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await binder.run()
        print(f"stopped: {binder.bound} bound, {binder.failed} failed", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kubesched_dev.bench.limit", description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scheduler-name", required=True)
    args = parser.parse_args(argv)
    # The same event loop as kubesched: the limit must have the best client settings found.
    uvloop.run(_main(args.kubeconfig, args.scheduler_name))
    sys.exit(0)


if __name__ == "__main__":
    main()
