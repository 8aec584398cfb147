"""A heap keyed by pod uid with O(log n) push/pop and O(1) removal by lazy deletion."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")

# Rebuild once dead entries outnumber live ones, so a churny queue cannot grow without bound.
_COMPACT_MIN = 64


class KeyedHeap(Generic[T]):
    def __init__(self, sort_key: Callable[[T], tuple[Any, ...]]) -> None:
        self._sort_key = sort_key
        # Entries are [sort key, sequence, uid, item | None]; the unique sequence number means
        # comparison never reaches the item, and None marks a removed entry.
        self._heap: list[list[Any]] = []
        self._entries: dict[str, list[Any]] = {}
        self._seq = itertools.count()
        self._dead = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, uid: str) -> bool:
        return uid in self._entries

    def get(self, uid: str) -> T | None:
        entry = self._entries.get(uid)
        return None if entry is None else entry[3]

    def push(self, uid: str, item: T) -> None:
        """Add, or replace and re-sort an item already present."""
        if uid in self._entries:
            self._kill(self._entries.pop(uid))
        entry = [self._sort_key(item), next(self._seq), uid, item]
        self._entries[uid] = entry
        heapq.heappush(self._heap, entry)

    def remove(self, uid: str) -> T | None:
        entry = self._entries.pop(uid, None)
        if entry is None:
            return None
        item: T = entry[3]
        self._kill(entry)
        return item

    def peek(self) -> T | None:
        heap = self._heap
        while heap and heap[0][3] is None:
            heapq.heappop(heap)
            self._dead -= 1
        return heap[0][3] if heap else None

    def pop(self) -> T | None:
        if self.peek() is None:
            return None
        entry = heapq.heappop(self._heap)
        del self._entries[entry[2]]
        item: T = entry[3]
        return item

    def items(self) -> Iterator[T]:
        for entry in self._entries.values():
            yield entry[3]

    def _kill(self, entry: list[Any]) -> None:
        entry[3] = None
        self._dead += 1
        if self._dead > _COMPACT_MIN and self._dead > len(self._entries):
            self._heap = [e for e in self._heap if e[3] is not None]
            heapq.heapify(self._heap)
            self._dead = 0
