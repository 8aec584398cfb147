"""InterPodAffinity's PreScore, Score and NormalizeScore (kube-scheduler interpodaffinity/scoring.go).

PreScore covers every node of the snapshot (not only the feasible ones, as kube-scheduler's shared
lister does) and sums, per topology key and value, the weights of the terms that match: the
incoming pod's preferred (anti-)affinity against existing pods, and existing pods' required
affinity (times hardPodAffinityWeight) and preferred (anti-)affinity against the incoming pod. The
pods each term matches are counted per node by the snapshot's memos, each distinct existing term
matched once (counts.py), so a cycle does not walk the pods of the cluster.
Score adds up the node's entries; NormalizeScore scales min..max to 0..100.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import cast

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE, Rows, Scores
from kubesched.framework.snapshot import I64, Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity.counts import Matching, PairCounts
from kubesched.plugins.inter_pod_affinity.terms import (
    AffinityTerm,
    NamespaceLister,
    TermCache,
)

NAME = "InterPodAffinity"
PRE_SCORE_KEY = "PreScore" + NAME

ScoreMap = dict[str, dict[str, int]]  # topology key -> value -> score


class PreScoreState:
    """topology key -> score per label code of the snapshot (scoreMap), a dict only when asked."""

    __slots__ = ("_map", "columns", "snapshot")

    def __init__(self, columns: dict[str, I64], snapshot: Snapshot) -> None:
        self.columns = columns
        self.snapshot = snapshot
        self._map: ScoreMap | None = None

    @property
    def topology_score(self) -> ScoreMap:
        if self._map is None:
            values = self.snapshot.label_values
            self._map = {key: {values[key][c]: int(sums[c]) for c in np.flatnonzero(sums).tolist()}
                         for key, sums in self.columns.items()}
        return self._map


def _has_preferred(pod: Pod) -> bool:
    aff = pod.spec.affinity
    if aff is None:
        return False
    return bool((aff.pod_affinity is not None and aff.pod_affinity.preferred)
                or (aff.pod_anti_affinity is not None and aff.pod_anti_affinity.preferred))


# An existing pod's term that scores: (term, "required" | "preferred", weight); a required term's
# weight is hardPodAffinityWeight, applied at the cycle.
ScoringTerm = tuple[AffinityTerm, str, int]
# The keys_per_row memo of the distinct scoring terms of the existing pods.
SCORING_TERMS = ("InterPodAffinity", "existing-scoring-terms")


def _occurrences(terms: TermCache, wanted: ScoringTerm) -> tuple[Callable[[NodeInfo], int], Callable[[PodInfo], int]]:
    """Per node, and per pod: how often the pods hold the scoring term."""
    def count_pod(other: PodInfo) -> int:
        return existing_scoring_terms_of(terms, other.pod).count(wanted)

    def count(ni: NodeInfo) -> int:
        return sum(count_pod(other) for other in ni.pods_with_affinity.values())
    return count, count_pod


def _pods_with_affinity(ni: NodeInfo) -> Iterable[PodInfo]:
    return ni.pods_with_affinity.values()


def existing_scoring_terms_of(terms: TermCache, pod: Pod) -> list[ScoringTerm]:
    theirs = terms.of(pod)
    if not (theirs.required_affinity or theirs.preferred_affinity or theirs.preferred_anti_affinity):
        return []  # most pods with terms have required anti-affinity only, which scores nothing
    out: list[ScoringTerm] = [(t, "required", 0) for t in theirs.required_affinity]
    out += [(w.term, "preferred", w.weight) for w in theirs.preferred_affinity]
    out += [(w.term, "preferred", -w.weight) for w in theirs.preferred_anti_affinity]
    return out


def compute_pre_score(pod: PodInfo, snapshot: Snapshot, terms: TermCache, namespaces: NamespaceLister,
                      hard_pod_affinity_weight: int,
                      ignore_preferred_terms_of_existing_pods: bool) -> tuple[PreScoreState | None, Status | None]:
    incoming = pod.pod
    has_constraints = _has_preferred(incoming)
    if ignore_preferred_terms_of_existing_pods and not has_constraints:
        return None, SKIP
    own = terms.of(incoming)
    if own.error is not None:
        return None, Status(Code.ERROR, f"failed to parse pod: {own.error}")
    ns_labels = namespaces.labels_of(incoming.metadata.namespace)
    counts = PairCounts(snapshot)
    touched = False
    # The incoming pod's preferred terms against every existing pod.
    preferred = [(terms.incoming(w.term, namespaces), w.weight) for w in own.preferred_affinity]
    preferred += [(terms.incoming(w.term, namespaces), -w.weight) for w in own.preferred_anti_affinity]
    for it, weight in preferred:
        sums = Matching(snapshot, "preferred", (it,), it.matches, terms.counters).sums(it.topology_key)
        touched |= counts.add_sums(it.topology_key, sums, weight)
    # Existing pods' terms against the incoming pod: each distinct term matched once.
    if snapshot.with_affinity:
        distinct = snapshot.keys_per_row(SCORING_TERMS, lambda pi: existing_scoring_terms_of(terms, pi.pod),
                                         _pods_with_affinity)
        for found in distinct:
            term, kind, weight = cast(ScoringTerm, found)
            if kind == "required":
                if hard_pod_affinity_weight <= 0:
                    continue
                weight = hard_pod_affinity_weight
            if term.matches(incoming, ns_labels):
                count, count_pod = _occurrences(terms, cast(ScoringTerm, found))
                sums = snapshot.sums_by_label(("InterPodAffinity", "existing-scoring", found),
                                              count, term.topology_key, count_pod,
                                              functools.partial(snapshot.key_counts, SCORING_TERMS, found))
                touched |= counts.add_sums(term.topology_key, sums, weight)
    if not touched:
        return None, SKIP
    columns = counts.columns()
    return PreScoreState(columns if columns is not None else {}, snapshot), None


def score_node(s: PreScoreState | None, node: NodeInfo) -> int:
    if s is None:
        return 0
    labels = node.labels
    total = 0
    for key, values in s.topology_score.items():
        tv = labels.get(key)
        if tv is not None:
            total += values.get(tv, 0)
    return total


def score_rows(s: PreScoreState | None, snapshot: Snapshot, rows: Rows) -> Scores:
    total = np.zeros(len(rows), dtype=np.int64)
    if s is None:
        return total
    for key, sums in s.columns.items():
        column = snapshot.label_codes.get(key)
        if column is None:
            continue
        lut = np.zeros(len(snapshot.label_values[key]) + 1, dtype=np.int64)  # the last entry: code -1
        lut[:len(sums)] = sums
        total += lut.take(snapshot.take(column, rows))
    return total


def normalize(s: PreScoreState | None, scores: Scores) -> Scores:
    """min..max to 0..MaxNodeScore, as float64 then truncated (kube-scheduler's NormalizeScore)."""
    if s is None or not s.topology_score or len(scores) == 0:
        return scores
    lo, hi = int(scores.min()), int(scores.max())
    diff = hi - lo
    if diff <= 0:
        return np.zeros(len(scores), dtype=np.int64)
    scaled = float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))
    return scaled.astype(np.int64)
