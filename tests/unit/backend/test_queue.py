"""The scheduling queue under a fake clock."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from kubesched.backend.queue import FakeClock, QueuedPodInfo, SchedulingQueue, eligible
from kubesched.framework import events
from kubesched.framework.interface import QueuedEntity
from kubesched.framework.status import Code, Status
from kubesched.model.objects import (
    Container,
    ObjectMeta,
    Pod,
    PodSpec,
    PodStatus,
    ResourceRequirements,
    SchedulingGate,
)
from kubesched.plugins import inter_pod_affinity
from tests import builders


def make_pod(name: str, priority: int = 0, **spec: object) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}", resource_version="1"),
        spec=PodSpec(priority=priority, scheduler_name="kubesched", **spec),  # type: ignore[arg-type]
    )


def new_queue(clock: FakeClock, **kw: float) -> SchedulingQueue:
    return SchedulingQueue(clock, **kw)  # type: ignore[arg-type]


def pop_all(q: SchedulingQueue) -> list[str]:
    names = []
    while (info := q.pop_nowait()) is not None:
        names.append(info.pod.metadata.name)
    return names


def reject(q: SchedulingQueue, info: QueuedPodInfo, plugin: str = "NodeResourcesFit") -> None:
    info.unschedulable_plugins = {plugin}
    assert q.add_unschedulable_if_not_present(info)


def fail_with_error(q: SchedulingQueue, info: QueuedPodInfo) -> None:
    info.unschedulable_plugins = set()
    assert q.add_unschedulable_if_not_present(info)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


def test_active_orders_by_priority_then_age(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("low-old", 0))
    clock.step(1)
    q.add(make_pod("high", 100))
    clock.step(1)
    q.add(make_pod("low-new", 0))
    q.add(make_pod("mid", 10))
    assert pop_all(q) == ["high", "mid", "low-old", "low-new"]


def test_pop_counts_attempts_and_cycles(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    assert (info.attempts, info.scheduling_cycle, q.scheduling_cycle) == (1, 1, 1)
    assert info.initial_attempt_timestamp == 1000.0
    assert q.where(info.uid) == "in-flight"
    q.done(info.uid)
    assert q.where(info.uid) is None


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        pytest.param(0, 0.0, id="no-attempts"),
        pytest.param(1, 1.0, id="first"),
        pytest.param(2, 2.0, id="second"),
        pytest.param(4, 8.0, id="fourth"),
        pytest.param(5, 10.0, id="capped"),
        pytest.param(100, 10.0, id="huge"),
    ],
)
def test_backoff_duration(clock: FakeClock, count: int, expected: float) -> None:
    assert new_queue(clock).backoff_duration(count) == expected


def test_rejected_pod_waits_for_event_in_unschedulable(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    assert q.where(info.uid) == "unschedulable"
    assert q.pop_nowait() is None
    clock.step(0.5)
    assert q.move_all_to_active_or_backoff(events.NODE_ADD) == 1
    # Still inside its 1 s backoff, so backoffQ; popping from backoffQ is allowed when activeQ is empty.
    assert q.where(info.uid) == "backoff"
    again = q.pop_nowait()
    assert again is info
    assert again.attempts == 2


def test_event_after_backoff_goes_straight_to_active(clock: FakeClock) -> None:
    q = new_queue(clock, pop_from_backoff=False)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    clock.step(3)
    q.move_all_to_active_or_backoff(events.ClusterEvent(events.EventResource.NODE,
                                                        events.ActionType.UPDATE_NODE_ALLOCATABLE))
    assert q.where(info.uid) == "active"


def test_backoff_doubles_and_flushes_in_order(clock: FakeClock) -> None:
    q = new_queue(clock, pop_from_backoff=False)
    q.add(make_pod("a"))
    for expected_backoff in (1, 2, 4, 8, 10, 10):
        info = q.pop_nowait()
        assert info is not None
        reject(q, info)
        q.move_all_to_active_or_backoff(events.NODE_ADD)
        assert q.where(info.uid) == "backoff"
        clock.step(expected_backoff - 0.01)
        q.flush_backoff_completed()
        assert q.where(info.uid) == "backoff", expected_backoff
        clock.step(1.0)  # past the end of the aligned 1 s window
        assert q.flush_backoff_completed() == 1
        assert q.where(info.uid) == "active"


def test_pop_from_backoff_when_active_empty(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    q.add(make_pod("b"))
    # A cluster event during a's cycle sends it to backoffQ, not unschedulable.
    q.move_all_to_active_or_backoff(events.NODE_ADD)
    reject(q, info)
    assert q.where(info.uid) == "backoff"
    assert pop_all(q) == ["b", "a"]


def test_error_backoff_is_not_popped_early(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    fail_with_error(q, info)
    assert (info.consecutive_errors_count, info.unschedulable_count) == (1, 0)
    assert q.where(info.uid) == "backoff"
    assert q.pop_nowait() is None
    clock.step(2.0)
    q.flush_backoff_completed()
    assert pop_all(q) == ["a"]


def test_event_during_cycle_sends_rejected_pod_to_backoff(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    q.add(make_pod("b"))
    a = q.pop_nowait()
    assert a is not None
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)
    reject(q, a)
    assert q.where(a.uid) == "backoff"
    b = q.pop_nowait()
    assert b is not None
    assert b.pod.metadata.name == "b"
    reject(q, b)  # no event since b was popped
    assert q.where(b.uid) == "unschedulable"


def test_pre_check_limits_the_move(clock: FakeClock) -> None:
    q = new_queue(clock)
    for name in ("a", "b"):
        q.add(make_pod(name))
        info = q.pop_nowait()
        assert info is not None
        reject(q, info)
    clock.step(20)
    moved = q.move_all_to_active_or_backoff(events.NODE_ADD, lambda p: p.metadata.name == "b")
    assert moved == 1
    assert q.where("uid-a") == "unschedulable"
    assert q.where("uid-b") == "active"


def test_unschedulable_leftover_flushed_after_five_minutes(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    clock.step(299)
    assert q.flush_unschedulable_leftover() == 0
    clock.step(2)
    assert q.flush_unschedulable_leftover() == 1
    assert q.where(info.uid) == "active"
    assert info.was_flushed_from_unschedulable


def test_delete_removes_from_every_queue(clock: FakeClock) -> None:
    q = new_queue(clock)
    pods = [make_pod(n) for n in ("back", "unsch", "fly", "act")]
    for p in pods[:3]:
        q.add(p)
    infos = {i.pod.metadata.name: i for i in (q.pop_nowait() for _ in range(3)) if i is not None}
    fail_with_error(q, infos["back"])
    reject(q, infos["unsch"])
    q.add(pods[3])
    assert [q.where(f"uid-{p.metadata.name}") for p in pods] == [
        "backoff", "unschedulable", "in-flight", "active"
    ]
    for p in pods:
        q.delete(p)
    assert len(q) == 0
    assert q.where("uid-fly") == "in-flight"
    infos["fly"].unschedulable_plugins = {"X"}
    assert not q.add_unschedulable_if_not_present(infos["fly"])
    assert q.where("uid-fly") is None


def test_update_in_active_keeps_position_and_refreshes_pod(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    clock.step(1)
    q.add(make_pod("b"))
    newer = msgspec.structs.replace(make_pod("a"), status=PodStatus(phase="Pending"))
    q.update(None, newer)
    first = q.pop_nowait()
    assert first is not None
    assert first.pod is newer


_FIT_EVENTS = {"kubesched": {"NodeResourcesFit": (
    events.ClusterEvent(events.EventResource.TARGET_POD, events.ActionType.UPDATE_POD_SCALE_DOWN),)}}


def test_update_of_unschedulable_pod_requeues_only_on_an_event_its_rejector_registered(clock: FakeClock) -> None:
    q = SchedulingQueue(clock, plugin_events=_FIT_EVENTS)
    old = make_pod("a", containers=[_container("2")])
    q.add(old)
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    status_only = msgspec.structs.replace(
        old,
        metadata=msgspec.structs.replace(old.metadata, resource_version="2"),
        status=PodStatus(phase="Pending"),
    )
    q.update(old, status_only)
    assert q.where(info.uid) == "unschedulable"
    relabelled = msgspec.structs.replace(
        status_only, metadata=msgspec.structs.replace(status_only.metadata, labels={"x": "y"})
    )
    q.update(status_only, relabelled)
    assert (q.where(info.uid), info.pod) == ("unschedulable", relabelled)
    clock.step(5)
    smaller = msgspec.structs.replace(relabelled, spec=msgspec.structs.replace(relabelled.spec,
                                                                               containers=[_container("1")]))
    q.update(relabelled, smaller)
    assert q.where(info.uid) == "active"


def _container(cpu: str) -> Container:
    return Container(name="c", resources=ResourceRequirements(requests={"cpu": cpu}))


def test_update_while_in_flight_is_applied_on_requeue(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    newer = msgspec.structs.replace(make_pod("a"), spec=PodSpec(priority=5, scheduler_name="kubesched"))
    q.update(None, newer)
    assert q.where(info.uid) == "in-flight"
    reject(q, info)
    assert info.pod is newer
    # The spec changed while in flight, so the rejection may be stale: backoff, not unschedulable.
    assert q.where(info.uid) == "backoff"


def test_add_of_known_pod_is_an_update(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    q.add(make_pod("a"))
    assert len(q) == 1


def test_not_requeued_twice(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    assert not q.add_unschedulable_if_not_present(info)


def test_many_deletes_keep_heap_small(clock: FakeClock) -> None:
    q = new_queue(clock)
    pods = [make_pod(f"p{i}", priority=i % 7) for i in range(2000)]
    for p in pods:
        q.add(p)
    for p in pods[:1990]:
        q.delete(p)
    assert len(q._active._heap) < 200
    assert len(pop_all(q)) == 10


async def test_pop_waits_for_add(clock: FakeClock) -> None:
    q = new_queue(clock)
    waiter = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.add(make_pod("a"))
    info = await asyncio.wait_for(waiter, 1)
    assert info is not None
    assert info.pod.metadata.name == "a"


async def test_close_releases_pop(clock: FakeClock) -> None:
    q = new_queue(clock)
    waiter = asyncio.create_task(q.pop())
    await asyncio.sleep(0)
    q.close()
    assert await asyncio.wait_for(waiter, 1) is None


@pytest.mark.parametrize(
    ("pod", "ok"),
    [
        pytest.param(make_pod("a"), True, id="pending"),
        pytest.param(Pod(metadata=ObjectMeta(name="d")), False, id="default-scheduler"),
        pytest.param(make_pod("b", node_name="n1"), False, id="bound"),
        # Queued, and held back there by SchedulingGates (PreEnqueue).
        pytest.param(make_pod("c", scheduling_gates=[SchedulingGate("g")]), True, id="gated"),
        pytest.param(
            msgspec.structs.replace(make_pod("e"), status=PodStatus(phase="Succeeded")), False, id="finished"
        ),
        pytest.param(
            msgspec.structs.replace(
                make_pod("f"), metadata=ObjectMeta(name="f", deletion_timestamp="2026-01-01T00:00:00Z")
            ),
            False,
            id="terminating",
        ),
    ],
)
def test_eligible(pod: Pod, ok: bool) -> None:
    assert eligible(pod, {"kubesched"}) is ok


def test_pre_enqueue_gates_a_pod_until_its_gates_are_removed() -> None:
    from kubesched.plugins.scheduling_gates import SchedulingGates

    q = SchedulingQueue(FakeClock(), pre_enqueue={"kubesched": [SchedulingGates()]})
    gated = make_pod("g", scheduling_gates=[SchedulingGate("wait")])
    q.add(gated)
    assert q.where(gated.metadata.uid) == "unschedulable"
    assert q.pending_counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert q.pop_nowait() is None
    assert q.flush_unschedulable_leftover() == 0  # time does not ungate a pod
    open_ = make_pod("g")
    q.update(gated, open_)
    assert q.pending_counts()["active"] == 1
    info = q.pop_nowait()
    assert info is not None
    assert (info.pod is open_, info.gated, info.unschedulable_plugins) == (True, False, set())


def test_queue_sort_plugin_orders_active_q() -> None:
    class Fifo:
        name = "Fifo"

        def less(self, a: QueuedEntity, b: QueuedEntity) -> bool:
            return a.timestamp < b.timestamp

    clock = FakeClock()
    q = SchedulingQueue(clock, queue_sort=Fifo())
    low = make_pod("low")
    q.add(low)
    clock.step(1)
    q.add(make_pod("high", priority=1000))
    first = q.pop_nowait()
    assert first is not None
    assert first.pod is low  # PrioritySort would pop "high" first


class _Hold:
    """A PreEnqueue plugin that holds the pods named in `held`."""

    name = "Hold"

    def __init__(self) -> None:
        self.held: set[str] = set()
        self.asked = 0

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self.asked += 1
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "held") if pod.metadata.name in self.held else None


def _failed_after_an_event(clock: FakeClock, hold: _Hold, held: bool,
                           pop_from_backoff: bool = True) -> tuple[SchedulingQueue, QueuedPodInfo]:
    """Pod a popped, an event of interest during its cycle, then rejected: backoffQ unless held."""
    q = SchedulingQueue(clock, pop_from_backoff=pop_from_backoff, pre_enqueue={"kubesched": [hold]})
    q.add(make_pod("a"))
    a = q.pop_nowait()
    assert a is not None
    if held:
        hold.held.add("a")
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)
    reject(q, a)
    return q, a


def test_pre_enqueue_runs_on_the_way_into_backoff_when_pods_pop_from_it(clock: FakeClock) -> None:
    # kube-scheduler's moveToBackoffQ: a pod can leave backoffQ straight for a cycle, so a pod its
    # PreEnqueue plugin holds (a preemptor whose victims are still going) must not get in.
    hold = _Hold()
    q, a = _failed_after_an_event(clock, hold, held=True)  # it preempted during its cycle
    assert q.where(a.uid) == "unschedulable"
    assert a.gated
    assert q.pop_nowait() is None
    hold.held.clear()
    # Its plugin's event lets it go; still backing off, it goes to backoffQ, and pops from there.
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)
    assert q.where(a.uid) == "backoff"
    assert pop_all(q) == ["a"]


def test_backoff_completed_moves_without_running_pre_enqueue_again(clock: FakeClock) -> None:
    hold = _Hold()
    q, a = _failed_after_an_event(clock, hold, held=False)
    assert q.where(a.uid) == "backoff"
    asked = hold.asked
    clock.step(2.0)
    assert q.flush_backoff_completed() == 1
    assert (q.where(a.uid), hold.asked) == ("active", asked)


def test_without_popping_from_backoff_pre_enqueue_runs_when_backoff_completes(clock: FakeClock) -> None:
    hold = _Hold()
    q, a = _failed_after_an_event(clock, hold, held=True, pop_from_backoff=False)
    assert q.where(a.uid) == "backoff"
    clock.step(2.0)
    q.flush_backoff_completed()
    assert q.where(a.uid) == "unschedulable"
    assert a.gated


def _gated(clock: FakeClock, hold: _Hold) -> tuple[SchedulingQueue, Pod]:
    q = SchedulingQueue(clock, pre_enqueue={"kubesched": [hold]}, plugin_events={"kubesched": {}})
    pod = make_pod("a")
    hold.held.add("a")
    q.add(pod)
    assert q.where(pod.metadata.uid) == "unschedulable"
    return q, pod


@pytest.mark.parametrize(("released", "after", "where"), [
    pytest.param(True, 301.0, "active", id="released-flushed"),
    pytest.param(True, 299.0, "unschedulable", id="released-not-yet"),
    pytest.param(False, 301.0, "unschedulable", id="still-held"),
])
def test_the_leftover_flush_asks_a_gated_pods_pre_enqueue_again(clock: FakeClock, released: bool, after: float,
                                                                where: str) -> None:
    # kube-scheduler's flushUnschedulableEntitiesLeftover re-evaluates gated pods too: a plugin that
    # gated a pod and no event of its own came is asked again after 5 minutes.
    hold = _Hold()
    q, pod = _gated(clock, hold)
    if released:
        hold.held.clear()
    clock.step(after)
    q.flush_unschedulable_leftover()
    assert q.where(pod.metadata.uid) == where


def test_a_pod_still_gated_after_the_flush_waits_five_more_minutes(clock: FakeClock) -> None:
    hold = _Hold()
    q, pod = _gated(clock, hold)
    clock.step(301.0)
    assert q.flush_unschedulable_leftover() == 0
    asked = hold.asked
    clock.step(30.0)
    q.flush_unschedulable_leftover()
    assert hold.asked == asked  # its flush time counts, not its arrival
    clock.step(271.0)
    hold.held.clear()
    assert q.flush_unschedulable_leftover() == 1
    assert q.where(pod.metadata.uid) == "active"


def test_activate_moves_an_unschedulable_or_backing_off_pod_to_active(clock: FakeClock) -> None:
    q = new_queue(clock)
    for name in ("u", "b"):
        q.add(make_pod(name))
        info = q.pop_nowait()
        assert info is not None
        reject(q, info)
    # b had an event of interest: in backoffQ; u waits in unschedulablePods.
    b = make_pod("b")
    q._unschedulable.pop(b.metadata.uid)
    q._backoff.push(b.metadata.uid, QueuedPodInfo(pod=b, timestamp=clock.now(), unschedulable_count=1,
                                                  unschedulable_plugins={"NodeResourcesFit"}))
    assert (q.where("uid-u"), q.where("uid-b")) == ("unschedulable", "backoff")
    q.activate([make_pod("u"), b, make_pod("unknown")])
    assert (q.where("uid-u"), q.where("uid-b"), q.where("uid-unknown")) == ("active", "active", None)


@pytest.mark.parametrize(("held", "where"), [
    pytest.param(False, "active", id="released"),
    pytest.param(True, "unschedulable", id="still-held"),
])
def test_activate_asks_pre_enqueue(clock: FakeClock, held: bool, where: str) -> None:
    hold = _Hold()
    q, pod = _gated(clock, hold)
    if not held:
        hold.held.clear()
    q.activate([pod])
    assert q.where(pod.metadata.uid) == where


def test_a_pod_activated_in_flight_comes_back_after_backoff(clock: FakeClock) -> None:
    q = new_queue(clock)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    q.activate([info.pod])
    reject(q, info)
    assert q.where(info.uid) == "backoff"


@pytest.mark.parametrize(("cpu", "where"), [
    pytest.param("1", "backoff", id="scaled-down"),
    pytest.param("2", "unschedulable", id="only-relabelled"),
])
def test_an_update_in_flight_counts_only_if_a_rejector_registered_its_event(clock: FakeClock, cpu: str,
                                                                            where: str) -> None:
    q = SchedulingQueue(clock, plugin_events=_FIT_EVENTS)
    old = make_pod("a", containers=[_container("2")])
    q.add(old)
    info = q.pop_nowait()
    assert info is not None
    new = msgspec.structs.replace(old, metadata=msgspec.structs.replace(old.metadata, labels={"x": "y"}),
                                  spec=msgspec.structs.replace(old.spec, containers=[_container(cpu)]))
    q.update(old, new)
    reject(q, info)
    assert (q.where(info.uid), info.pod) == (where, new)


# --- Backoff at its edges, against kube-scheduler v1.37.2's backoff_queue.go by hand. -----------
# getBackoffTime: timestamp + backoff, truncated to the 1 s ordering window (alignToWindow) when
# popping from backoffQ is on; isEntityBackingoff: !backoffTime.Before(alignToWindow(now)), so a
# pod whose window is now's window is still backing off. A pod rejected at 1000.5 with a 1 s
# backoff: window 1001 (on) or 1001.5 (off).
@pytest.mark.parametrize(("pop_from_backoff", "now", "moved"), [
    pytest.param(True, 1001.0, 0, id="aligned-same-window-start"),
    pytest.param(True, 1001.6, 0, id="aligned-same-window-past-the-exact-end"),
    pytest.param(True, 1001.999, 0, id="aligned-same-window-end"),
    pytest.param(True, 1002.0, 1, id="aligned-next-window"),
    pytest.param(False, 1001.5, 0, id="unaligned-exact-end-still-backing-off"),
    pytest.param(False, 1001.6, 1, id="unaligned-past-the-end"),
])
def test_backoff_ends_by_ordering_window(pop_from_backoff: bool, now: float, moved: int) -> None:
    clock = FakeClock(1000.5)
    q = new_queue(clock, pop_from_backoff=pop_from_backoff)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    q.move_all_to_active_or_backoff(events.NODE_ADD)  # during the cycle: back after backoff
    reject(q, info)
    assert q.where(info.uid) == "backoff"
    clock.set(now)
    assert q.flush_backoff_completed() == moved
    assert q.where(info.uid) == ("backoff" if moved == 0 else "active")


# podMaxBackoff 0 turns backoff off (getBackoffTime returns the zero time); 1 s is a 1 s backoff
# like any other (initial 1 s, capped at 1 s). A pod rejected at 1000, its event at 1000.5.
@pytest.mark.parametrize(("initial", "maximum", "where"), [
    pytest.param(1.0, 0.0, "active", id="max-backoff-0-no-backoff"),
    pytest.param(1.0, 1.0, "backoff", id="max-backoff-1s-backs-off"),
    pytest.param(1.0, 10.0, "backoff", id="defaults"),
])
def test_max_backoff_zero_disables_backoff(clock: FakeClock, initial: float, maximum: float, where: str) -> None:
    q = new_queue(clock, initial_backoff=initial, max_backoff=maximum)
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    clock.step(0.5)
    assert q.move_all_to_active_or_backoff(events.NODE_ADD) == 1
    assert q.where(info.uid) == where


def test_flush_backoff_completed_counts_every_pod_it_moves(clock: FakeClock) -> None:
    q = new_queue(clock)
    for name in ("a", "b", "c"):
        q.add(make_pod(name))
    infos = [q.pop_nowait() for _ in range(3)]
    q.move_all_to_active_or_backoff(events.NODE_ADD)
    for info in infos:
        assert info is not None
        reject(q, info)
    clock.step(2.0)  # 1 s backoffs, all three past their window
    assert q.flush_backoff_completed() == 3
    assert pop_all(q) == ["a", "b", "c"]


def test_unschedulable_flush_is_the_unschedulable_timeout_event(clock: FakeClock) -> None:
    """scheduler_queue_incoming_pods_total counts the 5-minute flush as event UnschedulableTimeout
    (framework.EventUnschedulableTimeout's label) into activeQ, the 1 s backoff long over."""
    q = new_queue(clock)
    seen: list[tuple[str, str]] = []
    q.on_incoming = lambda queue, event: seen.append((queue, event))
    q.add(make_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    seen.clear()
    clock.step(300.5)
    assert q.flush_unschedulable_leftover() == 1
    assert seen == [("active", "UnschedulableTimeout")]


class _Named(_Hold):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


def test_a_gated_pod_still_gated_stays_where_it_is(clock: FakeClock) -> None:
    """moveToActiveQ runs PreEnqueue; still gated, addOrUpdate keeps the entry: no incoming count
    (kube-scheduler's recordIncomingEntitiesMetrics runs only for a new entry). Before the change
    each event that asked a gated pod counted it into unschedulablePods again."""
    hold = _Hold()
    hold.held.add("a")
    q = SchedulingQueue(clock, pre_enqueue={"kubesched": [hold]})
    seen: list[tuple[str, str]] = []
    q.on_incoming = lambda queue, event: seen.append((queue, event))
    q.add(make_pod("a"))
    assert seen == [("unschedulable", "UnscheduledPodAdd")]
    for _ in range(3):
        assert q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE) == 0
    assert seen == [("unschedulable", "UnscheduledPodAdd")]
    assert q.where(make_pod("a").metadata.uid) == "unschedulable"
    hold.held.clear()
    assert q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE) == 1
    assert seen[-1] == ("active", "AssignedPodDelete")
    assert pop_all(q) == ["a"]


def test_the_gating_plugin_is_asked_first(clock: FakeClock) -> None:
    """runPreEnqueuePluginsForPod: the plugin that gated the pod runs first and, still rejecting,
    alone; the pod stays gated by it even when a plugin before it in the profile would now reject."""
    first, second = _Named("First"), _Named("Second")
    second.held.add("a")
    q = SchedulingQueue(clock, pre_enqueue={"kubesched": [first, second]})
    q.add(make_pod("a"))
    info = q._unschedulable.get(make_pod("a").metadata.uid)
    assert info is not None
    assert info.gated
    assert info.unschedulable_plugins == {"Second"}
    first.held.add("a")
    first.asked = second.asked = 0
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)
    assert (first.asked, second.asked) == (0, 1)
    assert info.unschedulable_plugins == {"Second"}
    second.held.clear()
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)
    assert (first.asked, second.asked) == (1, 2)
    assert info.unschedulable_plugins == {"First"}


def test_a_bound_pod_moves_a_pod_inter_pod_affinity_rejected_only_when_it_matches_its_terms(clock: FakeClock) -> None:
    """InterPodAffinity registers AssignedPod/Add with kube-scheduler's queueing hint: a pod waiting
    for a pod its required affinity selects is not retried for every pod that binds."""
    ipa = inter_pod_affinity.new({})
    q = SchedulingQueue(clock, plugin_events={"kubesched": events.registered_events([ipa])})
    waiting = builders.make_pod("web-client").scheduler("kubesched").pod_affinity(app="web").obj()
    q.add(waiting)
    info = q.pop_nowait()
    assert info is not None
    reject(q, info, ipa.name)
    unrelated = builders.make_pod("db-0").node("n1").label("app", "db").obj()
    assert q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, unrelated)) == 0
    assert q.where(info.uid) == "unschedulable"
    matching = builders.make_pod("web-0").node("n1").label("app", "web").obj()
    assert q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, matching)) == 1
    assert q.where(info.uid) in ("active", "backoff")
