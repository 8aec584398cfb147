"""Runs a filter plugin on one NodeInfo and reduces its status to (code, reasons), for the plugins'
filter table tests."""

from __future__ import annotations

from kubesched.framework import Code, CycleState, NodeInfo, PodInfo, Status
from tests.builders import NodeBuilder, PodBuilder
from tests.unit.scheduling_helpers import snapshot_with

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
UNSCHEDULABLE = Code.UNSCHEDULABLE


def run_filter(plugin: object, pod: PodBuilder, node: NodeBuilder, pods: tuple[PodBuilder, ...] = ()) -> Status | None:
    info = PodInfo(pod.obj())
    state = CycleState()
    pre = getattr(plugin, "pre_filter", None)
    if pre is not None:
        _, s = pre(state, info, snapshot_with([node]))
        if s is not None and s.is_skip():
            return None
    ni = NodeInfo(node.obj(), [p.obj() for p in pods])
    result: Status | None = plugin.filter(state, info, ni)  # type: ignore[attr-defined]
    return result


def verdict(status: Status | None) -> tuple[Code, tuple[str, ...]] | None:
    return None if status is None else (status.code, status.reasons)
