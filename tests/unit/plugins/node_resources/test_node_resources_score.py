"""NodeResourcesFit and NodeResourcesBalancedAllocation scores against values worked out from
kube-scheduler's int64 arithmetic."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.plugins.helper.shape_score import broken_linear
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.score_helpers import scores
from tests.unit.scheduling_helpers import cache_with, snapshot_with

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


# BalancedAllocation (balancedResourceScorer): per resource the fraction requested/allocatable in
# float64, capped at 1; std = |f0 - f1| / 2 for two fractions, the population standard deviation
# for more, 0 for fewer; score = int64((1 - std) * 100) with the pod and without it, and the
# result 50 + (50 + with - without) / 2 in int64 (truncating) division.
GPU = "nvidia.com/gpu"
CPU_MEMORY_GPU = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]


def _sized(name: str, cpu_milli: int, memory: int, gpus: int | None = None) -> NodeBuilder:
    """makeNode of noderesources' tests: cpu in millis, memory in bytes, optionally nvidia.com/gpu."""
    extra = {} if gpus is None else {"nvidia_com__gpu": str(gpus)}
    return make_node(name).capacity(cpu=f"{cpu_milli}m", memory=str(memory), pods="110", **extra)


def _balanced_scores(args: dict[str, object], pod: PodBuilder, nodes: list[NodeBuilder],
                     existing: list[PodBuilder], pre_score: bool) -> list[int]:
    """Score on every node, and score_batch over all rows, which must agree."""
    plugin = balanced_allocation.new(args)
    snap = snapshot_with(list(nodes), list(existing))
    info, state = PodInfo(pod.obj()), CycleState()
    if pre_score:
        assert plugin.pre_score(state, info, snap, snap.all_rows) is None
    raw = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]
    assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == raw
    return raw


@pytest.mark.parametrize(("args", "pod", "nodes", "existing", "pre_score", "want"), [
    # node1 cpu 0 -> 75%, memory 0 -> 50%: 100 -> 87, 68; node2 50%/50%: 100 -> 100, 75
    pytest.param({}, make_pod("p").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000"),
                 [_sized("node1", 4000, 10000), _sized("node2", 6000, 10000)], [], True, [68, 75],
                 id="nothing scheduled, resources requested, differently sized nodes"),
    # node1 cpu 30% -> 60%, memory 0 -> 25%: 85 -> 82, 73; node2 25% -> 50% memory: 97 -> 95, 74
    pytest.param({}, make_pod("p").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000"),
                 [_sized("node1", 10000, 20000), _sized("node2", 10000, 20000)],
                 [make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m"),
                  make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")],
                 True, [73, 74], id="resources requested, pods scheduled with resources"),
    pytest.param({}, make_pod("p").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000"),
                 [_sized("node1", 10000, 20000), _sized("node2", 10000, 20000)],
                 [make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m"),
                  make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")],
                 False, [73, 74], id="resources requested, pods scheduled with resources if PreScore not called"),
    # node2 memory 10% -> 20% of 50000: 90 -> 80, 70
    pytest.param({}, make_pod("p").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000"),
                 [_sized("node1", 10000, 20000), _sized("node2", 10000, 50000)],
                 [make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m"),
                  make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")],
                 True, [73, 70], id="resources requested, pods scheduled with resources, differently sized nodes"),
    # node1 100%/0 -> 100%/100%: 50 -> 100, 100; node2 0/0 -> 0/100%: 100 -> 50, 50
    pytest.param({}, make_pod("p").req(memory="2000").req(memory="3000"),
                 [_sized("node1", 3000, 5000), _sized("node2", 3000, 5000)],
                 [make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m")],
                 True, [100, 50],
                 id="resources requested, pods scheduled with resources, nodes to reach min/max score"),
    # node1 cpu 50% -> 100%, memory 0: 75 -> 50, 62; node2 memory 50%: 100 -> 75, 62
    pytest.param({}, make_pod("p").req(cpu="1000m").req(cpu="2000m"),
                 [_sized("node1", 6000, 10000), _sized("node2", 6000, 10000)],
                 [make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m"),
                  make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")],
                 True, [62, 62], id="requested resources at node capacity"),
    # Three fractions: node1 6/7, 1/8, 3/8 -> 4/8: std 0.3039 -> 0.2989, 69 -> 70, 75; node2 gpu
    # 0 -> 1/8: std 0.3781 -> 0.3451, 62 -> 65, 76
    pytest.param({"resources": CPU_MEMORY_GPU}, make_pod("p").req(cpu="0", memory="0", nvidia_com__gpu="1"),
                 [_sized("node1", 3500, 40000, gpus=8), _sized("node2", 3500, 40000, gpus=8)],
                 [make_pod("e1").node("node1").req(cpu="1000m", memory="2000")
                  .req(cpu="2000m", memory="3000", nvidia_com__gpu="3"),
                  make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")],
                 True, [75, 76],
                 id="scalar resource is included in the score computation if pod requests the scalar resource"),
    # gpu skipped on both: 6/7 and 1/8, std 0.3661 -> 63, without 100: 50 + 13 / 2 = 56
    pytest.param({"resources": CPU_MEMORY_GPU}, make_pod("p").req(cpu="1000m", memory="2000")
                 .req(cpu="2000m", memory="3000"),
                 [_sized("node1", 3500, 40000, gpus=8), _sized("node2", 3500, 40000)], [], True, [56, 56],
                 id="scalar resource is not included in the score computation "
                    "if pod doesn't request the scalar resource"),
    # By hand: the same with gpu listed between cpu and memory. balancedResourceScore skips a
    # resource with allocatable 0 and goes on, so memory still counts: 56 again.
    pytest.param({"resources": [CPU_MEMORY_GPU[0], CPU_MEMORY_GPU[2], CPU_MEMORY_GPU[1]]},
                 make_pod("p").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000"),
                 [_sized("node1", 3500, 40000, gpus=8), _sized("node2", 3500, 40000)], [], True, [56, 56],
                 id="by hand: unrequested scalar resource listed between cpu and memory"),
    # By hand: one resource is one fraction, std 0 with and without the pod: 50 + 50 / 2 = 75.
    pytest.param({"resources": [{"name": "cpu", "weight": 1}]}, make_pod("p").req(cpu="3000m", memory="5000"),
                 [_sized("node1", 4000, 10000), _sized("node2", 6000, 10000)], [], True, [75, 75],
                 id="by hand: cpu alone"),
    # By hand, float64: 0.8 - 0.6 = 0.20000000000000007, std 0.10000000000000003,
    # (1 - std) * 100 = 89.99999999999999 -> 89 (not 90); without 100: 50 + 39 / 2 = 69.
    pytest.param({}, make_pod("p").req(cpu="600m", memory="80"), [_sized("node1", 1000, 100)], [], True, [69],
                 id="by hand: float64 rounding of 0.8 - 0.6 truncates to 89"),
    # By hand: fractions 1/4, 1/5, 1/8, mean 0.19167, std sqrt(0.0079167 / 3) = 0.05137 -> 94;
    # without 100: 50 + 44 / 2 = 72.
    pytest.param({"resources": CPU_MEMORY_GPU}, make_pod("p").req(cpu="1000m", memory="2000", nvidia_com__gpu="1"),
                 [_sized("node1", 4000, 10000, gpus=8)], [], True, [72],
                 id="by hand: three resources, nothing scheduled"),
    # By hand, float64: three fractions of 0.1 have the mean (0.1 + 0.1 + 0.1) / 3 =
    # 0.10000000000000002; the squares sum to 5.8e-34, std 1.4e-17, and 1 - std rounds to 1: 100;
    # without 100: 75. (The sum of (f + mean) * (f - mean), equal in reals, is -8.3e-18 here.)
    pytest.param({"resources": CPU_MEMORY_GPU}, make_pod("p").req(cpu="1000m", memory="1000", nvidia_com__gpu="1"),
                 [_sized("node1", 10000, 10000, gpus=10)], [], True, [75],
                 id="by hand: three equal fractions of 0.1"),
])
def test_balanced_allocation_scores(args: dict[str, object], pod: PodBuilder, nodes: list[NodeBuilder],
                                    existing: list[PodBuilder], pre_score: bool, want: list[int]) -> None:
    """balanced_allocation_test.go TestNodeResourcesBalancedAllocation, by its case names, and
    cases by hand from balancedResourceScorer."""
    assert _balanced_scores(args, pod, nodes, existing, pre_score) == want


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


@pytest.mark.parametrize(("memory", "quarter"), [
    pytest.param(20000, 5000, id="upstream sizes"),
    # 2**53 bytes: past the one-node path's exact range (scoring._SMALL, 2**52), so a changed node
    # is scored again on the columns of its row. The fractions are upstream's exactly (0.25, 0.5).
    pytest.param(2**53, 2**51, id="memory 2**53"),
])
def test_balanced_allocation_kept_scores_follow_bound_pods(memory: int, quarter: int) -> None:
    """score_batch keeps a pod's scores over the snapshot from its second cycle and scores again
    only the nodes whose pods changed since. Without PreScore, as upstream's "resources requested,
    pods scheduled with resources if PreScore not called". Before the pods are bound, by hand:
    cpu 0 -> 30%, memory 0 -> 25%: std 0.025, 100 -> 97, 50 + 47 / 2 = 73 on both nodes; after,
    upstream's 73 and 74."""
    cache = cache_with([_sized("node1", 10000, memory), _sized("node2", 10000, memory)])
    snap = cache.snapshot()
    plugin = balanced_allocation.new({})
    info = PodInfo(make_pod("p").req(cpu="1000m", memory=str(quarter - quarter * 3 // 5))
                   .req(cpu="2000m", memory=str(quarter * 3 // 5)).obj())
    state = CycleState()
    assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == [73, 73]
    assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == [73, 73]  # kept from here
    cache.add_pod(make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m").obj())
    cache.add_pod(make_pod("e2").node("node2").req(cpu="1000m", memory=str(quarter - quarter * 3 // 5))
                  .req(cpu="2000m", memory=str(quarter * 3 // 5)).obj())
    assert cache.snapshot() is snap
    assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == [73, 74]


def test_balanced_allocation_kept_scores_are_per_pod_request() -> None:
    """Two pods scored in turn on one snapshot keep apart. Pod a is upstream's "resources requested,
    pods scheduled with resources" (73, 74); pod b asks memory 5000 alone, by hand: node1 cpu 30%,
    memory 0 -> 25%: std 0.15 -> 0.025, 85 -> 97, 50 + 62 / 2 = 81; node2 memory 25% -> 50%:
    std 0.025 -> 0.1, 97 -> 90, 50 + 43 / 2 = 71."""
    snap = snapshot_with([_sized("node1", 10000, 20000), _sized("node2", 10000, 20000)],
                         [make_pod("e1").node("node1").req(cpu="1000m").req(cpu="2000m"),
                          make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")])
    plugin = balanced_allocation.new({})
    pods = {"a": (make_pod("a").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000"), [73, 74]),
            "b": (make_pod("b").req(memory="5000"), [81, 71])}
    for name in ("a", "b", "a", "b", "a"):
        pod, want = pods[name]
        info, state = PodInfo(pod.obj()), CycleState()
        assert plugin.pre_score(state, info, snap, snap.all_rows) is None
        assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == want, name
