"""DefaultPreemption with PodDisruptionBudgets: the violating / non-violating split, the reprieve
order, the candidate lists and the choice (kube-scheduler default_preemption_test.go
TestSelectVictimsOnNode, TestDryRunPreemption and TestSelectBestCandidate's PDB cases, and
preemption/util_test.go's FilterVictimsWithPDBViolation)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import CycleState, FitError, NodeCursor, PodInfo, build_profile, schedule_pod
from kubesched.framework.handle import Handle
from kubesched.model.objects import LabelSelector, ObjectMeta, PodDisruptionBudget
from kubesched.model.objects import PodDisruptionBudgetSpec as Spec
from kubesched.model.objects import PodDisruptionBudgetStatus as PStatus
from kubesched.plugins.default_preemption import DefaultPreemption
from kubesched.plugins.default_preemption.pdb import budgets, split_by_violation
from kubesched.plugins.default_preemption.plugin import Candidate, pick_one_node
from kubesched.plugins.registry import in_tree_registry
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.scheduling_helpers import pod_of, snapshot_with

LOW, MID, HIGH = 0, 100, 1000
# kube-scheduler's test sizes: cpu millicores and memory bytes alike.
SMALL, MEDIUM, LARGE, VERY_LARGE = "100m", "200m", "300m", "500m"


def pdb(allowed: int, disrupted: Sequence[str] = (), namespace: str = "default",
        selector: LabelSelector | None = None, **labels: str) -> PodDisruptionBudget:
    sel = selector if selector is not None else LabelSelector(match_labels=dict(labels or {"app": "foo"}))
    return PodDisruptionBudget(metadata=ObjectMeta(name="pdb", namespace=namespace), spec=Spec(selector=sel),
                               status=PStatus(disruptions_allowed=allowed,
                                              disrupted_pods=dict.fromkeys(disrupted, "2026-01-01T00:00:00Z")))


@dataclass
class StaticPDBs:
    items: list[PodDisruptionBudget] = field(default_factory=list)

    def list(self) -> Sequence[PodDisruptionBudget]:
        return self.items


def victim(name: str, node: str, prio: int, cpu: str, start: int, foo: bool = False) -> PodBuilder:
    b = make_pod(name).uid(name).node(node).priority(prio).req(cpu=cpu, memory=cpu.removesuffix("m"))
    if foo:
        b.labels(app="foo")
    # Distinct start times keep the order of equal-priority victims fixed (older is more important).
    b.obj().status.start_time = f"2026-01-01T00:00:{start:02d}Z"
    return b


def node(name: str, cpu: str = VERY_LARGE) -> NodeBuilder:
    return make_node(name).capacity(cpu=cpu, memory=cpu.removesuffix("m"), pods="110")


def preemptor(cpu: str) -> PodBuilder:
    return make_pod("p").uid("p").priority(HIGH).req(cpu=cpu, memory=cpu.removesuffix("m"))


def evaluate(nodes: list[NodeBuilder], pods: list[PodBuilder], pod: PodBuilder, pdbs: list[PodDisruptionBudget],
             offset: int = 0, **args: int) -> tuple[DefaultPreemption, list[Candidate], PodInfo, CycleState, FitError]:
    snap = snapshot_with(list(nodes), list(pods))
    handle = Handle(snapshot=lambda: snap)
    config = ProfileConfig("kubesched", kube_scheduler_default_plugins(),
                           plugin_args={"DefaultPreemption": dict(args)} if args else {})
    profile = build_profile(config, in_tree_registry(pdbs=StaticPDBs(pdbs)), handle)
    plugin = profile.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    plugin.offset = lambda n: offset % n
    info = PodInfo(pod_of(pod))
    state = CycleState()
    fit = schedule_pod(profile, snap, info, rng=random.Random(0), cursor=NodeCursor(), state=state)
    assert isinstance(fit, FitError)
    candidates, _, error = plugin.find_candidates(state, info, snap.node_infos, fit.diagnosis)
    assert error is None
    return plugin, candidates, info, state, fit


def summary(candidates: list[Candidate]) -> list[tuple[str, list[str], int]]:
    return [(c.name, [v.pod.metadata.name for v in c.victims], c.num_pdb_violations) for c in candidates]


# --- SelectVictimsOnNode ---------------------------------------------------------------------------

@pytest.mark.parametrize(("pods", "pdbs", "want_victims", "want_violations"), [
    pytest.param([victim("victim-pdb", "node1", LOW, MEDIUM, 1, foo=True),
                  victim("victim-no-pdb", "node1", MID, MEDIUM, 2)], [pdb(0)], ["victim-no-pdb"], 0,
                 id="prefer-non-violating-higher-priority-over-violating-lower-priority"),
    pytest.param([victim("v1", "node1", LOW, MEDIUM, 1, foo=True),
                  victim("v2", "node1", MID, MEDIUM, 2, foo=True)], [pdb(0)], ["v1"], 1,
                 id="lower-priority-victim-when-every-choice-violates"),
    # The budget of one is spent on v2 (more important, counted first): v1 violates, is reprieved
    # first and fits back, so v2 goes, as kube-scheduler decides.
    pytest.param([victim("v1", "node1", LOW, MEDIUM, 1, foo=True),
                  victim("v2", "node1", MID, MEDIUM, 2, foo=True)], [pdb(1)], ["v2"], 0,
                 id="the-budget-goes-to-the-more-important-victim"),
    pytest.param([victim("v1", "node1", LOW, MEDIUM, 1, foo=True),
                  victim("v2", "node1", MID, MEDIUM, 2, foo=True)], [pdb(0, namespace="other")], ["v1"], 0,
                 id="a-budget-of-another-namespace"),
    pytest.param([victim("v1", "node1", LOW, MEDIUM, 1, foo=True),
                  victim("v2", "node1", MID, MEDIUM, 2, foo=True)], [pdb(0, selector=LabelSelector())], ["v1"], 0,
                 id="an-empty-selector-protects-nothing"),
])
def test_select_victims_on_node(pods: list[PodBuilder], pdbs: list[PodDisruptionBudget], want_victims: list[str],
                                want_violations: int) -> None:
    _, candidates, *_ = evaluate([node("node1")], pods, preemptor(LARGE), pdbs)
    assert summary(candidates) == [("node1", want_victims, want_violations)]


# --- DryRunPreemption ------------------------------------------------------------------------------

def _two_foo(n: int = 2) -> list[PodBuilder]:
    return [victim(f"p1.{i}", "node1", MID, MEDIUM, i, foo=True) for i in range(1, n + 1)]


@pytest.mark.parametrize(("pods", "budget", "want"), [
    pytest.param(_two_foo(), pdb(1), (["p1.1", "p1.2"], 1), id="violation-of-same-pdb"),
    pytest.param(_two_foo(), pdb(1, disrupted=["p2"]), (["p1.1", "p1.2"], 1),
                 id="eviction-processed-for-another-pod"),
    pytest.param(_two_foo(), pdb(1, disrupted=["p1.2"]), (["p1.1", "p1.2"], 0),
                 id="eviction-processed-for-the-victim"),
    pytest.param(_two_foo(3), pdb(1, disrupted=["p1.3"]), (["p1.1", "p1.2", "p1.3"], 1),
                 id="disrupted-victim-is-non-violating"),
])
def test_dry_run_with_budgets(pods: list[PodBuilder], budget: PodDisruptionBudget,
                              want: tuple[list[str], int]) -> None:
    _, candidates, *_ = evaluate([node("node1")], pods, preemptor(VERY_LARGE), [budget])
    assert summary(candidates) == [("node1", *want)]


def test_the_dry_run_looks_past_enough_candidates_until_one_breaks_no_budget() -> None:
    # offset 4: node5 (violates), node1 (violates), node2 (violates: the list of violating candidates
    # is full, dropped), node3 (does not): enough, and node4 is never tried.
    pods = [victim(f"p{i}", f"node{i}", MID, LARGE, i, foo=i in (1, 2, 5)) for i in range(1, 6)]
    _, candidates, *_ = evaluate([node(f"node{i}") for i in range(1, 6)], pods, preemptor(LARGE), [pdb(0)],
                                 offset=4, minCandidateNodesPercentage=40, minCandidateNodesAbsolute=2)
    assert summary(candidates) == [("node3", ["p3"], 0), ("node5", ["p5"], 1), ("node1", ["p1"], 1)]


def test_the_node_breaking_no_budget_is_chosen_though_its_victims_matter_more() -> None:
    # node1's victim has the lower priority but is protected; node2's breaks nothing.
    pods = [victim("protected", "node1", LOW, LARGE, 1, foo=True), victim("free", "node2", MID, LARGE, 2)]
    plugin, _, info, state, fit = evaluate([node("node1"), node("node2")], pods, preemptor(LARGE), [pdb(0)])
    status, best, nominated = plugin.preempt(state, info, fit)
    assert best is not None
    assert (best.name, nominated) == ("node2", "node2")
    assert status.message() == "found a potential placement for pod on node node2, preempting 1 victims"


def test_when_every_node_breaks_a_budget_the_fewest_violations_win() -> None:
    pods = [victim("a1", "node1", LOW, MEDIUM, 1, foo=True), victim("a2", "node1", LOW, MEDIUM, 2, foo=True),
            victim("b1", "node2", MID, LARGE, 3, foo=True)]
    plugin, candidates, info, state, fit = evaluate([node("node1", "400m"), node("node2")], pods,
                                                    preemptor(LARGE), [pdb(0)])
    assert sorted(summary(candidates)) == [("node1", ["a1", "a2"], 2), ("node2", ["b1"], 1)]
    _, best, _ = plugin.preempt(state, info, fit)
    assert best is not None
    assert best.name == "node2"


# --- FilterVictimsWithPDBViolation and pickOneNodeForPreemption -----------------------------------

@pytest.mark.parametrize(("pods", "pdbs", "violating"), [
    pytest.param([("a", {"app": "foo"}), ("b", {"app": "foo"})], [pdb(1)], ["b"], id="budget-of-one"),
    pytest.param([("a", {}), ("b", {"app": "foo"})], [pdb(0)], ["b"], id="unlabelled-pods-never-violate"),
    pytest.param([("a", {"app": "foo"})], [pdb(5), pdb(0)], ["a"], id="any-matching-budget-below-zero"),
    pytest.param([("a", {"app": "foo"}), ("b", {"app": "foo"})], [pdb(0, disrupted=["a"])], ["b"],
                 id="disrupted-pods-do-not-consume"),
    pytest.param([("a", {"app": "bar"})], [pdb(0)], [], id="no-match"),
    pytest.param([("a", {"app": "foo"})], [pdb(0, selector=LabelSelector(match_labels={"app": "x y"}))], [],
                 id="an-invalid-selector-matches-nothing"),
])
def test_split_by_violation(pods: list[tuple[str, dict[str, str]]], pdbs: list[PodDisruptionBudget],
                            violating: list[str]) -> None:
    infos = [PodInfo(make_pod(name).labels(**labels).obj()) for name, labels in pods]
    bad, good = split_by_violation(infos, budgets(pdbs))
    assert [v.pod.metadata.name for v in bad] == violating
    assert [v.pod.metadata.name for v in good] == [n for n, _ in pods if n not in violating]


def test_pick_one_node_prefers_fewer_pdb_violations_over_lower_priority() -> None:
    low = PodInfo(pod_of(victim("low", "n1", LOW, SMALL, 1)))
    high = PodInfo(pod_of(victim("high", "n2", MID, SMALL, 2)))
    best = pick_one_node([Candidate("n1", [low], 1), Candidate("n2", [high], 0)])
    assert best is not None
    assert best.name == "n2"
