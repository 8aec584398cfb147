"""NodeResourcesFit and NodeResourcesBalancedAllocation scores against values worked out from
kube-scheduler's int64 arithmetic."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework import CycleState, PodInfo, ScheduleResult
from kubesched.model.objects import Pod
from kubesched.plugins.helper.shape_score import broken_linear
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.plugins.node_resources.scoring import ResourceSpec
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.score_helpers import scores
from tests.unit.scheduling_helpers import cache_with, default_profile, schedule, snapshot_with

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
# --- kube-scheduler's own tables (noderesources/*_test.go), through the one-node and the batch path

EXT = "abc.com/xyz"  # util_test.go's extendedRes
EXTENDED_RESOURCE_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXT, "weight": 1}]


def _node(name: str, cpu: str | None = None, memory: str | None = None, **extra: str) -> NodeBuilder:
    """st.MakeNode().Name(name).Capacity(...): only the resources given (cpu "4000" is 4000 cores)."""
    return make_node(name).capacity(cpu=cpu, memory=memory, pods=None, **extra)


def _bare(name: str, node: str | None = None) -> Pod:
    """st.MakePod().Obj(): no containers, so no requests and no non-zero defaults (those are per
    container, GetNonzeroRequests)."""
    builder = make_pod(name)
    if node is not None:
        builder.node(name=node)
    pod = builder.obj()
    pod.spec.containers = []
    return pod


def _two_containers() -> PodBuilder:
    """Req(cpu 1000, memory 2000).Req(cpu 2000, memory 3000): cpu 3000 cores, memory 5000 bytes."""
    return make_pod("p").req(cpu="1000", memory="2000").req(cpu="2000", memory="3000")


def _strategy(kind: str, resources: list[dict[str, Any]] | None = None,
              shape: list[tuple[int, int]] | None = None) -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": kind}
    if resources is not None:
        strategy["resources"] = resources
    if shape is not None:
        strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": sc} for u, sc in shape]}
    return {"scoringStrategy": strategy}


LEAST = "LeastAllocated"
MOST = "MostAllocated"
RATIO = "RequestedToCapacityRatio"
SHAPE = [(0, 10), (100, 0)]  # requested_to_capacity_ratio_test.go's shape
BIN_PACKING = [(0, 0), (100, 1)]  # TestResourceBinPacking*'s shape

_SMALL_NODES = [_node("node1", "4000", "10000"), _node("node2", "4000", "10000")]
_SIZED_NODES = [_node("node1", "4000", "10000"), _node("node2", "6000", "10000")]
_BIG_NODES = [_node("node1", "10000", "20000"), _node("node2", "10000", "20000")]
_EXT_NODES = [_node("node1", "6000", "10000"), _node("node2", "6000", "10000", abc_com__xyz="4")]
_SCHEDULED_WITH_RESOURCES = [
    make_pod("e1").node("node1").req(cpu="3000", memory="0"),
    make_pod("e2").node("node1").req(cpu="3000", memory="0"),
    make_pod("e3").node("node2").req(cpu="3000", memory="0"),
    make_pod("e4").node("node2").req(cpu="3000", memory="5000"),
]
_ONE_EACH = [make_pod("e1").node("node1").req(cpu="3000", memory="0"),
             make_pod("e2").node("node2").req(cpu="3000", memory="5000")]
_FOO_NODES = [_node("node1", "4000m", str(10000 * 1024 * 1024), intel_com__foo="8"),
              _node("node2", "4000m", str(10000 * 1024 * 1024), intel_com__foo="4")]
_FOO_BAR_NODES = [_node("node1", "4000m", str(10000 * 1024 * 1024), intel_com__foo="8", intel_com__bar="4"),
                  _node("node2", "4000m", str(10000 * 1024 * 1024), intel_com__foo="4", intel_com__bar="8")]
_FOO = [{"name": "intel.com/foo", "weight": 1}]
_FOO_BAR = [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}]


@pytest.mark.parametrize(("args", "pod", "nodes", "existing", "want"), [
    # least_allocated_test.go, TestLeastAllocatedScoringStrategy
    pytest.param(_strategy(LEAST), _bare("p"), _SMALL_NODES, [], [100, 100],
                 id="least: nothing scheduled, nothing requested"),
    pytest.param(_strategy(LEAST), _two_containers(), _SIZED_NODES, [], [37, 50],
                 id="least: nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(_strategy(LEAST), _bare("p"), _SMALL_NODES,
                 [_bare("e1", "node1"), _bare("e2", "node1"), _bare("e3", "node2"), _bare("e4", "node2")],
                 [100, 100], id="least: no resources requested, pods scheduled"),
    pytest.param(_strategy(LEAST), _bare("p"), _BIG_NODES, _SCHEDULED_WITH_RESOURCES, [70, 57],
                 id="least: no resources requested, pods scheduled with resources"),
    pytest.param(_strategy(LEAST), _two_containers(), _BIG_NODES, _ONE_EACH, [57, 45],
                 id="least: resources requested, pods scheduled with resources"),
    pytest.param(_strategy(LEAST), _two_containers(),
                 [_node("node1", "10000", "20000"), _node("node2", "10000", "50000")], _ONE_EACH, [57, 60],
                 id="least: resources requested, pods scheduled with resources, differently sized nodes"),
    pytest.param(_strategy(LEAST), make_pod("p").req(cpu="3000", memory="0"), _SMALL_NODES, _ONE_EACH, [50, 25],
                 id="least: requested resources exceed node capacity"),
    pytest.param(_strategy(LEAST), _bare("p"), [_node("node1"), _node("node2")], _ONE_EACH, [0, 0],
                 id="least: zero node resources, pods scheduled with resources"),
    pytest.param(_strategy(LEAST, [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
                 _two_containers(), _SIZED_NODES, [], [41, 50],
                 id="least: nothing scheduled, resources requested with different weight on CPU and memory"),
    pytest.param(_strategy(LEAST, EXTENDED_RESOURCE_SET), _two_containers(), _EXT_NODES, [], [50, 50],
                 id="least: bypass extended resource if the pod does not request"),
    pytest.param(_strategy(LEAST, EXTENDED_RESOURCE_SET),
                 make_pod("p").req(cpu="3000", memory="5000", abc_com__xyz="2"),
                 [_node("node1", "6000", "10000", abc_com__xyz="4"),
                  _node("node2", "6000", "10000", abc_com__xyz="10")],
                 [], [50, 60], id="least: honor extended resource if the pod requests"),
    pytest.param(_strategy(LEAST, [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
                                   {"name": "memory", "weight": 1}]),
                 make_pod("p").req(cpu="3000", memory="4000"), _EXT_NODES, [], [55, 55],
                 id="least: if the node doesn't have a resource"),
    # most_allocated_test.go, TestMostAllocatedScoringStrategy
    pytest.param(_strategy(MOST), _bare("p"), _SMALL_NODES, [], [0, 0],
                 id="most: nothing scheduled, nothing requested"),
    pytest.param(_strategy(MOST), _two_containers(), _SIZED_NODES, [], [62, 50],
                 id="most: nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(_strategy(MOST), _bare("p"), _BIG_NODES, _SCHEDULED_WITH_RESOURCES, [30, 42],
                 id="most: no resources requested, pods scheduled with resources"),
    pytest.param(_strategy(MOST), _two_containers(), _BIG_NODES, _ONE_EACH, [42, 55],
                 id="most: resources requested, pods scheduled with resources"),
    pytest.param(_strategy(MOST), make_pod("p").req(cpu="2000", memory="4000").req(cpu="3000", memory="5000"),
                 [_node("node1", "5000", "10000"), _node("node2", "10000", "9000")], [], [95, 75],
                 id="most: resources requested equal node capacity"),
    pytest.param(_strategy(MOST, [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}]),
                 _two_containers(), _SIZED_NODES, [], [58, 50],
                 id="most: nothing scheduled, resources requested, differently sized nodes, weights 2/1"),
    pytest.param(_strategy(MOST), make_pod("p").req(),
                 [_node("node1", "250m", "1000Mi"), _node("node2", "250m", "1000Mi")],
                 [make_pod("e1").node("node1").req(), make_pod("e2").node("node1").req()], [80, 30],
                 id="most: no resources requested, pods scheduled, nonzero request for resource"),
    pytest.param(_strategy(MOST, EXTENDED_RESOURCE_SET), _two_containers(), _EXT_NODES, [], [50, 50],
                 id="most: bypass extended resource if the pod does not request"),
    pytest.param(_strategy(MOST, EXTENDED_RESOURCE_SET),
                 make_pod("p").req(cpu="3000", memory="5000", abc_com__xyz="2"),
                 [_node("node1", "6000", "10000", abc_com__xyz="4"),
                  _node("node2", "6000", "10000", abc_com__xyz="10")],
                 [], [50, 40], id="most: honor extended resource if the pod request"),
    pytest.param(_strategy(MOST, [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
                                  {"name": "memory", "weight": 1}]),
                 make_pod("p").req(cpu="3000", memory="4000"), _EXT_NODES, [], [45, 45],
                 id="most: if the node doesn't have a resource"),
    # requested_to_capacity_ratio_test.go, TestRequestedToCapacityRatioScoringStrategy
    pytest.param(_strategy(RATIO, shape=SHAPE), _bare("p"), _SMALL_NODES,
                 [_bare("e1", "node1"), _bare("e2", "node1")], [100, 100],
                 id="ratio: nothing scheduled, nothing requested"),
    pytest.param(_strategy(RATIO, shape=SHAPE), _two_containers(), _SIZED_NODES,
                 [_bare("e1", "node1"), _bare("e2", "node1")], [38, 50],
                 id="ratio: nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(_strategy(RATIO, shape=SHAPE), _bare("p"), _SIZED_NODES,
                 [make_pod("e1").node("node1").req(cpu="3000", memory="5000"),
                  make_pod("e2").node("node2").req(cpu="3000", memory="5000")], [38, 50],
                 id="ratio: no resources requested, pods scheduled with resources"),
    # TestResourceBinPackingSingleExtended (intel.com/foo, weight 1)
    pytest.param(_strategy(RATIO, _FOO, BIN_PACKING), _bare("p"), _FOO_NODES, [], [0, 0],
                 id="bin packing single: nothing scheduled, nothing requested"),
    pytest.param(_strategy(RATIO, _FOO, BIN_PACKING), make_pod("p").req(intel_com__foo="2"), _FOO_NODES, [],
                 [2, 5], id="bin packing single: resources requested, pods scheduled with less resources"),
    pytest.param(_strategy(RATIO, _FOO, BIN_PACKING), make_pod("p").req(intel_com__foo="2"), _FOO_NODES,
                 [make_pod("e1").node("node2").req(intel_com__foo="2")], [2, 10], id=(
                     "bin packing single: resources requested, pods scheduled with resources, "
                     "on node with existing pod running")),
    pytest.param(_strategy(RATIO, _FOO, BIN_PACKING), make_pod("p").req(intel_com__foo="4"), _FOO_NODES, [],
                 [5, 10], id="bin packing single: resources requested, pods scheduled with more resources"),
    # TestResourceBinPackingMultipleExtended (intel.com/foo weight 3, intel.com/bar weight 5)
    pytest.param(_strategy(RATIO, _FOO_BAR, BIN_PACKING), _bare("p"), _FOO_BAR_NODES, [], [0, 0],
                 id="bin packing multiple: nothing scheduled, nothing requested"),
    pytest.param(_strategy(RATIO, _FOO_BAR, BIN_PACKING), make_pod("p").req(intel_com__foo="2", intel_com__bar="2"),
                 _FOO_BAR_NODES, [], [4, 3],
                 id="bin packing multiple: resources requested, pods scheduled with less resources"),
    pytest.param(_strategy(RATIO, _FOO_BAR, BIN_PACKING), make_pod("p").req(intel_com__foo="2", intel_com__bar="2"),
                 _FOO_BAR_NODES, [make_pod("e1").node("node2").req(intel_com__foo="4", intel_com__bar="2")], [4, 7],
                 id=("bin packing multiple: resources requested, pods scheduled with resources, "
                     "on node with existing pod running")),
    pytest.param(_strategy(RATIO, _FOO_BAR, BIN_PACKING), make_pod("p").req(intel_com__foo="4", intel_com__bar="2"),
                 _FOO_BAR_NODES, [], [5, 5],
                 id="bin packing multiple: resources requested, pods scheduled with more resources"),
])
def test_scoring_strategies_upstream(args: dict[str, Any], pod: Pod | PodBuilder, nodes: list[NodeBuilder],
                                     existing: list[Pod | PodBuilder], want: list[int]) -> None:
    assert scores(node_resources_fit.new(args), pod, nodes, existing) == want


@pytest.mark.parametrize(("args", "pod", "nodes", "want"), [
    # By hand from most_allocated.go's mostRequestedScore (int64: requested * MaxNodeScore / capacity):
    # cpu 1000m of 3000m -> 100000 / 3000 = 33, memory 2000 of 3000 -> 200000 / 3000 = 66,
    # (33 + 66) / 2 = 49 (the quotients truncate before they are summed).
    pytest.param(_strategy(MOST), make_pod("p").req(cpu="1", memory="2000"), [_node("node1", "3", "3000")], [49],
                 id="most: truncation of each resource before the sum"),
    # By hand from requested_to_capacity_ratio.go (shape 0->100, 100->0, so score = 100 - utilization):
    # cpu 5000 > 4000 cores: utilization capped at 100 -> 0, which is not counted (resourceScore > 0);
    # memory 5000 * 100 / 10000 = 50 -> 50; round(50 / 1) = 50.
    pytest.param(_strategy(RATIO, shape=SHAPE), make_pod("p").req(cpu="5000", memory="5000"),
                 [_node("node1", "4000", "10000")], [50], id="ratio: requests above allocatable"),
    # By hand: abc.com/xyz first and not requested (skipped), then cpu 3000 * 100 / 6000 = 50 -> 50,
    # memory 4000 * 100 / 10000 = 40 -> 60; round((50 + 60) / 2) = 55 on both nodes.
    pytest.param(_strategy(RATIO, [{"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1},
                                   {"name": "memory", "weight": 1}], SHAPE),
                 make_pod("p").req(cpu="3000", memory="4000"), _EXT_NODES, [55, 55],
                 id="ratio: if the node doesn't have a resource"),
    # By hand: shape 0->0, 100->10 (x MaxNodeScore / MaxCustomPriorityScore: 100), so score = utilization:
    # cpu 1 of 100 cores -> 1, memory 5000 of 10000 -> 50; math.Round(51 / 2) = 26 (half away from zero).
    pytest.param(_strategy(RATIO, shape=[(0, 0), (100, 10)]), make_pod("p").req(cpu="1", memory="5000"),
                 [_node("node1", "100", "10000")], [26], id="ratio: a score of 1 counts"),
    # By hand from least_allocated.go with ephemeral-storage scored (not a scalar resource, so a node
    # without it is skipped by its zero allocatable only): node1 cpu (6000 - 3000) * 100 / 6000 = 50,
    # memory (10000 - 5000) * 100 / 10000 = 50, ephemeral-storage (10000 - (2000 + 5000)) * 100 / 10000
    # = 30, (50 + 50 + 30) / 3 = 43; node2 has none: (50 + 50) / 2 = 50.
    pytest.param(_strategy(LEAST, [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                   {"name": "ephemeral-storage", "weight": 1}]),
                 make_pod("p").req(cpu="3000", memory="5000", ephemeral_storage="5000"),
                 [_node("node1", "6000", "10000", ephemeral_storage="10000"), _node("node2", "6000", "10000")],
                 [43, 50], id="least: ephemeral-storage scored"),
    # By hand: abc.com/xyz requested but on no node (allocatable 0 everywhere, skipped): cpu
    # (6000 - 3000) * 100 / 6000 = 50, memory (10000 - 5000) * 100 / 10000 = 50 -> 50; under the shape
    # (score = 100 - utilization) 50 and 50 -> round(100 / 2) = 50.
    pytest.param(_strategy(LEAST, EXTENDED_RESOURCE_SET),
                 make_pod("p").req(cpu="3000", memory="5000", abc_com__xyz="2"),
                 [_node("node1", "6000", "10000"), _node("node2", "6000", "10000")], [50, 50],
                 id="least: extended resource requested, on no node"),
    pytest.param(_strategy(RATIO, EXTENDED_RESOURCE_SET, SHAPE),
                 make_pod("p").req(cpu="3000", memory="5000", abc_com__xyz="2"),
                 [_node("node1", "6000", "10000"), _node("node2", "6000", "10000")], [50, 50],
                 id="ratio: extended resource requested, on no node"),
    # By hand: no resource on the nodes, every one skipped: weightSum 0 -> 0.
    pytest.param(_strategy(RATIO, shape=SHAPE), _bare("p"), [_node("node1"), _node("node2")], [0, 0],
                 id="ratio: zero node resources"),
    # By hand from least_allocated.go (nodeScore += score * weight; nodeScore / weightSum): cpu weight 2,
    # memory 1; node1 cpu (4000 - 3000) * 100 / 4000 = 25, memory (10000 - 5000) * 100 / 10000 = 50,
    # (25 * 2 + 50) / 3 = 33; node2 cpu 3000 * 100 / 6000 = 50, memory 50, (100 + 50) / 3 = 50.
    pytest.param(_strategy(LEAST, [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]),
                 _two_containers(), _SIZED_NODES, [33, 50], id="least: cpu weighted 2, memory 1"),
    # The same with memory's weight left out: SetDefaults_NodeResourcesFitArgs gives a resource
    # without a weight the weight 1, so the same 33 and 50.
    pytest.param(_strategy(LEAST, [{"name": "cpu", "weight": 2}, {"name": "memory"}]),
                 _two_containers(), _SIZED_NODES, [33, 50], id="least: a resource without weight weighs 1"),
])
def test_scoring_strategies_by_hand(args: dict[str, Any], pod: Pod | PodBuilder, nodes: list[NodeBuilder],
                                    want: list[int]) -> None:
    # On node1, a pod asking for ephemeral-storage only: cpu and memory explicitly 0, so no non-zero
    # defaults (100m / 200Mi) are counted for it.
    existing = [make_pod("e1").node("node1").req(cpu="0", memory="0", ephemeral_storage="2000")]
    assert scores(node_resources_fit.new(args), pod, nodes, existing) == want


# Through schedule_pod: the framework adds each plugin's batch scores into an int64 total, so the
# column paths must return int64 (a float64 or object array cannot be added in place). The hosts are
# worked out by hand; the other default plugins score both nodes alike.
@pytest.mark.parametrize(("args", "pod", "nodes", "host"), [
    # "honor extended resource if the pod requests" (LeastAllocated 50 / 60, BalancedAllocation
    # alike on both: cpu and memory 1/2): node2.
    pytest.param({"NodeResourcesFit": _strategy(LEAST, EXTENDED_RESOURCE_SET)},
                 make_pod("p").req(cpu="3000", memory="5000", abc_com__xyz="2"),
                 [make_node("node1").capacity(cpu="6000", memory="10000", abc_com__xyz="4"),
                  make_node("node2").capacity(cpu="6000", memory="10000", abc_com__xyz="10")], "node2",
                 id="LeastAllocated with an extended resource"),
    # RequestedToCapacityRatio (100 - utilization) for a pod without containers: node1 100, node2
    # without cpu or memory 0 (weightSum 0); BalancedAllocation skips the best-effort pod: node1.
    pytest.param({"NodeResourcesFit": _strategy(RATIO, shape=SHAPE)}, _bare("p"),
                 [make_node("node1").capacity(cpu="4000", memory="10000"),
                  make_node("node2").capacity(cpu=None, memory=None)], "node1",
                 id="RequestedToCapacityRatio, a node without cpu and memory"),
    # BalancedAllocation's general path (node2 has no memory): pod cpu 1 of 4. node1: with the pod
    # |0.25 - 0| / 2 = 0.125 -> 87, without 100: 50 + (50 + 87 - 100) / 2 = 68; Fit (non-zero memory
    # 200Mi > 10000) (75 + 0) / 2 = 37; 105. node2: one fraction -> 100, 50 + 50 / 2 = 75; Fit 75; 150.
    pytest.param({}, make_pod("p").req(cpu="1"),
                 [make_node("node1").capacity(cpu="4", memory="10000"),
                  make_node("node2").capacity(cpu="4", memory=None)], "node2",
                 id="BalancedAllocation, a node without memory"),
])
def test_column_scores_add_up_in_schedule(args: dict[str, dict[str, object]], pod: Pod | PodBuilder,
                                         nodes: list[NodeBuilder], host: str) -> None:
    result = schedule(list(nodes), pod, profile=default_profile(**args))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == host


_CPU_MEMORY_GPU = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec("nvidia.com/gpu", 1)]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), [
    # The two upstream scalar-resource cases are in test_balanced_allocation_scores above.
    # By hand: the first case with node2 lacking the gpu: only cpu 3000/3500 and memory 5000/40000
    # count, with the pod (which asks for cpu and memory 0) and without it alike, so
    # 50 + (50 + s - s) / 2 = 75 whatever the balance s.
    pytest.param(make_pod("p").req(cpu="0", memory="0", nvidia_com__gpu="1"),
                 [_node("node1", "3500m", "40000", nvidia_com__gpu="8"), _node("node2", "3500m", "40000")],
                 [make_pod("e1").node("node1").req(cpu="1000m", memory="2000")
                  .req(cpu="2000m", memory="3000", nvidia_com__gpu="3"),
                  make_pod("e2").node("node2").req(cpu="1000m", memory="2000").req(cpu="2000m", memory="3000")],
                 [75, 75], id="by hand: the pod requests the gpu, node2 has none"),
])
def test_balanced_allocation_scalar_resources(pod: PodBuilder, nodes: list[NodeBuilder], existing: list[PodBuilder],
                                              want: list[int]) -> None:
    assert scores(balanced_allocation.BalancedAllocation(_CPU_MEMORY_GPU), pod, nodes, existing) == want
