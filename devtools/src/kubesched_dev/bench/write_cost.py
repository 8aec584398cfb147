"""What one pod's two writes (the binding and the Scheduled event) cost the apiserver, JSON against
protobuf, on one plane: blocks of pods bound by each encoding in turn, with idle blocks of the
same length between them for the background (node leases, kwok), the apiserver's and etcd's CPU
read around each block.

    python -m kubesched_dev.bench.write_cost --pods 600 --rounds 2

Unlike a scheduler run, nothing else differs between the encodings: the same client, the same
concurrency, the same pods, the same plane at the same moment.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid
from dataclasses import dataclass

import click
import orjson

from kubesched.api import ApiClient, load_config, protobuf
from kubesched.api.binder import binding_body
from kubesched.api.client import JSON
from kubesched_dev.bench import workload
from kubesched_dev.bench.procstat import Window
from kubesched_dev.localcluster import plane
from kubesched_dev.localcluster.topology import uniform

NOBODY = "kubesched-write-cost"  # no scheduler serves it: the pods wait for these writes
IN_FLIGHT = 32
# The pods are bound to a node kwok does not manage (no kwok annotation): no kwok status updates
# follow the bindings into the idle blocks, and the pods stay (the node exists for the pod GC).
TARGET = "write-cost-target"


@dataclass
class Block:
    kind: str  # "json", "protobuf" or "idle"
    pods: int
    seconds: float
    apiserver_s: float
    etcd_s: float


def _event(ns: str, name: str, uid: str, node: str, now: float) -> dict[str, object]:
    return {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": f"{name}.{int(now * 1e9):x}", "namespace": ns},
        "eventTime": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z",
        "reportingController": NOBODY, "reportingInstance": f"{NOBODY}-host", "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": ns, "name": name, "uid": uid, "apiVersion": "v1"},
        "note": f"Successfully assigned {ns}/{name} to {node}", "type": "Normal",
    }


async def _write_both(client: ApiClient, use_protobuf: bool, name: str, uid: str, node: str) -> None:
    ns = workload.NAMESPACE
    content_type, accept = (protobuf.PROTOBUF, protobuf.ACCEPT) if use_protobuf else (JSON, None)
    body = protobuf.binding(ns, name, uid, node) if use_protobuf else binding_body(ns, name, uid, node)
    resp = await client.request("POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding", body=body,
                                content_type=content_type, accept=accept)
    if not resp.ok:
        raise RuntimeError(f"binding {name}: {resp.status} {resp.body[:200]!r}")
    ev = _event(ns, name, uid, node, time.time())
    body = protobuf.event(ev) if use_protobuf else orjson.dumps(ev)
    resp = await client.request("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", body=body,
                                content_type=content_type, accept=accept)
    if not resp.ok:
        raise RuntimeError(f"event {name}: {resp.status} {resp.body[:200]!r}")


async def _block(client: ApiClient, window: Window, kind: str, pods: list[tuple[str, str]], nodes: list[str],
                 idle_s: float) -> Block:
    window.start()
    if kind == "idle":
        await asyncio.sleep(idle_s)
    else:
        slots = asyncio.Semaphore(IN_FLIGHT)

        async def one(i: int, name: str, uid: str) -> None:
            async with slots:
                await _write_both(client, kind == "protobuf", name, uid, nodes[i % len(nodes)])

        async with asyncio.TaskGroup() as tg:
            for i, (name, uid) in enumerate(pods):
                tg.create_task(one(i, name, uid))
    window.stop()
    return Block(kind, 0 if kind == "idle" else len(pods), window.elapsed, window.seconds("kube-apiserver"),
                 window.seconds("etcd"))


async def _measure(kubeconfig: str, pids: dict[str, int], pods: int, rounds: int) -> list[Block]:
    nodes = [TARGET]
    async with ApiClient(load_config(kubeconfig), qps=-1, burst=0, max_connections=IN_FLIGHT,
                         user_agent="kubesched-write-cost") as client:
        await client.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": TARGET}})
        await workload.create_namespace(client)
        names = [f"w-{uuid.uuid4().hex[:10]}" for _ in range(2 * pods * rounds)]
        await workload.create_all(client, names, NOBODY, lambda name, sent: None)
        listed = orjson.loads(await client.get(f"/api/v1/namespaces/{workload.NAMESPACE}/pods"))
        uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in listed["items"]}
        window = Window(pids)
        blocks: list[Block] = []
        await asyncio.sleep(5)  # let the creations' aftermath settle
        for r in range(rounds):
            for j, kind in enumerate(("json", "protobuf") if r % 2 == 0 else ("protobuf", "json")):
                start = (2 * r + j) * pods
                chunk = [(n, uids[n]) for n in names[start:start + pods]]
                blocks.append(await _block(client, window, kind, chunk, nodes, 0))
                idle_s = blocks[-1].seconds
                blocks.append(await _block(client, window, "idle", [], nodes, idle_s))
        return blocks


def report(blocks: list[Block]) -> list[str]:
    idle_rate = statistics.fmean([b.apiserver_s / b.seconds for b in blocks if b.kind == "idle" and b.seconds]
                                 or [0.0])
    etcd_idle = statistics.fmean([b.etcd_s / b.seconds for b in blocks if b.kind == "idle" and b.seconds] or [0.0])
    lines = [f"{'block':<10}{'pods':>6}{'s':>8}{'apiserver s':>13}{'etcd s':>8}{'api ms/pod':>12}{'etcd ms/pod':>12}"]
    per: dict[str, list[float]] = {"json": [], "protobuf": []}
    for b in blocks:
        api = etcd = ""
        if b.pods:
            net = (b.apiserver_s - idle_rate * b.seconds) * 1000 / b.pods
            per[b.kind].append(net)
            api = f"{net:.2f}"
            etcd = f"{(b.etcd_s - etcd_idle * b.seconds) * 1000 / b.pods:.2f}"
        lines.append(f"{b.kind:<10}{b.pods:>6}{b.seconds:>8.1f}{b.apiserver_s:>13.2f}{b.etcd_s:>8.2f}"
                     f"{api:>12}{etcd:>12}")
    lines.append(f"idle: apiserver {idle_rate * 1000:.0f} ms/s, etcd {etcd_idle * 1000:.0f} ms/s "
                 "(taken off each block)")
    for kind, values in per.items():
        if values:
            lines.append(f"{kind}: binding + event {statistics.fmean(values):.2f} ms of apiserver CPU a pod "
                         f"({', '.join(f'{v:.2f}' for v in values)})")
    if per["json"] and per["protobuf"]:
        lines.append(f"protobuf/json: {statistics.fmean(per['protobuf']) / statistics.fmean(per['json']):.2f}x")
    lines.append(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return lines


@click.command()
@click.option("--pods", type=click.IntRange(1), default=400, show_default=True, help="Pods a block.")
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True,
              help="Rounds of a JSON and a protobuf block (their order alternating), each followed by an idle one.")
@click.option("--nodes", type=click.IntRange(1), default=10, show_default=True,
              help="kwok nodes of the plane (background only: the pods are bound to a node of their own).")
def main(pods: int, rounds: int, nodes: int) -> None:
    topology = uniform(nodes)
    name = f"kubesched-write-cost-{os.getpid()}"
    cluster = plane.up(name, topology, default_scheduler=False, progress=lambda m: None)
    try:
        pids = {c: cluster.pids[c] for c in ("kube-apiserver", "etcd")}
        blocks = asyncio.run(_measure(cluster.kubeconfig, pids, pods, rounds))
    finally:
        plane.down(name, lambda m: None)
    click.echo("\n".join(report(blocks)))


if __name__ == "__main__":
    main()
