"""Events that came while a pod was in flight: a rejected pod is asked about each of them with the
rejecting plugins' queueing hints (kube-scheduler's inFlightEvents and
determineSchedulingHintForInFlightPod), and they are kept only while a pod in flight predates them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.backend.queue import FakeClock, QueuedPodInfo, SchedulingQueue
from kubesched.framework import events
from kubesched.framework.events import ClusterEvent, ClusterEventWithHint, QueueingHint, QueueingHintFn, Registration
from kubesched.model.objects import Pod
from kubesched.plugins import inter_pod_affinity
from tests import builders

FOO = "fooPlugin1"
BAR = "fooPlugin2"
PV_ADD = ClusterEvent(events.EventResource.PERSISTENT_VOLUME, events.ActionType.ADD)
PV_UPDATE = ClusterEvent(events.EventResource.PERSISTENT_VOLUME, events.ActionType.UPDATE)
PVC_ADD = ClusterEvent(events.EventResource.PERSISTENT_VOLUME_CLAIM, events.ActionType.ADD)
CSI_NODE_UPDATE = ClusterEvent(events.EventResource.CSI_NODE, events.ActionType.UPDATE)


def queue_(answer: QueueingHint) -> QueueingHintFn:
    return lambda pod, old, new: answer


def raises(pod: Pod, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("hint failed")


QUEUE = queue_(QueueingHint.QUEUE)
SKIP = queue_(QueueingHint.QUEUE_SKIP)


PluginEvents = dict[str, dict[str, tuple[Registration, ...]]]


def hinted(*registrations: tuple[str, ClusterEvent, QueueingHintFn | None]) -> PluginEvents:
    """The profile's plugin events: (plugin, event, hint) each."""
    plugins: dict[str, tuple[Registration, ...]] = {}
    for plugin, event, hint in registrations:
        plugins[plugin] = (*plugins.get(plugin, ()), ClusterEventWithHint(event, hint))
    return {"kubesched": plugins}


def pod(name: str, priority: int = 0) -> Pod:
    return builders.make_pod(name).uid(f"uid-{name}").scheduler("kubesched").priority(priority).obj()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


# --- kube-scheduler's Test_InFlightPods, by its rows -------------------------------------------


@dataclass(frozen=True)
class Pop:
    name: str


@dataclass(frozen=True)
class Event:
    event: ClusterEvent
    # kube-scheduler's test moves with nil objects, which its hints are asked about as they are.
    objects: tuple[Any, Any] | None = (None, None)


@dataclass(frozen=True)
class Back:
    """The popped pod comes back: rejected by `plugins`, or after an error when there are none."""

    name: str
    plugins: frozenset[str] = frozenset()


Action = Pop | Event | Back


@dataclass(frozen=True)
class Row:
    plugin_events: PluginEvents
    pods: Sequence[str]
    actions: Sequence[Action]
    in_flight: Sequence[str] = ()
    in_flight_events: int = 0
    backoff: Sequence[str] = ()
    unschedulable: Sequence[str] = ()


_QUEUES_ALL = hinted((FOO, PV_ADD, QUEUE), (FOO, events.NODE_ADD, QUEUE), (FOO, PVC_ADD, QUEUE),
                     (FOO, CSI_NODE_UPDATE, QUEUE))

ROWS = [
    pytest.param(Row(
        hinted((FOO, PV_ADD, QUEUE)), ["pod1"],
        # PVC_ADD: no pod in flight yet; PV_UPDATE: no plugin is interested.
        [Event(PVC_ADD), Pop("pod1"), Event(PV_ADD), Event(PV_UPDATE)],
        in_flight=["pod1"], in_flight_events=1,
    ), id="pod-and-interesting-events-recorded"),
    pytest.param(Row(
        _QUEUES_ALL, ["pod1", "pod2"],
        [Event(PVC_ADD), Pop("pod1"), Event(PV_ADD), Pop("pod2"), Event(events.NODE_ADD), Back("pod1")],
        # PV_ADD came before pod2 was popped: nobody left can have missed it.
        in_flight=["pod2"], in_flight_events=1, backoff=["pod1"],
    ), id="error-back-to-backoff-prunes-its-events"),
    pytest.param(Row(
        _QUEUES_ALL, ["pod1", "pod2"],
        [Event(PVC_ADD), Pop("pod1"), Event(PV_ADD), Pop("pod2"), Event(events.NODE_ADD), Back("pod1"),
         Event(CSI_NODE_UPDATE), Back("pod2")],
        backoff=["pod1", "pod2"],
    ), id="all-back-nothing-kept"),
    pytest.param(Row(
        hinted((FOO, PV_ADD, QUEUE), (FOO, events.NODE_ADD, QUEUE), (FOO, events.ASSIGNED_POD_ADD, QUEUE)),
        ["pod1", "pod2", "pod3"],
        [Event(PVC_ADD), Pop("pod1"), Event(PV_ADD), Pop("pod2"), Event(events.NODE_ADD), Pop("pod3"),
         Event(events.ASSIGNED_POD_ADD), Back("pod2")],
        # pod1 still holds every event since its pop.
        in_flight=["pod1", "pod3"], in_flight_events=3, backoff=["pod2"],
    ), id="intermediate-pod-back-keeps-the-events"),
    pytest.param(Row(
        hinted((FOO, events.ASSIGNED_POD_ADD, SKIP)), ["pod1"],
        [Event(events.UNSCHEDULABLE_TIMEOUT), Pop("pod1"), Event(events.ASSIGNED_POD_ADD),
         Back("pod1", frozenset({FOO}))],
        unschedulable=["pod1"],
    ), id="events-before-the-pop-ignored"),
    pytest.param(Row(
        hinted((FOO, events.ASSIGNED_POD_ADD, QUEUE)), ["pod1"],
        [Pop("pod1"), Event(events.ASSIGNED_POD_ADD), Back("pod1")],
        backoff=["pod1"],
    ), id="no-failed-plugin-to-backoff"),
    pytest.param(Row(
        hinted((FOO, events.ASSIGNED_POD_ADD, QUEUE), (BAR, events.NODE_ADD, QUEUE)), ["pod1"],
        [Pop("pod1"), Event(events.NODE_ADD), Back("pod1", frozenset({FOO}))],
        unschedulable=["pod1"],
    ), id="no-event-its-plugin-registered"),
    pytest.param(Row(
        hinted((FOO, events.ASSIGNED_POD_ADD, SKIP)), ["pod1"],
        [Pop("pod1"), Event(events.ASSIGNED_POD_ADD), Back("pod1", frozenset({FOO}))],
        unschedulable=["pod1"],
    ), id="hint-says-skip"),
    pytest.param(Row(
        hinted((BAR, events.ASSIGNED_POD_ADD, SKIP), (FOO, events.ASSIGNED_POD_ADD, QUEUE)), ["pod1"],
        [Pop("pod1"), Event(events.ASSIGNED_POD_ADD), Back("pod1", frozenset({FOO, BAR}))],
        backoff=["pod1"],
    ), id="one-rejector-hint-says-queue"),
]


@pytest.mark.parametrize("row", ROWS)
def test_in_flight_pods(clock: FakeClock, row: Row) -> None:
    q = SchedulingQueue(clock, plugin_events=row.plugin_events)
    for i, name in enumerate(row.pods):
        q.add(pod(name, priority=len(row.pods) - i))  # popped in the order listed
    popped: dict[str, QueuedPodInfo] = {}
    for action in row.actions:
        if isinstance(action, Pop):
            info = q.pop_nowait()
            assert info is not None
            assert info.pod.metadata.name == action.name
            popped[action.name] = info
        elif isinstance(action, Event):
            q.move_all_to_active_or_backoff(action.event, objects=action.objects)
        else:
            info = popped.pop(action.name)
            info.unschedulable_plugins = action.plugins
            assert q.add_unschedulable_if_not_present(info)
    assert sorted(i.pod.metadata.name for i in q.in_flight()) == sorted(row.in_flight)
    assert q.internal_sizes()["in_flight_events"] == row.in_flight_events
    where = {name: q.where(f"uid-{name}") for name in row.pods}
    assert sorted(n for n, w in where.items() if w == "backoff") == sorted(row.backoff)
    assert sorted(n for n, w in where.items() if w == "unschedulable") == sorted(row.unschedulable)


def test_pods_in_flight_during_a_wildcard_move_go_to_backoff(clock: FakeClock) -> None:
    """kube-scheduler's TestPriorityQueue_AddUnschedulablePodIfNotPresent_Backoff."""
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.NODE_ADD, SKIP)))
    for i in range(10):
        q.add(pod(f"pod{i}", priority=i))
    popped = [q.pop_nowait() for _ in range(9)]
    assert [i.pod.metadata.name for i in popped if i is not None] == [f"pod{i}" for i in range(9, 0, -1)]
    q.move_all_to_active_or_backoff(events.UNSCHEDULABLE_TIMEOUT)
    first = q.pop_nowait()
    assert first is not None
    assert first.pod.metadata.name == "pod0"
    for info in popped:
        assert info is not None
        info.unschedulable_plugins = {"plugin"}
        assert q.add_unschedulable_if_not_present(info)
        assert q.where(info.uid) == "backoff"


# --- one rejected pod, one event during its cycle ------------------------------------------------


@pytest.mark.parametrize(("registered", "objects", "where"), [
    pytest.param(SKIP, (None, pod("bound")), "unschedulable", id="hint-skips"),
    pytest.param(QUEUE, (None, pod("bound")), "backoff", id="hint-queues"),
    pytest.param(raises, (None, pod("bound")), "backoff", id="hint-raises"),
    pytest.param(None, (None, pod("bound")), "backoff", id="no-hint"),
    # Reported without its objects (kubesched's own: kube-scheduler always gives one): the
    # rejecting plugin's interest decides.
    pytest.param(SKIP, None, "backoff", id="no-objects"),
])
def test_a_rejected_pod_asks_its_plugins_hints_about_an_event_of_its_cycle(
        clock: FakeClock, registered: QueueingHintFn | None, objects: tuple[Any, Any] | None, where: str) -> None:
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.ASSIGNED_POD_ADD, registered)))
    q.add(pod("a"))
    a = q.pop_nowait()
    assert a is not None
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=objects)
    a.unschedulable_plugins = {FOO}
    assert q.add_unschedulable_if_not_present(a)
    assert q.where(a.uid) == where


@pytest.mark.parametrize(("bound", "where"), [
    pytest.param(builders.make_pod("db-0").node("n1").label("app", "db"), "unschedulable", id="unrelated-bind"),
    pytest.param(builders.make_pod("web-0").node("n1").label("app", "web"), "backoff", id="matching-bind"),
])
def test_a_pod_inter_pod_affinity_rejected_is_retried_only_for_a_bind_its_terms_select(
        clock: FakeClock, bound: builders.PodBuilder, where: str) -> None:
    """The case that mattered: with 64 pods binding at once every cycle overlaps a bind."""
    ipa = inter_pod_affinity.new({})
    q = SchedulingQueue(clock, plugin_events={"kubesched": events.registered_events([ipa])})
    q.add(builders.make_pod("web-client").scheduler("kubesched").pod_affinity(app="web").obj())
    info = q.pop_nowait()
    assert info is not None
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, bound.obj()))
    info.unschedulable_plugins = {ipa.name}
    assert q.add_unschedulable_if_not_present(info)
    assert q.where(info.uid) == where


def test_an_event_before_its_pop_does_not_count(clock: FakeClock) -> None:
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.ASSIGNED_POD_ADD, QUEUE)))
    q.add(pod("a", priority=2))
    q.add(pod("b", priority=1))
    a = q.pop_nowait()
    assert a is not None
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, pod("bound")))
    b = q.pop_nowait()
    assert b is not None
    for info in (b, a):
        info.unschedulable_plugins = {FOO}
        assert q.add_unschedulable_if_not_present(info)
    assert (q.where(a.uid), q.where(b.uid)) == ("backoff", "unschedulable")


def test_events_are_kept_only_while_a_pod_in_flight_predates_them(clock: FakeClock) -> None:
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.ASSIGNED_POD_ADD, QUEUE)))
    for i, name in enumerate("abc"):
        q.add(pod(name, priority=3 - i))
    sizes: list[int] = []

    def pop() -> QueuedPodInfo:
        info = q.pop_nowait()
        assert info is not None
        return info

    def bound(name: str) -> None:
        q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, pod(name)))
        sizes.append(q.internal_sizes()["in_flight_events"])

    a, b = pop(), pop()
    bound("x")
    c = pop()
    bound("y")
    q.done(b.uid)  # not the oldest: a still needs both
    sizes.append(q.internal_sizes()["in_flight_events"])
    q.done(a.uid)  # x came before c was popped
    sizes.append(q.internal_sizes()["in_flight_events"])
    c.unschedulable_plugins = {FOO}
    assert q.add_unschedulable_if_not_present(c)  # y came during c's cycle
    sizes.append(q.internal_sizes()["in_flight_events"])
    assert sizes == [1, 2, 2, 1, 0]
    assert q.where(c.uid) == "backoff"
    bound("z")  # nothing in flight: nothing kept
    assert sizes[-1] == 0


def test_the_members_a_pod_group_cycle_takes_see_the_events_since_that_cycle(clock: FakeClock) -> None:
    """pop_members takes the group's other pods for the cycle of the pod popped first: an event
    between that pop and theirs came during their cycle too, and is kept for them when the first
    pod is done."""
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.ASSIGNED_POD_ADD, QUEUE)))
    q.add(builders.make_pod("g1").uid("uid-g1").scheduler("kubesched").priority(3).label("group", "g").obj())
    q.add(pod("x", priority=2))
    q.add(builders.make_pod("g2").uid("uid-g2").scheduler("kubesched").priority(1).label("group", "g").obj())
    g1 = q.pop_nowait()
    assert g1 is not None
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, pod("bound")))
    x = q.pop_nowait()
    assert x is not None
    [g2] = q.pop_members(lambda p: p.metadata.labels.get("group") == "g", g1.scheduling_cycle)
    q.done(g1.uid)
    assert q.internal_sizes()["in_flight_events"] == 1
    for info in (g2, x):
        info.unschedulable_plugins = {FOO}
        assert q.add_unschedulable_if_not_present(info)
    assert (q.where(g2.uid), q.where(x.uid)) == ("backoff", "unschedulable")
    assert q.internal_sizes()["in_flight_events"] == 0


# --- what else kube-scheduler puts in inFlightEvents ---------------------------------------------


def _two_in_flight(q: SchedulingQueue) -> tuple[QueuedPodInfo, QueuedPodInfo]:
    q.add(pod("a", priority=2))
    q.add(pod("b", priority=1))
    a, b = q.pop_nowait(), q.pop_nowait()
    assert a is not None
    assert b is not None
    return a, b


def _rejected(q: SchedulingQueue, plugin: str, *infos: QueuedPodInfo) -> list[str | None]:
    for info in infos:
        info.unschedulable_plugins = {plugin}
        assert q.add_unschedulable_if_not_present(info)
    return [q.where(info.uid) for info in infos]


def test_another_pods_own_update_in_flight_counts_for_a_pod_in_flight(clock: FakeClock) -> None:
    """addEventsIfPodInFlight puts b's update in the one list every pod in flight reads: a pod
    TaintToleration rejected sees b's new toleration (TargetPod/UpdatePodToleration, whose hint
    queues unconditionally in kube-scheduler, and which kubesched registers without a hint)."""
    toleration = ClusterEvent(events.EventResource.TARGET_POD, events.ActionType.UPDATE_POD_TOLERATION)
    q = SchedulingQueue(clock, plugin_events={"kubesched": {"TaintToleration": (toleration,)}})
    a, b = _two_in_flight(q)
    q.update(b.pod, builders.make_pod("b").uid("uid-b").scheduler("kubesched").priority(1)
             .toleration("k", "v", "NoSchedule").obj())
    assert _rejected(q, "TaintToleration", a, b) == ["backoff", "backoff"]


def test_a_targeted_activation_counts_only_for_its_pod(clock: FakeClock) -> None:
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.NODE_ADD, QUEUE)))
    a, b = _two_in_flight(q)
    q.activate([b.pod])
    assert _rejected(q, FOO, a, b) == ["unschedulable", "backoff"]


def test_the_unschedulable_timeout_flush_counts_for_every_pod_in_flight(clock: FakeClock) -> None:
    """flushUnschedulableEntitiesLeftover moves its pods with the wildcard UnschedulableTimeout,
    recorded like any event when some pod is in flight: whatever rejected a pod in flight then,
    it goes to backoffQ."""
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.NODE_ADD, SKIP)))
    q.add(pod("old", priority=3))
    old = q.pop_nowait()
    assert old is not None
    assert _rejected(q, FOO, old) == ["unschedulable"]
    clock.step(301)
    a, b = _two_in_flight(q)
    assert q.flush_unschedulable_leftover() == 1
    assert _rejected(q, FOO, a, b) == ["backoff", "backoff"]


@pytest.mark.parametrize("finish", [
    pytest.param(lambda q, info: q.done(info.uid), id="done"),
    pytest.param(lambda q, info: q.add_unschedulable_if_not_present(info), id="requeued"),
    pytest.param(lambda q, info: (q.delete(info.pod), q.add_unschedulable_if_not_present(info)), id="deleted"),
])
def test_no_event_outlives_the_pods_in_flight(clock: FakeClock,
                                              finish: Callable[[SchedulingQueue, QueuedPodInfo], Any]) -> None:
    q = SchedulingQueue(clock, plugin_events=hinted((FOO, events.ASSIGNED_POD_ADD, QUEUE)))
    for name in ("a", "b"):
        q.add(pod(name))
    infos = [q.pop_nowait() for _ in range(2)]
    q.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, pod("bound")))
    for info in infos:
        assert info is not None
        finish(q, info)
    assert q.internal_sizes()["in_flight_events"] == 0
    assert q.internal_sizes()["in_flight"] == 0
