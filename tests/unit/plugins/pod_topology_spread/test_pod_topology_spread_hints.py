"""PodTopologySpread's queueing hints: kube-scheduler's podtopologyspread/plugin_test.go tables
(Test_isSchedulableAfterNodeChange, Test_isSchedulableAfterAssignedPodChange,
Test_isSchedulableAfterTargetPodChange), row for row with upstream's names, then kubesched's own
rows for what those tables leave out."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.model.objects import LabelSelector
from kubesched.plugins.pod_topology_spread import InMemorySelectors, PodTopologySpread, new
from tests.builders import NodeBuilder, PodBuilder, label_selector, make_node, make_pod

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
FOO = label_selector("foo")  # st.MakeLabelSelector().Exists("foo")
BAR = label_selector("bar")


def _plugin() -> PodTopologySpread:
    # Upstream's setup: PodTopologySpreadArgs{DefaultingType: ListDefaulting}, no default constraints.
    return new({"defaultingType": "List"})


def pod(name: str = "p") -> PodBuilder:
    return make_pod(name).uid(name)


def spread(b: PodBuilder, key: str, selector: LabelSelector = FOO, taints: str | None = None) -> PodBuilder:
    """SpreadConstraint(1, key, DoNotSchedule, selector, nil, nil, taints, nil)."""
    return b.spread(1, key, "DoNotSchedule", selector, node_taints_policy=taints)


def zone_and_node(b: PodBuilder) -> PodBuilder:
    return spread(spread(b, "zone"), "node")


def node_a() -> NodeBuilder:
    return make_node("node-a")


def _obj(b: PodBuilder | NodeBuilder | None) -> Any:
    return None if b is None else b.obj()


# --- Test_isSchedulableAfterNodeChange ---------------------------------------------------------------------

# (the waiting pod, the old node, the new node, the hint)
NODE_CASES = [
    pytest.param(spread(pod(), "zone"), node_a().label("zone", "zone1"), node_a().label("zone", "zone2"), QUEUE,
                 id="node updates label which matches topologyKey"),
    pytest.param(spread(pod(), "zone"), node_a().label("foo", "bar1"), node_a().label("foo", "bar2"), SKIP,
                 id="node that doesn't match topologySpreadConstraints updates non-related label"),
    pytest.param(zone_and_node(pod()), node_a().label("zone", "zone1").label("node", "node1").label("foo", "bar"),
                 node_a().label("zone", "zone1").label("node", "node1"), SKIP,
                 id="node that match topologySpreadConstraints adds non-related label"),
    pytest.param(spread(pod(), "zone"), None, node_a().label("foo", "bar"), SKIP,
                 id="create node with non-related labels"),
    pytest.param(spread(pod(), "zone"), None, node_a().label("zone", "zone1"), QUEUE,
                 id="create node with related labels"),
    pytest.param(spread(pod(), "zone"), node_a().label("foo", "bar"), None, SKIP,
                 id="delete node with non-related labels"),
    pytest.param(spread(pod(), "zone"), node_a().label("zone", "zone1"), None, QUEUE,
                 id="delete node with related labels"),
    pytest.param(zone_and_node(pod()), None, node_a().label("zone", "zone1"), SKIP,
                 id="add node with related labels that only match one of topologySpreadConstraints"),
    pytest.param(zone_and_node(pod()), None, node_a().label("zone", "zone1").label("node", "node1"), QUEUE,
                 id="add node with related labels that match all topologySpreadConstraints"),
    pytest.param(zone_and_node(pod()), node_a().label("zone", "zone1"), node_a().label("zone", "zone1"), SKIP,
                 id="update node with related labels that only match one of topologySpreadConstraints"),
    pytest.param(zone_and_node(pod()), node_a().label("zone", "zone1").label("node", "node1"),
                 node_a().label("zone", "zone1").label("node", "node2"), QUEUE,
                 id="update node with related labels that match all topologySpreadConstraints"),
    pytest.param(zone_and_node(pod()), node_a().label("zone", "zone1").label("node", "node1").taint("aaa", "bbb"),
                 node_a().label("zone", "zone1").label("node", "node1").taint("ccc", "bbb"), QUEUE,
                 id="update node with different taints that match all topologySpreadConstraints"),
    pytest.param(zone_and_node(pod()), node_a().label("node", "node1").taint("aaa", "bbb"),
                 node_a().label("node", "node1").taint("ccc", "bbb"), SKIP,
                 id="update node with different taints that only match one of topologySpreadConstraints"),
]

NODE_MORE = [
    pytest.param(spread(pod(), "zone"), node_a().label("zone", "zone1"), node_a(), QUEUE,
                 id="update node to lose the topology key"),
    pytest.param(spread(pod(), "zone"), node_a(), node_a().label("zone", "zone1"), QUEUE,
                 id="update node to get the topology key"),
    pytest.param(spread(pod(), "zone", taints="Ignore"), node_a().label("zone", "zone1").taint("aaa", "bbb"),
                 node_a().label("zone", "zone1"), QUEUE,
                 id="a taint change counts whatever nodeTaintsPolicy says"),
    pytest.param(spread(pod(), "zone"), node_a().label("zone", "zone1").taint("aaa", "bbb"),
                 node_a().label("zone", "zone1").taint("aaa", "bbb").unschedulable(), SKIP,
                 id="update node with neither its topology values nor its taints changed"),
    # No hard constraint: every node has all of none of the keys (nodeLabelsMatchSpreadConstraints).
    pytest.param(pod(), None, node_a(), QUEUE, id="create node when the pod has no hard constraint"),
    pytest.param(pod().spread(1, "zone", "ScheduleAnyway", FOO), node_a(), None, QUEUE,
                 id="delete node when the pod has soft constraints only"),
    pytest.param(pod(), node_a().label("zone", "zone1"), node_a().label("zone", "zone2"), SKIP,
                 id="update node when the pod has no hard constraint"),
    pytest.param(spread(pod(), "zone", label_selector(("foo", "In", ["a b"]))), None, node_a(), QUEUE,
                 id="the pod's selector does not parse"),
]


@pytest.mark.parametrize(("waiting", "old", "new", "want"), NODE_CASES + NODE_MORE)
def test_after_node_change(waiting: PodBuilder, old: NodeBuilder | None, new: NodeBuilder | None,
                           want: QueueingHint) -> None:
    assert _plugin().after_node_change(waiting.obj(), _obj(old), _obj(new)) is want


def test_after_node_change_of_another_kind_of_object_queues() -> None:
    assert _plugin().after_node_change(spread(pod(), "zone").obj(), None, make_pod("x").obj()) is QUEUE


# --- Test_isSchedulableAfterAssignedPodChange --------------------------------------------------------------

def target() -> PodBuilder:
    return spread(pod().label("foo", ""), "zone")


def multi() -> PodBuilder:
    return spread(spread(pod().label("foo", ""), "zone"), "node", BAR)


def p2() -> PodBuilder:
    return pod("p2")


ASSIGNED_POD_CASES = [
    pytest.param(target(), None, p2().node("fake-node").label("foo", ""), QUEUE,
                 id="add pod with labels match topologySpreadConstraints selector"),
    pytest.param(target(), None, p2().label("foo", ""), SKIP, id="add un-scheduled pod"),
    pytest.param(target(), p2().label("bar", ""), p2().label("foo", ""), SKIP, id="update un-scheduled pod"),
    pytest.param(target(), p2().label("foo", ""), None, SKIP, id="delete un-scheduled pod"),
    pytest.param(target(), None, make_pod("p2", "fake-namespace").uid("p2").node("fake-node").label("foo", ""), SKIP,
                 id="add pod with different namespace"),
    pytest.param(target(), None, p2().node("fake-node").label("bar", ""), SKIP,
                 id="add pod with labels don't match topologySpreadConstraints selector"),
    pytest.param(target(), p2().node("fake-node").label("foo", ""), None, QUEUE,
                 id="delete pod with labels that match topologySpreadConstraints selector"),
    pytest.param(target(), p2().nominated("fake-node").label("bar", ""), None, SKIP,
                 id="delete nominated pod with labels that don't match topologySpreadConstraints selector"),
    pytest.param(target(), p2().nominated("fake-node").label("foo", ""), None, QUEUE,
                 id="delete nominated pod with labels that match topologySpreadConstraints selector"),
    pytest.param(target(), p2().node("fake-node").label("bar", ""), None, SKIP,
                 id="delete pod with labels that don't match topologySpreadConstraints selector"),
    pytest.param(target(), p2().node("fake-node").label("foo", "").label("bar", "bar1"),
                 p2().node("fake-node").label("foo", "").label("bar", "bar2"), SKIP,
                 id="update pod's non-related label"),
    pytest.param(target(), p2().node("fake-node"), p2().node("fake-node").label("foo", ""), QUEUE,
                 id="add pod's label that matches topologySpreadConstraints selector"),
    pytest.param(target(), p2().node("fake-node").label("foo", ""), p2().node("fake-node"), QUEUE,
                 id="delete pod label that matches topologySpreadConstraints selector"),
    pytest.param(target(), p2().node("fake-node").label("foo", "foo1"), p2().node("fake-node").label("foo", "foo2"),
                 SKIP, id="change pod's label that matches topologySpreadConstraints selector"),
    pytest.param(target(), p2().node("fake-node").label("foo", "").label("bar", "bar1"),
                 p2().node("fake-node").label("foo", "").label("bar", "bar2"), SKIP,
                 id="change pod's label that doesn't match topologySpreadConstraints selector"),
    pytest.param(multi(), p2().node("fake-node").label("foo", ""),
                 p2().node("fake-node").label("foo", "").label("bar", "bar2"), QUEUE,
                 id="add pod's label that matches topologySpreadConstraints selector with multi "
                    "topologySpreadConstraints"),
    pytest.param(multi(), p2().node("fake-node").label("foo", ""),
                 p2().node("fake-node").label("foo", "").label("baz", ""), SKIP,
                 id="change pod's label that doesn't match topologySpreadConstraints selector with multi "
                    "topologySpreadConstraints"),
    pytest.param(multi(), p2().node("fake-node").label("foo", "").label("bar", ""),
                 p2().node("fake-node").label("foo", "").label("bar", "bar2"), SKIP,
                 id="change pod's label that match topologySpreadConstraints selector with multi "
                    "topologySpreadConstraints"),
]

ASSIGNED_POD_MORE = [
    pytest.param(target(), make_pod("p2", "fake-namespace").uid("p2").node("fake-node").label("foo", ""), None, SKIP,
                 id="delete pod with different namespace"),
    pytest.param(target(), p2().label("foo", ""), p2().node("fake-node").label("foo", ""), SKIP,
                 id="an update from unscheduled to bound"),
    pytest.param(pod().label("foo", ""), None, p2().node("fake-node").label("foo", ""), SKIP,
                 id="add pod when the pod has no hard constraint"),
    pytest.param(pod().spread(1, "zone", "ScheduleAnyway", FOO), p2().node("fake-node").label("foo", ""), None, SKIP,
                 id="delete pod when the pod has soft constraints only"),
    pytest.param(spread(pod(), "zone", label_selector(("foo", "In", ["a b"]))), None,
                 p2().node("fake-node").label("bar", ""), QUEUE, id="the pod's selector does not parse"),
    # matchLabelKeys merges the waiting pod's own value of the key into the selector.
    pytest.param(pod().label("app", "a").spread(1, "zone", "DoNotSchedule", FOO, match_label_keys=("app",)), None,
                 p2().node("fake-node").label("foo", "").label("app", "b"), SKIP,
                 id="add pod whose value of a matchLabelKeys key differs"),
    pytest.param(pod().label("app", "a").spread(1, "zone", "DoNotSchedule", FOO, match_label_keys=("app",)), None,
                 p2().node("fake-node").label("foo", "").label("app", "a"), QUEUE,
                 id="add pod with the same value of a matchLabelKeys key"),
]


@pytest.mark.parametrize(("waiting", "old", "new", "want"), ASSIGNED_POD_CASES + ASSIGNED_POD_MORE)
def test_after_assigned_pod_change(waiting: PodBuilder, old: PodBuilder | None, new: PodBuilder | None,
                                   want: QueueingHint) -> None:
    assert _plugin().after_assigned_pod_change(waiting.obj(), _obj(old), _obj(new)) is want


def test_after_assigned_pod_change_of_another_kind_of_object_queues() -> None:
    assert _plugin().after_assigned_pod_change(target().obj(), make_node("n").obj(), None) is QUEUE


def test_after_assigned_pod_change_reads_the_default_constraints() -> None:
    # No constraint of its own: the default ones (here one hard), with its Service's selector.
    pl = new({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
        selectors=InMemorySelectors(services=[("default", {"app": "web"})]))
    waiting = pod().label("app", "web").obj()
    assert pl.after_assigned_pod_change(waiting, None, p2().node("n").label("app", "web").obj()) is QUEUE
    assert pl.after_assigned_pod_change(waiting, None, p2().node("n").label("app", "db").obj()) is SKIP


# --- Test_isSchedulableAfterTargetPodChange ----------------------------------------------------------------

TARGET_POD_CASES = [
    pytest.param(spread(spread(pod().label("foo", ""), "zone", taints="Honor"), "node", BAR),
                 pod().label("foo", ""), pod().label("foo", "").toleration("node.kubernetes.io/unschedulable",
                                                                          operator="Exists", effect="NoSchedule"),
                 QUEUE, id="the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got "
                           "a new toleration"),
    pytest.param(spread(spread(pod().label("foo", ""), "zone", taints="Ignore"), "node", BAR),
                 pod().label("foo", ""), pod().label("foo", "").toleration("node.kubernetes.io/unschedulable",
                                                                          operator="Exists", effect="NoSchedule"),
                 SKIP, id="the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has "
                          "got a new toleration"),
    pytest.param(spread(spread(pod().label("foo", ""), "zone", taints="Ignore"), "node", BAR), pod(),
                 pod().label("foo", ""), QUEUE,
                 id="the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector "
                    "of the constraint"),
    pytest.param(spread(spread(pod().label("foo", ""), "zone", taints="Ignore"), "node", BAR), pod(),
                 pod().label("unrelated", ""), SKIP,
                 id="the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label"),
]


@pytest.mark.parametrize(("waiting", "old", "new", "want"), TARGET_POD_CASES)
def test_after_target_pod_change(waiting: PodBuilder, old: PodBuilder, new: PodBuilder, want: QueueingHint) -> None:
    assert _plugin().after_target_pod_change(waiting.obj(), old.obj(), new.obj()) is want


def test_events_to_register() -> None:
    """kube-scheduler's EventsToRegister, each event with its queueing hint."""
    pl = _plugin()
    events = pl.events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL
                     | ActionType.UPDATE_NODE_TAINT),
    ]
    assert [e.hint for e in events] == [pl.after_assigned_pod_change, pl.after_target_pod_change,
                                        pl.after_node_change]
