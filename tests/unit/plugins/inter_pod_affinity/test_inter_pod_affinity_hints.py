"""InterPodAffinity's queueing hints: kube-scheduler's interpodaffinity/plugin_test.go tables
(Test_isSchedulableAfterAssignedPodChange, Test_isSchedulableAfterTargetPodUpdateLabel,
Test_isSchedulableAfterNodeChange), row for row with upstream's names, then kubesched's own rows for
what those tables leave out (namespaces, selectors that do not parse, objects of another type)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import QueueingHint
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity import InterPodAffinity, StaticNamespaces, new
from kubesched.plugins.inter_pod_affinity.hints import after_target_pod_update_label
from tests.builders import NodeBuilder, PodBuilder, affinity_term, label_selector, make_node, make_pod

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
VALUES = ["securityscan", "value2"]


def _plugin() -> InterPodAffinity:
    # Upstream sets the plugin up with namespaces in its informer; the hints never read them.
    return new({}, namespaces=StaticNamespaces({"default": {"team": "a"}, "other": {"team": "b"}}))


def pod(name: str = "p") -> PodBuilder:
    """st.MakePod().UID(name).Name(name); every pod in the default namespace, as every pod upstream
    is in the empty one."""
    return make_pod(name).uid(name)


def other() -> PodBuilder:
    return pod("other")


def aff_in(b: PodBuilder, key: str, values: list[str], topology_key: str, anti: bool = False) -> PodBuilder:
    """PodAffinityIn / PodAntiAffinityIn with PodAffinityWithRequiredReq."""
    return b.pod_affinity_expr(key, "In", values, topology_key, anti=anti)


def anti_in(b: PodBuilder) -> PodBuilder:
    """PodAntiAffinityIn("service", "region", ["securityscan", "value2"], PodAntiAffinityWithRequiredReq)."""
    return aff_in(b, "service", VALUES, "region", anti=True)


def aff_exists(b: PodBuilder, key: str, topology_key: str) -> PodBuilder:
    """PodAffinityExists with PodAffinityWithRequiredReq."""
    return b.pod_affinity_expr(key, "Exists", [], topology_key)


def anti_zone(b: PodBuilder) -> PodBuilder:
    """PodAntiAffinity("zone", {matchLabels: {another: label}}, PodAntiAffinityWithRequiredReq)."""
    return b.affinity_term(affinity_term(topology_key="zone", match_labels={"another": "label"}), anti=True)


def _obj(b: PodBuilder | NodeBuilder | None) -> Any:
    return None if b is None else b.obj()


def _two_anti(b: PodBuilder) -> PodBuilder:
    return aff_in(aff_in(b, "service", ["securityscan"], "region", anti=True), "app", ["web"], "region", anti=True)


# --- Test_isSchedulableAfterAssignedPodChange --------------------------------------------------------------

# (the waiting pod, the old pod, the new pod, the hint)
ASSIGNED_POD_CASES = [
    pytest.param(aff_in(pod(), "service", VALUES, "region"), None,
                 other().node("fake-node").label("service", "securityscan"), QUEUE,
                 id="add a pod which matches the pod affinity"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), None, other().label("service", "securityscan"), SKIP,
                 id="add an un-scheduled pod"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), None, other().node("fake-node").label("aaa", "a"), SKIP,
                 id="add a pod which doesn't match the pod affinity"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), other().node("fake-node").label("aaa", "a"),
                 other().node("fake-node").label("service", "securityscan"), QUEUE,
                 id="update a pod from non-match to match pod affinity"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), other().node("fake-node").label("service", "value2"),
                 other().node("fake-node").label("service", "securityscan"), SKIP,
                 id="the updating pod matches target pod's affinity both before and after label changes"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), other().label("aaa", "a"),
                 other().label("service", "securityscan"), SKIP, id="update an un-scheduled pod"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), other().node("fake-node").label("service", "securityscan"),
                 other().node("fake-node").label("aaa", "a"), SKIP,
                 id="update a pod from match to non-match the pod affinity"),
    pytest.param(aff_exists(aff_exists(pod(), "aaa", "hostname"), "bbb", "hostname"),
                 other().node("fake-node").label("aaa", "a"),
                 other().node("fake-node").label("service", "securityscan"), SKIP,
                 id="update a pod from match to non-match pod's affinity - multiple terms case"),
    pytest.param(aff_exists(aff_exists(pod(), "aaa", "hostname"), "bbb", "hostname"),
                 other().node("fake-node").label("aaa", "a"),
                 other().node("fake-node").label("aaa", "").label("bbb", ""), QUEUE,
                 id="update a pod from non-match to match pod's affinity - multiple terms case"),
    pytest.param(anti_in(pod()),
                 other().node("fake-node").label("service", "securityscan"),
                 other().node("fake-node").label("service", "aaaa"), QUEUE,
                 id="modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity"),
    pytest.param(anti_in(pod()), other().node("fake-node").label("service", "bbb"),
                 other().node("fake-node").label("service", "securityscan"), SKIP,
                 id="modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity"),
    pytest.param(anti_in(pod()), other().node("fake-node").label("aaa", "a"),
                 None, SKIP, id="delete a pod which doesn't match pod's anti-affinity"),
    pytest.param(anti_in(pod()),
                 other().node("fake-node").label("service", "securityscan"), None, QUEUE,
                 id="delete a pod which matches pod's anti-affinity"),
    pytest.param(pod().label("service", "securityscan"),
                 anti_in(other().node("fake-node")), None, QUEUE,
                 id="delete a pod with anti-affinity that matches pending pod"),
    pytest.param(pod().label("service", "foo"), anti_in(other().node("fake-node")),
                 None, SKIP, id="delete a pod with anti-affinity that doesn't match pending pod"),
    pytest.param(anti_in(pod()).label("service", "foo"),
                 anti_in(other().node("fake-node")).label("service", "foo"),
                 None, SKIP,
                 id="delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't "
                    "match pending pod"),
    pytest.param(anti_in(pod()), other().nominated("fake-node").label("aaa", "a"),
                 None, SKIP, id="delete a nominated pod which doesn't match pod's anti-affinity"),
    pytest.param(anti_in(pod()),
                 other().nominated("fake-node").label("service", "securityscan"), None, QUEUE,
                 id="delete a nominated pod which matches pod's anti-affinity"),
    pytest.param(_two_anti(pod()), other().node("fake-node").label("service", "securityscan").label("app", "bar"),
                 other().node("fake-node").label("service", "foo").label("app", "bar"), QUEUE,
                 id="modify pod label to change it from matching only one of target pod's anti-affinity terms to "
                    "matching none"),
    pytest.param(_two_anti(pod()), other().node("fake-node").label("service", "securityscan").label("app", "bar"),
                 other().node("fake-node").label("service", "foo").label("app", "web"), SKIP,
                 id="modify pod label but it still matches one of target pod's anti-affinity terms"),
    pytest.param(_two_anti(pod()), other().node("fake-node").label("service", "securityscan"), None, QUEUE,
                 id="delete a pod which matches only one of target pod's anti-affinity terms"),
    pytest.param(pod().label("service", "securityscan"), _two_anti(other().node("fake-node")), None, QUEUE,
                 id="delete a pod with anti-affinity that matches pending pod on only one term"),
]

# kubesched's own rows: the hint matches terms with no namespace labels (AffinityTerm.Matches(pod,
# nil)), and a selector that does not parse is its error, which queues.
ASSIGNED_POD_MORE = [
    pytest.param(aff_in(pod(), "service", VALUES, "region"), None,
                 make_pod("other", "other").node("fake-node").label("service", "securityscan"), SKIP,
                 id="add a matching pod of another namespace than the term's"),
    pytest.param(pod().affinity_term(affinity_term(("service", "In", VALUES), topology_key="region",
                                                   namespace_selector=label_selector())), None,
                 make_pod("other", "other").node("fake-node").label("service", "securityscan"), QUEUE,
                 id="add a matching pod of another namespace, the term selecting every namespace"),
    pytest.param(pod().affinity_term(affinity_term(("service", "In", VALUES), topology_key="region",
                                                   namespace_selector=label_selector(team="b"))), None,
                 make_pod("other", "other").node("fake-node").label("service", "securityscan"), SKIP,
                 id="add a matching pod of a namespace the term selects by label: no namespace labels are read"),
    pytest.param(pod().affinity_term(affinity_term(("service", "In", VALUES), topology_key="region",
                                                   namespace_selector=label_selector(("team", "DoesNotExist", [])))),
                 None, make_pod("other", "other").node("fake-node").label("service", "securityscan"), QUEUE,
                 id="add a matching pod, the term's namespace selector matching an empty label set"),
    pytest.param(pod().affinity_term(affinity_term(("service", "In", VALUES), topology_key="region",
                                                   namespaces=("other",))), None,
                 make_pod("other", "other").node("fake-node").label("service", "securityscan"), QUEUE,
                 id="add a matching pod of a namespace the term lists"),
    pytest.param(pod().label("service", "securityscan"), None,
                 make_pod("other", "other").node("fake-node").label("service", "securityscan"), SKIP,
                 id="add a pod when the waiting pod has no affinity"),
    pytest.param(pod().label("service", "securityscan"),
                 make_pod("other", "other").node("fake-node").affinity_term(
                     affinity_term(("service", "In", VALUES), topology_key="region"), anti=True), None, SKIP,
                 id="delete a pod whose anti-affinity covers its own namespace only"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="region")), None, other().node("fake-node"), QUEUE,
                 id="add a pod, an empty selector matching every pod"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="region", nil_selector=True)), None,
                 other().node("fake-node"), SKIP, id="add a pod, a nil selector matching none"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="region", match_labels={"service": "a b"})), None,
                 other().node("fake-node").label("aaa", "a"), QUEUE, id="the pod's affinity selector does not parse"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="region", match_labels={"service": "a b"}),
                                     anti=True), other().node("fake-node"), None, QUEUE,
                 id="the pod's anti-affinity selector does not parse"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="region", match_labels={"service": "a b"}),
                                     weight=1), None, other().node("fake-node"), SKIP,
                 id="a preferred selector that does not parse is no error"),
    pytest.param(pod().label("service", "foo"),
                 other().node("fake-node").affinity_term(
                     affinity_term(topology_key="region", match_labels={"service": "a b"}), anti=True), None, QUEUE,
                 id="the deleted pod's anti-affinity selector does not parse"),
    pytest.param(pod(), other(), other().node("fake-node"), SKIP, id="an update from unscheduled to bound"),
]


@pytest.mark.parametrize(("waiting", "old", "new", "want"), ASSIGNED_POD_CASES + ASSIGNED_POD_MORE)
def test_after_assigned_pod_change(waiting: PodBuilder, old: PodBuilder | None, new: PodBuilder | None,
                                   want: QueueingHint) -> None:
    assert _plugin().after_assigned_pod_change(waiting.obj(), _obj(old), _obj(new)) is want


def test_after_assigned_pod_change_of_another_kind_of_object_queues() -> None:
    waiting = aff_in(pod(), "service", VALUES, "region").obj()
    assert _plugin().after_assigned_pod_change(waiting, None, make_node("n").obj()) is QUEUE


def test_after_assigned_pod_change_reads_the_terms_the_plugin_cached() -> None:
    # The waiting pod's terms are parsed once, by PreFilter or the first hint, not per event.
    pl = _plugin()
    waiting = aff_in(pod(), "service", VALUES, "region").obj()
    first = pl.terms.of(waiting)
    assert pl.after_assigned_pod_change(waiting, None, other().node("n").label("service", "value2").obj()) is QUEUE
    assert pl.terms.of(waiting) is first


# --- Test_isSchedulableAfterTargetPodUpdateLabel -----------------------------------------------------------

def test_after_target_pod_update_label() -> None:
    p = pod().label("foo", "baz").obj()
    assert after_target_pod_update_label(p, p, p) is QUEUE
    (_, target, _) = _plugin().events_to_register()
    assert target.hint is after_target_pod_update_label


# --- Test_isSchedulableAfterNodeChange ---------------------------------------------------------------------

def node_a() -> NodeBuilder:
    return make_node("node-a")


NODE_CASES = [
    # affinity
    pytest.param(aff_in(pod(), "service", VALUES, "zone"), None, node_a().label("zone", "zone1"), QUEUE,
                 id="add a new node with matched pod affinity topologyKey"),
    pytest.param(aff_in(pod(), "service", VALUES, "region"), None, node_a().label("zone", "zone1"), SKIP,
                 id="add a new node without matched topologyKey"),
    pytest.param(aff_in(pod(), "service", VALUES, "zone"), node_a().label("aaa", "a"), node_a().label("aaa", "b"), SKIP,
                 id="update node label but not topologyKey"),
    pytest.param(aff_in(pod(), "service", VALUES, "zone"), node_a().label("zone", "zone1"),
                 node_a().label("zone", "zone1").label("unrelated-label", "unrelated"), SKIP,
                 id="update node label that isn't related to the pod affinity"),
    pytest.param(aff_in(pod(), "service", VALUES, "zone"), node_a().label("zone", "zone1"),
                 node_a().label("zone", "zone2"), QUEUE, id="update node with different affinity topologyKey value"),
    pytest.param(aff_in(pod(), "service", VALUES, "zone"), node_a().label("aaa", "a"), node_a().label("zone", "zone1"),
                 QUEUE, id="update node to have the affinity topology label"),
    # anti-affinity
    pytest.param(anti_zone(pod()), None, node_a().label("zone", "zone1"), QUEUE,
                 id="add a new node with matched pod anti-affinity topologyKey"),
    pytest.param(anti_zone(pod()), None, node_a(), QUEUE,
                 id="add a new node without matched pod anti-affinity topologyKey"),
    pytest.param(anti_zone(pod()), node_a().label("zone", "zone1"),
                 node_a().label("zone", "zone1").label("unrelated-label", "unrelated"), SKIP,
                 id="update node label that isn't related to the pod anti-affinity"),
    pytest.param(anti_zone(pod()), node_a().label("zone", "zone1"), node_a().label("zone", "zone2"), QUEUE,
                 id="update node with different anti-affinity topologyKey value"),
    pytest.param(anti_zone(pod()), node_a().label("aaa", "a"), node_a().label("zone", "zone1"), SKIP,
                 id="update node to have the anti-affinity topology label"),
    pytest.param(anti_zone(pod()), node_a().label("zone", "zone1"), node_a().label("aaa", "a"), QUEUE,
                 id="update node label not to have anti-affinity topology label"),
]

NODE_MORE = [
    pytest.param(pod(), None, node_a().label("zone", "zone1"), SKIP, id="add a node when the pod has no terms"),
    pytest.param(aff_in(pod(), "service", VALUES, "zone"), node_a().label("zone", "zone1"), node_a(), SKIP,
                 id="update node to lose the affinity topology label"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="zone", match_labels={"service": "a b"})), None,
                 node_a(), QUEUE, id="the pod's affinity selector does not parse"),
    pytest.param(pod().affinity_term(affinity_term(topology_key="zone"), weight=1), None,
                 node_a().label("zone", "zone1"), SKIP, id="a preferred term's topology key does not count"),
]


@pytest.mark.parametrize(("waiting", "old", "new", "want"), NODE_CASES + NODE_MORE)
def test_after_node_change(waiting: PodBuilder, old: NodeBuilder | None, new: NodeBuilder, want: QueueingHint) -> None:
    assert _plugin().after_node_change(waiting.obj(), _obj(old), new.obj()) is want


@pytest.mark.parametrize(("old", "new"), [
    pytest.param(None, make_pod("x").obj(), id="a pod for the new node"),
    pytest.param(make_pod("x").obj(), make_node("n").obj(), id="a pod for the old node"),
])
def test_after_node_change_of_another_kind_of_object_queues(old: Pod | None, new: Any) -> None:
    assert _plugin().after_node_change(anti_zone(pod()).obj(), old, new) is QUEUE
