"""NodeDeclaredFeatures (kube-scheduler v1.37.2 nodedeclaredfeatures): a pod goes only to a node
whose `status.declaredFeatures` has every feature the pod needs.

PreFilter infers the features from the pod's spec (component-helpers' framework, framework.py) and
skips the plugin when it needs none, which is nearly always; Filter rejects a node lacking one as
UnschedulableAndUnresolvable. The feature gate is GA and locked on in v1.37, so the plugin always
runs, and InPlacePodVerticalScalingSchedulerPreemption (alpha, off) leaves no resize deferred to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Node, Pod
from kubesched.plugins.node_declared_features.framework import DEFAULT_FRAMEWORK, FeatureSet, Framework
from kubesched.plugins.node_declared_features.version import Version, parse

NAME = "NodeDeclaredFeatures"
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
PRE_FILTER_KEY = "PreFilter" + NAME
# kube-scheduler infers for its own version (component-base version.Get()).
KUBE_SCHEDULER_VERSION = parse("v1.37.2")
_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
_NO_STATE = Status(Code.ERROR, f'error reading "{PRE_FILTER_KEY}" from cycle-state: not found')


class NodeDeclaredFeatures:
    name = NAME

    def __init__(self, framework: Framework = DEFAULT_FRAMEWORK,
                 version: Version | None = KUBE_SCHEDULER_VERSION) -> None:
        self.framework = framework
        self.version = version

    def _requirements(self, pod: Pod) -> FeatureSet:
        return self.framework.infer_for_pod_scheduling(pod.spec, self.version)

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        node_changes = ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
        return (
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, node_changes), self.after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),
                                 self.after_target_pod_update),
        )

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        try:
            reqs = self._requirements(pod.pod)
        except ValueError as err:
            return None, Status(Code.ERROR, str(err))
        if not reqs:
            return None, SKIP
        state.write(PRE_FILTER_KEY, reqs)
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        reqs: FeatureSet | None = state.get(PRE_FILTER_KEY)
        if reqs is None:
            return _NO_STATE
        if reqs <= self.framework.try_map(node.node.status.declared_features):
            return None
        return _REJECTED

    def after_node_change(self, pod: Pod, old: Node | None, new: Node) -> QueueingHint:
        """A new node, or one whose declared features changed."""
        if old is not None and old.status.declared_features == new.status.declared_features:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def after_target_pod_update(self, pod: Pod, old: Pod, new: Pod) -> QueueingHint:
        """The pod's own update, when it changes the features it needs. An inference that fails
        raises, which the queue takes as Queue (as kube-scheduler takes the hint's error)."""
        before = self._requirements(old)
        if self._requirements(new) == before:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def new(args: Mapping[str, Any]) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures()
