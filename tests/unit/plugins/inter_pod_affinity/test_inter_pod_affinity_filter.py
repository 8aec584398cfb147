"""InterPodAffinity PreFilter/Filter, ported from kube-scheduler's interpodaffinity/filtering_test.go
(TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes, TestPreFilterDisabled,
TestPreFilterStateAddRemovePod, TestGetTPMapMatchingIncomingAffinityAntiAffinity,
TestMultipleAffinityTermsRequireSingleMatchingPod), plus namespaceSelector cases (matchLabelKeys:
test_inter_pod_affinity_label_keys.py).
Every case also checks that the batch path agrees with the one-node path."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity import StaticNamespaces, new
from kubesched.plugins.inter_pod_affinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_KEY,
    PreFilterState,
)
from kubesched.plugins.inter_pod_affinity.terms import AffinityTerm, TermCache, parse_term
from tests.builders import NodeBuilder, PodBuilder, affinity_term, label_selector, make_node, make_pod
from tests.unit.scheduling_helpers import pod_of, snapshot_with

AFF = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXIST = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
SKIP = Status(Code.SKIP)
HOST = "kubernetes.io/hostname"

_n = iter(range(10**6))


def pod(ns: str = "", name: str | None = None) -> PodBuilder:
    return make_pod(name or f"p{next(_n)}", ns)


def node(name: str, **labels: str) -> NodeBuilder:
    b = make_node(name)
    for k, v in labels.items():
        b.label(k.replace("__", "/"), v)
    return b


def run_filter(incoming: PodBuilder | Pod, pods: list[PodBuilder], nodes: list[NodeBuilder],
               namespaces: dict[str, dict[str, str]] | None = None
               ) -> tuple[Status | None, list[Status | None] | None]:
    snap = snapshot_with(nodes, pods)  # type: ignore[arg-type]
    pl = new({}, namespaces=StaticNamespaces(namespaces))
    state = CycleState()
    pi = PodInfo(pod_of(incoming))
    _, pre = pl.pre_filter(state, pi, snap)
    if pre is not None:
        return pre, None
    got = [pl.filter(state, pi, ni) for ni in snap.node_infos]
    mask = pl.filter_batch(state, pi, snap, snap.all_rows)
    expect_ok = np.array([s is None for s in got])
    assert (mask is None and expect_ok.all()) or (mask is not None and (mask == expect_ok).all())
    rejected = np.flatnonzero(~expect_ok)
    assert pl.filter_statuses(state, pi, snap, rejected) == [s for s in got if s is not None]
    by_name = dict(zip(snap.names, got, strict=True))
    return None, [by_name[n.obj().metadata.name] for n in nodes]


# --- TestRequiredAffinitySingleNode -------------------------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
EXISTING = pod(name="existing").labels(**POD_LABEL).node("node1")


def node1() -> NodeBuilder:
    return node("node1", region="r1", zone="z11")


def _aff(b: PodBuilder, key: str, op: str, values: list[str], tk: str, anti: bool = False) -> PodBuilder:
    return b.pod_affinity_expr(key, op, values, tk, anti=anti)


def _term_pod(ns: str, labels: dict[str, str], affinity: list, anti: list) -> PodBuilder:  # type: ignore[type-arg]
    b = pod(ns).labels(**labels)
    for t in affinity:
        b.affinity_term(t)
    for t in anti:
        b.affinity_term(t, anti=True)
    return b


SINGLE = [
    pytest.param(pod(), [], SKIP, None,
                 id="no required pod affinity scheduling rules can schedule onto a node with no existing pods"),
    pytest.param(_aff(pod().labels(**POD_LABEL2), "service", "In", ["securityscan", "value2"], "region"),
                 [EXISTING], None, None, id="satisfies PodAffinity using In operator that matches the existing pod"),
    pytest.param(_aff(pod().labels(**POD_LABEL2), "service", "NotIn", ["securityscan3", "value3"], "region"),
                 [EXISTING], None, None, id="satisfies PodAffinity using NotIn operator that matches the existing pod"),
    pytest.param(_term_pod("", POD_LABEL2, [affinity_term(("service", "In", ["securityscan", "value2"]),
                                                          namespaces=("DiffNameSpace",))], []),
                 [pod("ns").label("service", "securityscan").node("node1")], None, AFF,
                 id="does not satisfy PodAffinity because of diff Namespace"),
    pytest.param(_aff(pod().labels(**POD_LABEL), "service", "In", ["antivirusscan", "value2"], ""),
                 [EXISTING], None, AFF, id="unmatching labelSelector with the existing pod"),
    pytest.param(_term_pod("", POD_LABEL2, [
        affinity_term(("service", "Exists", []), ("wrongkey", "DoesNotExist", []), topology_key="region"),
        affinity_term(("service", "In", ["securityscan"]), ("service", "NotIn", ["WrongValue"]),
                      topology_key="region")], []),
        [EXISTING], None, None, id="different label operators in multiple required terms"),
    pytest.param(_term_pod("", POD_LABEL2, [
        affinity_term(("service", "Exists", []), ("wrongkey", "DoesNotExist", []), topology_key="region"),
        affinity_term(("service", "In", ["securityscan2"]), ("service", "NotIn", ["WrongValue"]),
                      topology_key="region")], []),
        [EXISTING], None, AFF, id="matchExpressions are ANDed and one does not match"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL2), "service", "In", ["securityscan", "value2"], "region"),
                      "service", "In", ["antivirusscan", "value2"], "node", anti=True),
                 [EXISTING], None, None, id="satisfies PodAffinity and PodAntiAffinity with the existing pod"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL2), "service", "In", ["securityscan", "value2"], "region"),
                      "service", "In", ["antivirusscan", "value2"], "node", anti=True),
                 [_aff(pod(name="e").node("node1").labels(**POD_LABEL), "service", "In", ["antivirusscan", "value2"],
                       "node", anti=True)],
                 None, None, id="satisfies PodAffinity, PodAntiAffinity and PodAntiAffinity symmetry"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL2), "service", "In", ["securityscan", "value2"], "region"),
                      "service", "In", ["securityscan", "value2"], "zone", anti=True),
                 [EXISTING], None, ANTI, id="satisfies PodAffinity but not PodAntiAffinity with the existing pod"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL), "service", "In", ["securityscan", "value2"], "region"),
                      "service", "In", ["antivirusscan", "value2"], "node", anti=True),
                 [_aff(pod(name="e").labels(**POD_LABEL).node("node1"), "service", "In", ["securityscan", "value2"],
                       "zone", anti=True)],
                 None, EXIST, id="satisfies PodAffinity and PodAntiAffinity but not PodAntiAffinity symmetry"),
    pytest.param(_aff(pod().labels(**POD_LABEL), "service", "NotIn", ["securityscan", "value2"], "region"),
                 [pod().label("service", "securityscan").node("node2")], None, AFF,
                 id="pod matches its own label in PodAffinity and that matches the existing pod labels"),
    pytest.param(pod().labels(**POD_LABEL),
                 [_aff(pod().node("node1").labels(**POD_LABEL), "service", "In", ["securityscan", "value2"], "zone",
                       anti=True)],
                 None, EXIST, id="existing pod PodAntiAffinity respected when pod has none: not satisfied"),
    pytest.param(pod().labels(**POD_LABEL),
                 [_aff(pod().node("node1").labels(**POD_LABEL), "service", "NotIn", ["securityscan", "value2"], "zone",
                       anti=True)],
                 SKIP, None, id="existing pod PodAntiAffinity respected when pod has none: satisfied"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL), "service", "Exists", [], "region", anti=True),
                      "security", "Exists", [], "region", anti=True),
                 [_aff(pod().node("node1").labels(**POD_LABEL2), "security", "Exists", [], "zone", anti=True)],
                 None, ANTI, id="satisfies PodAntiAffinity with existing pod but not symmetry with incoming pod"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL), "service", "Exists", [], "zone", anti=True),
                      "security", "Exists", [], "zone", anti=True),
                 [_aff(pod().node("node1").labels(**POD_LABEL2), "security", "Exists", [], "zone", anti=True)],
                 None, ANTI, id="PodAntiAffinity symmetry check a1"),
    pytest.param(_aff(pod().labels(**POD_LABEL2), "security", "Exists", [], "zone", anti=True),
                 [_aff(_aff(pod().node("node1").labels(**POD_LABEL), "service", "Exists", [], "zone", anti=True),
                       "security", "Exists", [], "zone", anti=True)],
                 None, EXIST, id="PodAntiAffinity symmetry check a2"),
    pytest.param(_aff(_aff(pod().labels(abc="", xyz=""), "abc", "Exists", [], "zone", anti=True),
                      "def", "Exists", [], "zone", anti=True),
                 [_aff(_aff(pod().node("node1").labels(**{"def": "", "xyz": ""}), "abc", "Exists", [], "zone",
                            anti=True), "def", "Exists", [], "zone", anti=True)],
                 None, ANTI, id="PodAntiAffinity symmetry check b1"),
    pytest.param(_aff(_aff(pod().labels(**{"def": "", "xyz": ""}), "abc", "Exists", [], "zone", anti=True),
                      "def", "Exists", [], "zone", anti=True),
                 [_aff(_aff(pod().node("node1").labels(abc="", xyz=""), "abc", "Exists", [], "zone", anti=True),
                       "def", "Exists", [], "zone", anti=True)],
                 None, ANTI, id="PodAntiAffinity symmetry check b2"),
    pytest.param(_aff(_aff(pod().labels(**POD_LABEL), "service", "In", ["{{.bad-value.}}"], "region"),
                      "service", "In", ["antivirusscan", "value2"], "node"), [],
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": "
                        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                        "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                        "'my_value',  or '12345', regex used for validation is "
                        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
                 None, id="PodAffinity fails PreFilter with an invalid affinity label syntax"),
    # kube-scheduler's NewPodInfo parses with metav1.LabelSelectorAsSelector, which checks keys too
    # (labels.NewRequirement's validateLabelKey) and prints a []string as JSON (field.Invalid).
    pytest.param(_aff(pod().labels(**POD_LABEL), "service/a/b", "Exists", [], "region"), [],
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "parsing pod: requiredAffinityTerms: key: Invalid value: \"service/a/b\": a valid label key "
                        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                        "prefix and '/' (e.g. 'example.com/MyName')"),
                 None, id="PodAffinity fails PreFilter with an invalid label key"),
    pytest.param(_aff(pod().labels(**POD_LABEL), "service", "In", [], "region", anti=True), [],
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "parsing pod: requiredAntiAffinityTerms: values: Invalid value: null: for 'in', 'notin' "
                        "operators, values set can't be empty"),
                 None, id="PodAntiAffinity fails PreFilter with an In without values"),
    pytest.param(_term_pod("", POD_LABEL2, [affinity_term(
        ("service", "In", ["securityscan", "value2"]),
        namespace_selector=label_selector(("team", "In", ["team1"])), topology_key="region")], []),
        [pod("subteam1.team1").labels(**POD_LABEL).node("node1")], None, None, id="affinity with NamespaceSelector"),
    pytest.param(_term_pod("", POD_LABEL2, [affinity_term(
        ("service", "In", ["securityscan", "value2"]),
        namespace_selector=label_selector(("team", "In", ["team1"])), topology_key="region")], []),
        [pod("subteam1.team2").labels(**POD_LABEL).node("node1")], None, AFF,
        id="affinity with non-matching NamespaceSelector"),
    pytest.param(_term_pod("subteam1.team1", POD_LABEL2, [], [affinity_term(
        ("service", "In", ["securityscan", "value2"]),
        namespace_selector=label_selector(("team", "In", ["team1"])), topology_key="zone")]),
        [pod("subteam2.team1").labels(**POD_LABEL).node("node1")], None, ANTI,
        id="anti-affinity with matching NamespaceSelector"),
    pytest.param(_term_pod("subteam1.team1", POD_LABEL2, [], [affinity_term(
        ("service", "In", ["securityscan", "value2"]), namespace_selector=label_selector(), topology_key="zone")]),
        [pod("subteam2.team1").labels(**POD_LABEL).node("node1")], None, ANTI,
        id="anti-affinity with matching all NamespaceSelector"),
    pytest.param(_term_pod("subteam1.team1", POD_LABEL2, [], [affinity_term(
        ("service", "In", ["securityscan", "value2"]),
        namespace_selector=label_selector(("team", "In", ["team1"])), topology_key="zone")]),
        [pod("subteam1.team2").labels(**POD_LABEL).node("node1")], None, None,
        id="anti-affinity with non-matching NamespaceSelector"),
]

NAMESPACES = {"subteam1.team1": {"team": "team1"}, "subteam2.team1": {"team": "team1"},
              "subteam1.team2": {"team": "team2"}}


@pytest.mark.parametrize(("incoming", "pods", "want_pre", "want"), SINGLE)
def test_required_affinity_single_node(incoming: PodBuilder, pods: list[PodBuilder], want_pre: Status | None,
                                       want: Status | None) -> None:
    pre, got = run_filter(incoming, pods, [node1()], NAMESPACES)
    assert pre == want_pre
    if pre is None:
        assert got == [want]


# --- TestRequiredAffinityMultipleNodes -----------------------------------------------------------------

CHINA, CHINA_AZ1, INDIA = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}
HN = {"region": "r1", "zone": "z1"}


def _nodes(*specs: tuple[str, dict[str, str]]) -> list[NodeBuilder]:
    return [node(n, **labels) for n, labels in specs]


MULTI = [
    pytest.param(_aff(pod(), "foo", "In", ["bar"], "region"), [pod().node("node1").labels(foo="bar")],
                 _nodes(("node1", CHINA), ("node2", CHINA_AZ1), ("node3", INDIA)), None, [None, None, AFF],
                 id="all nodes of the same topology value as a matching pod fit"),
    pytest.param(_aff(_aff(pod().labels(foo="bar", service="securityscan"), "foo", "In", ["bar"], "zone"),
                      "service", "In", ["securityscan"], "zone"),
                 [pod().node("nodeA").labels(foo="bar")],
                 _nodes(("nodeA", {"zone": "az1", "hostname": "h1"}), ("nodeB", {"zone": "az2", "hostname": "h2"})),
                 None, [None, None], id="the first pod of a self-affine collection is not blocked"),
    pytest.param(_aff(_aff(pod().labels(foo="bar", service="securityscan"), "foo", "In", ["bar"], "zone"),
                      "service", "In", ["securityscan"], "zone"),
                 [pod().node("nodeA").labels(foo="bar")],
                 _nodes(("nodeA", {"zoneLabel": "az1", "hostname": "h1"}),
                        ("nodeB", {"zoneLabel": "az2", "hostname": "h2"})),
                 None, [AFF, AFF], id="the first pod of a collection needs nodes with the topology keys"),
    pytest.param(_aff(pod(), "foo", "In", ["abc"], "region", anti=True), [pod().node("nodeA").labels(foo="abc")],
                 _nodes(("nodeA", {"region": "r1", "hostname": "nodeA"}),
                        ("nodeB", {"region": "r1", "hostname": "nodeB"})),
                 None, [ANTI, ANTI], id="anti-affinity rejects every node of the topology value"),
    pytest.param(_aff(_aff(pod(), "foo", "In", ["abc"], "region", anti=True), "service", "In", ["securityscan"],
                      "zone", anti=True),
                 [pod().node("nodeA").labels(foo="abc", service="securityscan")],
                 _nodes(("nodeA", {"region": "r1", "zone": "z1"}), ("nodeB", {"region": "r1", "zone": "z2"})),
                 None, [ANTI, ANTI], id="anti-affinity matches when any term matches"),
    pytest.param(_aff(pod(), "foo", "In", ["abc"], "region", anti=True), [pod().node("nodeA").labels(foo="abc")],
                 _nodes(("nodeA", CHINA), ("nodeB", CHINA_AZ1), ("nodeC", INDIA)), None, [ANTI, ANTI, None],
                 id="anti-affinity leaves nodeC of another region"),
    pytest.param(_aff(pod("NS1").labels(foo="123"), "foo", "In", ["bar"], "region", anti=True),
                 [pod("NS1").node("nodeA").labels(foo="bar"),
                  _aff(pod("NS2").node("nodeC"), "foo", "In", ["123"], "region", anti=True)],
                 _nodes(("nodeA", CHINA), ("nodeB", CHINA_AZ1), ("nodeC", INDIA)), None, [ANTI, ANTI, None],
                 id="an existing pod's anti-affinity in another namespace does not count"),
    pytest.param(pod().label("foo", ""),
                 [_aff(pod().node("nodeA"), "foo", "Exists", [], "invalid-node-label", anti=True)],
                 _nodes(("nodeA", HN), ("nodeB", HN)), SKIP, None,
                 id="existing pod's anti-affinity with a topologyKey no node has"),
    pytest.param(_aff(pod().node("nodeA"), "foo", "Exists", [], "invalid-node-label", anti=True),
                 [pod().node("nodeA").labels(foo="")],
                 _nodes(("nodeA", HN), ("nodeB", HN)), None, [None, None],
                 id="incoming pod's anti-affinity checks the topologyKey even when the selector matches"),
    pytest.param(pod().labels(foo="", bar=""),
                 [_aff(pod().node("nodeA"), "foo", "Exists", [], "zone", anti=True),
                  _aff(pod().node("nodeA"), "bar", "Exists", [], "region", anti=True)],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [EXIST, EXIST],
                 id="existing pods' anti-affinity violated on all nodes"),
    pytest.param(_aff(_aff(pod(), "foo", "Exists", [], "zone", anti=True), "bar", "Exists", [], "region", anti=True),
                 [pod().node("nodeA").labels(foo=""), pod().node("nodeB").labels(bar="")],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [ANTI, ANTI],
                 id="incoming pod's anti-affinity violated by one rule on each node"),
    pytest.param(pod().labels(foo="", bar=""),
                 [_aff(_aff(pod().node("nodeA"), "foo", "Exists", [], "invalid-node-label", anti=True),
                       "bar", "Exists", [], "zone", anti=True)],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [EXIST, None],
                 id="existing pod's anti-affinity: one term with an invalid topologyKey"),
    pytest.param(_aff(_aff(pod(), "foo", "Exists", [], "invalid-node-label", anti=True),
                      "bar", "Exists", [], "zone", anti=True),
                 [pod().node("nodeA").labels(foo="", bar="")],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [ANTI, None],
                 id="incoming pod's anti-affinity: one term with an invalid topologyKey"),
    pytest.param(pod().labels(foo="", bar=""),
                 [_aff(_aff(pod().node("nodeA"), "foo", "Exists", [], "region", anti=True),
                       "bar", "Exists", [], "zone", anti=True)],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [EXIST, EXIST],
                 id="existing pod's anti-affinity: all terms with valid topologyKeys"),
    pytest.param(_aff(_aff(pod(), "foo", "Exists", [], "region", anti=True), "bar", "Exists", [], "zone", anti=True),
                 [pod().node("nodeA").labels(foo="", bar="")],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [ANTI, ANTI],
                 id="incoming pod's anti-affinity: all terms with valid topologyKeys"),
    pytest.param(pod().labels(foo="", bar=""),
                 [_aff(_aff(pod().node("nodeA"), "foo", "Exists", [], "zone", anti=True),
                       "labelA", "Exists", [], "zone", anti=True),
                  _aff(_aff(pod().node("nodeB"), "bar", "Exists", [], "zone", anti=True),
                       "labelB", "Exists", [], "zone", anti=True)],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"}),
                        ("nodeC", {"region": "r1", "zone": "z3"})), None, [EXIST, EXIST, None],
                 id="existing pods on nodeA and nodeB reject the pod: only nodeC"),
    pytest.param(_aff(_aff(pod(), "foo", "Exists", [], "region"), "bar", "Exists", [], "zone"),
                 [pod().labels(foo="", bar="").node("nodeA")],
                 _nodes(("nodeA", HN), ("nodeB", HN)), None, [None, None],
                 id="incoming pod's affinity: all terms match, then all topology keys"),
    pytest.param(_aff(_aff(pod(), "foo", "Exists", [], "region"), "bar", "Exists", [], "zone"),
                 [pod().node("nodeA").labels(foo=""), pod().node("nodeB").labels(bar="")],
                 _nodes(("nodeA", HN), ("nodeB", {"region": "r1", "zone": "z2"})), None, [AFF, AFF],
                 id="incoming pod's affinity must be satisfied by one pod"),
    pytest.param(_aff(pod(), "foo", "Exists", [], HOST), [pod().labels(foo="").node("nodeA")],
                 _nodes(("nodeA", {HOST: "nodeA"}), ("nodeB", {HOST: "nodeB"})), None, [None, AFF],
                 id="host-scoped affinity"),
    pytest.param(_aff(pod(), "foo", "Exists", [], HOST, anti=True), [pod().labels(foo="").node("nodeA")],
                 _nodes(("nodeA", {HOST: "nodeA"}), ("nodeB", {HOST: "nodeB"})), None, [ANTI, None],
                 id="host-scoped anti-affinity"),
]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "want_pre", "want"), MULTI)
def test_required_affinity_multiple_nodes(incoming: PodBuilder, pods: list[PodBuilder], nodes: list[NodeBuilder],
                                          want_pre: Status | None, want: list[Status | None] | None) -> None:
    pre, got = run_filter(incoming, pods, nodes)
    assert pre == want_pre
    if pre is None:
        assert got == want


def test_multiple_affinity_terms_require_single_matching_pod() -> None:
    incoming = _aff(_aff(pod(), "a", "Exists", [], HOST), "b", "Exists", [], HOST)
    nodes = _nodes(("n1", {HOST: "n1"}), ("n2", {HOST: "n2"}))
    _, got = run_filter(incoming, [pod().labels(a="").node("n1"), pod().labels(b="").node("n1"),
                                   pod().labels(a="", b="").node("n2")], nodes)
    assert got == [AFF, None]
    _, got = run_filter(incoming, [pod().labels(a="").node("n1"), pod().labels(b="").node("n2")], nodes)
    assert got == [AFF, AFF]


# --- namespaces, namespaceSelector, matchLabelKeys ---------------------------------------------------------

@pytest.mark.parametrize(("t", "existing_ns", "want"), [
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone"), "default", [None], id="own-ns"),
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone"), "other", [AFF], id="other-ns"),
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone", namespaces=("other",)), "other",
                 [None], id="listed-ns"),
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone",
                               namespace_selector=label_selector()), "anywhere", [None], id="all-ns-selector"),
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone",
                               namespace_selector=label_selector(env="prod")), "prod", [None], id="ns-selector"),
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone",
                               namespace_selector=label_selector(env="prod")), "dev", [AFF], id="ns-selector-miss"),
    pytest.param(affinity_term(match_labels={"app": "db"}, topology_key="zone",
                               namespace_selector=label_selector(("env", "NotIn", ["dev"]))), "unknown", [AFF],
                 id="ns-selector-unknown-namespace"),
    pytest.param(affinity_term(nil_selector=True, topology_key="zone"), "default", [AFF], id="nil-selector-nothing"),
    pytest.param(affinity_term(topology_key="zone"), "default", [None], id="empty-selector-everything"),
])
def test_namespaces(t: object, existing_ns: str, want: list[Status | None]) -> None:
    incoming = make_pod("in", "default").label("app", "web").affinity_term(t)  # type: ignore[arg-type]
    existing = make_pod("db", existing_ns).label("app", "db").node("n1")
    _, got = run_filter(incoming, [existing], [node("n1", zone="a")],
                        {"prod": {"env": "prod"}, "dev": {"env": "dev"}, "default": {}})
    assert got == want


def test_existing_anti_affinity_namespace_selector_reads_incoming_namespace_labels() -> None:
    existing = make_pod("e", "x").node("n1").affinity_term(
        affinity_term(topology_key="zone", namespace_selector=label_selector(team="a")), anti=True)
    nodes = [node("n1", zone="z")]
    _, got = run_filter(make_pod("in", "ns-a"), [existing], nodes, {"ns-a": {"team": "a"}})
    assert got == [EXIST]
    assert run_filter(make_pod("in", "ns-b"), [existing], nodes, {"ns-b": {"team": "b"}})[0] == SKIP


# --- TestPreFilterStateAddRemovePod ---------------------------------------------------------------------------

def _state(incoming: PodBuilder, pods: list[PodBuilder], nodes: list[NodeBuilder]):  # type: ignore[no-untyped-def]
    snap = snapshot_with(nodes, pods)  # type: ignore[arg-type]
    pl = new({})
    state = CycleState()
    pi = PodInfo(pod_of(incoming))
    _, status = pl.pre_filter(state, pi, snap)
    assert status is None
    return pl, state, pi, snap


def test_add_remove_pod_anti_affinity() -> None:
    nodes = _nodes(("nodeA", {"region": "r1", "zone": "z11"}), ("nodeB", {"region": "r1", "zone": "z12"}))
    incoming = _aff(pod().labels(security="S1"), "security", "In", ["S1"], "region", anti=True)
    added = pod().node("nodeB").labels(security="S1")
    pl, state, pi, snap = _state(incoming, [], nodes)
    s: PreFilterState = state.read(PRE_FILTER_KEY)
    before = s.clone()
    node_b = snap.node_infos[snap.index["nodeB"]]
    assert pl.add_pod(state, pi, PodInfo(pod_of(added)), node_b) is None
    assert s.anti_affinity_counts == {("region", "r1"): 1}
    assert [pl.filter(state, pi, ni) for ni in snap.node_infos] == [ANTI, ANTI]
    assert before.anti_affinity_counts == {}
    assert pl.remove_pod(state, pi, PodInfo(pod_of(added)), node_b) is None
    assert s.anti_affinity_counts == {}
    assert [pl.filter(state, pi, ni) for ni in snap.node_infos] == [None, None]


def test_add_remove_pod_existing_anti_affinity_and_affinity() -> None:
    nodes = _nodes(("nodeA", {"region": "r1", "zone": "z11"}), ("nodeB", {"region": "r1", "zone": "z12"}))
    incoming = _aff(pod().labels(security="S1"), "security", "In", ["S1"], "zone")
    existing = pod().node("nodeA").labels(security="S1")
    pl, state, pi, snap = _state(incoming, [existing], nodes)
    s: PreFilterState = state.read(PRE_FILTER_KEY)
    assert s.affinity_counts == {("zone", "z11"): 1}
    assert [pl.filter(state, pi, ni) for ni in snap.node_infos] == [None, AFF]
    hater = _aff(pod().node("nodeB").labels(security="S1"), "security", "In", ["S1"], "zone", anti=True)
    node_b: NodeInfo = snap.node_infos[snap.index["nodeB"]]
    pl.add_pod(state, pi, PodInfo(pod_of(hater)), node_b)
    assert s.existing_anti_affinity_counts == {("zone", "z12"): 1}
    assert s.affinity_counts == {("zone", "z11"): 1, ("zone", "z12"): 1}
    assert [pl.filter(state, pi, ni) for ni in snap.node_infos] == [None, EXIST]
    pl.remove_pod(state, pi, PodInfo(pod_of(hater)), node_b)
    pl.remove_pod(state, pi, PodInfo(pod_of(existing)), snap.node_infos[snap.index["nodeA"]])
    assert s.existing_anti_affinity_counts == {}
    assert s.affinity_counts == {}
    # no matching pod left anywhere: the self-affine pod may go to any node with the key
    assert [pl.filter(state, pi, ni) for ni in snap.node_infos] == [None, None]


def test_filter_without_pre_filter_state_errs() -> None:
    pl = new({})
    snap = snapshot_with([node("n")])
    st = pl.filter(CycleState(), PodInfo(pod().obj()), snap.node_infos[0])
    assert st == Status(Code.ERROR, 'error reading "PreFilterInterPodAffinity" from cycleState: not found')
    assert pl.add_pod(CycleState(), PodInfo(pod().obj()), PodInfo(pod().obj()), snap.node_infos[0]) is not None


# --- TestGetTPMapMatchingIncomingAffinityAntiAffinity --------------------------------------------------------

@pytest.mark.parametrize(("incoming", "existing", "want_aff", "want_anti"), [
    pytest.param(pod(), [pod().labels(aaa="bbb").node("nodeA")], None, None, id="no-op without terms"),
    pytest.param(_aff(_aff(pod(), "foo", "In", ["bar"], "region"), "foo", "In", ["bar"], "region", anti=True),
                 [pod().labels(aaa="bbb").node("nodeA")], {}, {}, id="no pod matches"),
    pytest.param(_aff(_aff(pod(), "foo", "In", ["bar"], "region"), "foo", "In", ["bar"], "region", anti=True),
                 [pod().labels(foo="bar").node("nodeA")], {("region", "r1"): 1}, {("region", "r1"): 1},
                 id="single term"),
    pytest.param(_aff(_aff(_aff(_aff(pod(), "foo", "In", ["bar"], "region"), "foo", "In", ["bar"], "region"),
                           "foo", "In", ["bar"], "region", anti=True), "foo", "In", ["bar"], "region", anti=True),
                 [pod().labels(foo="bar").node("nodeA")], {("region", "r1"): 2}, {("region", "r1"): 2},
                 id="multiple terms"),
    pytest.param(_aff(_aff(_aff(pod(), "foo", "In", ["bar"], "region"), "foo", "In", ["bar"], "zone"),
                      "foo", "In", ["bar"], "region", anti=True),
                 [pod().labels(foo="bar", bar="").node("nodeA")], {("region", "r1"): 1, ("zone", "z1"): 1},
                 {("region", "r1"): 1}, id="affinity counted once per term"),
    pytest.param(_aff(_aff(_aff(pod(), "foo", "In", ["bar"], "region"), "bar", "Exists", [], "region"),
                      "foo", "In", ["bar"], "region", anti=True),
                 [pod().labels(foo="bar").node("nodeA")], {}, {("region", "r1"): 1},
                 id="matches anti-affinity but not all affinity terms"),
    pytest.param(_aff(_aff(pod(), "foo", "In", ["bar"], "region", anti=True), "bar", "Exists", [], "zone", anti=True),
                 [pod().labels(foo="bar").node("nodeA")], None, {("region", "r1"): 1},
                 id="anti-affinity partially violated"),
])
def test_incoming_counts(incoming: PodBuilder, existing: list[PodBuilder], want_aff: dict | None,  # type: ignore[type-arg]
                         want_anti: dict | None) -> None:  # type: ignore[type-arg]
    snap = snapshot_with([node("nodeA", region="r1", zone="z1", **{"kubernetes.io__hostname": "nodeA"})], existing)  # type: ignore[arg-type]
    state = CycleState()
    _, status = new({}).pre_filter(state, PodInfo(pod_of(incoming)), snap)
    if want_aff is None and want_anti is None:
        assert status == SKIP
        return
    s: PreFilterState = state.read(PRE_FILTER_KEY)
    assert s.affinity_counts == (want_aff or {})
    assert s.anti_affinity_counts == (want_anti or {})


# --- what the term cache shares between cycles --------------------------------------------------

_OWNER = make_pod("owner", "ns1").obj()
_STATIC = parse_term(_OWNER, affinity_term(match_labels={"app": "a"}, topology_key="zone"))
_EVERY = parse_term(_OWNER, affinity_term(match_labels={"app": "a"}, topology_key="zone",
                                          namespace_selector=label_selector()))
_BY_LABELS = parse_term(_OWNER, affinity_term(match_labels={"app": "a"}, topology_key="zone",
                                              namespace_selector=label_selector(team="x")))


@pytest.mark.parametrize(("term", "shared"), [
    pytest.param(_STATIC, True, id="own-namespace"),
    pytest.param(_EVERY, True, id="every-namespace"),
    # Unrolled into the namespaces it selects (mergeAffinityTermNamespacesIfNotEmpty): shared while
    # those stay the same.
    pytest.param(_BY_LABELS, True, id="namespace-labels"),
])
def test_term_cache_shares_what_reads_no_namespace_labels(term: AffinityTerm, shared: bool) -> None:
    cache, namespaces = TermCache(), StaticNamespaces({"ns1": {"team": "x"}, "ns2": {}})
    assert (cache.incoming(term, namespaces) is cache.incoming(term, namespaces)) == shared
    for ns, labels, ns_labels in [("ns1", {"app": "a"}, {"team": "x"}), ("ns2", {"app": "a"}, {}),
                                  ("ns2", {"app": "a"}, {"team": "x"}), ("ns1", {"app": "b"}, {"team": "x"})]:
        pod = make_pod("p", ns).labels(**labels).obj()
        key = frozenset(pod.metadata.labels.items())
        # asked twice: the remembered answer is the term's, even after the namespace's labels change
        assert cache.matches(term, pod, ns_labels, key) == term.matches(pod, ns_labels)
        assert cache.matches(term, pod, ns_labels, key) == term.matches(pod, ns_labels)


def test_pods_sharing_one_affinity_object_share_terms_within_a_namespace_only() -> None:
    """The informer hands a workload's pods one affinity object: the terms parsed for one pod serve
    the next in the namespace; another namespace (the terms' own-namespace default) gets its own.
    matchLabelKeys do not make the terms read the pod's labels (the apiserver merged them)."""
    cache = TermCache()
    first = make_pod("a", "ns1").labels(app="a").affinity_term(affinity_term(match_labels={"app": "a"},
                                                                              topology_key="zone"), anti=True).obj()
    aff = first.spec.affinity

    def sharing(name: str, namespace: str, **labels: str) -> Pod:
        pod = make_pod(name, namespace).labels(**labels).obj()
        pod.spec.affinity = aff
        return pod

    terms = cache.of(first)
    assert cache.of(sharing("b", "ns1", app="a")) is terms
    other = cache.of(sharing("c", "ns2", app="a"))
    assert other.required_anti_affinity[0].namespaces == frozenset({"ns2"})
    keyed = make_pod("k1", "ns1").labels(app="x").affinity_term(
        affinity_term(("app", "In", ["x"]), topology_key="zone", match_label_keys=("app",)), anti=True).obj()
    keyed_terms = cache.of(keyed)
    twin = make_pod("k2", "ns1").labels(app="y").obj()
    twin.spec.affinity = keyed.spec.affinity
    assert cache.of(twin) is keyed_terms
    selector = keyed_terms.required_anti_affinity[0].selector
    assert selector.matches({"app": "x"})
    assert not selector.matches({"app": "y"})


def test_a_namespace_selector_term_follows_namespace_labels_across_cycles() -> None:
    """A namespaceSelector term's counts are memoised by the namespaces it selects; relabelling a
    namespace gives another term, so a later cycle counts the pods there, and one after that the
    pods no longer selected are not counted."""
    namespaces = StaticNamespaces({"ns1": {"team": "x"}, "ns2": {}})
    pl = new({}, namespaces=namespaces)
    snap = snapshot_with([node("nodeA", zone="z1")], [pod("ns2").labels(app="a").node("nodeA")])
    incoming = pod("ns1").affinity_term(affinity_term(match_labels={"app": "a"}, topology_key="zone",
                                                      namespace_selector=label_selector(team="x")))

    def counts() -> object:
        state = CycleState()
        pl.pre_filter(state, PodInfo(pod_of(incoming)), snap)
        return state.read(PRE_FILTER_KEY).affinity_counts

    assert counts() == {}
    namespaces.namespaces["ns2"] = {"team": "x"}
    assert counts() == {("zone", "z1"): 1}
    first = pl.terms.incoming(_BY_LABELS, namespaces)
    assert first.namespaces == frozenset({"ns1", "ns2"})
    namespaces.namespaces["ns2"] = {}
    assert counts() == {}
