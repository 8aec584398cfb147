"""Counts per topology pair (label key, value), built on columns.

kube-scheduler's topologyToMatchedTermCount walks every pod with affinity each cycle. Here the
pods each term matches are counted per node by the snapshot's memos (recounted only on the nodes
whose pods changed), summed per label code with one bincount, and turned into a dict of pairs only
when a per-node path (Filter on one node, AddPod/RemovePod, explain) asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from kubesched.framework.interface import Bools
from kubesched.framework.snapshot import I64, Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity.terms import IncomingTerm

Pair = tuple[str, str]


class PairCounts:
    """(key, value) -> count, as columns by label code until `as_dict` is asked for."""

    __slots__ = ("_by_key", "_dict", "_snapshot")

    def __init__(self, snapshot: Snapshot | None = None, pairs: dict[Pair, int] | None = None) -> None:
        """Columns over snapshot's label codes, or (no snapshot) the given pairs as a dict."""
        self._snapshot = snapshot
        self._by_key: dict[str, I64] = {}
        self._dict: dict[Pair, int] | None = None if snapshot is not None else dict(pairs or {})

    def add_column(self, key: str, per_node: I64, weight: int = 1) -> bool:
        """Add weight * per_node[row] at each row's value of key; whether any row with the key had
        a non-zero count (kube-scheduler then holds the pair, even if weights cancel out)."""
        snapshot = self._snapshot
        if snapshot is None or self._dict is not None:
            raise RuntimeError("PairCounts.add_column: built without a snapshot, or already a dict")
        column = snapshot.label_codes.get(key)
        if column is None:
            return False
        # Shifted by one so the nodes without the key (code -1) land in bin 0, dropped.
        size = len(snapshot.label_values[key])
        sums = np.bincount(column + 1, weights=per_node, minlength=size + 1)[1:].astype(np.int64)
        if not sums.any():
            return False
        if weight != 1:
            sums *= weight
        found = self._by_key.get(key)
        self._by_key[key] = sums if found is None else found + sums
        return True

    def as_dict(self) -> dict[Pair, int]:
        """The pairs with a non-zero count, as a dict the caller may change (the columns are dropped)."""
        if self._dict is None:
            values = self._snapshot.label_values if self._snapshot is not None else {}
            out: dict[Pair, int] = {}
            for key, sums in self._by_key.items():
                names = values[key]
                for code in np.flatnonzero(sums).tolist():
                    out[(key, names[code])] = int(sums[code])
            self._dict = out
            self._by_key = {}
        return self._dict

    def columns(self) -> dict[str, I64] | None:
        """The counts by label code per key, or None once they became a dict."""
        return self._by_key if self._dict is None else None

    def __bool__(self) -> bool:
        if self._dict is not None:
            return bool(self._dict)
        return any(bool(sums.any()) for sums in self._by_key.values())

    def positive(self, snapshot: Snapshot, key: str) -> Bools:
        """By label code of key (plus a last False entry for code -1): whether the pair's count > 0."""
        size = len(snapshot.label_values.get(key, ()))
        out = np.zeros(size + 1, dtype=np.bool_)
        if self._dict is None:
            sums = self._by_key.get(key)
            if sums is not None:
                out[:len(sums)] = sums > 0
            return out
        for (k, value), n in self._dict.items():
            if k == key and n > 0:
                code = snapshot.label_code(key, value)
                if code >= 0:
                    out[code] = True
        return out


def memo_key(term: IncomingTerm) -> Hashable | None:
    """What identifies the pods an incoming term matches, or None when its namespaceSelector makes
    the answer depend on namespace labels (which the per-node memos would not see change)."""
    every_namespace = term.selects_every_namespace()
    if not every_namespace and not term.selects_listed_namespaces_only():
        return None
    return (term.namespaces, term.selector, every_namespace)


def matching_per_node(snapshot: Snapshot, tag: str, terms: tuple[IncomingTerm, ...],
                      matches: Callable[[Pod], bool]) -> I64:
    """Per snapshot row, the pods `matches` accepts (the incoming pod's terms), memoised per node
    when the terms allow it."""
    keys = [memo_key(t) for t in terms]

    def count(ni: NodeInfo) -> int:
        return sum(1 for pi in ni.pods.values() if matches(pi.pod)) if ni.pods else 0

    if any(k is None for k in keys):
        return np.fromiter((count(ni) for ni in snapshot.node_infos), dtype=np.int64, count=snapshot.n)
    return snapshot.per_row(("InterPodAffinity", tag, tuple(keys)), count)

