"""`kubesched explain` of a pod in a group, on built caches: the group (PodGroup, minCount, members
queued and bound) and its verdict, which pods fit where and why the group as a whole does not."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from kubesched.backend.cache.cache import Cache
from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.config import load
from kubesched.config.types import SchedulerConfig
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.types import PodInfo
from kubesched.model.coscheduling import CoPodGroup, CoPodGroupSpec
from kubesched.model.objects import ObjectMeta, Pod
from kubesched.model.workload import PodGroup
from kubesched.scheduler.sources import StaticSources, Store
from kubesched.tools.explain.cluster import pending_view
from kubesched.tools.explain.evaluate import explain
from kubesched.tools.explain.group import GroupView, explain_group
from kubesched.tools.explain.render import render_json, render_table
from kubesched.tools.groups import GroupVerdict
from kubesched.tools.simulate.run import build_profiles
from tests.builders import NodeBuilder, make_node, make_pod, make_pod_group
from tests.unit.tools.test_simulate_groups import COSCHED, GATED

MIN4 = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"


def member(name: str, cpu: str = "3", node: str = "", group: str = "g") -> Pod:
    b = make_pod(name).uid(name).scheduler("kubesched").pod_group(group).req(cpu=cpu)
    return (b.node(node) if node else b).obj()


def co_member(name: str, cpu: str = "3", node: str = "") -> Pod:
    b = make_pod(name).uid(name).scheduler("kubesched").label("scheduling.x-k8s.io/pod-group", "g").req(cpu=cpu)
    return (b.node(node) if node else b).obj()


@dataclass
class Seen:
    verdict: GroupVerdict | None
    notes: list[str]
    pod: Pod  # the explained pod, as pending
    profile: Profile
    cache: Cache


def verdict_of(config: SchedulerConfig, nodes: Sequence[NodeBuilder], pods: Sequence[Pod], explained: str,
               groups: Sequence[PodGroup] = (), co_groups: Sequence[CoPodGroup] = ()) -> Seen:
    target = next(p for p in pods if p.metadata.name == explained)
    cache, pending = pending_view([n.obj() for n in nodes], pods, target)
    listed = [pending if p.metadata.uid == target.metadata.uid else p for p in pods]
    sources = StaticSources({"nodes": [n.obj() for n in nodes], "pods": listed})
    sources.co_pod_groups = Store(co_groups)
    states = PodGroupStates(cache, Store(groups)) if config is GATED else None
    for p in listed:
        if states is not None:
            states.add_pod(p)
    profile = next(iter(build_profiles(config, sources, cache, (), states).values()))
    verdict, notes = explain_group(profile, GroupView(cache, listed, states, sources.co_pod_groups), pending)
    return Seen(verdict, notes, pending, profile, cache)


NODES = [make_node(f"n{i}").capacity(cpu="4") for i in range(3)]


def test_a_gang_with_room_for_three_of_four_says_which_pods_fit_and_why_not() -> None:
    pods = [member(f"p{i}") for i in range(4)]
    seen = verdict_of(GATED, NODES, pods, "p0", [make_pod_group("g", min_count=4)])
    verdict = seen.verdict
    assert verdict is not None
    assert not seen.notes
    assert (verdict.group, verdict.api, verdict.policy, verdict.min_count, verdict.queued, verdict.bound,
            verdict.placed, verdict.message) == ("default/g", "PodGroup", "gang", 4, 4, 0, False, MIN4)
    fits = [(m.pod, m.fits, bool(m.node)) for m in verdict.members]
    assert fits == [("default/p0", True, True), ("default/p1", True, True), ("default/p2", True, True),
                    ("default/p3", False, False)]
    last = verdict.members[3]
    assert last.message == "0/3 nodes are available: 3 Insufficient cpu."
    assert last.node_reasons == {"n0": "Insufficient cpu", "n1": "Insufficient cpu", "n2": "Insufficient cpu"}
    assert verdict.members[0].message == f"pod group is unschedulable, {MIN4}"
    # Distinct nodes: each assumed for the next.
    assert len({m.node for m in verdict.members[:3]}) == 3


def test_a_gang_that_fits_is_placed_whole_and_nothing_stays_assumed() -> None:
    pods = [member(f"p{i}") for i in range(3)]
    seen = verdict_of(GATED, NODES, pods, "p1", [make_pod_group("g", min_count=3)])
    verdict = seen.verdict
    assert verdict is not None
    assert verdict.placed
    assert verdict.message == ""
    assert all(m.fits and m.node for m in verdict.members)
    assert verdict.members[0].pod == "default/p1"  # the explained pod first
    assert not seen.cache.assumed_pods()


def test_a_bound_member_counts_and_the_explained_bound_pod_is_pending() -> None:
    pods = [member("p0", node="n0"), member("p1", node="n1"), member("p2")]
    seen = verdict_of(GATED, NODES, pods, "p1", [make_pod_group("g", min_count=3)])
    verdict = seen.verdict
    assert seen.pod.spec.node_name == ""
    assert verdict is not None
    assert (verdict.queued, verdict.bound, verdict.placed) == (2, 1, True)


def test_below_min_count_the_pod_waits_at_pre_enqueue() -> None:
    pods = [member("p0"), member("p1")]
    verdict = verdict_of(GATED, NODES, pods, "p0", [make_pod_group("g", min_count=3)]).verdict
    assert verdict is not None
    assert not verdict.placed
    assert verdict.message == ("GangScheduling keeps the pod out of the scheduling queue: waiting for minCount pods "
                               "from a gang to appear in scheduling queue")


def test_a_missing_pod_group() -> None:
    verdict = verdict_of(GATED, NODES, [member("p0")], "p0").verdict
    assert verdict is not None
    assert verdict.message.startswith("PodGroup default/g not found")


def test_without_the_gate_the_group_is_a_note() -> None:
    seen = verdict_of(load(None), NODES, [member("p0")], "p0")
    assert seen.verdict is None
    assert "GenericWorkload=true" in seen.notes[0]


@pytest.mark.parametrize(("count", "placed", "message"), [
    pytest.param(3, True, "", id="coscheduling-fits"),
    pytest.param(4, False, "minMember (4) cannot be satisfied: 3 scheduled, 0 remaining", id="coscheduling-3-of-4"),
])
def test_a_coscheduling_group(count: int, placed: bool, message: str) -> None:
    group = CoPodGroup(metadata=ObjectMeta(name="g", namespace="default"), spec=CoPodGroupSpec(min_member=count))
    verdict = verdict_of(COSCHED, NODES, [co_member(f"p{i}") for i in range(count)], "p0", co_groups=[group]).verdict
    assert verdict is not None
    assert (verdict.api, verdict.placed, verdict.message) == ("Coscheduling", placed, message)


def test_the_table_and_json_carry_the_group() -> None:
    pods = [member(f"p{i}") for i in range(4)]
    seen = verdict_of(GATED, NODES, pods, "p0", [make_pod_group("g", min_count=4)])
    e = explain(seen.profile, seen.cache.snapshot(), PodInfo(seen.pod))
    e.group = seen.verdict
    table = render_table(e)
    assert "GROUP default/g   PodGroup (gang, min 4)   4 queued, 0 bound" in table
    assert "  n0 n1 n2" in table
    assert "Insufficient cpu" in table
    assert f"group: not placed: {MIN4}" in table
    doc = json.loads(render_json(e))
    assert doc["group"]["message"] == MIN4
    assert doc["group"]["pods"][3]["nodeReasons"] == {"n0": "Insufficient cpu", "n1": "Insufficient cpu",
                                                       "n2": "Insufficient cpu"}


@pytest.mark.parametrize(("node_cpus", "min_member", "pods", "bound"), [
    pytest.param(("4", "4", "4"), 3, 3, 0, id="fits-whole"),
    pytest.param(("4", "4", "4"), 4, 4, 0, id="room-for-3-of-4"),
    pytest.param(("4", "4"), 3, 3, 0, id="room-for-2-of-3"),
    pytest.param(("4", "4", "500m"), 3, 3, 0, id="one-node-too-small"),
    pytest.param(("4", "4", "4"), 4, 2, 0, id="too-few-siblings"),
    pytest.param(("4", "4", "4"), 3, 2, 1, id="one-bound-two-queued"),
])
async def test_a_coscheduling_verdict_tells_each_pod_what_the_scheduler_writes(
        node_cpus: tuple[str, ...], min_member: int, pods: int, bound: int) -> None:
    """explain of a Coscheduling group runs the scheduler's whole-group cycle: each pod's message is
    the one the scheduler writes for it on the same cluster, but for the tail pod-group preemption
    adds (explain does not run it: it would evict pods)."""
    from tests.unit.scheduler.test_schedule_one_cogroup import add_group, add_pods, co_scheduler, run_cycles
    from tests.unit.scheduler.test_schedule_one_podgroup import pod_messages

    members = [co_member(f"p{i}", node="n0" if i < bound else "", cpu="1" if i < bound else "3")
               for i in range(pods + bound)]
    sched, _ = co_scheduler(*node_cpus)
    add_group(sched, "g", min_member)
    add_pods(sched, *members)
    for p in members[:bound]:
        sched.cache.add_pod(p)
    await run_cycles(sched)
    written = {pod: message.split(", pod group preemption: ")[0] for pod, message in pod_messages(sched).items()}

    group = CoPodGroup(metadata=ObjectMeta(name="g", namespace="default", creation_timestamp="2026-01-01T00:00:00Z"),
                       spec=CoPodGroupSpec(min_member=min_member))
    nodes = [make_node(f"n{i}").capacity(cpu=cpu) for i, cpu in enumerate(node_cpus)]
    queued = members[bound:]
    seen = verdict_of(COSCHED, nodes, members, queued[0].metadata.name, co_groups=[group])
    assert seen.verdict is not None
    told = {m.pod.split("/")[1]: m.message for m in seen.verdict.members if m.message}
    assert told == written, (told, written)
