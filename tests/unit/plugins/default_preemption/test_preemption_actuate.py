"""DefaultPreemption's writes (kube-scheduler's prepareCandidateAsync): the victims but the last are
preempted at once, at most PARALLELISM at a time, then the last; the preemptor is held at
PreEnqueue from the PostFilter on until the informer has that last one terminating or gone; a
failed write starts no other victim, leaves the last one alone, and activates the preemptor."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubesched.backend.queue import FakeClock, SchedulingQueue
from kubesched.framework.events import ASSIGNED_POD_DELETE
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.default_preemption.executor import PARALLELISM, Candidate
from kubesched.plugins.default_preemption.plugin import WAITING, DefaultPreemption
from tests.builders import make_pod
from tests.unit.scheduling_helpers import pod_of

MESSAGE = "Preempted by pod uid-p on node n1"


@dataclass
class Pods:
    """The handle's pod lister: what the informer holds."""

    by_key: dict[str, Pod] = field(default_factory=dict)

    def get(self, key: str) -> Pod | None:
        return self.by_key.get(key)

    def list(self) -> list[Pod]:
        return list(self.by_key.values())


@dataclass
class Api:
    """Fake writes that take `delay` seconds each and record how many were in flight at once."""

    delay: float = 0.01
    fail: set[str] = field(default_factory=set)
    in_flight: int = 0
    most: int = 0
    started: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    disrupted: list[str] = field(default_factory=list)
    # Set when the write of the pod of this name starts.
    watch: tuple[str, asyncio.Event] | None = None

    async def disrupt(self, pod: Pod, message: str) -> Status | None:
        self.started.append(pod.metadata.name)
        if self.watch is not None and self.watch[0] == pod.metadata.name:
            self.watch[1].set()
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        self.disrupted.append(pod.metadata.name)
        return None

    async def delete(self, pod: Pod, message: str, preemptor: Pod | None) -> Status | None:
        await asyncio.sleep(0)
        if pod.metadata.name in self.fail:
            return Status(Code.ERROR, f"pods {pod.metadata.name!r}: boom")
        self.deleted.append(pod.metadata.name)
        return None


def victims(n: int) -> list[PodInfo]:
    return [PodInfo(pod_of(make_pod(f"v{i}").node("n1").priority(1).req(cpu="1"))) for i in range(n)]


def plugin_with(api: Api, pods: Pods) -> DefaultPreemption:
    return DefaultPreemption(handle=Handle(pods=pods, delete_victim=api.delete, disrupt_victim=api.disrupt))


def preemptor() -> Pod:
    return pod_of(make_pod("p").uid("uid-p").priority(10).req(cpu="3"))


@pytest.mark.parametrize(("count", "most"), [
    (1, 1),
    (2, 1),
    (3, 2),
    (4, 3),
    (PARALLELISM + 5, PARALLELISM),
], ids=["one", "two", "three", "four", "more-than-parallelism"])
def test_all_but_the_last_at_once_then_the_last(count: int, most: int) -> None:
    api = Api()
    vs = victims(count)
    pl = plugin_with(api, Pods())
    asyncio.run(pl.executor.write(preemptor(), Candidate("n1", vs)))
    names = [v.pod.metadata.name for v in vs]
    assert sorted(api.deleted) == sorted(names)
    assert api.deleted[-1] == names[-1]
    assert api.started[-1] == names[-1]
    assert api.most == most
    # Every victim gone from the (empty) informer: the preemptor goes, and is forgotten.
    assert pl.pre_enqueue(preemptor()) is None
    assert pl.running == {}


def test_the_preemptor_waits_until_the_last_victim_is_terminating() -> None:
    api = Api(delay=0.05)
    vs = victims(3)
    pods = Pods({v.key: v.pod for v in vs})
    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Coroutine[Any, Any, Any], name: str) -> object:
        tasks.append(asyncio.get_running_loop().create_task(coro, name=name))
        return tasks[-1]

    pl = DefaultPreemption(handle=Handle(pods=pods, delete_victim=api.delete, disrupt_victim=api.disrupt,
                                         spawn=spawn))
    p = preemptor()
    seen: list[Status | None] = []

    async def scenario() -> None:
        last_started = asyncio.Event()
        api.watch = (vs[-1].pod.metadata.name, last_started)
        pl.executor.actuate(p, Candidate("n1", vs))
        (task,) = tasks
        await asyncio.sleep(0.01)  # the first two in flight
        assert api.in_flight == 2
        seen.append(pl.pre_enqueue(p))
        await last_started.wait()
        seen.append(pl.pre_enqueue(p))  # the last one's turn, not terminating yet
        last = pods.by_key[vs[-1].key]
        last.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
        seen.append(pl.pre_enqueue(p))
        await task

    asyncio.run(scenario())
    assert [s.message() if s else None for s in seen] == [WAITING, WAITING, None]
    assert seen[0] is not None
    assert seen[0].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pl.pre_enqueue(p) is None


@dataclass
class Activated:
    pods: list[str] = field(default_factory=list)

    def __call__(self, pods: Iterable[Pod]) -> None:
        self.pods.extend(p.metadata.name for p in pods)


async def _refuse_nomination(pod: Pod, node: str) -> Status | None:
    return Status(Code.ERROR, "boom")


async def _clear_nomination(pod: Pod, node: str) -> Status | None:
    return None


# (victims whose deletion fails, a lower-priority nomination whose clearing fails, deleted, activated?)
_FAILURES = [
    pytest.param(set(), False, ["v0", "v1", "v2", "v3"], False, id="all-went"),
    pytest.param({"v1"}, False, ["v0", "v2"], True, id="a-victim-failed-the-last-is-left"),
    pytest.param({"v3"}, False, ["v0", "v1", "v2"], True, id="the-last-victim-failed"),
    pytest.param(set(), True, ["v0", "v1", "v2", "v3"], True, id="clearing-a-nomination-failed"),
]


@pytest.mark.parametrize(("fail", "refuse", "deleted", "activated"), _FAILURES)
def test_a_failed_write_activates_the_preemptor(caplog: pytest.LogCaptureFixture, fail: set[str], refuse: bool,
                                                deleted: list[str], activated: bool) -> None:
    # kube-scheduler's prepareCandidateAsync: an error cancels the victims not started yet and the
    # last one, and the preemptor is activated, so it does not wait for an event that never comes.
    api, act = Api(fail=fail), Activated()
    vs = victims(4)
    handle = Handle(pods=Pods(), delete_victim=api.delete, disrupt_victim=api.disrupt, activate=act,
                    nominate_pod=_refuse_nomination if refuse else _clear_nomination)
    pl = DefaultPreemption(handle=handle)
    demoted = [pod_of(make_pod("low").priority(1).nominated("n1"))]
    with caplog.at_level(logging.WARNING, logger="kubesched.plugins.default_preemption.executor"):
        asyncio.run(pl.executor.write(preemptor(), Candidate("n1", vs), demoted))
    assert sorted(api.deleted) == deleted
    assert act.pods == (["p"] if activated else [])
    assert pl.pre_enqueue(preemptor()) is None  # the (empty) informer has every victim gone
    assert pl.running == {}


def test_no_victim_left_to_delete_clears_no_nomination() -> None:
    cleared: list[str] = []

    async def nominate(pod: Pod, node: str) -> Status | None:
        cleared.append(pod.metadata.name)
        return None

    vs = victims(2)
    for v in vs:
        v.pod.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    pl = DefaultPreemption(handle=Handle(pods=Pods(), nominate_pod=nominate))
    demoted = [pod_of(make_pod("low").priority(1).nominated("n1"))]
    asyncio.run(pl.executor.write(preemptor(), Candidate("n1", vs), demoted))
    assert cleared == []


def test_victims_already_terminating_are_left_alone() -> None:
    api = Api()
    vs = victims(3)
    vs[0].pod.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    pl = plugin_with(api, Pods())
    asyncio.run(pl.executor.write(preemptor(), Candidate("n1", vs)))
    assert sorted(api.deleted) == ["v1", "v2"]
    assert api.most == 1


@dataclass
class Spawned:
    coros: list[Coroutine[Any, Any, Any]] = field(default_factory=list)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> object:
        self.coros.append(coro)
        return None

    def run(self) -> None:
        async def all_of() -> None:
            for c in self.coros:
                await c
        asyncio.run(all_of())


def preempting(n: int, actuate: bool = True) -> tuple[Api, Spawned, list[PodInfo], Pods, DefaultPreemption]:
    """A plugin over an informer holding `n` victims on n1; the preemptor's candidate actuated."""
    api, spawned = Api(), Spawned()
    vs = victims(n)
    pods = Pods({v.key: v.pod for v in vs})
    pl = DefaultPreemption(handle=Handle(pods=pods, delete_victim=api.delete, disrupt_victim=api.disrupt,
                                         spawn=spawned.spawn))
    if actuate:
        pl.executor.actuate(preemptor(), Candidate("n1", vs))
    return api, spawned, vs, pods, pl


def test_the_preemptor_is_held_from_the_post_filter_on_until_the_informer_has_the_last_victim_gone() -> None:
    # The failure handler requeues the preemptor right after the cycle, before the writes have
    # started; held only once they had, it went back to the queue and preempted the same victims again.
    api, spawned, vs, pods, pl = preempting(3)
    p = preemptor()
    held = pl.pre_enqueue(p)
    assert held is not None
    assert held.message() == WAITING
    spawned.run()
    assert sorted(api.deleted) == ["v0", "v1", "v2"]
    # The deletions are done, but the informer still has the last victim: a cycle now would find it.
    assert pl.pre_enqueue(p) is not None
    del pods.by_key[vs[0].key], pods.by_key[vs[1].key]
    assert pl.pre_enqueue(p) is not None
    del pods.by_key[vs[2].key]
    assert pl.pre_enqueue(p) is None
    assert pl.running == {}


def test_a_failed_last_victim_lets_the_preemptor_go_at_once() -> None:
    api = Api(fail={"v2"})
    vs = victims(3)
    pl = plugin_with(api, Pods({v.key: v.pod for v in vs}))
    asyncio.run(pl.executor.write(preemptor(), Candidate("n1", vs)))
    assert pl.running == {}
    assert pl.pre_enqueue(preemptor()) is None


def test_no_victim_to_delete_holds_nothing() -> None:
    api, spawned = Api(), Spawned()
    vs = victims(2)
    for v in vs:
        v.pod.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    pl = DefaultPreemption(handle=Handle(pods=Pods({v.key: v.pod for v in vs}), delete_victim=api.delete,
                                         disrupt_victim=api.disrupt, spawn=spawned.spawn))
    pl.executor.actuate(preemptor(), Candidate("n1", vs))
    assert pl.pre_enqueue(preemptor()) is None
    spawned.run()
    assert api.deleted == []


def test_a_deletion_moves_a_held_preemptor_only_once_its_gate_would_open() -> None:
    # Each deletion used to take every held preemptor out of unschedulablePods and PreEnqueue put
    # it back: the hint asks the gate first, and a pod still held stays where it is.
    _, spawned, vs, pods, pl = preempting(2, actuate=False)
    queue = SchedulingQueue(FakeClock(1000.0), plugin_events={"default-scheduler": {pl.name: pl.events_to_register()}},
                            pre_enqueue={"default-scheduler": [pl]})
    moves: list[tuple[str, str]] = []
    queue.on_incoming = lambda where, event: moves.append((where, event))
    p = preemptor()
    queue.add(p)
    info = queue.pop_nowait()
    assert info is not None
    pl.executor.actuate(p, Candidate("n1", vs))
    spawned.run()
    info.unschedulable_plugins = {"NodeResourcesFit"}
    queue.add_unschedulable_if_not_present(info)
    queue.activate([p])  # into activeQ it would go; PreEnqueue holds it
    assert queue.where(info.uid) == "unschedulable"
    assert info.unschedulable_plugins == {pl.name}
    moves.clear()
    other = make_pod("other").uid("uid-other").node("n2").obj()
    for gone in (other, vs[0].pod):
        pods.by_key.pop(f"default/{gone.metadata.name}", None)
        assert queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, objects=(gone, None)) == 0
    assert moves == []  # never taken out and put back
    del pods.by_key[vs[1].key]
    assert queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, objects=(vs[1].pod, None)) == 1
    assert queue.where(info.uid) in ("active", "backoff")
