"""PreferNodeLabel: nodes with label `key`=`value` score MAX_NODE_SCORE, the others 0.

A bare factory with a return annotation: kubesched reads the extension points (score) from the
class and passes the pluginConfig args unparsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework import MAX_NODE_SCORE, CycleState, NodeInfo, PodInfo, Snapshot

NAME = "PreferNodeLabel"


class PreferNodeLabel:
    name = NAME

    def __init__(self, key: str, value: str) -> None:
        self.key = key
        self.value = value

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        return MAX_NODE_SCORE if node.labels.get(self.key) == self.value else 0


def new(args: Mapping[str, Any]) -> PreferNodeLabel:
    key, value = args.get("key", ""), args.get("value", "")
    if not isinstance(key, str) or not key or not isinstance(value, str):
        # kubesched reports it as "plugin PreferNodeLabel rejected its args: ..."
        raise ValueError("args.key (a label key) and args.value (a string) are needed")
    return PreferNodeLabel(key, value)
