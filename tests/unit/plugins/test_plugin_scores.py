"""Score formulas against values worked out from kube-scheduler's int64 arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.plugins import image_locality, taint_toleration
from kubesched.plugins.node_affinity import plugin as node_affinity
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.plugins.node_resources.scoring import broken_linear
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with


def scores(plugin: object, pod: PodBuilder, nodes: list[NodeBuilder]) -> list[int]:
    snap = snapshot_with(list(nodes))
    info, state = PodInfo(pod.obj()), CycleState()
    pre = getattr(plugin, "pre_score", None)
    if pre is not None:
        pre(state, info, snap, snap.all_rows)
    raw = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]  # type: ignore[attr-defined]
    batch = plugin.score_batch(state, info, snap, snap.all_rows)  # type: ignore[attr-defined]
    assert batch.tolist() == raw
    return raw


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


def test_taint_toleration_score_counts_untolerated_prefer_no_schedule() -> None:
    nodes = [make_node("a"), make_node("b").taint("x", "1", "PreferNoSchedule"),
             make_node("c").taint("x", "1", "PreferNoSchedule").taint("y", "1", "PreferNoSchedule")]
    plugin = taint_toleration.TaintToleration()
    assert scores(plugin, make_pod("p"), nodes) == [0, 1, 2]
    assert scores(plugin, make_pod("p").toleration("x", "1", "PreferNoSchedule"), nodes) == [0, 0, 1]
    normalized = plugin.normalize_scores(CycleState(), PodInfo(make_pod("p").obj()),
                                         np.array([0, 1, 2]))
    assert normalized.tolist() == [100, 50, 0]


def test_node_affinity_preferred_score() -> None:
    nodes = [make_node("a").label("zone", "a"), make_node("b").label("zone", "b").label("ssd", "1")]
    pod = make_pod("p").preferred(5, ("zone", "In", ["b"])).preferred(3, ("ssd", "Exists", []))
    plugin = node_affinity.NodeAffinity()
    assert scores(plugin, pod, nodes) == [0, 8]


def test_image_locality() -> None:
    mb = 1024 * 1024
    nodes = [make_node("a").image(500 * mb, "nginx:latest"), make_node("b")]
    # 500 MB spread over 1 of 2 nodes -> 250 MB; 100 * (250 - 23) / (1000 - 23) MB = 23
    assert scores(image_locality.ImageLocality(), make_pod("p").image("nginx"), nodes) == [23, 0]
