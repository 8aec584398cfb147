"""InterPodAffinity's PreFilter and Filter (kube-scheduler interpodaffinity/filtering.go, with the
InterPodAffinityHostnameFastPath gate off, its default in v1.37).

PreFilter counts, per topology pair (label key, value), the existing pods whose required
anti-affinity the incoming pod violates, and the existing pods that match the incoming pod's
required affinity (all terms at once) and anti-affinity terms; Filter then checks a node in
O(terms + labels), or a whole column of nodes with one lookup table per topology key.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from kubesched.framework.interface import Bools, Rows
from kubesched.framework.snapshot import I64, Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity.counts import Matching, PairCounts
from kubesched.plugins.inter_pod_affinity.terms import (
    AffinityTerm,
    IncomingTerm,
    NamespaceLister,
    TermCache,
    matches_all,
)

NAME = "InterPodAffinity"
PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
REJECTED_AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
REJECTED_ANTI_AFFINITY = Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
REJECTED_EXISTING = Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
NO_STATE = Status(Code.ERROR, f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')

Pair = tuple[str, str]
Counts = dict[Pair, int]
# The keys_per_row memo of the distinct required anti-affinity terms of the existing pods.
EXISTING_TERMS = ("InterPodAffinity", "existing-anti-affinity-terms")


def _update(counts: Counts, labels: Mapping[str, str], key: str, value: int) -> None:
    """topologyToMatchedTermCount.update: add value at the node's pair; drop a pair down to zero."""
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


class PreFilterState:
    """What PreFilter computes for Filter (kube-scheduler's preFilterState). The three counts are
    PairCounts: columns for the batch filter, a dict of pairs for the per-node paths."""

    __slots__ = ("_affinity", "_anti_affinity", "_existing", "affinity_terms", "anti_affinity_terms",
                 "namespace_labels", "pod", "self_match", "terms")

    def __init__(self, pod: Pod, affinity_terms: tuple[IncomingTerm, ...],
                 anti_affinity_terms: tuple[IncomingTerm, ...], namespace_labels: Mapping[str, str] | None,
                 terms: TermCache, snapshot: Snapshot | None = None) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.terms = terms
        self._existing = PairCounts(snapshot)
        self._affinity = PairCounts(snapshot)
        self._anti_affinity = PairCounts(snapshot)
        # The first pod of a self-affine group: the pod matches all its own affinity terms.
        self.self_match = matches_all(affinity_terms, pod)

    @property
    def existing_anti_affinity_counts(self) -> Counts:
        return self._existing.as_dict()

    @property
    def affinity_counts(self) -> Counts:
        return self._affinity.as_dict()

    @property
    def anti_affinity_counts(self) -> Counts:
        return self._anti_affinity.as_dict()

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.terms = self.terms
        c.self_match = self.self_match
        c._existing = PairCounts(pairs=self._existing.as_dict())
        c._affinity = PairCounts(pairs=self._affinity.as_dict())
        c._anti_affinity = PairCounts(pairs=self._anti_affinity.as_dict())
        return c

    def update_with_pod(self, other: PodInfo, node: NodeInfo, multiplier: int) -> None:
        """Count (multiplier 1) or uncount (-1) a pod on node, as if it were added or removed."""
        labels = node.labels
        p = other.pod
        for t in self.terms.of(p).required_anti_affinity:
            if t.matches(self.pod, self.namespace_labels):
                _update(self.existing_anti_affinity_counts, labels, t.topology_key, multiplier)
        if matches_all(self.affinity_terms, p):
            for it in self.affinity_terms:
                _update(self.affinity_counts, labels, it.topology_key, multiplier)
        for it in self.anti_affinity_terms:
            if it.matches(p):
                _update(self.anti_affinity_counts, labels, it.topology_key, multiplier)


def _required_anti_affinity_terms(terms: TermCache) -> Callable[[PodInfo], tuple[AffinityTerm, ...]]:
    def of(pi: PodInfo) -> tuple[AffinityTerm, ...]:
        return terms.of(pi.pod).required_anti_affinity
    return of


def _pods_with_required_anti_affinity(ni: NodeInfo) -> Iterable[PodInfo]:
    return ni.pods_with_required_anti_affinity.values()


def _pods_with_term(terms: TermCache, term: AffinityTerm) -> tuple[Callable[[NodeInfo], int], Callable[[PodInfo], int]]:
    """Per node, and per pod: how often the term is among the pods' required anti-affinity terms."""
    def count_pod(other: PodInfo) -> int:
        return terms.of(other.pod).required_anti_affinity.count(term)

    def count(ni: NodeInfo) -> int:
        return sum(count_pod(other) for other in ni.pods_with_required_anti_affinity.values())
    return count, count_pod


def compute_pre_filter(pod: PodInfo, snapshot: Snapshot, terms: TermCache,
                       namespaces: NamespaceLister) -> tuple[PreFilterState | None, Status | None]:
    own = terms.of(pod.pod)
    if own.error is not None:
        return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {own.error}")
    incoming = pod.pod
    affinity = tuple(terms.incoming(t, namespaces) for t in own.required_affinity)
    anti = tuple(terms.incoming(t, namespaces) for t in own.required_anti_affinity)
    ns_labels = namespaces.labels_of(incoming.metadata.namespace)
    s = PreFilterState(incoming, affinity, anti, ns_labels, terms, snapshot)

    # Existing pods' required anti-affinity: each distinct term of the cluster matched once against
    # the incoming pod, and counted per node by the snapshot's memo.
    if snapshot.with_required_anti_affinity:
        distinct = snapshot.keys_per_row(EXISTING_TERMS, _required_anti_affinity_terms(terms),
                                         _pods_with_required_anti_affinity)
        labels = frozenset(incoming.metadata.labels.items())
        for term in distinct:
            if isinstance(term, AffinityTerm) and terms.matches(term, incoming, ns_labels, labels):
                count, count_pod = _pods_with_term(terms, term)
                memo = ("InterPodAffinity", "existing-anti-affinity", term)
                sums = snapshot.sums_by_label(memo, count, term.topology_key, count_pod,
                                              functools.partial(snapshot.key_counts, EXISTING_TERMS, term))
                s._existing.add_sums(term.topology_key, sums, total=snapshot.sums_total(memo, term.topology_key))

    if affinity:
        matching = Matching(snapshot, "affinity", affinity, lambda p: matches_all(affinity, p), terms.counters)
        for it in affinity:
            key = it.topology_key
            s._affinity.add_sums(key, matching.sums(key), total=matching.total(key))
    for it in anti:
        matching = Matching(snapshot, "anti-affinity", (it,), it.matches, terms.counters)
        key = it.topology_key
        s._anti_affinity.add_sums(key, matching.sums(key), total=matching.total(key))

    if not s._existing and not affinity and not anti:
        return None, SKIP
    return s, None


# --- Filter, one node -------------------------------------------------------------------------------

def _satisfies_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """nodeTopologyMatchesAffinity (with satisfiesSelfAffinityCheck)."""
    if not s.affinity_terms:
        return True
    pods_exist = True
    counts = s.affinity_counts
    for t in s.affinity_terms:
        tv = labels.get(t.topology_key)
        if tv is None:
            # every topology label must be on the node, for self-affinity too
            return False
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        return not counts and s.self_match
    return True


def _violates_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if not counts:
        return False
    for t in s.anti_affinity_terms:
        tv = labels.get(t.topology_key)
        if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
            return True
    return False


def _violates_existing(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if not counts:
        return False
    return any(counts.get(pair, 0) > 0 for pair in labels.items())


def filter_node(s: PreFilterState, node: NodeInfo) -> Status | None:
    labels = node.labels
    if not _satisfies_affinity(s, labels):
        return REJECTED_AFFINITY
    if _violates_anti_affinity(s, labels):
        return REJECTED_ANTI_AFFINITY
    if _violates_existing(s, labels):
        return REJECTED_EXISTING
    return None


# --- Filter, a column of nodes ---------------------------------------------------------------------------

def _in_values(snapshot: Snapshot, rows: Rows, key: str, lut: Bools) -> tuple[Bools, Bools]:
    """(has the key, its value's entry in lut) for each row; lut by label code, last entry code -1."""
    column = snapshot.label_codes.get(key)
    if column is None:
        none = np.zeros(len(rows), dtype=np.bool_)
        return none, none
    codes = snapshot.take(column, rows)
    return codes >= 0, lut.take(codes)


def filter_mask(s: PreFilterState, snapshot: Snapshot, rows: Rows) -> Bools | None:
    ok: Bools | None = None
    if s.affinity_terms:
        all_keys = np.ones(len(rows), dtype=np.bool_)
        all_exist = np.ones(len(rows), dtype=np.bool_)
        for t in s.affinity_terms:
            has, hit = _in_values(snapshot, rows, t.topology_key, s._affinity.positive(snapshot, t.topology_key))
            all_keys &= has
            all_exist &= hit
        ok = all_keys if not s._affinity and s.self_match else all_keys & all_exist
    # The anti-affinity terms and the existing pods' terms reject a node alike: one table of the
    # values they forbid per topology key (their counts added first), one lookup per key.
    forbidden: dict[str, Bools] = {}
    counted: dict[str, list[I64]] = {}
    for counts, keys in ((s._anti_affinity, [t.topology_key for t in s.anti_affinity_terms]), (s._existing, None)):
        if not counts:
            continue
        columns = counts.columns()
        if columns is not None:
            for key, sums in columns.items():
                counted.setdefault(key, []).append(sums)
            continue
        for key in keys if keys is not None else sorted({k for k, _ in counts.as_dict()}):
            _forbid(forbidden, key, counts.positive(snapshot, key))
    for key, arrays in counted.items():
        total = arrays[0] if len(arrays) == 1 else sum(arrays[1:], arrays[0])
        lut = np.zeros(len(snapshot.label_values.get(key, ())) + 1, dtype=np.bool_)
        np.greater(total, 0, out=lut[:len(total)])  # the last entry, False, answers code -1
        _forbid(forbidden, key, lut)
    for key, lut in forbidden.items():
        column = snapshot.label_codes.get(key)
        if column is None:
            continue
        allowed = lut.take(snapshot.take(column, rows))
        np.logical_not(allowed, out=allowed)
        ok = allowed if ok is None else np.logical_and(ok, allowed, out=ok)
    return None if ok is None or np.count_nonzero(ok) == len(ok) else ok


def _forbid(forbidden: dict[str, Bools], key: str, lut: Bools) -> None:
    found = forbidden.get(key)
    forbidden[key] = lut if found is None else found | lut
