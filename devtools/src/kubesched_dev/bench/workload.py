"""The pods a bench creates: pause pods with kube-scheduler's benchmark requests, in one namespace.

Create times are taken on the client, just before each POST is sent: the pod's
creationTimestamp has only second resolution, too coarse for latencies of a few milliseconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from kubesched.api import ApiClient, ApiError

NAMESPACE = "bench"
CPU_REQUEST = "10m"
MEMORY_REQUEST = "16Mi"
CREATE_CONCURRENCY = 32


def pod_name(i: int, width: int) -> str:
    return f"pause-{i:0{width}d}"


def pod_names(count: int) -> list[str]:
    width = len(str(max(count - 1, 0)))
    return [pod_name(i, width) for i in range(count)]


def pod_manifest(name: str, scheduler_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}},
        "spec": {
            "schedulerName": scheduler_name,
            "containers": [{
                "name": "pause", "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": CPU_REQUEST, "memory": MEMORY_REQUEST}},
            }],
            "terminationGracePeriodSeconds": 0,
        },
    }


async def create_namespace(client: ApiClient) -> None:
    resp = await client.request("POST", "/api/v1/namespaces",
                                body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    if not resp.ok and resp.status != 409:
        raise ApiError.from_response(resp.status, resp.body, method="POST", path="/api/v1/namespaces")


Manifest = Callable[[str, str], dict[str, Any]]  # (pod name, scheduler name) -> the pod


async def _create(client: ApiClient, name: str, scheduler_name: str, manifest: Manifest = pod_manifest) -> None:
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    resp = await client.request("POST", path, body=manifest(name, scheduler_name))
    if not resp.ok:
        raise ApiError.from_response(resp.status, resp.body, method="POST", path=path)


async def create_all(client: ApiClient, names: list[str], scheduler_name: str,
                     on_created: Callable[[str, float], None],
                     concurrency: int = CREATE_CONCURRENCY, manifest: Manifest = pod_manifest) -> None:
    """As fast as the apiserver takes them, `concurrency` at a time."""
    it = iter(names)

    async def worker() -> None:
        for name in it:
            sent = time.monotonic()
            await _create(client, name, scheduler_name, manifest)
            on_created(name, sent)

    async with asyncio.TaskGroup() as tg:
        for _ in range(min(concurrency, len(names))):
            tg.create_task(worker())


async def create_steadily(client: ApiClient, names: list[str], scheduler_name: str, rate: float,
                          on_created: Callable[[str, float], None], manifest: Manifest = pod_manifest) -> None:
    """One pod every 1/rate seconds on a fixed schedule (a slow POST does not shift later ones)."""
    start = time.monotonic()
    async with asyncio.TaskGroup() as tg:
        for i, name in enumerate(names):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tg.create_task(_create_timed(client, name, scheduler_name, on_created, manifest))


async def _create_timed(client: ApiClient, name: str, scheduler_name: str,
                        on_created: Callable[[str, float], None], manifest: Manifest = pod_manifest) -> None:
    sent = time.monotonic()
    await _create(client, name, scheduler_name, manifest)
    on_created(name, sent)
