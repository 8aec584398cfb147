"""Table tests of the TaintToleration filter's verdict and reason text."""

from __future__ import annotations

import pytest

from kubesched.plugins import taint_toleration
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, run_filter, verdict

TAINTED = (UNRESOLVABLE, ("node(s) had untolerated taint(s)",))


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n"), None, id="no-taints"),
    pytest.param(make_pod("p"), make_node("n").taint("k", "v", "NoSchedule"), TAINTED, id="NoSchedule"),
    pytest.param(make_pod("p"), make_node("n").taint("k", "v", "NoExecute"), TAINTED, id="NoExecute"),
    pytest.param(make_pod("p"), make_node("n").taint("k", "v", "PreferNoSchedule"), None,
                 id="PreferNoSchedule-does-not-filter"),
    pytest.param(make_pod("p").toleration("k", "v", "NoSchedule"), make_node("n").taint("k", "v"), None,
                 id="Equal-matches"),
    pytest.param(make_pod("p").toleration("k", "other", "NoSchedule"), make_node("n").taint("k", "v"), TAINTED,
                 id="Equal-other-value"),
    # taint_toleration_test.go's TestTaintTolerationFilter case, whose toleration leaves Operator
    # empty (Go's zero value): ToleratesTaint reads "" as Equal.
    pytest.param(make_pod("p").toleration("dedicated", "user1", "NoSchedule", operator=""),
                 make_node("n").taint("dedicated", "user1", "NoSchedule"), None,
                 id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule"),
    pytest.param(make_pod("p").toleration("k", "v", "NoExecute"), make_node("n").taint("k", "v"), TAINTED,
                 id="other-effect"),
    pytest.param(make_pod("p").toleration("k", "v"), make_node("n").taint("k", "v", "NoExecute"), None,
                 id="empty-effect-matches-all-effects"),
    pytest.param(make_pod("p").toleration("k", operator="Exists"), make_node("n").taint("k", "v"), None,
                 id="Exists-any-value"),
    pytest.param(make_pod("p").toleration(operator="Exists"),
                 make_node("n").taint("a", "1").taint("b", "2", "NoExecute"), None, id="empty-key-Exists-all"),
    pytest.param(make_pod("p").toleration("a", "1"), make_node("n").taint("a", "1").taint("b", "2"), TAINTED,
                 id="one-of-two-untolerated"),
    pytest.param(make_pod("p").toleration("k", "5", operator="Gt"), make_node("n").taint("k", "7"), TAINTED,
                 id="Gt-off-by-default"),
])
def test_taint_toleration(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(run_filter(taint_toleration.TaintToleration(), pod, node)) == want
