"""InterPodAffinity and `matchLabelKeys` / `mismatchLabelKeys`: the apiserver merges them into the
term's labelSelector once, from the labels the pod is created with, and kube-scheduler reads the
stored selector only. So a pod relabelled after its creation keeps the requirement on its old value,
and a pod stored without the merge (created before the feature) has none.

Every term below is written as the apiserver stores it. The cases of kube-scheduler's
test/integration/scheduler/filters TestInterPodAffinity and scoring TestPodAffinityScoring with
matchLabelKeys / mismatchLabelKeys are ported with their terms in that stored form."""

from __future__ import annotations

import pytest

from kubesched.framework.status import SKIP, Status
from kubesched.model.objects import Pod, PodAffinityTerm
from kubesched.plugins.inter_pod_affinity.terms import TermCache
from tests.builders import NodeBuilder, PodBuilder, affinity_term, make_node, make_pod
from tests.unit.plugins.inter_pod_affinity.test_inter_pod_affinity_filter import AFF, ANTI, EXIST, run_filter
from tests.unit.plugins.inter_pod_affinity.test_inter_pod_affinity_score import run_score

HOST = "kubernetes.io/hostname"
TOPOLOGY = "node-topologykey"


def nodes(*names: str, **labels: str) -> list[NodeBuilder]:
    out = []
    for name in names:
        b = make_node(name).label(HOST, name)
        for k, v in labels.items():
            b.label(k, v)
        out.append(b)
    return out


def on(name: str, node: str, **labels: str) -> PodBuilder:
    return make_pod(name).node(node).labels(**labels)


def app_in_a(mlk: tuple[str, ...] = ("app",), topology_key: str = HOST) -> PodAffinityTerm:
    """The term of a pod created with app=a and matchLabelKeys [app], as stored: app In [a]."""
    return affinity_term(("app", "In", ["a"]), topology_key=topology_key, match_label_keys=mlk)


def app_not_in_a(topology_key: str = HOST) -> PodAffinityTerm:
    """The term of a pod created with app=a and mismatchLabelKeys [app], as stored: app NotIn [a]."""
    return affinity_term(("app", "NotIn", ["a"]), topology_key=topology_key, mismatch_label_keys=("app",))


def web_db(*exprs: tuple[str, str, list[str]], mlk: tuple[str, ...] = (),
           mismatch: tuple[str, ...] = ()) -> PodAffinityTerm:
    return affinity_term(*exprs, match_labels={"app": "db"}, topology_key="zone", match_label_keys=mlk,
                         mismatch_label_keys=mismatch)


TWO = nodes("n1", "n2")
ONE_ZONE = [make_node("n1").label("zone", "a")]

FILTER = [
    # The existing pod's required anti-affinity.
    pytest.param(make_pod("in").labels(app="a"), [on("guard", "n1", app="b").affinity_term(app_in_a(), anti=True)],
                 TWO, [EXIST, None], id="existing pod relabelled: its anti-affinity keeps the stored value"),
    pytest.param(make_pod("in").labels(app="b"), [on("guard", "n1", app="b").affinity_term(app_in_a(), anti=True)],
                 TWO, [None, None], id="existing pod relabelled: its new value is not selected"),
    pytest.param(make_pod("in").labels(app="b"),
                 [on("guard", "n1", app="b").affinity_term(app_not_in_a(), anti=True)],
                 TWO, [EXIST, None], id="existing pod relabelled: its mismatchLabelKeys keep the stored value"),
    pytest.param(make_pod("in").labels(tier="web", app="c"),
                 [on("guard", "n1", app="a").affinity_term(
                     affinity_term(match_labels={"tier": "web"}, topology_key=HOST, match_label_keys=("app",)),
                     anti=True)],
                 TWO, [EXIST, None], id="existing pod stored without the merge: matchLabelKeys not applied"),
    # The incoming pod's own terms.
    pytest.param(make_pod("in").labels(app="b").affinity_term(app_in_a(), anti=True), [on("e", "n1", app="a")],
                 TWO, [ANTI, None], id="incoming pod relabelled: its anti-affinity keeps the stored value"),
    pytest.param(make_pod("in").labels(app="b").affinity_term(app_in_a()), [on("e", "n1", app="a")],
                 TWO, [None, AFF], id="incoming pod relabelled: its affinity keeps the stored value"),
    pytest.param(make_pod("in").labels(app="b").affinity_term(app_in_a()), [on("e", "n1", app="b")],
                 TWO, [AFF, AFF], id="incoming pod relabelled: its affinity does not select the new value"),
    pytest.param(make_pod("in").labels(app="b").affinity_term(app_not_in_a(), anti=True), [on("e", "n1", app="b")],
                 TWO, [ANTI, None], id="incoming pod relabelled: its mismatchLabelKeys keep the stored value"),
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(web_db(mlk=("ver",))),
                 [on("db", "n1", app="db", ver="2")], ONE_ZONE, [None],
                 id="incoming pod stored without the merge: matchLabelKeys not applied"),
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(web_db(mismatch=("ver",))),
                 [on("db", "n1", app="db", ver="1")], ONE_ZONE, [None],
                 id="incoming pod stored without the merge: mismatchLabelKeys not applied"),
    # Merged at create, labels unchanged.
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(web_db(("ver", "In", ["1"]), mlk=("ver",))),
                 [on("db", "n1", app="db", ver="1")], ONE_ZONE, [None], id="match-label-keys-same"),
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(web_db(("ver", "In", ["1"]), mlk=("ver",))),
                 [on("db", "n1", app="db", ver="2")], ONE_ZONE, [AFF], id="match-label-keys-differ"),
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(
        web_db(("ver", "NotIn", ["1"]), mismatch=("ver",))),
                 [on("db", "n1", app="db", ver="1")], ONE_ZONE, [AFF], id="mismatch-label-keys-same"),
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(
        web_db(("ver", "NotIn", ["1"]), mismatch=("ver",))),
                 [on("db", "n1", app="db", ver="2")], ONE_ZONE, [None], id="mismatch-label-keys-differ"),
]


# TestInterPodAffinity's nodes: the same region and zone, another "node" label. The memory that
# makes anothernode-0 too small there is NodeResourcesFit's part, not this plugin's.
def _upstream_nodes() -> list[NodeBuilder]:
    return [make_node(name).label("region", "r1").label("zone", "z11").label("node", node).label(HOST, name)
            for name, node in (("testnode-0", "n1"), ("anothernode-0", "n2"))]


def _foo_bar(op: str, topology_key: str, mlk: tuple[str, ...] = (),
             mismatch: tuple[str, ...] = ()) -> PodAffinityTerm:
    return affinity_term(("foo", "Exists", []), ("bar", op, ["a"]), topology_key=topology_key,
                         match_label_keys=mlk, mismatch_label_keys=mismatch)


def _ns1(name: str, node: str, bar: str) -> PodBuilder:
    return make_pod(name, "ns1").node(node).labels(foo="", bar=bar)


def _incoming() -> PodBuilder:
    return make_pod("incoming", "ns1").labels(foo="", bar="a")


UPSTREAM_FILTER = [
    pytest.param(_incoming().affinity_term(_foo_bar("In", "zone", mlk=("bar",)), anti=True),
                 [_ns1("pod1", "testnode-0", "fuga"), _ns1("pod2", "testnode-0", "hoge")], [None, None],
                 id="anti affinity: matchLabelKeys is merged into LabelSelector with In operator"),
    pytest.param(_incoming().affinity_term(_foo_bar("NotIn", "zone", mismatch=("bar",)), anti=True),
                 [_ns1("pod1", "testnode-0", "a"), _ns1("pod2", "testnode-0", "a")], [None, None],
                 id="anti affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator"),
    pytest.param(_incoming().affinity_term(_foo_bar("In", "node", mlk=("bar",))),
                 [_ns1("pod1", "anothernode-0", "a"), _ns1("pod2", "testnode-0", "hoge"),
                  _ns1("pod3", "testnode-0", "fuga")], [AFF, None],
                 id="affinity: matchLabelKeys is merged into LabelSelector with In operator"),
    pytest.param(_incoming().affinity_term(_foo_bar("NotIn", "node", mismatch=("bar",))),
                 [_ns1("pod1", "anothernode-0", "fuga"), _ns1("pod2", "testnode-0", "a"),
                  _ns1("pod3", "testnode-0", "a")], [AFF, None],
                 id="affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator"),
]


def verdicts(incoming: PodBuilder, pods: list[PodBuilder], node_list: list[NodeBuilder],
             namespaces: dict[str, dict[str, str]] | None = None) -> list[Status | None]:
    """Filter's status per node; PreFilter's Skip (no term concerns the pod) lets every node pass."""
    pre, got = run_filter(incoming, pods, node_list, namespaces)
    if pre == SKIP:
        return [None] * len(node_list)
    assert pre is None
    assert got is not None
    return got


@pytest.mark.parametrize(("incoming", "pods", "node_list", "want"), FILTER)
def test_filter_reads_the_stored_selector(incoming: PodBuilder, pods: list[PodBuilder], node_list: list[NodeBuilder],
                                          want: list[Status | None]) -> None:
    assert verdicts(incoming, pods, node_list) == want


@pytest.mark.parametrize(("incoming", "pods", "want"), UPSTREAM_FILTER)
def test_filter_upstream_label_keys(incoming: PodBuilder, pods: list[PodBuilder], want: list[Status | None]) -> None:
    assert verdicts(incoming, pods, _upstream_nodes(), {"ns1": {"team": "team1"}}) == want


SCORE = [
    pytest.param(make_pod("in").labels(app="b").affinity_term(app_in_a(), anti=True, weight=10),
                 [on("e", "n1", app="a")], [0, 100], id="incoming pod relabelled: preferred anti-affinity"),
    pytest.param(make_pod("in").labels(app="b").affinity_term(app_in_a(), weight=10),
                 [on("e", "n1", app="a")], [100, 0], id="incoming pod relabelled: preferred affinity"),
    pytest.param(make_pod("in").labels(app="a"),
                 [on("guard", "n1", app="b").affinity_term(app_in_a(), anti=True, weight=10)], [0, 100],
                 id="existing pod relabelled: its preferred anti-affinity"),
    pytest.param(make_pod("in").labels(app="a"),
                 [on("friend", "n1", app="b").affinity_term(app_in_a())], [100, 0],
                 id="existing pod relabelled: its required affinity (hardPodAffinityWeight)"),
    pytest.param(make_pod("in").labels(app="web", ver="1").affinity_term(
        affinity_term(match_labels={"app": "db"}, topology_key=HOST, match_label_keys=("ver",)), weight=10),
                 [on("db", "n1", app="db", ver="2")], [100, 0],
                 id="incoming pod stored without the merge: matchLabelKeys not applied"),
]


@pytest.mark.parametrize(("incoming", "pods", "want"), SCORE)
def test_score_reads_the_stored_selector(incoming: PodBuilder, pods: list[PodBuilder], want: list[int]) -> None:
    status, got = run_score(incoming, pods, nodes("n1", "n2"))
    assert status is None
    assert got == want


def _topology_nodes(count: int) -> list[NodeBuilder]:
    return [make_node(f"node{i}").label(TOPOLOGY, f"topologyvalue{(i - 1) % 3}") for i in range(1, count + 1)]


def _hoge(b: PodBuilder) -> PodBuilder:
    # The weaker term that would win if the first one's merged requirement were lost.
    return b.affinity_term(affinity_term(("bar", "In", ["hoge"]), topology_key=TOPOLOGY), weight=10)


UPSTREAM_SCORE = [
    pytest.param(_incoming().affinity_term(_foo_bar("In", TOPOLOGY, mlk=("bar",)), anti=True, weight=50),
                 [_ns1("pod1", "node1", "fuga"), _ns1("pod2", "node2", "a")], 2, [100, 0],
                 id="anti affinity: matchLabelKeys is merged into LabelSelector with In operator"),
    pytest.param(_incoming().affinity_term(_foo_bar("NotIn", TOPOLOGY, mismatch=("bar",)), anti=True, weight=50),
                 [_ns1("pod1", "node1", "fuga"), _ns1("pod2", "node2", "a")], 2, [0, 100],
                 id="anti affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator"),
    pytest.param(_hoge(_incoming().affinity_term(_foo_bar("In", TOPOLOGY, mlk=("bar",)), weight=50)),
                 [_ns1("pod1", "node1", "hoge"), _ns1("pod2", "node2", "hoge"), _ns1("pod3", "node3", "a")], 6,
                 [0, 0, 100, 0, 0, 100], id="affinity: matchLabelKeys is merged into LabelSelector with In operator"),
    pytest.param(_hoge(_incoming().affinity_term(_foo_bar("NotIn", TOPOLOGY, mismatch=("bar",)), weight=50)),
                 [_ns1("pod1", "node1", "a"), _ns1("pod2", "node2", "a"), _ns1("pod3", "node3", "hoge")], 6,
                 [0, 0, 100, 0, 0, 100],
                 id="affinity: mismatchLabelKeys is merged into LabelSelector with NotIn operator"),
]


@pytest.mark.parametrize(("incoming", "pods", "count", "want"), UPSTREAM_SCORE)
def test_score_upstream_label_keys(incoming: PodBuilder, pods: list[PodBuilder], count: int, want: list[int]) -> None:
    # The incoming pod's namespace uses the default of kube-scheduler's test (its own, ns1).
    status, got = run_score(incoming, pods, _topology_nodes(count))
    assert status is None
    assert got == want


def _relabelled(pod: Pod, **labels: str) -> Pod:
    """The informer's new Pod object after `kubectl label --overwrite`: same spec, new labels."""
    b = make_pod(pod.metadata.name, pod.metadata.namespace).labels(**labels)
    out = b.obj()
    out.spec = pod.spec
    return out


def test_relabelled_pod_keeps_its_parsed_terms() -> None:
    cache = TermCache()
    created = make_pod("guard").labels(app="a").affinity_term(app_in_a(), anti=True).obj()
    terms = cache.of(created)
    after = cache.of(_relabelled(created, app="b"))
    assert after == terms
    selector = after.required_anti_affinity[0].selector
    assert selector.matches({"app": "a"})
    assert not selector.matches({"app": "b"})
