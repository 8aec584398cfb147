"""The pod-group cycle, driven without I/O (kube-scheduler's schedule_one_podgroup_test.go, the
cases without composite groups or placements): a scheduler with GenericWorkload on, a scripted
client for its writes, members fed as the pod informer would."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from kubesched.api import ApiClient
from kubesched.api.client import Response
from kubesched.config.features import FeatureGates
from kubesched.config.load import load
from kubesched.model.objects import Pod
from kubesched.model.workload import Condition, PodGroup
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod, make_pod_group
from tests.unit.scheduler.test_scheduler_binding import ScriptedClient

GATED = FeatureGates({"GenericWorkload": True})
NO_VICTIMS = ", pod group preemption: No preemption victims found for incoming preemptor"


async def answer(method: str, path: str) -> Response:
    return Response(201 if path.endswith("/binding") else 200, b"{}")


def gated_scheduler(*node_cpus: str) -> tuple[Scheduler, ScriptedClient]:
    client = ScriptedClient(answer)
    sched = Scheduler(cast(ApiClient, client), load(None, gates=GATED.default_plugin_gates()), features=GATED)
    for i, cpu in enumerate(node_cpus):
        sched.cache.add_node(make_node(f"n{i}").capacity(cpu=cpu).obj())
    return sched, client


def add_group(sched: Scheduler, group: PodGroup) -> None:
    assert sched.sources.pod_groups is not None
    sched.sources.pod_groups.store[group.key] = group
    sched.handlers.pod_group_added(group)


def add_pod(sched: Scheduler, pod: Pod) -> None:
    sched.pods.store[pod.key] = pod
    sched.handlers.pod_added(pod)


def member(name: str, group: str = "pg", cpu: str = "1") -> Pod:
    return make_pod(name).uid(name).scheduler("kubesched").pod_group(group).req(cpu=cpu).obj()


async def run_cycles(sched: Scheduler) -> None:
    """Pop and schedule until the queue has nothing ready, then let binds and writes finish."""
    while (info := sched.queue.pop_nowait()) is not None:
        assert sched.group_cycles is not None
        sched.group_cycles.schedule_group(info)
    await asyncio.sleep(0)
    await sched.binds.wait()
    await sched._background.wait()


def pod_messages(sched: Scheduler) -> dict[str, str]:
    """The PodScheduled message each pod's condition is to get (the writer runs with the scheduler)."""
    return {pod.metadata.name: message or "" for pod, message, _, _ in sched.conditions._pending.values() if message}


def group_conditions(client: ScriptedClient) -> list[dict[str, Any]]:
    return [{k: c.get(k, "") for k in ("type", "status", "reason", "message")}
            for (method, path), body in zip(client.calls, client.bodies, strict=True)
            if method == "PATCH" and "/podgroups/" in path for c in body["status"]["conditions"]]


def bound(client: ScriptedClient) -> list[str]:
    return sorted(path.split("/")[-2] for method, path in client.calls if path.endswith("/binding"))


SCHEDULED = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": ""}


def unschedulable(message: str) -> dict[str, str]:
    return {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": message}


@pytest.mark.parametrize(("nodes", "min_count", "pods", "want_bound", "want_messages", "want_condition"), [
    pytest.param(("3",), 3, [member("p1"), member("p2"), member("p3")], ["p1", "p2", "p3"], {}, SCHEDULED,
                 id="gang fits whole: every pod bound"),
    pytest.param(("2",), 3, [member("p1"), member("p2"), member("p3")], [],
                 {"p1": "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
                        + NO_VICTIMS,
                  "p2": "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
                        + NO_VICTIMS,
                  "p3": "0/1 nodes are available: 1 Insufficient cpu."},
                 unschedulable("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining" + NO_VICTIMS),
                 id="room for 2 of 3: none bound"),
    pytest.param(("2",), 3, [member("p1", cpu="3"), member("p2", cpu="3"), member("p3", cpu="3")], [],
                 {"p1": "0/1 nodes are available: 1 Insufficient cpu.",
                  "p2": "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining",
                  "p3": "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"},
                 unschedulable("minCount (3) cannot be satisfied: 0 scheduled, 2 remaining" + NO_VICTIMS),
                 id="first pod fails: the others are never tried"),
    pytest.param(("2",), None, [member("p1"), member("p2"), member("p3")], ["p1", "p2"],
                 {"p3": "0/1 nodes are available: 1 Insufficient cpu."}, SCHEDULED,
                 id="basic group: pod by pod"),
    pytest.param(("1",), None, [member("p1", cpu="2")], [],
                 {"p1": "0/1 nodes are available: 1 Insufficient cpu."},
                 unschedulable("minCount (1) cannot be satisfied: 0 scheduled, 0 remaining" + NO_VICTIMS),
                 id="basic group with no pod placed"),
    pytest.param(("2", "2"), 2, [member("p1"), member("p2"), member("p3")], ["p1", "p2", "p3"], {}, SCHEDULED,
                 id="more pods than minCount: all that fit are bound"),
])
async def test_pod_group_cycle(nodes: tuple[str, ...], min_count: int | None, pods: list[Pod], want_bound: list[str],
                               want_messages: dict[str, str], want_condition: dict[str, str]) -> None:
    sched, client = gated_scheduler(*nodes)
    add_group(sched, make_pod_group("pg", min_count=min_count))
    for pod in pods:
        add_pod(sched, pod)
    await run_cycles(sched)
    assert bound(client) == want_bound
    assert pod_messages(sched) == want_messages
    assert group_conditions(client) == [want_condition]
    # Nothing is left assumed but what is being bound.
    assert sorted(p.pod.metadata.name for p in sched.cache.assumed_pods()) == want_bound


async def test_a_group_with_min_count_scheduled_whose_new_pods_all_fail_is_unschedulable() -> None:
    sched, client = gated_scheduler("2")
    add_group(sched, make_pod_group("pg"))
    add_pod(sched, make_pod("p0").uid("p0").scheduler("kubesched").pod_group("pg").node("n0").req(cpu="1").obj())
    add_pod(sched, member("p1", cpu="2"))
    await run_cycles(sched)
    assert bound(client) == []
    assert pod_messages(sched) == {"p1": "0/1 nodes are available: 1 Insufficient cpu."}
    assert group_conditions(client) == [unschedulable("pod group is unschedulable" + NO_VICTIMS)]


async def test_a_gang_waits_at_pre_enqueue_until_min_count_pods_exist() -> None:
    sched, client = gated_scheduler("4")
    add_group(sched, make_pod_group("pg", min_count=3))
    add_pod(sched, member("p1"))
    add_pod(sched, member("p2"))
    await run_cycles(sched)
    assert client.calls == []
    assert {sched.queue.where(u) for u in ("p1", "p2")} == {"unschedulable"}
    add_pod(sched, member("p3"))
    await run_cycles(sched)
    assert bound(client) == ["p1", "p2", "p3"]
    assert group_conditions(client) == [SCHEDULED]


async def test_a_gang_waits_for_its_pod_group() -> None:
    sched, client = gated_scheduler("4")
    add_pod(sched, member("p1"))
    add_pod(sched, member("p2"))
    await run_cycles(sched)
    assert client.calls == []
    add_group(sched, make_pod_group("pg", min_count=2))
    await run_cycles(sched)
    assert bound(client) == ["p1", "p2"]


async def test_scheduled_members_count_towards_min_count() -> None:
    sched, client = gated_scheduler("4")
    add_group(sched, make_pod_group("pg", min_count=3))
    add_pod(sched, make_pod("p0").uid("p0").scheduler("kubesched").pod_group("pg").node("n0").req(cpu="1").obj())
    add_pod(sched, member("p1"))
    add_pod(sched, member("p2"))
    await run_cycles(sched)
    assert bound(client) == ["p1", "p2"]


async def test_two_gangs_with_room_for_one_place_exactly_one() -> None:
    sched, client = gated_scheduler("2")
    for g in ("a", "b"):
        add_group(sched, make_pod_group(g, min_count=2))
    for i in range(2):
        for g in ("a", "b"):
            add_pod(sched, member(f"{g}{i}", group=g))
    await run_cycles(sched)
    assert bound(client) in (["a0", "a1"], ["b0", "b1"])


async def test_a_lower_min_count_lets_a_waiting_gang_go() -> None:
    sched, client = gated_scheduler("4")
    before = make_pod_group("pg", min_count=3)
    add_group(sched, before)
    add_pod(sched, member("p1"))
    add_pod(sched, member("p2"))
    await run_cycles(sched)
    assert bound(client) == []
    after = make_pod_group("pg", min_count=2)
    assert sched.sources.pod_groups is not None
    sched.sources.pod_groups.store[after.key] = after
    sched.handlers.pod_group_updated(before, after)
    await run_cycles(sched)
    assert bound(client) == ["p1", "p2"]


# --- pod-group preemption -------------------------------------------------------------------------

def high(name: str, group: str = "pg", cpu: str = "3", never: bool = False) -> Pod:
    pod = make_pod(name).uid(name).scheduler("kubesched").pod_group(group).priority(100).req(cpu=cpu).obj()
    if never:
        pod.spec.preemption_policy = "Never"
    return pod


def running(name: str, node: str, priority: int = 0, group: str | None = None, cpu: str = "3") -> Pod:
    b = make_pod(name).uid(name).node(node).priority(priority).req(cpu=cpu)
    return (b.pod_group(group) if group else b).obj()


def deleted(client: ScriptedClient) -> list[str]:
    return sorted(path.split("/")[-1] for method, path in client.calls
                  if method == "DELETE" and "/pods/" in path)


def nominations(sched: Scheduler) -> dict[str, str | None]:
    return {pod.metadata.name: nominated for pod, _, _, nominated in sched.conditions._pending.values()}


@pytest.mark.parametrize(("victims", "victim_groups", "pods", "want_deleted", "want_message"), [
    pytest.param([running("v0", "n0"), running("v1", "n1")], [], [high("h0"), high("h1")], ["v0", "v1"],
                 "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: "
                 "found a placement for podgroup, preempting 2 victims", id="both victims preempted"),
    # The placement made with every victim aside stays (kube-scheduler's reprieveVictim): v0 is
    # reprieved because it fits beside the gang's pod on n0, and so v1 does not.
    pytest.param([running("v0", "n0", priority=5, cpu="1"), running("v1", "n0", priority=1, cpu="1"),
                  running("v2", "n1", priority=1)],
                 [], [high("h0"), high("h1")], ["v1", "v2"],
                 "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: "
                 "found a placement for podgroup, preempting 2 victims",
                 id="the most important victim is reprieved first"),
    pytest.param([running("v0", "n0", cpu="1"), running("v1", "n0", group="low", cpu="1"),
                  running("v2", "n1")], [make_pod_group("low", min_count=2)], [high("h0"), high("h1")], ["v0", "v2"],
                 "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: "
                 "found a placement for podgroup, preempting 2 victims",
                 id="a pod in a group is more important than a pod alone"),
    # A victim on no node the gang was placed on is reprieved whatever its priority: kube-scheduler
    # checks the first placement again, it does not place the gang anew.
    pytest.param([running("v0", "n0", priority=1), running("v1", "n1", priority=5), running("v2", "n2", priority=1)],
                 [], [high("h0"), high("h1")], ["v0", "v1"],
                 "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: "
                 "found a placement for podgroup, preempting 2 victims",
                 id="the first placement stays"),
    pytest.param([running("v0", "n0", group="low"), running("v1", "n1", group="low", cpu="1"),
                  running("v2", "n2", priority=50)], [make_pod_group("low", min_count=2)], [high("h0"), high("h1")],
                 ["v0"], "minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, pod group preemption: "
                 "found a placement for podgroup, preempting 1 victims",
                 id="a victim's group with disruptionMode single loses only the pod in the way"),
    pytest.param([running("v0", "n0", priority=200), running("v1", "n1", priority=200)], [],
                 [high("h0"), high("h1")], [],
                 "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: "
                 "No preemption victims found for incoming preemptor", id="no lower-priority victims"),
    pytest.param([running("v0", "n0"), running("v1", "n1")], [], [high("h0", never=True), high("h1", never=True)],
                 [], "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, pod group preemption: "
                 "not eligible due to preemptionPolicy=Never.", id="preemptionPolicy Never"),
])
async def test_pod_group_preemption(victims: list[Pod], victim_groups: list[PodGroup], pods: list[Pod],
                                    want_deleted: list[str], want_message: str) -> None:
    sched, client = gated_scheduler(*(["4"] * max(2, len({v.spec.node_name for v in victims}))))
    for g in victim_groups:
        add_group(sched, g)
    for v in victims:
        add_pod(sched, v)
    add_group(sched, make_pod_group("pg", min_count=2, priority=100))
    for pod in pods:
        add_pod(sched, pod)
    await run_cycles(sched)
    assert bound(client) == []
    assert deleted(client) == want_deleted
    assert group_conditions(client) == [unschedulable(want_message)]
    if want_deleted:
        # Every member is nominated to the node preemption found for it.
        assert all(nominations(sched).values()), nominations(sched)


async def test_a_victim_group_with_disruption_mode_all_goes_whole() -> None:
    from kubesched.model.workload import DisruptionMode
    sched, client = gated_scheduler("4", "4", "4")
    low = make_pod_group("low", min_count=2)
    low.spec.disruption_mode = DisruptionMode(all={})
    add_group(sched, low)
    for v in (running("v0", "n0", group="low"), running("v1", "n1", group="low", cpu="1"),
              running("v2", "n2", priority=50)):
        add_pod(sched, v)
    add_group(sched, make_pod_group("pg", min_count=2, priority=100))
    for pod in (high("h0"), high("h1")):
        add_pod(sched, pod)
    await run_cycles(sched)
    # v2 (priority 50) is reprieved first; then the group, one victim, does not fit back: it goes whole.
    assert deleted(client) == ["v0", "v1"]


async def test_a_pod_group_deleted_while_its_pods_are_queued_leaves_them_waiting_quietly() -> None:
    sched, client = gated_scheduler("4")
    group = make_pod_group("pg", min_count=2)
    add_group(sched, group)
    for name in ("p1", "p2"):
        add_pod(sched, member(name))
    assert sched.sources.pod_groups is not None
    del sched.sources.pod_groups.store[group.key]
    sched.handlers.pod_group_deleted(group)
    await run_cycles(sched)
    assert client.calls == []
    assert pod_messages(sched) == {}
    assert {sched.queue.where(u) for u in ("p1", "p2")} <= {"unschedulable", "backoff"}


@pytest.mark.parametrize(("pods", "group_priority", "want"), [
    pytest.param([member("p1"), make_pod("p2").uid("p2").scheduler("kubesched").pod_group("pg").priority(7).obj()],
                 None, "all pods in a single pod group should have the same priority as the pod group's priority, "
                       "got 7 and 0", id="a pod's priority is not the group's"),
    pytest.param([high("p1"), high("p2")], None,
                 "all pods in a single pod group should have the same priority as the pod group's priority, "
                 "got 100 and 0", id="the group has no priority of its own"),
    pytest.param([high("p1"), high("p2", never=True)], 100,
                 "all pods in a single pod group should have the same preemption policy, got Never and "
                 "PreemptLowerPriority", id="two preemption policies"),
])
async def test_an_invalid_pod_group_is_a_scheduler_error(pods: list[Pod], group_priority: int | None,
                                                         want: str) -> None:
    sched, client = gated_scheduler("8")
    add_group(sched, make_pod_group("pg", min_count=2, priority=group_priority))
    for pod in pods:
        add_pod(sched, pod)
    await run_cycles(sched)
    assert bound(client) == []
    assert set(pod_messages(sched).values()) == {want}
    assert group_conditions(client) == [{"type": "PodGroupInitiallyScheduled", "status": "False",
                                         "reason": "SchedulerError", "message": want}]


async def test_a_groups_condition_writes_go_one_at_a_time_the_newest_last() -> None:
    """A placed group once stayed Unschedulable on the plane: the False patch of an earlier cycle,
    still in flight, landed after the True one. Writes of one group now wait for each other, and
    of those waiting only the newest is sent."""
    sched, _ = gated_scheduler("2")
    cycles = sched.group_cycles
    assert cycles is not None
    release = asyncio.Event()
    sent: list[str] = []
    in_flight = 0
    most = 0

    async def writer(group: PodGroup, condition: Condition) -> None:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        if not sent and not release.is_set():
            await release.wait()
        sent.append(f"{condition.status}:{condition.message}")
        in_flight -= 1

    cycles.write_condition = writer
    group = make_pod_group("pg")

    def cond(status: str, message: str) -> Condition:
        return Condition(type="PodGroupInitiallyScheduled", status=status, reason="r", message=message)

    cycles._write(group, cond("False", "3 of 4"))
    await asyncio.sleep(0)
    cycles._write(group, cond("False", "2 of 4"))
    cycles._write(group, cond("True", ""))
    release.set()
    await sched._background.wait()
    assert sent == ["False:3 of 4", "True:"]
    assert most == 1
    cycles._write(group, cond("True", "again"))
    await sched._background.wait()
    assert sent[-1] == "True:again"


async def test_a_victim_evicted_leaves_the_placed_pods_prefilter_state() -> None:
    """A reprieve that fails removes the victim from each placed pod's PreFilter state again
    (reprieveVictim's RemovePod extensions), so a later victim is judged without it. Both nodes in
    zone a; the gang's pod must go to n0 and keeps away from app=x in its zone: v0 (app=x, on n1)
    must go, and v1 (1 cpu beside it on n0) fits back. Before the fix the state still counted v0,
    and v1 went too."""
    sched, client = gated_scheduler()
    for name, pool in (("n0", "gang"), ("n1", "other")):
        sched.cache.add_node(make_node(name).capacity(cpu="4").label("topology.kubernetes.io/zone", "a")
                             .label("pool", pool).obj())
    add_pod(sched, make_pod("v0").uid("v0").node("n1").priority(5).labels(app="x").req(cpu="1").obj())
    add_pod(sched, make_pod("v1").uid("v1").node("n0").priority(1).req(cpu="1").obj())
    add_group(sched, make_pod_group("pg", min_count=1, priority=100))
    add_pod(sched, make_pod("h0").uid("h0").scheduler("kubesched").pod_group("pg").priority(100).req(cpu="3")
            .node_selector(pool="gang").pod_affinity(anti=True, topology_key="topology.kubernetes.io/zone", app="x")
            .obj())
    await run_cycles(sched)
    await asyncio.sleep(0.01)  # the victims' deletions run in the background
    assert deleted(client) == ["v0"]


def test_an_assigned_pod_add_asks_the_hints_with_the_pod() -> None:
    """kube-scheduler reports AssignedPodAdd with the added pod (eventhandlers.go addPodToCache), so
    GangScheduling's hint leaves a pod it rejected where it is when a pod of another group is
    bound, and moves it for one of its own group's. Reported without the pod, every bind moved it."""
    sched, _ = gated_scheduler("4")
    for name in ("pg", "other"):
        add_group(sched, make_pod_group(name, min_count=1))
    waiting = member("m0")
    add_pod(sched, waiting)
    info = sched.queue.pop_nowait()
    assert info is not None
    assert info.uid == "m0"
    info.unschedulable_plugins = {"GangScheduling"}  # as a Permit timeout leaves it
    assert sched.queue.add_unschedulable_if_not_present(info)
    add_pod(sched, running("o0", "n0", group="other", cpu="1"))
    assert sched.queue.where("m0") == "unschedulable"
    add_pod(sched, running("m1", "n0", group="pg", cpu="1"))
    assert sched.queue.where("m0") != "unschedulable"
