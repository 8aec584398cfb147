"""NodeUnschedulable: a cordoned node takes only pods that tolerate node.kubernetes.io/unschedulable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import Bools, PreFilterResult, Rows
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod, Taint
from kubesched.plugins.helper.tolerations import tolerates_taint

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)


class NodeUnschedulable:
    name = NAME

    # A new node, or one uncordoned (reported as a taint change); and a toleration of the cordon
    # added to the pod.
    _EVENTS = (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
               ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
                                    lambda pod, old, new: after_target_pod_toleration_change(new)))

    def events_to_register(self) -> tuple[ClusterEvent | ClusterEventWithHint, ...]:
        return self._EVENTS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not node.unschedulable or tolerates_taint(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        cordoned = snapshot.take(snapshot.unschedulable, rows)
        if not np.count_nonzero(cordoned) or tolerates_taint(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return np.logical_not(cordoned)

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        return [_REJECTED] * len(rows)


def new(args: Mapping[str, Any]) -> NodeUnschedulable:
    return NodeUnschedulable()


def after_target_pod_toleration_change(modified: Pod) -> QueueingHint:
    """isSchedulableAfterTargetPodTolerationChange: tolerations can only be added, and a pod this
    plugin rejected did not tolerate the cordon, so only whether it does now matters."""
    if tolerates_taint(modified.spec.tolerations, _UNSCHEDULABLE_TAINT):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP
