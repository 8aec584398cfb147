"""Values a plugin computes per node from the snapshot's columns alone (a score, whether the pod
fits), kept between cycles for the pods that ask alike.

A Deployment's pods ask for the same resources, so their resource scores and fit on a node change
only when that node's pods or the node itself change: one or two rows a cycle. Kept under a key
naming what the values depend on, besides the rows, they are recomputed for those rows only,
with the same vectorised function over the changed rows, so the values are the same numbers.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

Rows = npt.NDArray[np.intp]
_A = TypeVar("_A", bound=np.ndarray[Any, Any])

# Keys kept (least recently used dropped), and keys seen once (not kept until seen again).
MAX_KEPT = 256
MAX_SEEN = 1024
# What a compute may raise for a row its caller would never ask about (an overcommitted node):
# the values are then not kept, and only the rows asked for are computed, as without keeping.
_OUT_OF_DOMAIN = (ArithmeticError, IndexError, ValueError)
# Changed rows recomputed one by one at most (a numpy call costs about as much as a row in Python).
FEW_ROWS = 16


class _Kept:
    __slots__ = ("epoch", "values")

    def __init__(self, values: np.ndarray[Any, Any], epoch: int) -> None:
        self.values = values
        self.epoch = epoch


class RowValues:
    """The kept values of one snapshot (rows fixed: a node added or removed makes a new snapshot)."""

    def __init__(self, all_rows: Rows) -> None:
        self.n = len(all_rows)
        self.all_rows = all_rows
        # The rows whose pods or node changed, in order, since epoch _log_base; cut when long.
        self._log: list[int] = []
        self._log_base = 0
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        self._seen: OrderedDict[Hashable, None] = OrderedDict()

    def changed(self, i: int) -> None:
        log = self._log
        log.append(i)
        if len(log) > 4 * self.n + 64:
            self._log_base += len(log)
            log.clear()

    def values(self, key: Hashable, compute: Callable[[Rows], _A], rows: Rows,
               compute_row: Callable[[int], Any] | None = None) -> _A:
        """compute(rows), a function of the rows' columns and of what key names. A key asked for
        the first time computes just `rows`; from the second time, the values of every row are
        kept and only the rows changed since are computed again, one by one with compute_row
        (the same value for one row, without numpy's cost per call) when they are few. Returns a
        new array."""
        epoch = self._log_base + len(self._log)
        kept = self._kept.get(key)
        if kept is None:
            if key not in self._seen:
                self._seen[key] = None
                if len(self._seen) > MAX_SEEN:
                    self._seen.popitem(last=False)
                return compute(rows)
            try:
                kept = self._kept[key] = _Kept(compute(self.all_rows), epoch)
            except _OUT_OF_DOMAIN:
                return compute(rows)
            if len(self._kept) > MAX_KEPT:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(key)
            if kept.epoch != epoch:
                try:
                    self._catch_up(kept, compute, compute_row)
                except _OUT_OF_DOMAIN:
                    del self._kept[key]
                    return compute(rows)
                kept.epoch = epoch
        values = kept.values
        return cast(_A, values.copy() if rows is self.all_rows else values[rows])

    def _catch_up(self, kept: _Kept, compute: Callable[[Rows], Any], compute_row: Callable[[int], Any] | None) -> None:
        start = kept.epoch - self._log_base
        if start < 0:
            kept.values = compute(self.all_rows)
        elif compute_row is not None and len(self._log) - start <= FEW_ROWS:
            values = kept.values
            for i in dict.fromkeys(self._log[start:]):
                values[i] = compute_row(i)
        else:
            changed = np.fromiter(dict.fromkeys(self._log[start:]), dtype=np.intp)
            kept.values[changed] = compute(changed)
