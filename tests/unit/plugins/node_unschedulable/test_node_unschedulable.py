"""Table tests of the NodeUnschedulable filter's verdict and reason text."""

from __future__ import annotations

import pytest

from kubesched.plugins import node_unschedulable
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, run_filter, verdict


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n"), None, id="schedulable"),
    pytest.param(make_pod("p"), make_node("n").unschedulable(),
                 (UNRESOLVABLE, ("node(s) were unschedulable",)), id="cordoned"),
    pytest.param(make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoSchedule",
                                          operator="Exists"), make_node("n").unschedulable(), None,
                 id="tolerates-cordon"),
    pytest.param(make_pod("p").toleration(operator="Exists"), make_node("n").unschedulable(), None,
                 id="tolerates-everything"),
])
def test_node_unschedulable(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(run_filter(node_unschedulable.NodeUnschedulable(), pod, node)) == want
