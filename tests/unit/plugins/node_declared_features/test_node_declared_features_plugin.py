"""NodeDeclaredFeatures' PreFilter, Filter and queueing hints: kube-scheduler's
nodedeclaredfeatures_test.go (TestPreFilter, TestFilter, TestEnqueueExtensionsNodeUpdate,
TestIsSchedulableAfterTargetPodUpdate, TestEventsToRegister) with its mock features, then the
registered features through the default profile. The feature gate is locked on in v1.37, so
upstream's "plugin disabled" rows have no counterpart."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kubesched.framework import Code, CycleState, FitError, NodeInfo, PodInfo, Status
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    node_update_events,
)
from kubesched.model.objects import Node, PodSpec
from kubesched.plugins import node_declared_features
from kubesched.plugins.node_declared_features.features import Feature
from kubesched.plugins.node_declared_features.framework import Framework
from kubesched.plugins.node_declared_features.plugin import PRE_FILTER_KEY, NodeDeclaredFeatures
from kubesched.plugins.node_declared_features.version import Version, parse
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, run_filter, verdict
from tests.unit.scheduling_helpers import schedule, snapshot_with

REASON = "node(s) didn't match Pod's required features"
REJECTED = (UNRESOLVABLE, (REASON,))
F1, F2 = "TestFeature1", "TestFeature2"
A, B, C = "FeatureA", "FeatureB", "FeatureC"


def mock(name: str, infer: bool, max_version: str = "") -> Feature:
    return Feature(name, lambda spec: infer, parse(max_version) if max_version else None)


def plugin(*features: Feature, version: str | None = "1.35.0") -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(Framework(features), None if version is None else parse(version))


@pytest.mark.parametrize(("features", "version", "skip", "state"), [
    pytest.param((mock(F1, True), mock(F2, False)), "1.35.0", False, {F1}, id="pod-with-feature-requirements"),
    pytest.param((mock(F1, True, "1.38.0"), mock(F2, True, "1.38.0")), "1.35.0", False, {F1, F2},
                 id="pod-with-multiple-feature-requirements"),
    pytest.param((mock(F1, False), mock(F2, False)), "1.35.0", True, None, id="pod-with-no-requirements"),
    pytest.param((mock(F1, True, "1.33.0"), mock(F2, False)), "1.34.0", True, None,
                 id="feature-not-required-version-past-max-version"),
    pytest.param((mock(F1, True, "1.35.0"),), "1.35.0", False, {F1}, id="version-equal-to-max-version"),
])
def test_pre_filter(features: tuple[Feature, ...], version: str, skip: bool, state: set[str] | None) -> None:
    cycle = CycleState()
    result, status = plugin(*features, version=version).pre_filter(cycle, PodInfo(make_pod("p").obj()),
                                                                    snapshot_with([]))
    assert result is None
    assert (status is not None and status.is_skip()) == skip
    assert status is None or status.is_skip()
    assert cycle.get(PRE_FILTER_KEY) == (None if state is None else frozenset(state))


def test_pre_filter_without_version_is_an_error() -> None:
    _, status = plugin(mock(F1, True), version=None).pre_filter(CycleState(), PodInfo(make_pod("p").obj()),
                                                                 snapshot_with([]))
    assert status == Status(Code.ERROR, "target version cannot be nil")


@pytest.mark.parametrize(("declared", "reqs", "want"), [
    pytest.param((A, B), (A,), None, id="node-matches-requirements"),
    pytest.param((B,), (A,), REJECTED, id="node-does-not-match-requirements"),
    pytest.param((A, B, C), (A, C), None, id="node-with-multiple-features-pod-requires-subset"),
    pytest.param((), (A,), REJECTED, id="node-has-no-declared-features"),
    pytest.param((A,), (A, B), REJECTED, id="node-with-some-but-not-all-required-features"),
    pytest.param((A, B, "Zeta"), (A, B), None, id="unknown-node-feature-ignored"),
    pytest.param(("Alpha", A), (A,), None, id="unknown-node-feature-first"),
])
def test_filter(declared: tuple[str, ...], reqs: tuple[str, ...], want: object) -> None:
    pl = plugin(mock(A, False), mock(B, False), mock(C, False))
    cycle = CycleState()
    cycle.write(PRE_FILTER_KEY, frozenset(reqs))
    node = NodeInfo(make_node("node-1").declared_features(*declared).obj())
    assert verdict(pl.filter(cycle, PodInfo(make_pod("p").obj()), node)) == want


def test_filter_without_pre_filter_state_is_an_error() -> None:
    status = plugin(mock(A, False)).filter(CycleState(), PodInfo(make_pod("p").obj()), NodeInfo(make_node("n").obj()))
    assert status == Status(Code.ERROR, 'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found')


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(None, (A,), QueueingHint.QUEUE, id="node-add-with-feature"),
    pytest.param(None, (), QueueingHint.QUEUE, id="node-add-without-feature"),
    pytest.param((), (A,), QueueingHint.QUEUE, id="node-update-features-added"),
    pytest.param((A,), (A,), QueueingHint.QUEUE_SKIP, id="node-update-features-unchanged"),
    pytest.param((A, B), (A,), QueueingHint.QUEUE, id="node-update-features-removed"),
])
def test_hint_after_node_change(old: tuple[str, ...] | None, new: tuple[str, ...], want: QueueingHint) -> None:
    old_node = None if old is None else make_node("node-1").declared_features(*old).obj()
    new_node = make_node("node-1").declared_features(*new).obj()
    assert plugin().after_node_change(make_pod("p").obj(), old_node, new_node) is want


def counting(*answers: bool) -> Callable[[PodSpec], bool]:
    """An inference answering in turn, old pod first (upstream's mock counting its calls)."""
    it: Iterator[bool] = iter(answers)
    return lambda spec: next(it)


@pytest.mark.parametrize(("answers", "want"), [
    pytest.param((False, True), QueueingHint.QUEUE, id="pod-update-adds-requirement"),
    pytest.param((True, False), QueueingHint.QUEUE, id="pod-update-removes-requirement"),
    pytest.param((False, False), QueueingHint.QUEUE_SKIP, id="pod-update-with-no-change-in-requirements"),
    pytest.param((True, True), QueueingHint.QUEUE_SKIP, id="pod-update-keeps-requirement"),
])
def test_hint_after_target_pod_update(answers: tuple[bool, ...], want: QueueingHint) -> None:
    pl = NodeDeclaredFeatures(Framework([Feature("TestFeature", counting(*answers))]), parse("1.35.0"))
    old, new = make_pod("test-pod").obj(), make_pod("test-pod").label("foo", "bar").obj()
    assert pl.after_target_pod_update(old, old, new) is want


def test_hint_after_target_pod_update_without_version_raises() -> None:
    # The queue takes a hint that raises as Queue (kube-scheduler: an error from a hint means Queue).
    pl = plugin(mock("TestFeature", True), version=None)
    old, new = make_pod("test-pod").obj(), make_pod("test-pod").label("foo", "bar").obj()
    with pytest.raises(ValueError, match="target version cannot be nil"):
        pl.after_target_pod_update(old, old, new)


def test_events_to_register() -> None:
    pl = node_declared_features.new({})
    events = pl.events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE)]
    assert all(isinstance(e, ClusterEventWithHint) and e.hint is not None for e in events)


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param((), ("RestartAllContainersOnContainerExits",), [ActionType.UPDATE_NODE_DECLARED_FEATURE],
                 id="feature-declared"),
    pytest.param(("A", "B"), ("A",), [ActionType.UPDATE_NODE_DECLARED_FEATURE], id="feature-withdrawn"),
    pytest.param(("A",), ("A",), [], id="unchanged"),
])
def test_node_update_event(old: tuple[str, ...], new: tuple[str, ...], want: list[ActionType]) -> None:
    events = node_update_events(make_node("n").declared_features(*old).obj(),
                                make_node("n").declared_features(*new).obj())
    assert [e.action_type for e in events] == want
    registered = node_declared_features.new({}).events_to_register()[0]
    assert all(registered.matches(e) for e in events)


# --- the registered features, as the default profile runs them ----------------------------------

RESTART_ALL = "RestartAllContainersOnContainerExits"


@pytest.mark.parametrize(("pod", "declared", "want"), [
    pytest.param(make_pod("p"), (), None, id="no-requirement-any-node"),
    pytest.param(make_pod("p").restart_rule(), (RESTART_ALL,), None, id="restart-all-declared"),
    pytest.param(make_pod("p").restart_rule(), (), REJECTED, id="restart-all-undeclared"),
    pytest.param(make_pod("p").restart_rule(init=True), ("DRAOptionalNodeOperations",), REJECTED,
                 id="restart-all-init-other-feature-declared"),
    pytest.param(make_pod("p").restart_rule("Restart"), (), None, id="plain-restart-rule-needs-nothing"),
    pytest.param(make_pod("p").host_network().host_users(False), (), REJECTED, id="host-network-user-namespace"),
    pytest.param(make_pod("p").host_network().host_users(False), ("UserNamespacesHostNetworkSupport",), None,
                 id="host-network-user-namespace-declared"),
    pytest.param(make_pod("p").bind_mount_options("noexec"), (RESTART_ALL,), REJECTED, id="bind-mount-options"),
    pytest.param(make_pod("p").bind_mount_options("noexec").restart_rule(), (RESTART_ALL, "VolumeBindMountOptions"),
                 None, id="two-features-both-declared"),
    pytest.param(make_pod("p").bind_mount_options("noexec").restart_rule(), ("VolumeBindMountOptions",), REJECTED,
                 id="two-features-one-declared"),
])
def test_default_registry(pod: PodBuilder, declared: tuple[str, ...], want: object) -> None:
    assert verdict(run_filter(NodeDeclaredFeatures(), pod, make_node("n").declared_features(*declared))) == want


def test_default_profile_message() -> None:
    nodes: list[Node | NodeBuilder] = [make_node("has").declared_features(RESTART_ALL), make_node("lacks")]
    result = schedule(nodes, make_pod("p").restart_rule())
    assert not isinstance(result, FitError)
    assert result.suggested_host == "has"
    nodes = [make_node("a"), make_node("b").declared_features("VolumeBindMountOptions")]
    failed = schedule(nodes, make_pod("p").restart_rule())
    assert isinstance(failed, FitError)
    assert failed.message() == "0/2 nodes are available: 2 node(s) didn't match Pod's required features."


def test_version_is_kube_schedulers() -> None:
    assert NodeDeclaredFeatures().version == Version((1, 37, 2))
