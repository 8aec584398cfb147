"""The scheduling algorithm: FailedScheduling messages, the adaptive node count, selection."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework import FitError, NodeCursor, PodInfo, ScheduleResult, num_feasible_nodes_to_find, schedule_pod
from kubesched.framework.runtime import filtering
from tests.builders import NodeBuilder, PodBuilder, label_selector, make_node, make_pod, term
from tests.unit.scheduling_helpers import default_profile, schedule, snapshot_with

CP = make_node("cp").taint("node-role.kubernetes.io/control-plane")
FOO = label_selector("foo")


@pytest.mark.parametrize(("nodes", "existing", "pod", "message"), [
    pytest.param([make_node("a").taint("x"), make_node("b").taint("y"), make_node("c").taint("z")], [],
                 make_pod("p"), "0/3 nodes are available: 3 node(s) had untolerated taint(s).", id="taints"),
    pytest.param([make_node("a").capacity(cpu="1"), make_node("b").capacity(memory="1Gi"),
                  make_node("c").capacity(pods="1")], [make_pod("q").node("c")],
                 make_pod("p").req(cpu="2", memory="2Gi"),
                 "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 Too many pods.",
                 id="resources"),
    pytest.param([make_node("a").unschedulable(), make_node("b").label("zone", "x"), make_node("c").label("zone", "y"),
                  make_node("d").taint("t"), make_node("e").taint("t")], [],
                 make_pod("p").node_selector(zone="z"),
                 "0/5 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
                 "affinity/selector, 2 node(s) had untolerated taint(s).", id="mixed"),
    pytest.param([make_node("a").capacity(example_com__gpu="1"), make_node("b")],
                 [make_pod("q").node("a").req(example_com__gpu="1")], make_pod("p").req(example_com__gpu="1"),
                 "0/2 nodes are available: 2 Insufficient example.com/gpu.", id="extended"),
    pytest.param([make_node("a")], [], make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["b"]),))),
                 "0/1 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity].", id="prefilter-names"),
    # No node has the constraint's key: PodTopologySpread's Filter rejects each, ErrReasonNodeLabelNotMatch.
    pytest.param([make_node("a"), make_node("b")], [], make_pod("p").label("foo", "").spread(1, "rack", selector=FOO),
                 "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints (missing required "
                 "label).", id="spread-key-on-no-node"),
])
def test_fit_error_message(nodes: list[NodeBuilder], existing: list[PodBuilder], pod: PodBuilder,
                           message: str) -> None:
    result = schedule(list(nodes), pod, list(existing))
    assert isinstance(result, FitError)
    assert result.message() == message


def test_fit_error_keeps_per_node_statuses() -> None:
    result = schedule([make_node("a").taint("x"), make_node("b").capacity(cpu="1")], make_pod("p").req(cpu="2"))
    assert isinstance(result, FitError)
    statuses = result.diagnosis.node_to_status
    assert statuses["a"].plugin == "TaintToleration"
    assert statuses["b"].reasons == ("Insufficient cpu",)
    assert statuses["b"].plugin == "NodeResourcesFit"
    assert result.diagnosis.unschedulable_plugins == {"TaintToleration", "NodeResourcesFit"}


def test_no_nodes() -> None:
    result = schedule([], make_pod("p"))
    assert isinstance(result, FitError)
    assert result.message() == "no nodes available to schedule pods"


@pytest.mark.parametrize(("nodes", "want"), [(1, 1), (99, 99), (100, 100), (1000, 420), (5000, 500), (6000, 300)])
def test_num_feasible_nodes_to_find(nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(0, nodes) == want


def test_percentage_configured() -> None:
    assert num_feasible_nodes_to_find(10, 2000) == 200
    assert num_feasible_nodes_to_find(1, 2000) == 100


def test_picks_least_allocated_node() -> None:
    result = schedule([make_node("a"), make_node("b")], make_pod("p").req(cpu="1"),
                      [make_pod("q").node("a").req(cpu="2")])
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "b"
    assert set(result.total_scores()) == {"a", "b"}


def test_soft_spread_on_a_key_no_node_has_scores_zero() -> None:
    """By hand from PodTopologySpread's PreScore/NormalizeScore: explicit constraints require their
    keys, so with no node having a zone every node is in IgnoredNodes and normalizes to 0 (an
    int64 score like every plugin's, added into the total)."""
    result = schedule([make_node("a"), make_node("b")],
                      make_pod("p").label("foo", "").spread(1, "zone", "ScheduleAnyway", FOO))
    assert isinstance(result, ScheduleResult)
    assert result.plugin_scores()["PodTopologySpread"] == {"a": 0, "b": 0}


def test_avoids_prefer_no_schedule_taint() -> None:
    result = schedule([make_node("a").taint("x", effect="PreferNoSchedule"), make_node("b")], make_pod("p"))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "b"


def test_ties_are_not_broken_at_random() -> None:
    """kube-scheduler v1.37.2 draws a tie-break only for nodes an extender scored: equal nodes give
    the first of the search whatever the seed (test_select_host.py has the heap's order)."""
    nodes = [make_node(f"n{i}") for i in range(5)]
    picks = {schedule(list(nodes), make_pod("p"), seed=s).suggested_host for s in range(40)}  # type: ignore[union-attr]
    assert picks == {"n0"}


def test_search_stops_at_adaptive_count_and_rotates() -> None:
    snap = snapshot_with([make_node(f"n{i:04d}") for i in range(1000)])
    cursor = NodeCursor()
    result = schedule_pod(default_profile(), snap, PodInfo(make_pod("p").obj()), rng=random.Random(0), cursor=cursor)
    assert isinstance(result, ScheduleResult)
    assert result.feasible_nodes == 420
    assert result.evaluated_nodes == 420
    assert cursor.next_start_node_index == 420
    schedule_pod(default_profile(), snap, PodInfo(make_pod("q").obj()), rng=random.Random(0), cursor=cursor)
    assert cursor.next_start_node_index == 840
    schedule_pod(default_profile(), snap, PodInfo(make_pod("r").obj()), rng=random.Random(0), cursor=cursor)
    assert cursor.next_start_node_index == 260


def test_rejected_nodes_count_as_processed() -> None:
    nodes = [make_node(f"n{i:04d}").taint("x") if i < 10 else make_node(f"n{i:04d}") for i in range(200)]
    cursor = NodeCursor()
    result = schedule_pod(default_profile(), snapshot_with(list(nodes)), PodInfo(make_pod("p").obj()),
                          rng=random.Random(0), cursor=cursor)
    assert isinstance(result, ScheduleResult)
    assert result.feasible_nodes == 100
    assert result.evaluated_nodes == 110
    assert cursor.next_start_node_index == 110


def test_single_feasible_node_is_not_scored() -> None:
    result = schedule([make_node("a"), CP], make_pod("p"))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "a"
    assert result.total_scores() == {}


@settings(deadline=None)  # a loaded CI machine must not turn slowness into a failure
@given(st.lists(st.booleans(), max_size=40) | st.none(), st.integers(0, 60), st.integers(0, 45), st.integers(1, 40))
def test_first_feasible_from_start_wraps_around(passing: list[bool] | None, start: int, want: int, m: int) -> None:
    """The sampled search's first `want` passing positions from `start`, wrapping: those of the
    passing positions rotated to begin at `start`."""
    if passing is not None:
        m = len(passing)
    if m == 0:
        return
    start %= m
    mask = None if passing is None else np.array(passing, dtype=np.bool_)
    candidates = np.arange(m, dtype=np.intp) if mask is None else np.flatnonzero(mask)
    rotated = [p for p in candidates.tolist() if p >= start] + [p for p in candidates.tolist() if p < start]
    assert filtering._first_from(mask, m, start, want).tolist() == rotated[:want]


def test_node_affinity_preferred_scores_through_the_profile() -> None:
    """TestNodeAffinityPriority "only node1 matches the preferred scheduling requirements of pod",
    through the default profile: NodeAffinity's normalized scores are MaxNodeScore, 0, 0 (int64
    scores, added into the weighted total), and node1 is chosen."""
    nodes = [make_node("node1").label("foo", "bar"), make_node("node2").label("key", "value"),
             make_node("node3").label("az", "az1")]
    result = schedule(list(nodes), make_pod("p").preferred(2, ("foo", "In", ["bar"])))
    assert isinstance(result, ScheduleResult)
    assert result.plugin_scores()["NodeAffinity"] == {"node1": 100, "node2": 0, "node3": 0}
    assert result.suggested_host == "node1"


def test_node_affinity_added_affinity_fit_error() -> None:
    """TestNodeAffinity's "Doesn't match added affinity" and "Matches added affinity but not Pod's
    node affinity" on one cycle: node-a has zone=foo (errReasonEnforced), node-b zone=bar but not the
    Pod's rack=1 (ErrReasonPod); the reasons are counted and sorted as in FitError.Error."""
    profile = default_profile(NodeAffinity={"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["bar"]}]}]}}})
    nodes = [make_node("node-a").label("zone", "foo"), make_node("node-b").label("zone", "bar"),
             make_node("node-c").label("zone", "foo").label("rack", "1")]
    result = schedule(list(nodes), make_pod("p").node_selector(rack="1"), profile=profile)
    assert isinstance(result, FitError)
    assert result.message() == ("0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                                "2 node(s) didn't match scheduler-enforced node affinity.")
    assert result.diagnosis.node_to_status["node-b"].reasons == ("node(s) didn't match Pod's node affinity/selector",)
