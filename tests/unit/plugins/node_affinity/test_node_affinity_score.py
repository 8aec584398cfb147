"""The NodeAffinity score of preferred terms, worked out from kube-scheduler's int64 arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import Code, CycleState, PodInfo
from kubesched.plugins.node_affinity import plugin as node_affinity
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.score_helpers import scores
from tests.unit.scheduling_helpers import snapshot_with


def test_node_affinity_preferred_score() -> None:
    nodes = [make_node("a").label("zone", "a"), make_node("b").label("zone", "b").label("ssd", "1")]
    pod = make_pod("p").preferred(5, ("zone", "In", ["b"])).preferred(3, ("ssd", "Exists", []))
    plugin = node_affinity.NodeAffinity()
    assert scores(plugin, pod, nodes) == [0, 8]


HOST_1 = make_node("host_1").label("label_1", "label_1_val")
HOST_2 = make_node("host_2").label("label_1", "label_1_val")
HOST_3 = make_node("host_3")


@pytest.mark.parametrize(("pod", "want"), [
    # TestPreferredSchedulingTermsScore "first and third term match": 5 + 11 = 16 on host_1; by hand,
    # host_2 fails the metadata.name term (11) and host_3 has no label_1 (0).
    pytest.param(make_pod("p").preferred(5, fields=(("metadata.name", "In", ["host_1"]),))
                 .preferred(7, ("unknown_label", "In", ["unknown_label_val"]))
                 .preferred(11, ("label_1", "In", ["label_1_val"])),
                 [16, 11, 0], id="first and third term match"),
    # TestPreferredSchedulingTermsScore "invalid field selector but no weight, error not reported":
    # a weight-0 term is not parsed; the weight-1 term after it still counts (by hand: 1, 1, 0).
    pytest.param(make_pod("p").preferred(0, fields=(("metadata.name", "In", ["host_1", "host_2"]),))
                 .preferred(1, ("label_1", "Exists", [])),
                 [1, 1, 0], id="invalid field selector but no weight, error not reported"),
    # isEmptyNodeSelectorTerm: an empty preference is skipped whatever its weight (by hand: 3, 3, 0).
    pytest.param(make_pod("p").preferred(5).preferred(3, ("label_1", "Exists", [])),
                 [3, 3, 0], id="empty preference skipped"),
])
def test_preferred_scheduling_terms_score(pod: PodBuilder, want: list[int]) -> None:
    plugin = node_affinity.NodeAffinity()
    snap = snapshot_with([HOST_1, HOST_2, HOST_3])
    assert plugin.pre_score(CycleState(), PodInfo(pod.obj()), snap, snap.all_rows) is None
    assert scores(plugin, pod, [HOST_1, HOST_2, HOST_3]) == want


def test_preferred_scheduling_terms_invalid_with_weight() -> None:
    """TestPreferredSchedulingTermsScore "invalid field selector and label selector": with a weight,
    two values under matchFields In fail to parse, and PreScore fails with an error."""
    pod = make_pod("p").preferred(1, fields=(("metadata.name", "In", ["host_1", "host_2"]),))
    snap = snapshot_with([HOST_1])
    status = node_affinity.NodeAffinity().pre_score(CycleState(), PodInfo(pod.obj()), snap, snap.all_rows)
    assert status is not None
    assert status.code == Code.ERROR


def test_preferred_scheduling_term_with_a_value_that_is_no_label_value() -> None:
    """The apiserver admits any value in a preferred term (ValidatePreferredSchedulingTerms allows
    invalid label values), but labels.NewRequirement rejects "-1" (validateLabelValue), so
    NewPreferredSchedulingTerms fails and so does PreScore, with an error."""
    pod = make_pod("p").preferred(1, ("gen", "Gt", ["-1"]))
    snap = snapshot_with([HOST_1, HOST_2])
    status = node_affinity.NodeAffinity().pre_score(CycleState(), PodInfo(pod.obj()), snap, snap.all_rows)
    assert status is not None
    assert status.code == Code.ERROR


LABEL_1 = {"foo": "bar"}
LABEL_2 = {"key": "value"}
LABEL_3 = {"az": "az1"}
LABEL_4 = {"abc": "az11", "def": "az22"}
LABEL_5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY_1 = make_pod("p").preferred(2, ("foo", "In", ["bar"]))
AFFINITY_2 = (make_pod("p").preferred(2, ("foo", "In", ["bar"])).preferred(4, ("key", "In", ["value"]))
              .preferred(5, ("foo", "In", ["bar"]), ("key", "In", ["value"]), ("az", "In", ["az1"])))
ADDED_AFFINITY_1: dict[str, object] = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}]}}
ADDED_KEY_VALUE_3: dict[str, object] = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 3, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}}]}}
ADDED_NAME_NODE2_3: dict[str, object] = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 3, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}}]}}
ADDED_REQUIRED_ONLY: dict[str, object] = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}}}


def _nodes(*labels: tuple[str, dict[str, str]]) -> list[NodeBuilder]:
    built = []
    for name, pairs in labels:
        node = make_node(name)
        for k, v in pairs.items():
            node = node.label(k, v)
        built.append(node)
    return built


@pytest.mark.parametrize(("args", "pod", "nodes", "run_pre_score", "want_pre_score", "want"), [
    pytest.param({}, make_pod("p"), _nodes(("node1", LABEL_1), ("node2", LABEL_2), ("node3", LABEL_3)),
                 False, None, [0, 0, 0], id="all nodes are same priority as NodeAffinity is nil"),
    pytest.param({}, make_pod("p"), _nodes(("node1", LABEL_1)),
                 True, Code.SKIP, [], id="Skip is returned in PreScore when NodeAffinity is nil"),
    # Upstream's message is the parse error of the key; kubesched's differs (only the code is compared).
    pytest.param({}, make_pod("p").preferred(2, ("invalid key", "In", ["bar"])), _nodes(("node1", LABEL_1)),
                 True, Code.ERROR, [], id="PreScore returns error when an incoming Pod has a broken affinity"),
    pytest.param({}, AFFINITY_1, _nodes(("node1", LABEL_4), ("node2", LABEL_2), ("node3", LABEL_3)),
                 True, None, [0, 0, 0],
                 id="no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
                    "priority is zero"),
    pytest.param({}, AFFINITY_1, _nodes(("node1", LABEL_1), ("node2", LABEL_2), ("node3", LABEL_3)),
                 True, None, [100, 0, 0], id="only node1 matches the preferred scheduling requirements of pod"),
    pytest.param({}, AFFINITY_2, _nodes(("node1", LABEL_1), ("node5", LABEL_5), ("node2", LABEL_2)),
                 True, None, [18, 100, 36],
                 id="all nodes matches the preferred scheduling requirements of pod but with different priorities"),
    pytest.param(ADDED_AFFINITY_1, make_pod("p"), _nodes(("node1", LABEL_1), ("node2", LABEL_2)),
                 True, None, [100, 0], id="added affinity"),
    pytest.param(ADDED_KEY_VALUE_3, AFFINITY_1, _nodes(("node1", LABEL_1), ("node2", LABEL_2), ("node3", LABEL_5)),
                 True, None, [40, 60, 100], id="added affinity and pod has default affinity"),
    pytest.param({}, AFFINITY_2, _nodes(("node1", LABEL_1), ("node5", LABEL_5), ("node2", LABEL_2)),
                 False, None, [18, 100, 36], id="calculate the priorities correctly even if PreScore is not called"),
    # By hand from Score and PreferredSchedulingTerms.Score (matchFields against the node's name):
    # raw 0, 3, 0, normalized 0, 100, 0.
    pytest.param(ADDED_NAME_NODE2_3, make_pod("p"), _nodes(("node1", LABEL_1), ("node2", LABEL_2), ("node3", {})),
                 True, None, [0, 100, 0], id="added affinity on metadata.name"),
    # By hand from PreScore: addedAffinity with required terms only leaves addedPrefSchedTerms nil, so
    # a Pod without preferred terms is skipped.
    pytest.param(ADDED_REQUIRED_ONLY, make_pod("p"), _nodes(("node1", LABEL_1)),
                 True, Code.SKIP, [], id="added required affinity only: Skip"),
])
def test_node_affinity_priority(args: dict[str, object], pod: PodBuilder, nodes: list[NodeBuilder],
                                run_pre_score: bool, want_pre_score: Code | None, want: list[int]) -> None:
    """TestNodeAffinityPriority: PreScore's status, then Score on each node (the one-node and the
    batch path, which must agree) and NormalizeScore."""
    plugin = node_affinity.new(args)
    snap = snapshot_with(list(nodes))
    info, state = PodInfo(pod.obj()), CycleState()
    if run_pre_score:
        status = plugin.pre_score(state, info, snap, snap.all_rows)
        assert (None if status is None else status.code) == want_pre_score
        if status is not None:
            return
    raw = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]
    assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == raw
    assert plugin.normalize_scores(state, info, np.array(raw, dtype=np.int64)).tolist() == want
