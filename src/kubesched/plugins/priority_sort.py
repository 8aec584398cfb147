"""PrioritySort: the active queue pops the highest priority first, then the oldest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.interface import QueuedEntity

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def less(self, a: QueuedEntity, b: QueuedEntity) -> bool:
        return a.priority > b.priority or (a.priority == b.priority and a.timestamp < b.timestamp)

    @staticmethod
    def sort_key(priority: int, timestamp: float) -> tuple[int, float]:
        """A heap key ordering entities exactly as `less` does."""
        return (-priority, timestamp)


def new(args: Mapping[str, Any]) -> PrioritySort:
    return PrioritySort()
