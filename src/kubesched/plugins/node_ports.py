"""NodePorts: a pod's host ports must be free on the node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.interface import Bools, PreFilterResult, Rows
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import HostPort, HostPortInfo, NodeInfo, PodInfo

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_REJECTED = Status(Code.UNSCHEDULABLE, ERR_REASON)


def fits_ports(wanted: Sequence[HostPort], used: HostPortInfo) -> bool:
    return not any(used.check_conflict(p) for p in wanted)


class NodePorts:
    name = NAME

    # Ports are immutable in a pod's spec: only a deleted pod or a new node frees one.
    _EVENTS = (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
               ClusterEvent(EventResource.NODE, ActionType.ADD))

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.host_ports:
            return None, SKIP
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None if fits_ports(pod.host_ports, node.used_ports) else _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        if not pod.host_ports:
            return None
        busy = np.flatnonzero(snapshot.take(snapshot.has_ports, rows))
        if len(busy) == 0:
            return None
        mask = np.ones(len(rows), dtype=np.bool_)
        infos = snapshot.node_infos
        wanted = pod.host_ports
        for p in busy.tolist():
            if not fits_ports(wanted, infos[rows[p]].used_ports):
                mask[p] = False
        return mask

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        return [_REJECTED] * len(rows)


def new(args: Mapping[str, Any]) -> NodePorts:
    return NodePorts()
