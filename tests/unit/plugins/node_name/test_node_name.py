"""Table tests of the NodeName filter's verdict and reason text."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import CycleState, NodeInfo, PodInfo
from kubesched.plugins import node_name
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, verdict
from tests.unit.scheduling_helpers import snapshot_with


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n1"), None, id="no-node-name"),
    pytest.param(make_pod("p").node("n1"), make_node("n1"), None, id="same-name"),
    pytest.param(make_pod("p").node("n2"), make_node("n1"),
                 (UNRESOLVABLE, ("node(s) didn't match the requested node name",)), id="other-name"),
])
def test_node_name(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(node_name.NodeName().filter(CycleState(), PodInfo(pod.obj()), NodeInfo(node.obj()))) == want


# TestNodeName_PreFilter's two cases.
@pytest.mark.parametrize(("pod", "want"), [
    pytest.param(make_pod("p").node("foo"), frozenset({"foo"}),
                 id="assigned pod with nodeName set, prefilter restricts to assigned node"),
    pytest.param(make_pod("p"), None, id="unassigned pod without nodeName set, prefilter returns nil"),
])
def test_pre_filter(pod: PodBuilder, want: frozenset[str] | None) -> None:
    snap = snapshot_with([make_node("foo")])
    result, status = node_name.NodeName().pre_filter(CycleState(), PodInfo(pod.obj()), snap)
    assert status is None
    assert (None if result is None else result.node_names) == want


# TestNodeName's cases on several nodes at once: Filter passes a node when `pod.Spec.NodeName == ""
# || pod.Spec.NodeName == nodeInfo.Node().Name`, so the batch passes exactly the row of the named node
# (none when no node has that name), and every row rejected has "host doesn't match"'s status
# (UnschedulableAndUnresolvable, ErrReason). The rows are a subset, out of order: the mask is by position.
@pytest.mark.parametrize(("pod", "rows", "want"), [
    pytest.param(make_pod("p"), [0, 1, 2], None, id="no host specified: every node passes"),
    pytest.param(make_pod("p").node("n1"), [0, 1, 2], [False, True, False], id="host matches the second node"),
    pytest.param(make_pod("p").node("n0"), [2, 0], [False, True], id="host matches, rows out of order"),
    pytest.param(make_pod("p").node("n1"), [2, 0], [False, False], id="host is no row asked"),
    pytest.param(make_pod("p").node("bar"), [0, 1, 2], [False, False, False], id="host doesn't match any node"),
])
def test_filter_batch(pod: PodBuilder, rows: list[int], want: list[bool] | None) -> None:
    snap = snapshot_with([make_node("n0"), make_node("n1"), make_node("n2")])
    plugin, info, asked = node_name.NodeName(), PodInfo(pod.obj()), np.array(rows, dtype=np.intp)
    mask = plugin.filter_batch(CycleState(), info, snap, asked)
    assert (None if mask is None else mask.tolist()) == want
    rejected = asked[:0] if mask is None else asked[~mask]
    statuses = plugin.filter_statuses(CycleState(), info, snap, rejected)
    assert [verdict(s) for s in statuses] == [(UNRESOLVABLE, (node_name.ERR_REASON,))] * len(rejected)
    assert node_name.ERR_REASON == "node(s) didn't match the requested node name"
