"""Offline profile of a restart's list path at scale: what listing N bound pods costs kubesched.

No control plane: N bound pods are generated as the apiserver lists them (pages of the informer's
page size, each item a Deployment's pod after kwok ran it: managedFields, ownerReferences, labels,
one container with requests, the default tolerations, a Running status with conditions and a
container status), then fed through the real path a restarted scheduler runs: the pod Informer's
list and sync (page decode, the store), the scheduler's informer handlers, the cache's PodInfo and
NodeInfo sums, with NODES nodes already in the cache.

Printed: seconds (wall and CPU) for the list and sync, bytes a pod retained (tracemalloc, after a
full collection, every page's bytes gone), the peak while listing, RSS before and after, and where
the retained bytes of one pod go (a walk of its object tree, shared objects counted once).

    uv run python bench/list_decode.py                 # 5,000 nodes, 50,000 pods
    uv run python bench/list_decode.py --pods 10000 --top 15
    git archive <commit> src | tar -x -C /tmp/old && PYTHONPATH=/tmp/old/src uv run python bench/list_decode.py
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson

from kubesched.api.informer import Handlers, Informer, pod_informer
from kubesched.backend.cache import Cache
from kubesched.backend.queue import SchedulingQueue
from kubesched.model.objects import Node, Pod
from kubesched.scheduler.eventhandlers import ClusterEventHandlers

try:
    from kubesched.scheduler.scheduler import collector_paused
except ImportError:  # a tree from before it (PYTHONPATH=<old checkout>/src: the before figures)
    from contextlib import nullcontext as collector_paused  # type: ignore[assignment]
from kubesched.scheduler.sources import POD_FIELD_SELECTOR

SCHEDULER = "bench-kubesched"
PAGE = 500  # the pod informer's page size


def node(i: int) -> Node:
    return msgspec.convert({
        "metadata": {"name": f"node-{i:05d}", "uid": f"n-{i}",
                     "labels": {"kubernetes.io/hostname": f"node-{i:05d}", "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64", "type": "kwok"},
                     "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }, Node)


def _fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {f"f:{k}": {} for k in obj}


def bound_pod(i: int, nodes: int) -> dict[str, Any]:
    """Pod i of a ReplicaSet, bound to a node and run by kwok, as a list returns it (~4.5 KB)."""
    rs, uid = "pause-7d4b9c8f6d", f"6f1c2a7e-3b9d-4c1e-9a55-{i:012d}"
    t = f"2026-12-01T10:{i // 3600 % 60:02d}:{i // 60 % 60:02d}Z"
    node_name = f"node-{i % nodes:05d}"
    ip = f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"
    conditions = [
        {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
        for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    status = {
        "phase": "Running", "conditions": conditions, "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}],
        "podIP": ip, "podIPs": [{"ip": ip}], "startTime": t, "qosClass": "Burstable",
        "containerStatuses": [{
            "name": "pause", "state": {"running": {"startedAt": t}}, "lastState": {}, "ready": True,
            "restartCount": 0, "image": "registry.k8s.io/pause:3.10",
            "imageID": "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a",
            "containerID": f"containerd://{i:064x}", "started": True}],
    }
    container = {
        "name": "pause", "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }
    spec = {
        "containers": [container], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": SCHEDULER,
        "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
        "nodeName": node_name,
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}],
    }
    labels = {"app": "pause", "pod-template-hash": "7d4b9c8f6d", "tier": "bench"}
    return {
        "metadata": {
            "name": f"{rs}-{i:05d}", "generateName": f"{rs}-", "namespace": "bench", "uid": uid,
            "resourceVersion": str(100000 + i), "creationTimestamp": t, "labels": labels,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": "0b7e3a1d-6c2f-4d8e-b1a9-5f3c7e9d2a10", "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": t,
                 "fieldsType": "FieldsV1", "fieldsV1": {
                     "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, **_fields(labels)},
                                    "f:ownerReferences": {".": {}, "k:{\"uid\":\"0b7e3a1d\"}": {}}},
                     "f:spec": {"f:containers": {"k:{\"name\":\"pause\"}": {".": {}, **_fields(container)}},
                                **_fields(spec)}}},
                {"manager": "kwok", "operation": "Update", "apiVersion": "v1", "time": t,
                 "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {
                     "f:conditions": {f"k:{{\"type\":\"{c['type']}\"}}": {".": {}, **_fields(c)}
                                      for c in conditions},
                     **_fields(status)}}}],
        },
        "spec": spec,
        "status": status,
    }


def pending_pod(i: int) -> dict[str, Any]:
    """The same pod before it is bound: no node, no kwok status (a batch bench's pods at start)."""
    pod = bound_pod(i, 1)
    del pod["spec"]["nodeName"]
    pod["metadata"]["managedFields"] = pod["metadata"]["managedFields"][:1]
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    return pod


def pages(pods: int, nodes: int, page: int = PAGE, pending: bool = False) -> list[bytes]:
    """The list's pages, as the apiserver sends them: metadata with resourceVersion and continue."""
    out = []
    for start in range(0, pods, page):
        end = min(start + page, pods)
        meta = {"resourceVersion": "200000", **({"continue": f"c{end}"} if end < pods else {})}
        out.append(orjson.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta,
                                 "items": [pending_pod(i) if pending else bound_pod(i, nodes)
                                           for i in range(start, end)]}))
    return out


class PagedClient:
    """The one call an informer's list makes, answered from pages (each returned once, then dropped,
    as a response body is)."""

    def __init__(self, bodies: list[bytes]) -> None:
        self._bodies = bodies
        self._next = 0

    async def get(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        body, self._bodies[self._next] = self._bodies[self._next], b""
        self._next += 1
        return body


def scheduler_side(nodes: int) -> tuple[Cache, Informer[Pod]]:
    """A cache with the nodes in it and a pod informer wired as Scheduler wires it."""
    cache = Cache()
    for i in range(nodes):
        cache.add_node(node(i))
    # No snapshot yet: the scheduler takes its first once the caches synced.
    queue = SchedulingQueue()
    handlers = ClusterEventHandlers(cache, queue, frozenset({SCHEDULER}))
    informer = pod_informer(PagedClient([]), Handlers(), POD_FIELD_SELECTOR)  # type: ignore[arg-type]
    informer.handler = Handlers(handlers.pod_added, handlers.pod_updated, handlers.pod_deleted)
    return cache, informer


def queue_of(informer: Informer[Pod]) -> SchedulingQueue:
    handlers: Any = informer.handler
    queue: SchedulingQueue = handlers.add.__self__.queue
    return queue


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def list_and_sync(informer: Informer[Pod], bodies: list[bytes]) -> None:
    """As Scheduler.run lists: with the cyclic collector paused."""
    informer.client = PagedClient(bodies)  # type: ignore[assignment]
    with collector_paused():
        asyncio.run(informer._list_and_sync())


def walk(obj: object, seen: set[int], by_type: Counter[str]) -> None:
    """sys.getsizeof over an object tree, each object once; interned and shared objects (already
    seen through another pod, or immortal) are the caller's to exclude via `seen`."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    by_type[type(obj).__name__] += sys.getsizeof(obj)
    if isinstance(obj, dict):
        for k, v in obj.items():
            walk(k, seen, by_type)
            walk(v, seen, by_type)
    elif isinstance(obj, list | tuple | set | frozenset):
        for v in obj:
            walk(v, seen, by_type)
    elif isinstance(obj, msgspec.Struct):
        for f in obj.__struct_fields__:
            walk(getattr(obj, f), seen, by_type)
    elif hasattr(obj, "__slots__"):
        for cls in type(obj).__mro__:
            for f in getattr(cls, "__slots__", ()):
                if hasattr(obj, f):
                    walk(getattr(obj, f), seen, by_type)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        walk(obj.__dict__, seen, by_type)


def one_pod_breakdown(cache: Cache, informer: Informer[Pod]) -> Counter[str]:
    """Bytes that one pod holds alone (its store entry, its cache state), by type: what a second
    pod shares with the first (interned strings, shared defaults) is left out."""
    states: Any = cache._pods
    first, second = list(states.values())[:2]
    store = informer.store
    seen: set[int] = set()
    junk: Counter[str] = Counter()
    walk(second, seen, junk)
    walk(store[second.info.key], seen, junk)
    by_type: Counter[str] = Counter()
    walk(first, seen, by_type)
    walk(store[first.info.key], seen, by_type)
    by_type["(store and cache dict slots)"] = 2 * 3 * 8 * 3 // 2  # key, hash, value, at 2/3 load
    return by_type


def iter_top(snapshot: tracemalloc.Snapshot, top: int) -> Iterator[str]:
    stats = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)]).statistics("lineno")
    for s in stats[:top]:
        frame = s.traceback[0]
        yield f"  {s.size / 2**20:8.1f} MB {s.count:>9} blocks  {frame.filename.split('/src/')[-1]}:{frame.lineno}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pending", action="store_true",
                    help="pending pods instead (listed into the scheduling queue: a batch bench's start)")
    ap.add_argument("--top", type=int, default=0, help="also print the top allocation sites (tracemalloc)")
    args = ap.parse_args()

    bodies = pages(args.pods, args.nodes, pending=args.pending)
    size = sum(map(len, bodies))
    what = "pending" if args.pending else "bound"
    print(f"{args.pods} {what} pods on {args.nodes} nodes: {len(bodies)} pages, {size / 2**20:.0f} MB of JSON, "
          f"{size / args.pods:.0f} B a pod")

    # 1. Time, and RSS, without tracemalloc (it slows allocation several times).
    cache, informer = scheduler_side(args.nodes)
    gc.collect()
    rss0 = rss_bytes()  # `bodies` keeps every page alive through both readings
    wall, cpu = time.perf_counter(), time.process_time()
    list_and_sync(informer, list(bodies))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    held = len(queue_of(informer)) if args.pending else cache.pod_count
    assert held == args.pods == len(informer.store), (held, len(informer.store))
    gc.collect()
    rss1 = rss_bytes()
    print(f"list + sync: {wall:.2f} s wall, {cpu:.2f} s CPU, {cpu / args.pods * 1e6:.1f} µs CPU a pod")
    print(f"RSS: {rss0 / 2**20:.0f} MB before (nodes in the cache), {rss1 / 2**20:.0f} MB after; "
          f"{(rss1 - rss0) / args.pods:.0f} B a pod; peak (ru_maxrss, pages included) "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if not args.pending:
        breakdown = one_pod_breakdown(cache, informer)
        print(f"one pod's own objects: {sum(breakdown.values())} B; by type: "
              + ", ".join(f"{k} {v}" for k, v in breakdown.most_common()))
    del cache, informer
    gc.collect()

    # 2. Retained and peak bytes, traced.
    _cache, informer = scheduler_side(args.nodes)
    gc.collect()
    tracemalloc.start()
    list_and_sync(informer, list(bodies))
    del bodies
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    print(f"traced: {current / 2**20:.1f} MB retained ({current / args.pods:.0f} B a pod), "
          f"{peak / 2**20:.1f} MB peak while listing (pages not counted: made before tracing)")
    if args.top:
        print("top allocation sites of what is retained:")
        for line in iter_top(tracemalloc.take_snapshot(), args.top):
            print(line)
    tracemalloc.stop()


if __name__ == "__main__":
    main()
