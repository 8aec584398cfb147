"""NodeResourcesFit and NodeResourcesBalancedAllocation scores against values worked out from
kube-scheduler's int64 arithmetic."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.plugins.helper.shape_score import broken_linear
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from tests.builders import make_node, make_pod
from tests.unit.plugins.score_helpers import scores
from tests.unit.scheduling_helpers import snapshot_with

N1 = make_node("n1").capacity(cpu="4", memory="10000", pods="110")
N2 = make_node("n2").capacity(cpu="6", memory="10000", pods="110")
POD = make_pod("p").req(cpu="3", memory="5000")


@pytest.mark.parametrize(("args", "want"), [
    pytest.param({}, [37, 50], id="LeastAllocated"),
    pytest.param({"scoringStrategy": {"type": "MostAllocated"}}, [62, 50], id="MostAllocated"),
    pytest.param({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}}, [63, 50],
        id="RequestedToCapacityRatio"),
    pytest.param({"scoringStrategy": {"type": "LeastAllocated",
                                      "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]}},
                 [31, 50], id="weights"),
])
def test_fit_scores(args: dict[str, object], want: list[int]) -> None:
    assert scores(node_resources_fit.new(args), POD, [N1, N2]) == want


def test_fit_score_counts_defaults_for_empty_containers() -> None:
    # 100m of 4000m and 200Mi of 10000 bytes (over capacity: 0) -> (97 + 0) / 2
    assert scores(node_resources_fit.NodeResourcesFit(), make_pod("p").req(), [N1]) == [48]


def test_balanced_allocation() -> None:
    # with the pod 0.75/0.5 -> 87, without 0/0 -> 100: 50 + (50 + 87 - 100) / 2 = 68
    assert scores(balanced_allocation.BalancedAllocation(), POD, [N1]) == [68]


def test_balanced_allocation_skips_best_effort() -> None:
    plugin = balanced_allocation.BalancedAllocation()
    snap = snapshot_with([N1])
    status = plugin.pre_score(CycleState(), PodInfo(make_pod("p").obj()), snap, snap.all_rows)
    assert status is not None
    assert status.is_skip()


def test_broken_linear_truncates_toward_zero() -> None:
    table = broken_linear([(0, 100), (30, 0), (100, 50)])
    assert table[0] == 100
    assert table[1] == 97
    assert table[30] == 0
    assert table[31] == 0
    assert table[100] == 50
