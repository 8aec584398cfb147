"""PodTopologySpread's Filter, table tests ported from kube-scheduler's filtering_test.go
(TestSingleConstraint, TestMultipleConstraints): each node's code, on the one-node and batch paths."""

from __future__ import annotations

import pytest

from kubesched.framework import Code, CycleState, NodeInfo, PodInfo, Snapshot
from kubesched.model.objects import LabelSelector, LabelSelectorRequirement
from kubesched.plugins.pod_topology_spread import PodTopologySpread, new
from kubesched.plugins.pod_topology_spread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from tests.builders import PodBuilder, make_node
from tests.unit.pts_helpers import BAR, FOO, FOUR_NODES, N, P, nodes_of, pods_of, pre_filtered
from tests.unit.scheduling_helpers import snapshot_with

S, U, UU = Code.SUCCESS, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
HOSTS3 = ("node-a node=node-a", "node-b node=node-b", "node-c node=node-c")
FOO_NODES = ("node-a node=node-a foo", "node-b node=node-b foo", "node-x node=node-x foo", "node-y node=node-y")
SPREAD_2103 = "p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-y1@node-y foo, p-y2@node-y foo, p-y3@node-y foo"


def _plugin() -> PodTopologySpread:
    return new({"defaultingType": "List"})


def codes(pod: PodBuilder, nodes: tuple[str, ...], pods: str, tainted: tuple[str, ...] = ()) -> dict[str, Code]:
    plugin = _plugin()
    state, info, snapshot = pre_filtered(plugin, pod, nodes_of(nodes, tainted), pods_of(pods))
    out: dict[str, Code] = {}
    for ni in snapshot.node_infos:
        s = plugin.filter(state, info, ni)
        out[ni.name] = Code.SUCCESS if s is None else s.code
        if s is not None:
            want_reason = ERR_REASON_NODE_LABEL_NOT_MATCH if s.code == UU else ERR_REASON_CONSTRAINTS_NOT_MATCH
            assert s.reasons == (want_reason,)
    # The batch path agrees, and gives the rejected nodes the same statuses.
    mask = plugin.filter_batch(state, info, snapshot, snapshot.all_rows)
    batch = [True] * snapshot.n if mask is None else mask.tolist()
    assert {n: ok for n, ok in zip(snapshot.names, batch, strict=True)} == {n: c == S for n, c in out.items()}
    rejected = snapshot.all_rows[[not ok for ok in batch]]
    statuses = plugin.filter_statuses(state, info, snapshot, rejected)
    assert [s.code for s in statuses] == [out[snapshot.names[r]] for r in rejected.tolist()]
    return out


def four(a: Code, b: Code, x: Code, y: Code) -> dict[str, Code]:
    return {"node-a": a, "node-b": b, "node-x": x, "node-y": y}


SINGLE = [
    pytest.param(P("p foo").spread(1, "zone", selector=FOO), FOUR_NODES, "", (), four(S, S, S, S),
                 id="no existing pods"),
    pytest.param(P("p foo").spread(1, "zone", selector=BAR), FOUR_NODES, "", (), four(S, S, S, S),
                 id="no existing pods, incoming pod doesn't match itself"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO), FOUR_NODES,
                 "ns1/p-a1@node-a foo, ns2/p-b1@node-a foo, p-x1@node-x foo, p-y1@node-y foo", (),
                 four(S, S, U, U), id="existing pods in a different namespace do not count"),
    pytest.param(P("p foo").spread(1, "zone", selector=None), FOUR_NODES, "p-x1@node-x foo, p-y1@node-y foo", (),
                 four(S, S, S, S), id="existing pods do not match null selector"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO), FOUR_NODES, SPREAD_2103, (), four(S, S, S, S),
                 id="pods spread across zones as 3/3, all nodes fit"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO),
                 ("node-a zone=zone1 node=node-a", "node-b zon=zone1 node=node-b", "node-x zone=zone2 node=node-x",
                  "node-y zone=zone2 node=node-y"),
                 "p-a1@node-a foo, p-b1@node-b foo, p-x1@node-x foo, p-y1@node-y foo", (), four(S, UU, U, U),
                 id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b"),
    pytest.param(P("p foo").spread(1, "rack", selector=FOO),
                 ("node-a zone=zone1 node=node-a", "node-x zone=zone2 node=node-x"), "", (),
                 {"node-a": UU, "node-x": UU}, id="pod cannot be scheduled as all nodes don't have label 'rack'"),
    pytest.param(P("p foo").spread(1, "node", selector=FOO), FOUR_NODES, SPREAD_2103, (), four(U, U, S, U),
                 id="pods spread across nodes as 2/1/0/3, only node-x fits"),
    pytest.param(P("p foo").spread(2, "node", selector=FOO), FOUR_NODES, SPREAD_2103, (), four(U, S, S, U),
                 id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"),
    pytest.param(P("p bar").spread(1, "node", selector=FOO), FOUR_NODES, SPREAD_2103, (), four(U, S, S, U),
                 id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself"),
    pytest.param(P("p foo").required("node", "In", "node-a", "node-y").spread(1, "node", selector=FOO),
                 FOUR_NODES, SPREAD_2103, (), four(S, S, S, U),
                 id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"),
    pytest.param(P("p foo").required("node", "NotIn", "node-b").spread(1, "zone", selector=FOO), FOUR_NODES,
                 "p-b1@node-b foo, p-b2@node-b foo, p-y1@node-y foo", (), four(S, S, U, U),
                 id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits"),
    pytest.param(P("p foo").spread(2, "node", selector=FOO, min_domains=4), HOSTS3,
                 "p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-b2@node-b foo, p-c1@node-c foo", (),
                 {"node-a": U, "node-b": U, "node-c": S},
                 id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
                    "then the third node fits"),
    pytest.param(P("p foo").spread(2, "node", selector=FOO, min_domains=2), HOSTS3,
                 "p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-b2@node-b foo, p-c1@node-c foo", (),
                 {"node-a": S, "node-b": S, "node-c": S},
                 id="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
                    "then the all nodes fit"),
    pytest.param(P("p foo").spread(2, "zone", selector=FOO, min_domains=3), FOUR_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", (), four(U, U, S, S),
                 id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
                    "then the third and fourth nodes fit"),
    pytest.param(P("p foo").spread(2, "zone", selector=FOO, min_domains=1), FOUR_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", (), four(S, S, S, S),
                 id="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
                    "then the all nodes fit"),
    pytest.param(P("p foo").node_selector(foo="").spread(1, "node", selector=FOO), FOO_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", (), four(U, U, S, S),
                 id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(P("p foo").node_selector(foo="").spread(1, "node", selector=FOO, node_affinity_policy="Ignore"),
                 FOO_NODES, "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", (), four(U, U, S, U),
                 id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(P("p foo").required("foo", "In", "").spread(1, "node", selector=FOO), FOO_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", (), four(U, U, S, S),
                 id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(P("p foo").required("foo", "In", "").spread(1, "node", selector=FOO, node_affinity_policy="Ignore"),
                 FOO_NODES, "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", (), four(U, U, S, U),
                 id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(P("p foo").spread(1, "node", selector=FOO, node_taints_policy="Honor"), FOO_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", ("node-y",), four(U, U, S, S),
                 id="NodeTaintsPolicy honored"),
    pytest.param(P("p foo").spread(1, "node", selector=FOO), FOO_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo", ("node-y",), four(U, U, S, U),
                 id="NodeTaintsPolicy ignored"),
]

MULTIPLE = [
    pytest.param(P("p foo").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO), FOUR_NODES,
                 SPREAD_2103, (), four(U, U, S, U), id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO), FOUR_NODES,
                 SPREAD_2103 + ", p-y4@node-y foo", (), four(U, U, U, U),
                 id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]"),
    pytest.param(P("p foo bar").spread(1, "zone", selector=FOO).spread(1, "node", selector=BAR), FOUR_NODES,
                 "p-a1@node-a foo, p-y1@node-y bar", (), four(U, U, S, U),
                 id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]"),
    pytest.param(P("p foo bar").spread(1, "zone", selector=FOO).spread(1, "node", selector=BAR), FOUR_NODES,
                 "p-a1@node-a foo, p-x1@node-x bar, p-y1@node-y bar", (), four(U, U, U, U),
                 id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]"),
    pytest.param(P("p foo bar").spread(1, "zone", selector=FOO).spread(1, "node", selector=BAR), FOUR_NODES,
                 "p-a1@node-a foo, p-a2@node-a foo bar, p-y1@node-y foo, p-y2@node-y foo bar, p-y3@node-y foo", (),
                 four(U, S, U, U), id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]"),
    pytest.param(P("p bar").spread(1, "zone", selector=FOO).spread(1, "node", selector=BAR), FOUR_NODES,
                 "p-a1@node-a foo, p-x1@node-x bar, p-y1@node-y bar", (), four(S, S, U, U),
                 id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO),
                 ("node-a zone=zone1 node=node-a", "node-b zone=zone1 node=node-b", "node-x zone=zone2",
                  "node-y zone=zone2 node=node-y"), "p-a1@node-a foo, p-y3@node-y foo", (), four(U, S, UU, U),
                 id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]"),
    # Not in filtering_test.go: the same nodes with two matching pods on node-x, which lacks "node".
    # calPreFilterState counts a node only when it has every constraint's key, so node-x's pods
    # count for neither constraint: zone 1/0 (min 0), node 1/0/0. node-a, node-b: zone 1 + 1 - 0 = 2
    # > 1; node-y: zone 0 + 1 - 0 = 1, node 0 + 1 - 0 = 1, fits. (Counting node-x for the zone, 1/2,
    # min 1, would pass node-b instead and reject node-y.)
    pytest.param(P("p foo").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO),
                 ("node-a zone=zone1 node=node-a", "node-b zone=zone1 node=node-b", "node-x zone=zone2",
                  "node-y zone=zone2 node=node-y"), "p-a1@node-a foo, p-x1@node-x foo, p-x2@node-x foo", (),
                 four(U, U, UU, S), id="two Constraints on zone and node, pods on node-x without 'node' not counted"),
    pytest.param(P("p foo").node_selector(foo="").spread(1, "zone", selector=FOO)
                 .spread(1, "node", selector=FOO, node_affinity_policy="Ignore"),
                 ("node-a zone=zone1 node=node-a foo", "node-b zone=zone1 node=node-b foo",
                  "node-x zone=zone2 node=node-x foo", "node-y zone=zone2 node=node-y"),
                 "p-a1@node-a foo, p-b1@node-b foo, p-y1@node-y foo", (), four(U, U, S, U),
                 id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO, node_taints_policy="Honor").spread(1, "node", selector=FOO),
                 ("node-a zone=zone1 node=node-a foo", "node-b zone=zone1 node=node-b foo",
                  "node-x zone=zone2 node=node-x foo", "node-y zone=zone2 node=node-y"),
                 "p-a1@node-a foo, p-b1@node-b foo, p-y1@node-y foo", ("node-y",), four(U, U, S, U),
                 id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore"),
    pytest.param(P("p foo").node_selector(foo="").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO),
                 ("node-a zone=zone1 node=node-a foo", "node-b zone=zone1 node=node-b",
                  "node-x zone=zone2 node=node-x foo", "node-y zone=zone2 node=node-y foo"),
                 "p-a1@node-a foo, p-b1@node-b foo, p-y1@node-y foo", ("node-y",), four(U, S, S, U),
                 id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"),
    pytest.param(P("p foo").node_selector(foo="").spread(1, "zone", selector=FOO, node_taints_policy="Honor")
                 .spread(1, "node", selector=FOO, node_affinity_policy="Ignore"),
                 ("node-a zone=zone1 node=node-a foo", "node-b zone=zone1 node=node-b",
                  "node-x zone=zone2 node=node-x foo", "node-y zone=zone2 node=node-y foo"),
                 "p-a1@node-a foo, p-b1@node-b foo, p-y1@node-y foo", ("node-y",), four(U, U, S, U),
                 id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore"),
    pytest.param(P("p foo bar").spread(1, "zone", selector=BAR).spread(1, "zone", selector=FOO), FOUR_NODES,
                 "p-a1@node-a foo bar, p-a2@node-a foo, p-b1@node-b foo bar, p-y1@node-y foo, "
                 "p-y2@node-y foo bar, p-y3@node-y foo", (), four(U, U, S, S),
                 id="two Constraints on zone, spreads = [3/3, 2/1]"),
    pytest.param(P("p foo bar").spread(1, "zone", selector=BAR).spread(1, "zone", selector=FOO), FOUR_NODES,
                 "p-a1@node-a foo bar, p-a2@node-a foo, p-b1@node-b foo bar, p-y1@node-y foo, "
                 "p-y2@node-y foo bar, p-y3@node-y foo, p-y4@node-y foo", (), four(U, U, U, U),
                 id="two Constraints on zone, spreads = [3/4, 2/1]"),
]


@pytest.mark.parametrize(("pod", "nodes", "pods", "tainted", "want"), SINGLE)
def test_single_constraint(pod: PodBuilder, nodes: tuple[str, ...], pods: str, tainted: tuple[str, ...],
                           want: dict[str, Code]) -> None:
    assert codes(pod, nodes, pods, tainted) == want


def test_terminating_pods_excluded() -> None:
    """TestSingleConstraint "terminating Pods should be excluded"."""
    plugin = _plugin()
    pods = [P("p-a@node-a foo").terminating(), P("p-b@node-b foo")]
    state, info, snapshot = pre_filtered(plugin, P("p foo").spread(1, "node", selector=FOO),
                                         nodes_of(("node-a node=node-a", "node-b node=node-b")), pods)
    got = {ni.name: plugin.filter(state, info, ni) is None for ni in snapshot.node_infos}
    assert got == {"node-a": True, "node-b": False}


@pytest.mark.parametrize(("pod", "nodes", "pods", "tainted", "want"), MULTIPLE)
def test_multiple_constraints(pod: PodBuilder, nodes: tuple[str, ...], pods: str, tainted: tuple[str, ...],
                              want: dict[str, Code]) -> None:
    assert codes(pod, nodes, pods, tainted) == want


@pytest.mark.parametrize(("pod", "want_skip"), [
    pytest.param(P("p foo"), True, id="no constraints, no default selector"),
    pytest.param(P("p foo").spread(1, "zone", "ScheduleAnyway", FOO), True, id="soft constraints only"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO), False, id="hard constraint"),
])
def test_pre_filter_skip(pod: PodBuilder, want_skip: bool) -> None:
    plugin = new({})
    _, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), four_nodes())
    assert (status is not None and status.is_skip()) == want_skip


def four_nodes() -> Snapshot:
    return snapshot_with([N(spec) for spec in FOUR_NODES])


def test_filter_without_pre_filter_state_is_an_error() -> None:
    s = _plugin().filter(CycleState(), PodInfo(P("p").obj()), NodeInfo(make_node("n").obj()))
    assert s is not None
    assert s.code == Code.ERROR


@pytest.mark.parametrize(("bad", "message"), [
    pytest.param(LabelSelectorRequirement(key="foo", operator="In"),
                 "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty", id="no-values"),
    pytest.param(LabelSelectorRequirement(key="a/b/c", operator="Exists"),
                 "key: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', "
                 "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
                 "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
                 "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", id="bad-key"),
])
def test_invalid_selector_fails_pre_filter(bad: LabelSelectorRequirement, message: str) -> None:
    """metav1.LabelSelectorAsSelector's error text, as kube-scheduler wraps it."""
    selector = LabelSelector(match_expressions=[bad])
    _, status = _plugin().pre_filter(CycleState(), PodInfo(P("p").spread(1, "zone", selector=selector).obj()),
                                     four_nodes())
    assert status is not None
    assert status.code == Code.ERROR
    assert status.reasons == ("get constraints from pod: obtaining pod's hard topology spread constraints: "
                              + message,)
