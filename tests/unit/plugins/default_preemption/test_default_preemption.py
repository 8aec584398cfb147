"""DefaultPreemption (kube-scheduler defaultpreemption / preemption): eligibility, the dry run's
victims, the candidate choice, the messages, and the writes it spawns."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest

from kubesched.api.pod_status import disruption_target_patch, pod_scheduled_patch
from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import CycleState, FitError, NodeCursor, PodInfo, Profile, build_profile, schedule_pod
from kubesched.framework.fit_error import Diagnosis
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NOMINATED_NODE_KEY
from kubesched.framework.runtime.framework import run_post_filter
from kubesched.framework.status import Code, Status
from kubesched.model.objects import Pod, PodCondition
from kubesched.plugins.default_preemption import DefaultPreemption, parse_args
from kubesched.plugins.default_preemption.plugin import Candidate, pick_one_node
from kubesched.plugins.registry import in_tree_registry
from tests.builders import NodeBuilder, PodBuilder, affinity_term, make_node, make_pod
from tests.unit.scheduling_helpers import pod_of, snapshot_with


@dataclass
class Writes:
    spawned: list[Coroutine[Any, Any, Any]] = field(default_factory=list)
    nominated: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[tuple[str, str]] = field(default_factory=list)
    disrupted: list[tuple[str, str]] = field(default_factory=list)
    preemptors: list[str | None] = field(default_factory=list)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> object:
        self.spawned.append(coro)
        return None

    async def nominate(self, pod: Pod, node: str) -> Status | None:
        self.nominated.append((pod.metadata.name, node))
        return None

    async def disrupt(self, pod: Pod, message: str) -> Status | None:
        self.disrupted.append((pod.metadata.name, message))
        return None

    async def delete(self, pod: Pod, message: str, preemptor: Pod | None) -> Status | None:
        self.deleted.append((pod.metadata.name, message))
        self.preemptors.append(preemptor.metadata.name if preemptor is not None else None)
        return None

    def run(self) -> None:
        async def all_of() -> None:
            for c in self.spawned:
                await c
        if self.spawned:
            asyncio.run(all_of())


@dataclass
class Run:
    status: Status | None
    fit: FitError
    plugin: DefaultPreemption
    writes: Writes
    state: CycleState

    @property
    def nominated(self) -> str | None:
        """What the failure handler writes to status.nominatedNodeName ("" clears, None leaves it)."""
        value: str | None = self.state.get(NOMINATED_NODE_KEY)
        return value

    @property
    def message(self) -> str:
        return self.fit.message()


def node(name: str, cpu: str = "4") -> NodeBuilder:
    return make_node(name).capacity(cpu=cpu)


def low(name: str, on: str, prio: int, cpu: str = "2", start: str | None = None) -> PodBuilder:
    b = make_pod(name).node(on).priority(prio).req(cpu=cpu)
    b.obj().status.start_time = start
    return b


def preemptor(cpu: str = "2", prio: int = 10) -> PodBuilder:
    return make_pod("p").uid("uid-p").priority(prio).req(cpu=cpu)


def run(nodes: list[NodeBuilder], pods: list[PodBuilder], pod: PodBuilder | Pod, offset: int = 0,
        **args: Any) -> Run:
    snap = snapshot_with(list(nodes), list(pods))
    writes = Writes()
    handle = Handle(snapshot=lambda: snap, spawn=writes.spawn, nominate_pod=writes.nominate,
                    delete_victim=writes.delete, disrupt_victim=writes.disrupt)
    config = ProfileConfig("kubesched", kube_scheduler_default_plugins(),
                           plugin_args={"DefaultPreemption": args} if args else {})
    profile: Profile = build_profile(config, in_tree_registry(), handle)
    plugin = profile.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    assert plugin.profile is profile
    plugin.offset = lambda n: offset % n
    info = PodInfo(pod_of(pod))
    state = CycleState()
    fit = schedule_pod(profile, snap, info, rng=random.Random(0), cursor=NodeCursor(), state=state)
    assert isinstance(fit, FitError)
    status = run_post_filter(profile, state, info, fit)
    # What the scheduler's task set would run after the cycle.
    writes.run()
    return Run(status, fit, plugin, writes, state)


def test_victims_are_the_fewest_lowest_priority_pods_that_make_room() -> None:
    # 4 cpu; the preemptor needs 2: removing both frees 4, reprieving mid (more important) still fits.
    r = run([node("n1")], [low("low", "n1", 1), low("mid", "n1", 5)], preemptor())
    assert r.status is None
    assert r.message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement "
                         "for pod on node n1, preempting 1 victims")
    assert r.nominated == "n1"
    assert r.writes.nominated == []
    assert r.writes.disrupted == [("low", "default-scheduler: preempting to accommodate a higher priority pod")]
    assert r.writes.deleted == [("low", "Preempted by pod uid-p on node n1")]


def test_victims_most_important_first_and_only_those_needed() -> None:
    # The preemptor needs 3 cpu of 4: b (most important) is reprieved, then neither c nor a fits back.
    r = run([node("n1")], [low("a", "n1", 1, cpu="1"), low("b", "n1", 3, cpu="1"), low("c", "n1", 2)],
            preemptor(cpu="3"))
    assert r.status is None
    assert r.message.endswith("preemption: found a potential placement for pod on node n1, preempting 2 victims")
    assert [name for name, _ in r.writes.deleted] == ["c", "a"]


@pytest.mark.parametrize(("pods", "want"), [
    # Lowest highest-victim priority.
    ([low("a", "n1", 3), low("b", "n2", 1)], "n2"),
    # Same highest priority: the smallest sum of priorities (each counted + 2^31, so fewer pods win).
    ([low("a", "n1", 1, cpu="1"), low("a2", "n1", 1, cpu="1"), low("b", "n2", 1)], "n2"),
    # All else equal: the latest start of the highest-priority victims.
    ([low("a", "n1", 1, start="2026-01-01T00:00:00Z"), low("b", "n2", 1, start="2026-02-01T00:00:00Z")], "n2"),
    ([low("a", "n1", 1, start="2026-03-01T00:00:00Z"), low("b", "n2", 1, start="2026-02-01T00:00:00Z")], "n1"),
], ids=["lowest-highest-priority", "smallest-sum", "latest-start", "latest-start-first"])
def test_candidate_order(pods: list[PodBuilder], want: str) -> None:
    # Fill each node's other 2 cpu with a pod of the preemptor's priority, which is never a victim.
    keep = [make_pod(f"keep-{n}").node(n).priority(10).req(cpu="2") for n in ("n1", "n2")]
    r = run([node("n1"), node("n2")], [*pods, *keep], preemptor())
    assert r.status is None
    assert f"on node {want}," in r.message


def test_pick_one_node_falls_back_to_the_first_candidate() -> None:
    a = PodInfo(pod_of(low("a", "n1", 1, start="2026-01-01T00:00:00Z")))
    b = PodInfo(pod_of(low("b", "n2", 1, start="2026-01-01T00:00:00Z")))
    assert pick_one_node([Candidate("n1", [a]), Candidate("n2", [b])]).name == "n1"  # type: ignore[union-attr]
    assert pick_one_node([]) is None


def test_preemption_policy_never_is_not_eligible() -> None:
    p = pod_of(preemptor())
    p.spec.preemption_policy = "Never"
    r = run([node("n1")], [low("low", "n1", 1), low("mid", "n1", 5)], p)
    assert r.status is not None
    assert r.status.code == Code.UNSCHEDULABLE
    assert r.message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
                         "preemptionPolicy=Never.")
    assert r.writes.deleted == []
    assert r.nominated is None  # not eligible: the nomination is left as it is


def test_a_terminating_victim_on_the_nominated_node_makes_the_pod_wait() -> None:
    victim = low("low", "n1", 1, cpu="3")
    v = victim.obj()
    v.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    v.status.conditions = [PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")]
    p = pod_of(preemptor())
    p.status.nominated_node_name = "n1"
    r = run([node("n1")], [victim], p)
    assert r.message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a "
                         "terminating pod on the nominated node.")


def test_no_lower_priority_pods() -> None:
    pods = [make_pod(f"eq-{n}").node(n).priority(10).req(cpu="3") for n in ("n1", "n2")]
    r = run([node("n1"), node("n2")], pods, preemptor())
    assert r.status is not None
    assert r.status.code == Code.UNSCHEDULABLE
    assert r.message == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                         "2 No preemption victims found for incoming pod.")
    assert r.nominated == ""  # no candidate: the nomination is cleared


def test_unresolvable_nodes_are_not_candidates() -> None:
    pods = [low("low", "n1", 1, cpu="3"), make_pod("eq").node("n2").priority(10).req(cpu="3")]
    r = run([node("n1").unschedulable(), node("n2")], pods, preemptor())
    assert r.message == ("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. "
                         "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
                         "1 Preemption is not helpful for scheduling.")
    assert r.writes.deleted == []


def test_no_potential_node_at_all() -> None:
    r = run([node("n1").unschedulable()], [], preemptor())
    assert r.message == ("0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are "
                         "available: 1 Preemption is not helpful for scheduling.")


def test_removing_every_victim_is_not_enough() -> None:
    # A pod of the preemptor's priority keeps too much: the node's status is the filter's.
    keep = make_pod("keep").node("n1").priority(10).req(cpu="2")
    r = run([node("n1")], [low("low", "n1", 1, cpu="1"), keep], preemptor(cpu="3"))
    assert r.message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                         "1 Insufficient cpu.")


@pytest.mark.parametrize(("offset", "want"), [(0, "n1"), (1, "n2"), (2, "n3"), (4, "n2")])
def test_the_dry_run_stops_at_enough_candidates_from_the_offset(offset: int, want: str) -> None:
    # n2 would be the best candidate; with one candidate wanted, the first one from the offset wins.
    pods = [low("a", "n1", 5, cpu="3"), low("b", "n2", 1, cpu="3"), low("c", "n3", 4, cpu="3")]
    r = run([node("n1"), node("n2"), node("n3")], pods, preemptor(), offset=offset,
            minCandidateNodesAbsolute=1, minCandidateNodesPercentage=0)
    assert f"on node {want}," in r.message


def test_with_enough_candidates_wanted_the_best_wins() -> None:
    pods = [low("a", "n1", 5, cpu="3"), low("b", "n2", 1, cpu="3"), low("c", "n3", 4, cpu="3")]
    r = run([node("n1"), node("n2"), node("n3")], pods, preemptor())
    assert "on node n2," in r.message


def test_num_candidates() -> None:
    pl = DefaultPreemption()
    assert [pl.num_candidates(n) for n in (5, 100, 1000, 2000)] == [5, 100, 100, 200]


def test_anti_affinity_victims_are_removed_through_the_prefilter_extensions() -> None:
    # The preemptor refuses to share a node with app=x; the low-priority app=x pod goes.
    p = preemptor(cpu="1").affinity_term(affinity_term(match_labels={"app": "x"},
                                                       topology_key="kubernetes.io/hostname"), anti=True)
    victim = low("x", "n1", 1, cpu="1").labels(app="x")
    n1 = node("n1").label("kubernetes.io/hostname", "n1")
    r = run([n1], [victim], p)
    assert r.status is None
    assert r.message.endswith("preemption: found a potential placement for pod on node n1, preempting 1 victims")


def test_the_dry_run_leaves_the_cycle_state_and_snapshot_alone() -> None:
    snap = snapshot_with([node("n1")], [low("low", "n1", 1), low("mid", "n1", 5)])
    writes = Writes()
    handle = Handle(snapshot=lambda: snap, spawn=writes.spawn, nominate_pod=writes.nominate,
                    delete_victim=writes.delete, disrupt_victim=writes.disrupt)
    profile = build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(), handle)
    info = PodInfo(pod_of(preemptor()))
    state = CycleState()
    fit = schedule_pod(profile, snap, info, rng=random.Random(0), cursor=NodeCursor(), state=state)
    assert isinstance(fit, FitError)
    run_post_filter(profile, state, info, fit)
    writes.run()
    assert len(snap.node_infos[0].pods) == 2
    again = schedule_pod(profile, snap, info, rng=random.Random(0), cursor=NodeCursor())
    assert isinstance(again, FitError)


@pytest.mark.parametrize(("raw", "errors"), [
    ({}, []),
    ({"minCandidateNodesPercentage": 101}, ["minCandidateNodesPercentage: Invalid value: 101: not in valid range "
                                            "[0, 100]"]),
    ({"minCandidateNodesAbsolute": -1}, ["minCandidateNodesAbsolute: Invalid value: -1: not in valid range "
                                         "[0, inf)"]),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     ["minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
      "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"]),
], ids=["defaults", "percentage-range", "absolute-negative", "both-zero"])
def test_args(raw: dict[str, int], errors: list[str]) -> None:
    errs: list[Any] = []
    parsed = parse_args(raw, "args", errs)
    assert [str(e).removeprefix("args.") for e in errs] == errors
    if not errors:
        assert parsed == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}


def test_a_victim_this_plugin_deleted_counts_as_terminating_without_its_condition() -> None:
    victim = low("low", "n1", 1, cpu="3")
    victim.obj().metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    p = pod_of(preemptor())
    p.status.nominated_node_name = "n1"
    snap = snapshot_with([node("n1")], [victim])
    pl = DefaultPreemption(handle=Handle(snapshot=lambda: snap))
    diagnosis = Diagnosis(node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu")})
    assert pl.eligible(p, diagnosis) == (True, "")
    pl.preempted.add(victim.obj().metadata.uid)
    assert pl.eligible(p, diagnosis) == (False, "not eligible due to a terminating pod on the nominated node.")
    # The nominated node is unresolvable now: preempting elsewhere is allowed.
    gone = Diagnosis(node_to_status={"n1": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x")})
    assert pl.eligible(p, gone) == (True, "")


@pytest.mark.parametrize(("old", "nominated", "clear", "want"), [
    ("", "n1", True, "n1"),
    ("n1", "n1", True, None),
    ("n2", "n1", True, "n1"),
    ("n2", "", True, "clear"),
    ("n2", "", False, None),
], ids=["set", "unchanged", "moved", "cleared", "left"])
def test_the_condition_patch_carries_the_nomination(old: str, nominated: str, clear: bool, want: str | None) -> None:
    pod = pod_of(make_pod("p"))
    pod.status.nominated_node_name = old
    patch = pod_scheduled_patch(pod, "Unschedulable", "m", dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
                                clear_nominated_node=clear, nominated_node=nominated)
    assert patch is not None
    status = orjson.loads(patch)["status"]
    if want is None:
        assert "nominatedNodeName" not in status
    else:
        assert status["nominatedNodeName"] == (None if want == "clear" else want)


def test_the_disruption_target_patch() -> None:
    pod = pod_of(make_pod("victim"))
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    patch = disruption_target_patch(pod, "kubesched: preempting to accommodate a higher priority pod", now)
    assert patch is not None
    assert orjson.loads(patch) == {"status": {
        "$setElementOrder/conditions": [{"type": "DisruptionTarget"}],
        "conditions": [{"lastProbeTime": None, "lastTransitionTime": "2026-01-01T00:00:00Z",
                        "message": "kubesched: preempting to accommodate a higher priority pod",
                        "reason": "PreemptionByScheduler", "status": "True", "type": "DisruptionTarget"}]}}
    pod.status.conditions = [PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler",
                                          message="kubesched: preempting to accommodate a higher priority pod")]
    assert disruption_target_patch(pod, "kubesched: preempting to accommodate a higher priority pod", now) is None
