"""Table tests of the NodeAffinity filter's verdict and reason text, and of its PreFilter."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.plugins.node_affinity import plugin as node_affinity
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod, term
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, run_filter, verdict
from tests.unit.scheduling_helpers import snapshot_with

AFFINITY = (UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",))
ZONE_A = make_node("n1").label("zone", "a").label("gen", "5")


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), ZONE_A, None, id="nothing-asked"),
    pytest.param(make_pod("p").node_selector(zone="a"), ZONE_A, None, id="selector-match"),
    pytest.param(make_pod("p").node_selector(zone="b"), ZONE_A, AFFINITY, id="selector-other-value"),
    pytest.param(make_pod("p").node_selector(rack="1"), ZONE_A, AFFINITY, id="selector-missing-label"),
    pytest.param(make_pod("p").required("zone", "In", "a", "b"), ZONE_A, None, id="In"),
    pytest.param(make_pod("p").required("zone", "In", "b"), ZONE_A, AFFINITY, id="In-no"),
    pytest.param(make_pod("p").required("zone", "NotIn", "b"), ZONE_A, None, id="NotIn"),
    pytest.param(make_pod("p").required("zone", "NotIn", "a"), ZONE_A, AFFINITY, id="NotIn-no"),
    pytest.param(make_pod("p").required("rack", "NotIn", "a"), ZONE_A, None, id="NotIn-missing-label"),
    pytest.param(make_pod("p").required("zone", "Exists"), ZONE_A, None, id="Exists"),
    pytest.param(make_pod("p").required("rack", "Exists"), ZONE_A, AFFINITY, id="Exists-no"),
    pytest.param(make_pod("p").required("rack", "DoesNotExist"), ZONE_A, None, id="DoesNotExist"),
    pytest.param(make_pod("p").required("zone", "DoesNotExist"), ZONE_A, AFFINITY, id="DoesNotExist-no"),
    pytest.param(make_pod("p").required("gen", "Gt", "4"), ZONE_A, None, id="Gt"),
    pytest.param(make_pod("p").required("gen", "Gt", "5"), ZONE_A, AFFINITY, id="Gt-equal-no"),
    pytest.param(make_pod("p").required("gen", "Lt", "6"), ZONE_A, None, id="Lt"),
    pytest.param(make_pod("p").required("zone", "Lt", "6"), ZONE_A, AFFINITY, id="Lt-non-integer-label"),
    pytest.param(make_pod("p").required("gen", "Gt", "x"), ZONE_A, AFFINITY, id="Gt-invalid-value"),
    pytest.param(make_pod("p").required("zone", "In"), ZONE_A, AFFINITY, id="In-without-values"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["b"])), term(("gen", "Exists", []))),
                 ZONE_A, None, id="terms-ORed"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["a"]), ("gen", "In", ["4"]))),
                 ZONE_A, AFFINITY, id="expressions-ANDed"),
    pytest.param(make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["n1"]),))),
                 ZONE_A, None, id="matchFields-In"),
    pytest.param(make_pod("p").required_terms(term(fields=(("metadata.name", "NotIn", ["n1"]),))),
                 ZONE_A, AFFINITY, id="matchFields-NotIn"),
    pytest.param(make_pod("p").required_terms(), ZONE_A, AFFINITY, id="no-terms-match-nothing"),
    pytest.param(make_pod("p").node_selector(zone="a").required("gen", "In", "4"), ZONE_A, AFFINITY,
                 id="selector-and-affinity-both-needed"),
])
def test_node_affinity(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(run_filter(node_affinity.NodeAffinity(), pod, node)) == want


def test_node_affinity_added_affinity() -> None:
    plugin = node_affinity.new({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}})
    assert verdict(run_filter(plugin, make_pod("p"), make_node("n"))) == (
        UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",))
    assert run_filter(plugin, make_pod("p"), make_node("n").label("pool", "batch")) is None


def test_node_affinity_pre_filter_conflict_and_names() -> None:
    plugin = node_affinity.NodeAffinity()
    snap = snapshot_with([make_node("n1")])
    pod = make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["a"]), ("metadata.name", "In", ["b"]))))
    _, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), snap)
    assert verdict(status) == (UNRESOLVABLE, ("pod affinity terms conflict",))
    pod = make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["n1"]),)))
    result, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), snap)
    assert status is None
    assert result is not None
    assert result.node_names == frozenset({"n1"})
