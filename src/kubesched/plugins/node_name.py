"""NodeName: a pod that names its node fits only there."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.interface import Bools, PreFilterResult, Rows
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


class NodeName:
    name = NAME

    # Only a new node can be the one the pod names (kube-scheduler NodeName.EventsToRegister).
    _EVENTS = (ClusterEvent(EventResource.NODE, ActionType.ADD),)

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        node_name = pod.pod.spec.node_name
        if node_name:
            return PreFilterResult(frozenset({node_name})), None
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        node_name = pod.pod.spec.node_name
        if not node_name or node_name == node.name:
            return None
        return _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        node_name = pod.pod.spec.node_name
        if not node_name:
            return None
        mask: Bools = np.equal(rows, snapshot.index.get(node_name, -1))
        return mask

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        return [_REJECTED] * len(rows)


def new(args: Mapping[str, Any]) -> NodeName:
    return NodeName()



