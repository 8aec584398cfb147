"""Which node of equal best totals a cycle takes: kube-scheduler v1.37.2 draws no random tie-break
unless an extender scored the node (schedule_one.go prioritizeNodes sets Randomizer only there);
schedulePod takes NewSortedScoredNodes(list).Pop() (framework/sorted_nodes.go), a container/heap
over the feasible nodes in the order the search found them, from nextStartNodeIndex."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework import NodeCursor, PodInfo, ScheduleResult, schedule_pod
from kubesched.framework.runtime.profile import Profile, build_profile
from kubesched.framework.runtime.schedule import select_host
from kubesched.framework.snapshot import Snapshot
from kubesched.tools.explain.evaluate import explain
from kubesched.tools.simulate.place import Placer
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import cache_with, default_profile, snapshot_with


def _go_heap_pop(totals: list[int]) -> int:
    """A line-by-line port of Go's container/heap Init and Pop with nodeScoreHeap's Less (a higher
    TotalScore first; Randomizer 0 for every node): the index, in `totals`, of the popped node."""
    h = list(range(len(totals)))

    def less(i: int, j: int) -> bool:
        return totals[h[i]] > totals[h[j]]

    def down(i0: int, n: int) -> None:
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and less(j2, j1):
                j = j2
            if not less(j, i):
                break
            h[i], h[j] = h[j], h[i]
            i = j

    n = len(h)
    for i in range(n // 2 - 1, -1, -1):
        down(i, n)
    last = n - 1
    h[0], h[last] = h[last], h[0]
    down(0, last)
    return h.pop()


@pytest.mark.parametrize(("totals", "want"), [
    # schedule_one_test.go Test_SelectHost's lists, with the Randomizer an extender would draw left at 0.
    pytest.param([1, 2], 1, id="unique-properly-ordered"),
    pytest.param([2, 2, 2], 0, id="equal-scores"),
    pytest.param([3, 2, 1, 3], 0, id="out-of-order-first-best-at-root"),
    # By hand, Init's siftDowns from n/2-1 to 0; a parent swaps only with a child strictly above it,
    # the left child unless the right one is strictly above the left.
    pytest.param([5, 10, 10], 1, id="left-child-among-equal-children"),
    pytest.param([1, 5, 10], 2, id="right-child-strictly-above"),
    # i=1: 10 at 3 rises over 2; i=0: children 10 (from 3) and 10 (at 2), the left wins: index 3,
    # though index 2 comes first in the list.
    pytest.param([1, 2, 10, 10, 0, 0, 0], 3, id="deeper-left-subtree-before-earlier-right-child"),
    pytest.param([1, 5, 10, 10], 3, id="grandchild-left-before-right-child"),
    pytest.param([7], 0, id="one-node"),
])
def test_select_host(totals: list[int], want: int) -> None:
    assert _go_heap_pop(totals) == want
    assert select_host(np.array(totals, dtype=np.int64)) == want


@settings(deadline=None)  # a loaded CI machine must not turn slowness into a failure
@given(st.lists(st.integers(0, 3), min_size=1, max_size=300))
def test_select_host_is_go_heap_pop(totals: list[int]) -> None:
    assert select_host(np.array(totals, dtype=np.int64)) == _go_heap_pop(totals)


class Fixed:
    """A Score plugin giving each node the score its name maps to."""

    name = "Fixed"

    def __init__(self, scores: dict[str, int]) -> None:
        self.scores = scores

    def score(self, state: Any, pod: PodInfo, node: Any, snapshot: Snapshot) -> int:
        return self.scores[node.name]


def fixed_profile(scores: dict[str, int]) -> Profile:
    config = ProfileConfig("test", {"score": (PluginRef("Fixed", 1),)})
    return build_profile(config, {"Fixed": lambda args: Fixed(scores)})


NAMES = [f"n{i}" for i in range(7)]


@pytest.mark.parametrize(("scores", "start", "want"), [
    pytest.param([0] * 7, 0, "n0", id="all-equal-from-0"),
    pytest.param([0] * 7, 2, "n2", id="all-equal-from-the-start-index"),
    # Feasible order n0..n6: totals 1 2 10 10 0 0 0, the heap's root is the fourth.
    pytest.param([1, 2, 10, 10, 0, 0, 0], 0, "n3", id="heap-order-not-list-order"),
    # From index 2 the feasible list is n2 n3 n4 n5 n6 n0 n1: n2 is its first node and a best one.
    pytest.param([1, 2, 10, 10, 0, 0, 0], 2, "n2", id="rotated-by-the-start-index"),
    # From index 5: n5 n6 n0 n1 n2 n3 n4, totals 0 0 1 2 10 10 0. Init, i=2: children n3 (10) and
    # n4 (0), n3 rises to 2; i=1: children n1 (2) and n2 (10), n2 rises to 1; i=0: children n2 (10)
    # and n3 (10), neither strictly above the other, the left: n2.
    pytest.param([1, 2, 10, 10, 0, 0, 0], 5, "n2", id="rotated-to-the-tail"),
])
def test_schedule_pod_takes_the_heap_root_whatever_the_seed(scores: list[int], start: int, want: str) -> None:
    profile = fixed_profile(dict(zip(NAMES, scores, strict=True)))
    snap = snapshot_with([make_node(n) for n in NAMES])
    picks = set()
    for seed in range(30):
        result = schedule_pod(profile, snap, PodInfo(make_pod("p").obj()), rng=random.Random(seed),
                              cursor=NodeCursor(start))
        assert isinstance(result, ScheduleResult)
        picks.add(result.suggested_host)
    assert picks == {want}


def test_default_profile_on_equal_nodes_takes_the_first() -> None:
    """Equal empty nodes tie on every default plugin: the first of the search, whatever the seed."""
    nodes = [make_node(f"n{i}") for i in range(5)]
    snap = snapshot_with(list(nodes))
    for seed in range(20):
        result = schedule_pod(default_profile(), snap, PodInfo(make_pod("p").obj()), rng=random.Random(seed),
                              cursor=NodeCursor(3))
        assert isinstance(result, ScheduleResult)
        assert result.suggested_host == "n3"


def test_simulate_places_ties_on_the_search_order_whatever_the_seed() -> None:
    """Four equal 2-cpu nodes, four 1-cpu pods: every cycle examines every node (fewer than 100), so
    each search starts at n0 and the feasible list is n0 n1 n2 n3; a placed pod lowers its node's
    total. The first pod takes n0 (the root), the second n1 (the first child, n2 and n3 below it).
    For the third, totals low low high high: Init lifts n3 over n1 at position 1, then the root
    takes the left of its two equal children, n3, not n2; the fourth takes n2."""
    for seed in (0, 1, 7):
        cache = cache_with([make_node(f"n{i}").capacity(cpu="2") for i in range(4)])
        placer = Placer({"kubesched": default_profile()}, cache, rng=random.Random(seed))
        placed = placer.place_all([make_pod(f"p{i}").req(cpu="1").obj() for i in range(4)])
        assert [p.node for p in placed] == ["n0", "n1", "n3", "n2"]


def test_explain_cycle_pick_is_the_first_of_the_tie() -> None:
    snap = snapshot_with([make_node(f"n{i}") for i in range(4)])
    out = explain(default_profile(), snap, PodInfo(make_pod("p").obj()))
    assert out.selected == ["n0", "n1", "n2", "n3"]
    assert out.cycle_pick == "n0"
