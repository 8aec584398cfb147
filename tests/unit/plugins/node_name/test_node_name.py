"""Table tests of the NodeName filter's verdict and reason text."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState, NodeInfo, PodInfo
from kubesched.plugins import node_name
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, verdict


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n1"), None, id="no-node-name"),
    pytest.param(make_pod("p").node("n1"), make_node("n1"), None, id="same-name"),
    pytest.param(make_pod("p").node("n2"), make_node("n1"),
                 (UNRESOLVABLE, ("node(s) didn't match the requested node name",)), id="other-name"),
])
def test_node_name(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(node_name.NodeName().filter(CycleState(), PodInfo(pod.obj()), NodeInfo(node.obj()))) == want
