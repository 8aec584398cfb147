"""NodeLabelAllowlist: only nodes whose label `key` has one of `values` may take a pod.

    pluginConfig:
      - name: NodeLabelAllowlist
        args: {key: tier, values: [normal]}

A node it rejects is counted under its own reason in the pod's FailedScheduling event, e.g.
"0/4 nodes are available: 4 node(s) lacked an allowed tier label (normal)."
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PluginSpec,
    PodInfo,
    Status,
)

NAME = "NodeLabelAllowlist"


class NodeLabelAllowlist:
    name = NAME

    def __init__(self, key: str, values: frozenset[str]) -> None:
        self.key = key
        self.values = values
        # One Status for every rejected node: the cycle only reads it. Unresolvable, as no preemption
        # can change a node's labels.
        self._rejected = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                f"node(s) lacked an allowed {key} label ({', '.join(sorted(values))})")

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None if node.labels.get(self.key) in self.values else self._rejected

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        # Only a new node or a relabelled one can make a pod this plugin rejected schedulable.
        return (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),)


def parse_args(raw: Mapping[str, Any], path: str, errs: list[Any]) -> dict[str, Any]:
    """Defaults and validation at config load, so a bad file is refused naming the field; a raised
    ValueError becomes the error of `path` (errs takes kubesched's FieldErrors too)."""
    unknown = sorted(set(raw) - {"key", "values"})
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}: valid fields are key, values")
    key = raw.get("key", "kubesched.io/allowed")
    values = raw.get("values", ["true"])
    if not isinstance(key, str) or not key:
        raise ValueError("key must be a non-empty label key")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise ValueError("values must be a non-empty list of strings")
    return {"key": key, "values": values}


def new(args: Mapping[str, Any]) -> NodeLabelAllowlist:
    return NodeLabelAllowlist(args["key"], frozenset(args["values"]))


SPEC = PluginSpec(NAME, new, args_parser=parse_args)
