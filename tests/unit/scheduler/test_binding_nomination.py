"""NominatedNodeNameForExpectation (on in kube-scheduler v1.37) in the binding cycle, on fake ports:
after the PreBind plugins' pre-flights, status.nominatedNodeName is set to the chosen node when
PreBind has work or Permit made the pod wait, before either runs; otherwise nothing is written
(the apiserver clears the field when it binds the pod). A failed binding cycle clears it with its
condition, as every failure after the node was chosen does (clearNominatedNode)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec
import pytest

from kubesched.backend.cache import Cache
from kubesched.backend.queue import QueuedPodInfo, SchedulingQueue
from kubesched.backend.queue.clock import FakeClock
from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework import CycleState, PodInfo, PreBindPreFlightResult
from kubesched.framework.handle import Handle
from kubesched.framework.runtime.profile import build_profile
from kubesched.framework.status import Code, Status
from kubesched.metrics import Metrics
from kubesched.model.objects import Pod
from kubesched.scheduler.eventhandlers import ClusterEventHandlers
from kubesched.scheduler.schedule_one import Cycles
from tests.builders import make_node, make_pod
from tests.unit.scheduler.test_scheduler_binding import FakeEvents

PROFILE = "kubesched"
BOOM = Status(Code.ERROR, "boom")


class Conditions:
    """The condition port: what was submitted (name, message, reason, nomination), and discards."""

    def __init__(self) -> None:
        self.submitted: list[tuple[str, str, str, str | None]] = []
        self.discarded: list[tuple[str, bool]] = []

    def submit(self, pod: Pod, message: str, reason: str = "Unschedulable", nominated_node: str | None = "") -> None:
        self.submitted.append((pod.metadata.name, message, reason, nominated_node))

    def discard(self, uid: str, *, with_nomination: bool = False) -> None:
        self.discarded.append((uid, with_nomination))

    async def settled(self, uid: str) -> None:
        return None


class Work:
    """A PreBind plugin whose pre-flight answers `flight`, and whose PreBind answers `pre_bind`."""

    name = "Work"

    def __init__(self, seen: list[str], flight: Status | None, pre_bind: Status | None) -> None:
        self.seen, self.flight, self.answer = seen, flight, pre_bind

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo,
                            node_name: str) -> tuple[PreBindPreFlightResult | None, Status | None]:
        return None, self.flight

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.seen.append(f"PreBind {node_name}")
        return self.answer


class Binder:
    name = "Binder"

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.seen.append(f"Bind {node_name}")
        return None


class Waiter:
    """A Permit plugin that makes every pod wait (it is allowed by hand)."""

    name = "Waiter"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.WAIT), 60.0


class Setup:
    def __init__(self, flight: Status | None = None, pre_bind: Status | None = None, *, wait: bool = False,
                 nominate_answer: Status | None = None) -> None:
        self.seen: list[str] = []
        self.nominate_answer = nominate_answer
        self.handle = Handle(nominate_pod=self.nominate)
        plugins: dict[str, tuple[PluginRef, ...]] = {"preBind": (PluginRef("Work"),), "bind": (PluginRef("Binder"),)}
        if wait:
            plugins["permit"] = (PluginRef("Waiter"),)
        registry: dict[str, Any] = {"Work": lambda args: Work(self.seen, flight, pre_bind),
                                    "Binder": lambda args: Binder(self.seen), "Waiter": lambda args: Waiter()}
        profile = build_profile(ProfileConfig(PROFILE, plugins), registry, self.handle)
        self.queue = SchedulingQueue(FakeClock())
        self.cache = Cache()
        self.cache.add_node(make_node("n1").capacity(cpu="1").obj())
        self.store: dict[str, Pod] = {}
        self.conditions = Conditions()
        self.cycles = Cycles({PROFILE: profile}, self.cache, self.queue, self.conditions, FakeEvents(), self.store,
                             Metrics([PROFILE], self.queue.pending_counts, process=False))
        self.handlers = ClusterEventHandlers(self.cache, self.queue, [PROFILE])

    async def nominate(self, pod: Pod, node: str) -> Status | None:
        self.seen.append(f"nominate {pod.metadata.name} {node}")
        return self.nominate_answer

    def schedule(self, pod: Pod) -> None:
        self.store[pod.key] = pod
        self.queue.add(pod)
        info = self.queue.pop_nowait()
        assert isinstance(info, QueuedPodInfo)
        self.cycles.schedule_one(info)


def pod(nominated: str = "") -> Pod:
    b = make_pod("p").scheduler(PROFILE).req(cpu="1")
    return (b.nominated(nominated) if nominated else b).obj()


@pytest.mark.parametrize(("flight", "nominated", "seen"), [
    pytest.param(None, "", ["nominate p n1", "PreBind n1", "Bind n1"], id="pre-bind-has-work"),
    pytest.param(Status(Code.SKIP), "", ["Bind n1"], id="nothing-to-do-before-bind"),
    pytest.param(None, "n1", ["PreBind n1", "Bind n1"], id="nominated-there-already"),
    pytest.param(None, "n2", ["nominate p n1", "PreBind n1", "Bind n1"], id="nominated-elsewhere"),
])
async def test_the_node_is_nominated_before_pre_bind_when_pre_bind_has_work(
        flight: Status | None, nominated: str, seen: list[str]) -> None:
    s = Setup(flight)
    s.schedule(pod(nominated))
    await s.cycles.binds.wait()
    assert s.seen == seen
    assert s.cycles.stats.scheduled == 1
    # Nothing the nominator holds: kube-scheduler's assume took the pod out of it.
    assert s.queue.nominator.node_of(pod().metadata.uid) is None


async def test_a_pod_waiting_at_permit_is_nominated_before_it_is_allowed() -> None:
    s = Setup(Status(Code.SKIP), wait=True)
    s.schedule(pod())
    for _ in range(5):
        await asyncio.sleep(0)
    assert s.seen == ["nominate p n1"]  # waiting still
    waiting = s.handle.waiting_pods.get(pod().metadata.uid)
    assert waiting is not None
    waiting.allow("Waiter")
    await s.cycles.binds.wait()
    assert s.seen == ["nominate p n1", "Bind n1"]


async def test_the_nomination_supersedes_one_left_unsent_by_an_earlier_cycle() -> None:
    s = Setup()
    s.schedule(pod())
    await s.cycles.binds.wait()
    uid = pod().metadata.uid
    # Dropped before the binding cycle (its nomination kept), then, nominating, with it.
    assert s.conditions.discarded == [(uid, False), (uid, True)]


async def test_a_failed_pre_flight_fails_the_binding_cycle_before_anything_is_written() -> None:
    s = Setup(BOOM, wait=True)
    s.schedule(pod())
    await s.cycles.binds.wait()
    assert s.seen == []
    assert s.conditions.submitted == [("p", 'running PreBindPreFlight "Work": boom', "SchedulerError", "")]
    assert not s.cache.is_assumed(pod())
    assert s.queue.where(pod().metadata.uid) == "backoff"
    assert len(s.handle.waiting_pods) == 0


async def test_a_failed_pre_bind_clears_the_nomination_with_its_condition() -> None:
    s = Setup(None, BOOM)
    s.schedule(pod())
    await s.cycles.binds.wait()
    assert s.seen == ["nominate p n1", "PreBind n1"]
    assert s.conditions.submitted == [("p", 'running PreBind plugin "Work": boom', "SchedulerError", "")]
    assert s.queue.nominator.node_of(pod().metadata.uid) is None


async def test_a_failed_nomination_is_logged_and_the_pod_still_bound(caplog: pytest.LogCaptureFixture) -> None:
    s = Setup(nominate_answer=Status(Code.ERROR, "etcdserver: leader changed"))
    with caplog.at_level(logging.ERROR, logger="kubesched"):
        s.schedule(pod())
        await s.cycles.binds.wait()
    assert s.seen == ["nominate p n1", "PreBind n1", "Bind n1"]
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to update the nominated node name in the binding cycle"]


async def test_the_nomination_coming_back_does_not_nominate_the_assumed_pod() -> None:
    """kube-scheduler's event handler leaves an assumed pod's updates alone: the nomination its binding
    cycle wrote must not count the pod on the node a second time, next to its assumed room."""
    s = Setup(None, wait=True)
    s.schedule(pod())
    for _ in range(5):
        await asyncio.sleep(0)
    old = pod()
    new = msgspec.structs.replace(old, status=msgspec.structs.replace(old.status, nominated_node_name="n1"))
    s.store[new.key] = new
    s.handlers.pod_updated(old, new)
    assert s.queue.nominator.node_of(old.metadata.uid) is None
    assert s.queue.nominator.nominated_pods_for_node("n1") == []
    waiting = s.handle.waiting_pods.get(old.metadata.uid)
    assert waiting is not None
    waiting.allow("Waiter")
    await s.cycles.binds.wait()
