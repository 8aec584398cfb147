"""Coscheduling groups through the whole-group cycle (scheduler/schedule_one_cogroup.py), driven
without I/O with scheduler-plugins' own configuration (examples/coscheduling): where
scheduler-plugins holds nodes at Permit for a group that cannot complete (its issues #114, #117,
#713, #930), a group here is placed whole or not at all, and nothing is held for the other."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from kubesched.api import ApiClient
from kubesched.config.load import loads
from kubesched.model.coscheduling import POD_GROUP_LABEL, CoPodGroup, CoPodGroupSpec
from kubesched.model.objects import ObjectMeta, Pod
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod
from tests.unit.scheduler.test_schedule_one_podgroup import answer, bound, pod_messages
from tests.unit.scheduler.test_scheduler_binding import ScriptedClient

CONFIG = (Path(__file__).parents[3] / "examples" / "coscheduling" / "scheduler-config.yaml").read_text()


def co_scheduler(*node_cpus: str) -> tuple[Scheduler, ScriptedClient]:
    client = ScriptedClient(answer)
    sched = Scheduler(cast(ApiClient, client), loads(CONFIG))
    for i, cpu in enumerate(node_cpus):
        sched.cache.add_node(make_node(f"n{i}").capacity(cpu=cpu).obj())
    return sched, client


def add_group(sched: Scheduler, name: str, min_member: int, created: str = "2026-01-01T00:00:00Z") -> None:
    group = CoPodGroup(metadata=ObjectMeta(name=name, namespace="default", creation_timestamp=created),
                       spec=CoPodGroupSpec(min_member=min_member))
    assert sched.sources.co_pod_groups is not None
    sched.sources.co_pod_groups.store[f"default/{name}"] = group
    sched.handlers.co_pod_group_added(group)


def member(name: str, group: str, cpu: str = "3") -> Pod:
    return make_pod(name).uid(name).scheduler("kubesched").label(POD_GROUP_LABEL, group).req(cpu=cpu).obj()


def add_pods(sched: Scheduler, *pods: Pod) -> None:
    for p in pods:
        sched.pods.store[p.key] = p
        sched.handlers.pod_added(p)


async def run_cycles(sched: Scheduler) -> None:
    while (info := sched.queue.pop_nowait()) is not None:
        assert sched.co_group_cycles is not None
        assert sched.co_group_cycles.plugin(info.pod) is not None
        sched.co_group_cycles.schedule_group(info)
    await asyncio.sleep(0)
    await sched.binds.wait()


def held(sched: Scheduler, client: ScriptedClient) -> list[str]:
    """Pods holding a node without being bound: assumed in the cache and not bound, or waiting at Permit."""
    profile = sched.profiles["kubesched"]
    done = set(bound(client))
    return sorted([p.pod.metadata.name for p in sched.cache.assumed_pods() if p.pod.metadata.name not in done]
                  + [w.key for w in profile.handle.waiting_pods])


def gang(group: str, n: int, cpu: str = "3") -> list[Pod]:
    return [member(f"{group}{i}", group, cpu) for i in range(n)]


def interleaved(*gangs: list[Pod]) -> list[Pod]:
    return [p for column in zip(*gangs, strict=True) for p in column]


async def test_two_gangs_with_room_for_one_place_exactly_one_and_hold_nothing_for_the_other() -> None:
    sched, client = co_scheduler("4", "4", "4")
    add_group(sched, "a", 3)
    add_group(sched, "b", 3, created="2026-01-01T00:00:01Z")
    add_pods(sched, *interleaved(gang("a", 3), gang("b", 3)))
    await run_cycles(sched)
    assert bound(client) == ["a0", "a1", "a2"]
    assert held(sched, client) == []
    messages = pod_messages(sched)
    assert messages == {
        "b0": "0/3 nodes are available: 3 Insufficient cpu.",
        "b1": "minMember (3) cannot be satisfied: 0 scheduled, 2 remaining",
        "b2": "minMember (3) cannot be satisfied: 0 scheduled, 2 remaining",
    }, messages


async def test_the_other_gang_is_placed_whole_once_the_first_is_gone() -> None:
    sched, client = co_scheduler("4", "4", "4")
    add_group(sched, "a", 3)
    add_group(sched, "b", 3, created="2026-01-01T00:00:01Z")
    a, b = gang("a", 3), gang("b", 3)
    add_pods(sched, *interleaved(a, b))
    await run_cycles(sched)
    for p in a:  # bound, then finished
        sched.pods.store.pop(p.key)
        sched.handlers.pod_deleted(p)
    await _drain_backoff(sched)
    assert bound(client) == ["a0", "a1", "a2", "b0", "b1", "b2"]
    assert held(sched, client) == []


async def _drain_backoff(sched: Scheduler) -> None:
    """Every pod in backoff or unschedulable moved to active, as time passing would, then cycles."""
    sched.queue.activate([p for p in sched.pods.store.values() if not p.spec.node_name])
    await run_cycles(sched)


@pytest.mark.parametrize(("nodes", "min_member", "pods", "want_bound"), [
    pytest.param(("4", "4"), 3, 3, [], id="room-for-two-of-three-places-none"),
    pytest.param(("4", "4", "500m"), 3, 3, [], id="room-for-two-of-three-one-node-too-small"),
    pytest.param(("4", "4"), 2, 3, ["g0", "g1"], id="min-member-two-of-three-places-two"),
    pytest.param(("4", "4", "4"), 3, 3, ["g0", "g1", "g2"], id="room-for-all"),
])
async def test_a_group_is_placed_whole_or_not_at_all(nodes: tuple[str, ...], min_member: int, pods: int,
                                                      want_bound: list[str]) -> None:
    sched, client = co_scheduler(*nodes)
    add_group(sched, "g", min_member)
    add_pods(sched, *gang("g", pods))
    await run_cycles(sched)
    assert bound(client) == want_bound
    assert held(sched, client) == []


async def test_too_few_siblings_are_told_so_in_scheduler_plugins_words() -> None:
    sched, client = co_scheduler("4", "4", "4")
    add_group(sched, "g", 3)
    add_pods(sched, *gang("g", 2, cpu="100m"))
    await run_cycles(sched)
    assert bound(client) == []
    assert held(sched, client) == []
    messages = pod_messages(sched)
    assert sorted(messages) == ["g0", "g1"]
    for name, message in messages.items():
        assert (f"pre-filter pod {name} cannot find enough sibling pods, current pods number: 2, "
                "minMember of group: 3") in message, messages


async def test_a_failed_group_sorts_after_a_group_created_later() -> None:
    """Coscheduling's PostFilter marks the group's failure: queue sort then takes the others of its
    priority first (the starvation of #117 is not one group forever first)."""
    sched, _ = co_scheduler("4", "4")
    add_group(sched, "a", 3)
    add_pods(sched, *gang("a", 3))
    await run_cycles(sched)
    add_group(sched, "b", 2, created="2026-01-01T00:00:05Z")
    plugin = sched.co_group_cycles.plugin(gang("a", 1)[0]) if sched.co_group_cycles else None
    assert plugin is not None
    a_first = plugin.manager.creation_timestamp(member("a0", "a"), 0.0)
    b_first = plugin.manager.creation_timestamp(member("b0", "b"), 0.0)
    assert b_first < a_first


async def test_a_group_whose_pods_are_gone_starts_again_from_none() -> None:
    """A Job run again with the same PodGroup: the first run's pods, bound then deleted, must not
    count towards minMember, or the second run's first pod would bind alone."""
    sched, client = co_scheduler("4", "4", "4")
    add_group(sched, "g", 2)
    first = gang("g", 2)
    add_pods(sched, *first)
    await run_cycles(sched)
    assert bound(client) == ["g0", "g1"]
    for p in first:
        sched.pods.store.pop(p.key)
        sched.handlers.pod_deleted(p)
    # Room for one of the second run's two pods: the others' nodes are taken.
    add_pods(sched, *(make_pod(f"other{i}").uid(f"other{i}").node(f"n{i}").req(cpu="3").obj() for i in (0, 1)))
    add_pods(sched, member("again0", "g"), member("again1", "g"))
    await run_cycles(sched)
    assert bound(client) == ["g0", "g1"]
    assert held(sched, client) == []


# --- a Coscheduling gang that must preempt ----------------------------------------------------------

def high_member(name: str, group: str, priority: int = 100) -> Pod:
    return make_pod(name).uid(name).scheduler("kubesched").label(POD_GROUP_LABEL, group).priority(
        priority).req(cpu="3").obj()


@pytest.mark.parametrize(("nodes", "victims", "pods", "want_deleted"), [
    pytest.param(("4", "4"), [("v0", "n0", 0), ("v1", "n1", 0)], 2, ["v0", "v1"],
                 id="both-victims-go-for-the-whole-gang"),
    # v0 fits beside the gang's pod on n0, reprieved before v1, which then does not.
    pytest.param(("4", "4"), [("v0", "n0", 5, "1"), ("v1", "n0", 1, "1"), ("v2", "n1", 1)], 2, ["v1", "v2"],
                 id="the-most-important-victim-is-reprieved"),
    # The placement made with every victim aside stays: the victims on its nodes go.
    pytest.param(("4", "4", "4"), [("v0", "n0", 5), ("v1", "n1", 1), ("v2", "n2", 1)], 2, ["v0", "v1"],
                 id="the-first-placement-stays"),
    pytest.param(("4", "4"), [("v0", "n0", 200), ("v1", "n1", 200)], 2, [], id="no-lower-priority-victims"),
    # scheduler-plugins lets each pod preempt alone: two victims evicted for a gang of three that
    # two nodes can never hold. Here nothing goes.
    pytest.param(("4", "4"), [("v0", "n0", 0), ("v1", "n1", 0)], 3, [], id="no-eviction-for-a-gang-that-cannot-fit"),
])
async def test_a_gang_preempts_for_all_its_pods_or_none(nodes: tuple[str, ...], victims: list[tuple[Any, ...]],
                                                        pods: int, want_deleted: list[str]) -> None:
    from tests.unit.scheduler.test_schedule_one_podgroup import deleted, nominations, running

    sched, client = co_scheduler(*nodes)
    for name, node, priority, *cpu in victims:
        add_pods(sched, running(name, node, priority=priority, cpu=cpu[0] if cpu else "3"))
    add_group(sched, "g", pods)
    gang_pods = [high_member(f"g{i}", "g") for i in range(pods)]
    add_pods(sched, *gang_pods)
    await run_cycles(sched)
    await asyncio.sleep(0.01)  # the victims' deletions run in the background
    assert bound(client) == []
    assert deleted(client) == want_deleted
    # As the Workload API's cycle tells them: the first its FitError, those never reached the
    # algorithm's reason (pod-group preemption's outcome is the PodGroup condition's).
    n = len(nodes)
    unreached = f"minMember ({pods}) cannot be satisfied: 0 scheduled, {pods - 1} remaining"
    assert pod_messages(sched) == {"g0": f"0/{n} nodes are available: {n} Insufficient cpu.",
                                   **{f"g{i}": unreached for i in range(1, pods)}}
    assert held(sched, client) == []
    if want_deleted:
        assert all(nominations(sched).values()), nominations(sched)
        from kubesched.plugins.default_preemption.plugin import DefaultPreemption

        preemption = sched.profiles["kubesched"].plugin("DefaultPreemption")
        assert isinstance(preemption, DefaultPreemption)
        for p in gang_pods:  # waiting on the victims, at DefaultPreemption's PreEnqueue
            assert preemption.pre_enqueue(p) is not None


async def test_the_gang_binds_whole_once_its_victims_are_gone() -> None:
    from tests.unit.scheduler.test_schedule_one_podgroup import deleted, running

    sched, client = co_scheduler("4", "4")
    victims = [running("v0", "n0"), running("v1", "n1")]
    add_pods(sched, *victims)
    add_group(sched, "g", 2)
    add_pods(sched, high_member("g0", "g"), high_member("g1", "g"))
    await run_cycles(sched)
    await asyncio.sleep(0.01)
    assert deleted(client) == ["v0", "v1"]
    for v in victims:  # the deletions seen by the informer
        sched.pods.store.pop(v.key)
        sched.handlers.pod_deleted(v)
    await _drain_backoff(sched)
    assert bound(client) == ["g0", "g1"]
    assert held(sched, client) == []


async def test_a_member_created_while_its_gang_preempts_waits_too() -> None:
    """The group's pods wait on the group, not each on itself: one created after the preemption
    began must not start a second one (it would find the same victims and delete them again)."""
    from tests.unit.scheduler.test_schedule_one_podgroup import deleted, running

    sched, client = co_scheduler("4", "4")
    add_pods(sched, running("v0", "n0"), running("v1", "n1"))
    add_group(sched, "g", 2)
    add_pods(sched, high_member("g0", "g"), high_member("g1", "g"))
    await run_cycles(sched)
    await asyncio.sleep(0.01)
    late = high_member("g2", "g")
    add_pods(sched, late)
    sched.queue.activate([late])
    await run_cycles(sched)
    await asyncio.sleep(0.01)
    assert sorted(path.split("/")[-1] for method, path in client.calls if method == "DELETE") == ["v0", "v1"]
    assert deleted(client) == ["v0", "v1"]
    assert sched.queue.where("g2") not in (None, "active")


async def test_a_gang_never_preempts_its_own_bound_members() -> None:
    """A bound member of lower priority than the queued ones is the gang's, not a victim."""
    from tests.unit.scheduler.test_schedule_one_podgroup import deleted, running

    sched, client = co_scheduler("4", "4")
    bound_member = make_pod("g0").uid("g0").scheduler("kubesched").label(POD_GROUP_LABEL, "g").node("n0").req(
        cpu="3").obj()
    add_pods(sched, bound_member, running("v1", "n1"))
    sched.cache.add_pod(bound_member)
    add_group(sched, "g", 3)
    add_pods(sched, high_member("g1", "g"), high_member("g2", "g"))
    await run_cycles(sched)
    await asyncio.sleep(0.01)
    assert "g0" not in deleted(client), deleted(client)
