"""Event narrowing: the queue asks only the pods an event's keys name, and moves exactly the pods it
would move asking them all."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.queue import FakeClock, QueuedPodInfo, SchedulingQueue
from kubesched.backend.queue.unschedulable import UnschedulablePods
from kubesched.framework import events
from kubesched.framework.events import ClusterEventWithHint, EventNarrowing, QueueingHint
from kubesched.model.objects import ObjectMeta, Pod, PodSpec

CLAIM_EVENT = events.ClusterEvent(events.EventResource.RESOURCE_CLAIM, events.ActionType.ADD | events.ActionType.UPDATE)
CLAIM_ADD = events.ClusterEvent(events.EventResource.RESOURCE_CLAIM, events.ActionType.ADD)
EVERYONE = "*"  # an event object whose change may concern any pod


def _claim_of(pod: Pod) -> str | None:
    return pod.metadata.labels.get("claim")


NARROWING = EventNarrowing("test/claims", lambda old, new: None if new == EVERYONE else frozenset({new}),
                           lambda pod: frozenset({c}) if (c := _claim_of(pod)) else frozenset())


def _hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE if new in (EVERYONE, _claim_of(pod)) else QueueingHint.QUEUE_SKIP


def _other_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE if new in (EVERYONE, "c3") else QueueingHint.QUEUE_SKIP


def _plugin_events(narrowing: EventNarrowing | None) -> dict[str, dict[str, tuple[events.Registration, ...]]]:
    # "Other" is interested in the claim events too, without a narrowing: the event still asks
    # only Claims' pods under its keys, and all of Other's.
    return {"kubesched": {"Claims": (ClusterEventWithHint(CLAIM_EVENT, _hint, narrowing),),
                          "Fit": (events.NODE_ADD,),
                          "Other": (ClusterEventWithHint(CLAIM_EVENT, _other_hint),)}}


def make_pod(name: str, claim: str | None, scheduler: str = "kubesched") -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}", resource_version="1",
                                   labels={} if claim is None else {"claim": claim}),
               spec=PodSpec(scheduler_name=scheduler))


def park(q: SchedulingQueue, pod: Pod, rejectors: frozenset[str]) -> None:
    """The pod is tried and rejected by `rejectors`; pods that were ready with it are tried too and
    rejected again by what rejected them before."""
    q.add(pod)
    tried = []
    while (info := q.pop_nowait()) is not None:
        if info.uid == pod.metadata.uid:
            info.unschedulable_plugins = rejectors
        tried.append(info)
    for info in tried:
        q.add_unschedulable_if_not_present(info)


def _info(pod: Pod, rejectors: frozenset[str] = frozenset({"Claims"})) -> QueuedPodInfo:
    return QueuedPodInfo(pod=pod, timestamp=0.0, unschedulable_plugins=rejectors)


def _claims_asked(pods: UnschedulablePods, keys: frozenset[str]) -> list[QueuedPodInfo]:
    """What an event that only Claims is interested in, with these keys, asks."""
    return pods.asked([("kubesched", "Claims", NARROWING, keys)])


def test_candidates_are_the_keyed_pods_and_those_no_hint_decides_in_parking_order() -> None:
    pods = UnschedulablePods([NARROWING], ["kubesched"])
    pods["uid-b"] = _info(make_pod("b", "c1"))
    pods["uid-a"] = _info(make_pod("a", "c2"))
    pods["uid-x"] = _info(make_pod("x", "c1"), rejectors=frozenset())  # an error: every event asks it
    pods["uid-o"] = _info(make_pod("o", None, scheduler="other"))  # a profile the queue does not know
    pods["uid-c"] = _info(make_pod("c", "c1"))
    assert [i.pod.metadata.name for i in _claims_asked(pods, frozenset({"c1"}))] == ["b", "x", "o", "c"]
    assert [i.pod.metadata.name for i in _claims_asked(pods, frozenset())] == ["x", "o"]
    pods["uid-b"] = _info(make_pod("b", "c2"))  # parked again: keeps its place, changes its key
    assert [i.pod.metadata.name for i in _claims_asked(pods, frozenset({"c2"}))] == ["b", "a", "x", "o"]
    del pods["uid-a"]
    assert pods.pop("uid-c") is not None
    assert pods.pop("uid-c") is None
    assert [i.pod.metadata.name for i in _claims_asked(pods, frozenset({"c1", "c2"}))] == ["b", "x", "o"]


def test_refresh_follows_the_pod_object() -> None:
    pods = UnschedulablePods([NARROWING], ["kubesched"])
    info = _info(make_pod("a", "c1"))
    pods["uid-a"] = info
    info.pod = make_pod("a", "c2")
    pods.refresh("uid-a")
    assert _claims_asked(pods, frozenset({"c1"})) == []
    assert _claims_asked(pods, frozenset({"c2"})) == [info]


def test_a_registration_that_does_not_narrow_makes_the_event_ask_everyone() -> None:
    clock = FakeClock(1000.0)
    plugin_events = _plugin_events(NARROWING)
    plugin_events["kubesched"]["Other"] = (ClusterEventWithHint(CLAIM_EVENT, _hint),)
    q = SchedulingQueue(clock, plugin_events=plugin_events)
    park(q, make_pod("a", "c1"), frozenset({"Other"}))
    assert q.move_all_to_active_or_backoff(CLAIM_ADD, objects=(None, "c2")) == 0
    assert q.move_all_to_active_or_backoff(CLAIM_ADD, objects=(None, "c1")) == 1


_NAMES = [f"p{i}" for i in range(6)]
_CLAIMS = st.sampled_from(["c1", "c2", "c3"])
_OPS = st.one_of(
    st.tuples(st.just("park"), st.sampled_from(_NAMES), st.none() | _CLAIMS,
              st.frozensets(st.sampled_from(["Claims", "Fit", "Gone", "Other"]), max_size=2), st.booleans()),
    st.tuples(st.just("claim"), st.sampled_from(["c1", "c2", "c3", "c4", EVERYONE])),
    st.tuples(st.just("node"),),
    st.tuples(st.just("relabel"), st.sampled_from(_NAMES), st.none() | _CLAIMS),
    st.tuples(st.just("delete"), st.sampled_from(_NAMES)),
    st.tuples(st.just("step"), st.floats(0.0, 20.0)),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_OPS, max_size=40))
def test_narrowed_moves_are_the_moves_of_asking_every_pod(ops: list[tuple[Any, ...]]) -> None:
    clocks = [FakeClock(1000.0), FakeClock(1000.0)]
    narrowed, full = (SchedulingQueue(clocks[0], plugin_events=_plugin_events(NARROWING)),
                      SchedulingQueue(clocks[1], plugin_events=_plugin_events(None)))
    pods: dict[str, Pod] = {}
    for op in ops:
        moved = []
        for q, clock in zip((narrowed, full), clocks, strict=True):
            match op:
                case ("park", name, claim, rejectors, known):
                    pod = make_pod(name, claim, "kubesched" if known else "other")
                    if q.where(pod.metadata.uid) is None:
                        park(q, pod, rejectors)
                        pods[name] = pod
                case ("claim", name):
                    moved.append(q.move_all_to_active_or_backoff(CLAIM_ADD, objects=(None, name)))
                case ("node",):
                    moved.append(q.move_all_to_active_or_backoff(events.NODE_ADD, objects=(None, None)))
                case ("relabel", name, claim) if name in pods:
                    old = pods[name]
                    labels = {} if claim is None else {"claim": claim}
                    q.update(old, msgspec.structs.replace(old, metadata=msgspec.structs.replace(
                        old.metadata, labels=labels, resource_version="2")))
                case ("delete", name) if name in pods:
                    q.delete(pods[name])
                case ("step", seconds):
                    clock.step(seconds)
                    q.flush_backoff_completed()
        if op[0] == "relabel" and op[1] in pods:
            old = pods[op[1]]
            pods[op[1]] = msgspec.structs.replace(old, metadata=msgspec.structs.replace(
                old.metadata, labels={} if op[2] is None else {"claim": op[2]}, resource_version="2"))
        assert len(set(moved)) <= 1, op
        for name in _NAMES:
            assert narrowed.where(f"uid-{name}") == full.where(f"uid-{name}"), (op, name)



def test_asked_takes_a_plugins_pods_whole_when_it_does_not_narrow() -> None:
    pods = UnschedulablePods([NARROWING], ["kubesched"])
    pods["uid-a"] = _info(make_pod("a", "c1"))
    pods["uid-b"] = _info(make_pod("b", "c2"), rejectors=frozenset({"Other"}))
    pods["uid-c"] = _info(make_pod("c", "c2"), rejectors=frozenset({"Fit"}))
    plans = [("kubesched", "Claims", NARROWING, frozenset({"c3"})), ("kubesched", "Other", None, None)]
    assert [i.pod.metadata.name for i in pods.asked(plans)] == ["b"]
    plans[0] = ("kubesched", "Claims", NARROWING, None)  # the event may concern any pod
    assert [i.pod.metadata.name for i in pods.asked(plans)] == ["a", "b"]
