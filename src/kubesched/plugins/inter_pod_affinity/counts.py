"""Counts per topology pair (label key, value), built on columns.

kube-scheduler's topologyToMatchedTermCount walks every pod with affinity each cycle. Here the
pods each term matches are counted per node by the snapshot's memos (recounted only on the nodes
whose pods changed), summed per label code with one bincount, and turned into a dict of pairs only
when a per-node path (Filter on one node, AddPod/RemovePod, explain) asks for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable

import numpy as np

from kubesched.framework.interface import Bools
from kubesched.framework.snapshot import I64, Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity.terms import IncomingTerm

Pair = tuple[str, str]


class PairCounts:
    """(key, value) -> count, as columns by label code until `as_dict` is asked for."""

    __slots__ = ("_by_key", "_dict", "_mixed", "_snapshot")

    def __init__(self, snapshot: Snapshot | None = None, pairs: dict[Pair, int] | None = None) -> None:
        """Columns over snapshot's label codes, or (no snapshot) the given pairs as a dict."""
        self._snapshot = snapshot
        self._by_key: dict[str, I64] = {}
        self._dict: dict[Pair, int] | None = None if snapshot is not None else dict(pairs or {})
        # Counts are never negative: with positive weights only, a column held is non-zero.
        self._mixed = False

    def add_sums(self, key: str, sums: I64 | None, weight: int = 1, total: int | None = None) -> bool:
        """Add weight * sums[code] at each value of key (sums by label code, as
        Snapshot.sums_by_label makes them; None: no node has the key; total: their sum, when
        known, for sums never negative); whether any value had a non-zero count (kube-scheduler
        then holds the pair, even if weights cancel out). The sums are the snapshot's, never
        changed here, and held by reference with a weight of 1: the snapshot does not change
        during a scheduling cycle, which is as long as a PreFilter or PreScore state lives."""
        if self._snapshot is None or self._dict is not None:
            raise RuntimeError("PairCounts.add_sums: built without a snapshot, or already a dict")
        if sums is None or not (total if total is not None else np.count_nonzero(sums)):
            return False
        weighted = sums if weight == 1 else sums * weight
        if weight < 0:
            self._mixed = True
        found = self._by_key.get(key)
        self._by_key[key] = weighted if found is None else found + weighted
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
        if not self._mixed:
            return bool(self._by_key)
        return any(np.count_nonzero(sums) > 0 for sums in self._by_key.values())

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


def _zeros_unless_labelled(snapshot: Snapshot, terms: tuple[IncomingTerm, ...]) -> I64 | None:
    """A memo's initial values: zeros when a term (all must match) of listed namespaces requires
    label values no pod of those namespaces carries."""
    for t in terms:
        if not t.selects_listed_namespaces_only() or not t.namespaces:
            continue
        if t.selector.nothing or snapshot.no_pod_matches(t.namespaces, t.selector.set_pairs()):
            return np.zeros(snapshot.n, np.int64)
    return None


class _Counters:
    """What counts the pods some incoming terms accept: per node, per pod, and the memo key."""

    __slots__ = ("count", "count_pod", "key")

    def __init__(self, tag: str, terms: tuple[IncomingTerm, ...], matches: Callable[[Pod], bool]) -> None:
        keys = [memo_key(t) for t in terms]

        def count(ni: NodeInfo) -> int:
            return sum(1 for pi in ni.pods.values() if matches(pi.pod)) if ni.pods else 0

        def count_pod(pi: PodInfo) -> int:
            return 1 if matches(pi.pod) else 0

        self.count = count
        self.count_pod = count_pod
        self.key: Hashable | None = None if any(k is None for k in keys) else ("InterPodAffinity", tag, tuple(keys))


class Matching:
    """The pods the incoming pod's terms accept, per snapshot row, memoised per node when the
    terms allow it; summed per value of a topology key on demand. `counters`: where the counting
    functions of terms shared across cycles are kept (TermCache.counters)."""

    __slots__ = ("_counters", "_per_node", "_snapshot", "_terms")

    def __init__(self, snapshot: Snapshot, tag: str, terms: tuple[IncomingTerm, ...],
                 matches: Callable[[Pod], bool], counters: dict[Hashable, object] | None = None) -> None:
        found = counters.get((tag, terms)) if counters is not None else None
        if not isinstance(found, _Counters):
            found = _Counters(tag, terms, matches)
            if counters is not None and found.key is not None:
                counters[(tag, terms)] = found
        self._counters = found
        self._snapshot = snapshot
        self._terms = terms
        self._per_node: I64 | None = None

    def total(self, label: str) -> int | None:
        """The total of what sums(label) returned, when the snapshot keeps it (else None)."""
        key = self._counters.key
        return self._snapshot.sums_total(key, label) if key is not None else None

    def sums(self, label: str) -> I64 | None:
        """Per code of label: the matching pods on the nodes with that value (None: no node has it)."""
        snapshot = self._snapshot
        c = self._counters
        if c.key is not None:
            return snapshot.sums_by_label(c.key, c.count, label, c.count_pod,
                                          functools.partial(_zeros_unless_labelled, snapshot, self._terms))
        column = snapshot.label_codes.get(label)
        if column is None:
            return None
        if self._per_node is None:
            self._per_node = np.fromiter((c.count(ni) for ni in snapshot.node_infos), dtype=np.int64,
                                         count=snapshot.n)
        size = len(snapshot.label_values[label])
        return np.bincount(column + 1, weights=self._per_node, minlength=size + 1)[1:].astype(np.int64)

