"""The node-selector helper's columnar masks and one-node matches on several nodes at once, against
component-helpers v0.37.2's nodeaffinity (nodeaffinity_test.go: TestNodeSelectorMatch,
TestPodMatchesNodeSelectorAndAffinityTerms) and apimachinery v0.37.2's labels.Requirement.Matches /
NewRequirement and fields' hasTerm / notHasTerm, each expected node list worked out by hand from that
code: a term whose requirement fails to parse matches no node while the other terms still count;
NotIn and DoesNotExist match a node without the key; Gt/Lt parse the node's value with
strconv.ParseInt(v, 10, 64), a value outside int64 failing; a field other than metadata.name reads
as "" (fields.Set.Get of a missing key).

Every case is checked three ways, which must agree: `mask` over all the snapshot's rows, `mask` over
the rows in another order (the `take` path, and row numbers that are not the node's position), and
`matches` node by node."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import PodInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.model.objects import NodeSelectorTerm
from kubesched.plugins.helper.node_selector import Term, parse_int64, required_node_affinity
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod, term
from tests.unit.scheduling_helpers import snapshot_with

INT64_MAX = str(2**63 - 1)
PAST_INT64 = str(2**63)  # strconv.ParseInt: value out of range

# n4 has no zone; n6 no labels at all.
NODES: list[NodeBuilder] = [
    make_node("n1").label("zone", "a").label("gen", "5"),
    make_node("n2").label("zone", "b").label("gen", INT64_MAX),
    make_node("n3").label("zone", "c").label("gen", PAST_INT64),
    make_node("n4").label("gen", "4"),
    make_node("n5").label("zone", "a").label("gen", "x"),
    make_node("n6"),
]
ALL = ["n1", "n2", "n3", "n4", "n5", "n6"]


def _fields(*reqs: tuple[str, str, list[str]]) -> NodeSelectorTerm:
    return term(fields=tuple(reqs))


CASES = [
    # Label requirements (labels.Requirement.Matches).
    pytest.param(make_pod("p").required("zone", "In", "a", "b"), ["n1", "n2", "n5"],
                 id="In-several-values (Pod with matchExpressions using In operator that matches the existing node)"),
    pytest.param(make_pod("p").required("zone", "In", "c"), ["n3"], id="In-one-value"),
    pytest.param(make_pod("p").required("zone", "In", "z"), [], id="In-a-value-no-node-has"),
    pytest.param(make_pod("p").required("rack", "In", "a"), [], id="In-a-key-no-node-has"),
    pytest.param(make_pod("p").required("zone", "NotIn", "a"), ["n2", "n3", "n4", "n6"],
                 id="NotIn-matches-nodes-without-the-key"),
    pytest.param(make_pod("p").required("zone", "NotIn", "a", "b", "c"), ["n4", "n6"], id="NotIn-several-values"),
    pytest.param(make_pod("p").required("rack", "NotIn", "a"), ALL, id="NotIn-a-key-no-node-has"),
    pytest.param(make_pod("p").required("zone", "NotIn"), [],
                 id="NotIn-without-values-fails-to-parse (values set can't be empty)"),
    pytest.param(make_pod("p").required("zone", "In"), [], id="In-without-values-fails-to-parse"),
    pytest.param(make_pod("p").required("zone", "Exists"), ["n1", "n2", "n3", "n5"],
                 id="Exists (Pod with matchExpressions using Exists operator that matches the existing node)"),
    pytest.param(make_pod("p").required("rack", "Exists"), [], id="Exists-a-key-no-node-has"),
    pytest.param(make_pod("p").required("zone", "Exists", "a"), [],
                 id="Exists-with-values-fails-to-parse (values set must be empty for exists and does not exist)"),
    pytest.param(make_pod("p").required("zone", "DoesNotExist"), ["n4", "n6"], id="DoesNotExist"),
    pytest.param(make_pod("p").required("rack", "DoesNotExist"), ALL, id="DoesNotExist-a-key-no-node-has"),
    pytest.param(make_pod("p").required("zone", "DoesNotExist", "a"), [], id="DoesNotExist-with-values-fails-to-parse"),
    pytest.param(make_pod("p").required("gen", "Gt", "4"), ["n1", "n2"],
                 id="Gt (int64 max parses, one past it does not, x does not, n6 has no gen)"),
    pytest.param(make_pod("p").required("gen", "Gt", "0"), ["n1", "n2", "n4"], id="Gt-0"),
    pytest.param(make_pod("p").required("gen", "Lt", "5"), ["n4"], id="Lt-excludes-the-equal-value"),
    pytest.param(make_pod("p").required("gen", "Lt", INT64_MAX), ["n1", "n4"], id="Lt-int64-max"),
    pytest.param(make_pod("p").required("gen", "Gt", PAST_INT64), [],
                 id="Gt-past-int64-fails-to-parse (the value must be an integer)"),
    pytest.param(make_pod("p").required("gen", "Gt", "x"), [], id="Gt-non-integer-fails-to-parse"),
    pytest.param(make_pod("p").required("gen", "Gt", "1", "2"), [], id="Gt-two-values-fails-to-parse"),
    pytest.param(make_pod("p").required("zone", "Has", "a"), [], id="unknown-operator-fails-to-parse"),
    # labels.NewRequirement validates the key (validateLabelKey) and every value (validateLabelValue):
    # a value that is no label value fails to parse whatever the operator. (The apiserver admits such
    # values in preferred terms, and in required ones of pods that already had them.)
    pytest.param(make_pod("p").required("zone", "NotIn", "a b"), [], id="NotIn-a-value-that-is-no-label-value"),
    pytest.param(make_pod("p").required("gen", "Gt", "-1"), [],
                 id="Gt-a-negative-value-is-no-label-value (must start with an alphanumeric character)"),
    pytest.param(make_pod("p").required("zone", "NotIn", "a" * 64), [], id="NotIn-a-value-of-64"),
    pytest.param(make_pod("p").required("invalid key", "DoesNotExist"), [], id="a-key-that-is-no-label-key"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "In", ["n1", "n2"])),
                                              term(("zone", "In", ["a"]), fields=(("metadata.name", "In", ["n1"]),)),
                                              term(("invalid key", "NotIn", ["label_value"]))),
                 ["n1"], id="invalid field selector and label selector (the second term still matches n1)"),
    # Field requirements (nodeSelectorRequirementsAsFieldSelector; hasTerm / notHasTerm).
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "In", ["n2"]))), ["n2"],
                 id="matchFields-In (Pod with matchFields using In operator that matches the existing node)"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "NotIn", ["n2"]))),
                 ["n1", "n3", "n4", "n5", "n6"], id="matchFields-NotIn"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "In", ["ghost"]))), [],
                 id="matchFields-In-a-node-not-in-the-snapshot"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "NotIn", ["ghost"]))), ALL,
                 id="matchFields-NotIn-a-node-not-in-the-snapshot"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "In", ["n1", "n2"]))), [],
                 id="matchFields-two-values-fails-to-parse (invalid field selector: must have one element)"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "NotIn", ["n1", "n2"]))), [],
                 id="matchFields-NotIn-two-values-fails-to-parse"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.name", "Exists", []))), [],
                 id="matchFields-Exists-fails-to-parse (NotSupported)"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.namespace", "In", [""]))), ALL,
                 id="matchFields-other-field-reads-empty-In-empty"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.namespace", "In", ["n1"]))), [],
                 id="matchFields-other-field-reads-empty-In-a-name"),
    pytest.param(make_pod("p").required_terms(_fields(("metadata.namespace", "NotIn", ["n1"]))), ALL,
                 id="matchFields-other-field-reads-empty-NotIn-a-name"),
    # Requirements ANDed within a term, terms ORed.
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["a"]), ("gen", "In", ["5"]))), ["n1"],
                 id="matchExpressions-ANDed (Pod with multiple matchExpressions ANDed that matches the existing node)"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["a"]), fields=(("metadata.name", "In", ["n5"]),))),
                 ["n5"], id="one-term-both-matchFields-and-matchExpressions-match"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["b"]), fields=(("metadata.name", "In", ["n5"]),))),
                 [], id="node-matches-field-selector-but-not-labels"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["q"])), _fields(("metadata.name", "In", ["n3"]))),
                 ["n3"], id="second-term-matches"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["b"])), term(("gen", "Lt", ["5"]))),
                 ["n2", "n4"], id="terms-ORed (multiple NodeSelectorTerms ORed)"),
    pytest.param(make_pod("p").required_terms(term(("zone", "NotIn", [])), term(("zone", "In", ["b"]))), ["n2"],
                 id="a-term-that-fails-to-parse-leaves-the-others (LazyErrorNodeSelector)"),
    pytest.param(make_pod("p").required_terms(), [], id="no-terms-match-nothing"),
    pytest.param(make_pod("p").required_terms(NodeSelectorTerm()), [], id="an-empty-term-matches-nothing"),
    # The pod's nodeSelector map (labels.SelectorFromSet), ANDed with its required affinity.
    pytest.param(make_pod("p").node_selector(zone="a"), ["n1", "n5"], id="nodeSelector-one-label"),
    pytest.param(make_pod("p").node_selector(gen="5", zone="a"), ["n1"],
                 id="nodeSelector-two-labels-both-needed (node labels are subset)"),
    pytest.param(make_pod("p").node_selector(zone="a", gen="x"), ["n5"], id="nodeSelector-two-labels-other-order"),
    pytest.param(make_pod("p").node_selector(zone="a", gen="5", rack="1"), [], id="nodeSelector-a-label-no-node-has"),
    pytest.param(make_pod("p").node_selector(zone="a").required("gen", "Exists"), ["n1", "n5"],
                 id="nodeSelector-and-affinity (Pod with an Affinity and a PodSpec.NodeSelector)"),
    pytest.param(make_pod("p").node_selector(zone="a").required("gen", "In", "x"), ["n5"],
                 id="nodeSelector-and-affinity-both-needed"),
    pytest.param(make_pod("p").node_selector(gen="4", zone="a").required("zone", "Exists"), [],
                 id="nodeSelector-two-labels-and-affinity"),
    pytest.param(make_pod("p"), ALL, id="nothing-asked"),
]


def _names(snap: Snapshot, rows: np.ndarray, mask: np.ndarray) -> list[str]:
    assert mask.shape == rows.shape
    return sorted(snap.names[int(r)] for r, ok in zip(rows.tolist(), mask.tolist(), strict=True) if ok)


@pytest.mark.parametrize(("pod", "want"), CASES)
def test_required_node_affinity_on_several_nodes(pod: PodBuilder, want: list[str]) -> None:
    snap = snapshot_with(list(NODES))
    required = required_node_affinity(PodInfo(pod.obj()))
    assert _names(snap, snap.all_rows, required.mask(snap, snap.all_rows)) == want
    shuffled = np.array([4, 1, 5, 0, 3, 2], dtype=np.intp)
    assert _names(snap, shuffled, required.mask(snap, shuffled)) == want
    assert sorted(ni.name for ni in snap.node_infos if required.matches(ni.labels, ni.name)) == want


@pytest.mark.parametrize(("t", "want"), [
    pytest.param(term(("zone", "In", ["a"]), ("gen", "In", [])), False, id="fails-to-parse-matches-no-node"),
    pytest.param(term(fields=(("metadata.name", "In", ["n1", "n2"]),)), False, id="fields-fail-to-parse"),
    pytest.param(NodeSelectorTerm(), True, id="no-requirements-matches-every-node"),
])
def test_term_on_its_own(t: NodeSelectorTerm, want: bool) -> None:
    """A Term as nodeSelectorTerm.match answers it (parse errors: false; nil matchLabels and
    matchFields: true). NodeSelector and PreferredSchedulingTerms skip empty terms before that, and
    Selector.mask skips terms that failed, so this is the only way to reach those two branches."""
    snap = snapshot_with(list(NODES))
    parsed = Term.parse(t)
    rows = np.array([5, 0, 2], dtype=np.intp)
    assert parsed.mask(snap, rows).tolist() == [want] * 3
    assert [parsed.matches(ni.labels, ni.name) for ni in snap.node_infos] == [want] * len(ALL)


@pytest.mark.parametrize(("text", "want"), [
    pytest.param("5", 5, id="5"),
    pytest.param("+5", 5, id="plus-sign"),
    pytest.param("-5", -5, id="minus-sign"),
    pytest.param("007", 7, id="leading-zeros"),
    pytest.param(INT64_MAX, 2**63 - 1, id="int64-max"),
    pytest.param(PAST_INT64, None, id="int64-max-plus-one-out-of-range"),
    pytest.param(str(-(2**63)), -(2**63), id="int64-min"),
    pytest.param(str(-(2**63) - 1), None, id="int64-min-minus-one-out-of-range"),
    pytest.param("", None, id="empty"),
    pytest.param("1.0", None, id="decimal-point"),
    pytest.param(" 1", None, id="space"),
    pytest.param("0x10", None, id="hex-prefix-with-base-10"),
])
def test_parse_int64(text: str, want: int | None) -> None:
    """strconv.ParseInt(text, 10, 64) as Go documents it: an optional sign, decimal digits, the value
    within [-2**63, 2**63-1] (ErrRange outside it), anything else ErrSyntax. LabelRequirement.matches
    reads a node's label with it, as labels.Requirement.Matches does for Gt and Lt."""
    assert parse_int64(text) == want
