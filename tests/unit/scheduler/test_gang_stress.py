"""Gangs competing for too little room, driven without I/O: 50 gangs of 8 arrive together on 100
nodes with room for 20 pods. After every round of cycles no gang may be partly placed; the gangs
placed then finish (their pods bound, then gone), and the others must all complete in the end,
with no deadlock."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec

from kubesched.api import protobuf
from kubesched.model.objects import Pod
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod, make_pod_group
from tests.unit.scheduler.test_schedule_one_podgroup import add_group, add_pod, gated_scheduler
from tests.unit.scheduler.test_scheduler_binding import ScriptedClient

GANGS, SIZE, NODES, ROOM = 50, 8, 100, 20


def _bound_nodes(client: ScriptedClient, start: int) -> dict[str, str]:
    """pod name -> node for the bindings posted since call `start`."""
    out: dict[str, str] = {}
    for (method, path), body in list(zip(client.calls, client.bodies, strict=True))[start:]:
        if method == "POST" and path.endswith("/binding"):
            out[path.split("/")[-2]] = _target(body)
    return out


def _target(body: Any) -> str:
    """The node of a binding's body: protobuf (the default content type), JSON or a dict."""
    if isinstance(body, bytes) and body.startswith(protobuf.MAGIC):
        _, _, raw = protobuf.unwrap(body)
        target = dict(protobuf.fields(raw))[2]
        assert isinstance(target, bytes)
        name = dict(protobuf.fields(target))[3]
        assert isinstance(name, bytes)
        return name.decode()
    doc: Any = json.loads(body) if isinstance(body, bytes | str) else body
    return str(doc["target"]["name"])


async def _cycles(sched: Scheduler) -> None:
    while (info := sched.queue.pop_nowait()) is not None:
        assert sched.group_cycles is not None
        sched.group_cycles.schedule_group(info)
        await asyncio.sleep(0)
    await sched.binds.wait()


async def test_fifty_gangs_of_eight_complete_whole_with_room_for_twenty() -> None:
    sched, client = gated_scheduler()
    # Room for ROOM one-CPU pods in all: ROOM nodes of one CPU, the others too small for any.
    for i in range(NODES):
        sched.cache.add_node(make_node(f"node-{i:03}").capacity(cpu="1" if i < ROOM else "500m").obj())
    pods: dict[str, Pod] = {}
    for g in range(GANGS):
        add_group(sched, make_pod_group(f"gang-{g:02}", min_count=SIZE))
    for g in range(GANGS):
        for i in range(SIZE):
            pod = make_pod(f"gang-{g:02}-{i}").uid(f"gang-{g:02}-{i}").scheduler("kubesched") \
                .pod_group(f"gang-{g:02}").req(cpu="1").obj()
            pods[pod.metadata.name] = pod
            add_pod(sched, pod)
    done: set[str] = set()
    rounds = 0
    while len(done) < GANGS:
        rounds += 1
        assert rounds <= GANGS, f"no progress: {len(done)} of {GANGS} gangs done after {rounds - 1} rounds"
        start = len(client.calls)
        await _cycles(sched)
        bound = _bound_nodes(client, start)
        per_gang: dict[str, int] = {}
        for name in bound:
            per_gang[name.rsplit("-", 1)[0]] = per_gang.get(name.rsplit("-", 1)[0], 0) + 1
        assert all(n == SIZE for n in per_gang.values()), per_gang  # never a partial gang
        assert not sched.cache.assumed_pods() or {p.pod.metadata.name for p in sched.cache.assumed_pods()} <= set(bound)
        assert per_gang, "a round placed no gang"
        # The informer sees them bound, then they finish and free their room.
        for name, node in bound.items():
            old = pods[name]
            new = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, node_name=node))
            sched.pods.store[new.key] = new
            sched.handlers.pod_updated(old, new)
        for name in bound:
            finished = sched.pods.store.pop(f"default/{name}")
            sched.handlers.pod_deleted(finished)
        done |= set(per_gang)
    assert rounds >= GANGS * SIZE // ROOM
