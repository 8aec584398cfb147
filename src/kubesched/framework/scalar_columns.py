"""The snapshot's columns of scalar resources (extended resources, hugepages, attachable volumes).

Kept sparse, each name a map of the rows that have it to their amount, because a cluster may have
thousands of names: scheduler_perf's SchedulingWithExtendedResource gives each of its 5,000 nodes
a resource of its own, and one dense int64 column per name made 5,000 x 5,000 x 8 bytes for the
allocatable side and as much for the requested one (kubesched's RSS 530 MB against kube-scheduler's
261 MB), and every node update walked every column. A cycle reads a name as a dense column, made
when first asked for and then kept up to date in place while it is among the last KEPT names asked.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from kubesched.model.quantity import saturate_int64

I64 = npt.NDArray[np.int64]

# Dense columns kept: a pod asks for a few scalar names, so this holds every name a burst of
# different pods asks for; past it, the least recently asked is made again when next asked.
KEPT = 64


class ScalarColumns:
    def __init__(self, n: int) -> None:
        self.n = n
        # name -> row -> amount (rows with 0 left out); a name once seen stays, so a column that
        # has been non-zero somewhere reads as zeros, not as absent (None), as a dense one did.
        self._rows: dict[str, dict[int, int]] = {}
        self._by_row: dict[int, tuple[str, ...]] = {}
        self._dense: OrderedDict[str, I64] = OrderedDict()

    def set_row(self, i: int, amounts: Mapping[str, int]) -> None:
        """Row i's amounts are now `amounts`: names it had before and lacks now read 0 there."""
        for name in self._by_row.get(i, ()):
            if name not in amounts:
                self._put(name, i, 0)
        for name, v in amounts.items():
            self._put(name, i, saturate_int64(v))
        if amounts:
            self._by_row[i] = tuple(amounts)
        else:
            self._by_row.pop(i, None)

    def _put(self, name: str, i: int, v: int) -> None:
        rows = self._rows.get(name)
        if rows is None:
            rows = self._rows[name] = {}
        if v:
            rows[i] = v
        else:
            rows.pop(i, None)
        col = self._dense.get(name)
        if col is not None:
            col[i] = v

    def column(self, name: str) -> I64 | None:
        """The amounts of every row, or None when no node has ever had the name."""
        col = self._dense.get(name)
        if col is not None:
            self._dense.move_to_end(name)
            return col
        rows = self._rows.get(name)
        if rows is None:
            return None
        col = np.zeros(self.n, np.int64)
        if rows:
            col[np.fromiter(rows.keys(), np.intp, len(rows))] = np.fromiter(rows.values(), np.int64, len(rows))
        self._dense[name] = col
        if len(self._dense) > KEPT:
            self._dense.popitem(last=False)
        return col
