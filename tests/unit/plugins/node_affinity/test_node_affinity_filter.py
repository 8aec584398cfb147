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


ENFORCED = (UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",))
CONFLICT = (UNRESOLVABLE, ("pod affinity terms conflict",))
ADDED_NAME_NODE2: dict[str, object] = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node2"]}]}]}}}
ADDED_ZONE_BAR: dict[str, object] = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["bar"]}]}]}}}
GPU_POD = make_pod("p").required_terms(term(("GPU", "Exists", []), ("GPU", "NotIn", ["AMD", "INTER"])))


@pytest.mark.parametrize(("args", "pod", "node", "run_pre_filter", "want"), [
    pytest.param(ADDED_NAME_NODE2, make_pod("p").required("zone", "In", "foo"), make_node("node2").label("zone", "foo"),
                 True, None, id="Matches added affinity and Pod's node affinity"),
    pytest.param(ADDED_NAME_NODE2, make_pod("p").required("zone", "In", "bar"), make_node("node2").label("zone", "foo"),
                 True, AFFINITY, id="Matches added affinity but not Pod's node affinity"),
    pytest.param(ADDED_ZONE_BAR, make_pod("p"), make_node("node2").label("zone", "foo"),
                 True, ENFORCED, id="Doesn't match added affinity"),
    pytest.param({}, make_pod("p").node_selector(foo="bar"),
                 make_node("node1").label("foo", "bar").label("baz", "blah"), False, None,
                 id="Matches node selector correctly even if PreFilter is not called"),
    pytest.param({}, GPU_POD, make_node("node1").label("GPU", "NVIDIA-GRID-K1"),
                 False, None, id="Matches node affinity correctly even if PreFilter is not called"),
    # By hand from Filter: the scheduler-enforced affinity is checked first, so a node failing both
    # gets errReasonEnforced.
    pytest.param(ADDED_ZONE_BAR, make_pod("p").required("zone", "In", "bar").node_selector(gen="5"),
                 make_node("node2").label("zone", "foo"), True, ENFORCED, id="fails added and Pod's: enforced first"),
])
def test_node_affinity_added_affinity_cases(args: dict[str, object], pod: PodBuilder, node: NodeBuilder,
                                            run_pre_filter: bool, want: object) -> None:
    """TestNodeAffinity's addedAffinity and no-PreFilter cases, on the one-node Filter, the batch
    mask and the batch statuses of the rejected node, which must all give the upstream answer."""
    plugin = node_affinity.new(args)
    snap = snapshot_with([node])
    info, state = PodInfo(pod.obj()), CycleState()
    if run_pre_filter:
        _, status = plugin.pre_filter(state, info, snap)
        assert status is None
    assert verdict(plugin.filter(state, info, snap.node_infos[0])) == want
    mask = plugin.filter_batch(state, info, snap, snap.all_rows)
    assert (mask is None or bool(mask.all())) == (want is None)
    if want is not None:
        assert [verdict(s) for s in plugin.filter_statuses(state, info, snap, snap.all_rows)] == [want]


def test_node_affinity_added_affinity_on_several_nodes() -> None:
    """By hand from Filter, on three nodes at once: node2 fits the added metadata.name affinity and
    the Pod's zone=foo; node1 fails the added affinity (enforced, whatever its labels); node3 is
    not node2 either. Then with the Pod's affinity failing on node2, node2 alone gets ErrReasonPod."""
    plugin = node_affinity.new(ADDED_NAME_NODE2)
    nodes = [make_node("node1").label("zone", "foo"), make_node("node2").label("zone", "foo"), make_node("node3")]
    snap = snapshot_with(list(nodes))
    for pod, want in ((make_pod("p").required("zone", "In", "foo"), [ENFORCED, None, ENFORCED]),
                      (make_pod("p").required("zone", "In", "bar"), [ENFORCED, AFFINITY, ENFORCED])):
        info, state = PodInfo(pod.obj()), CycleState()
        plugin.pre_filter(state, info, snap)
        assert [verdict(plugin.filter(state, info, ni)) for ni in snap.node_infos] == want
        mask = plugin.filter_batch(state, info, snap, snap.all_rows)
        assert mask is not None
        assert mask.tolist() == [w is None for w in want]
        rejected = snap.all_rows[~mask]
        assert [verdict(s) for s in plugin.filter_statuses(state, info, snap, rejected)] == [
            w for w in want if w is not None]


@pytest.mark.parametrize(("args", "pod", "want_names", "want_status"), [
    pytest.param({}, make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["node1"]),))),
                 {"node1"}, None, id="Pod with matchFields using In operator that matches the existing node"),
    pytest.param({}, make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["node1"]),)),
                                                  term(fields=(("metadata.name", "In", ["node2"]),))),
                 {"node1", "node2"}, None, id="Pod with two terms of node.Name affinity"),
    pytest.param({}, make_pod("p").required_terms(
        term(fields=(("metadata.name", "In", ["node1"]), ("metadata.name", "In", ["node2"]))),
        term(("foo", "In", ["bar"]))),
                 None, None, id="Pod with two terms: matchFields does not match, but matchExpressions matches"),
    pytest.param({}, make_pod("p").required_terms(
        term(fields=(("metadata.name", "In", ["node1"]), ("metadata.name", "In", ["node2"])))),
                 None, CONFLICT, id="Pod with two conflicting mach field requirements"),
    # By hand from PreFilter: only `r.Key == metadata.name && r.Operator == In` names nodes; a NotIn
    # term names none, so the term leaves every node eligible (nil result).
    pytest.param({}, make_pod("p").required_terms(term(fields=(("metadata.name", "NotIn", ["node1"]),))),
                 None, None, id="metadata.name NotIn names no node"),
    # By hand: a NotIn beside an In in one term narrows nothing; the term's names are the In's.
    pytest.param({}, make_pod("p").required_terms(
        term(fields=(("metadata.name", "In", ["node1"]), ("metadata.name", "NotIn", ["node2"])))),
                 {"node1"}, None, id="metadata.name In and NotIn: the In's names"),
    # By hand: nothing asked and no addedAffinity required terms (addedNodeSelector nil): Skip,
    # whether addedAffinity is absent or has only preferred terms.
    pytest.param({}, make_pod("p"), None, "skip", id="nothing asked: Skip"),
    pytest.param({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}]}},
                 make_pod("p"), None, "skip", id="added preferred only: Skip"),
    # "Doesn't match added affinity": a Pod with nothing asked is not skipped when addedAffinity has
    # required terms; no terms of its own, so a nil result.
    pytest.param(ADDED_ZONE_BAR, make_pod("p"), None, None, id="Doesn't match added affinity: not skipped"),
])
def test_node_affinity_pre_filter(args: dict[str, object], pod: PodBuilder, want_names: set[str] | None,
                                  want_status: object) -> None:
    plugin = node_affinity.new(args)
    snap = snapshot_with([make_node("node1"), make_node("node2")])
    result, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), snap)
    if want_status == "skip":
        assert status is not None
        assert status.is_skip()
    else:
        assert verdict(status) == want_status
    assert (None if result is None or result.node_names is None else set(result.node_names)) == want_names


@pytest.mark.parametrize(("args", "field"), [
    pytest.param({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}}},
                 "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution", id="invalid required term"),
    pytest.param({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [
            {"key": "invalid key", "operator": "In", "values": ["a"]}]}}]}},
                 "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution", id="invalid preferred term"),
])
def test_new_rejects_an_invalid_added_affinity(args: dict[str, object], field: str) -> None:
    """By hand from New: an addedAffinity whose required selector or preferred terms do not parse
    fails the plugin's construction, naming the field as "parsing <field>: ..." does."""
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        node_affinity.new(args)
