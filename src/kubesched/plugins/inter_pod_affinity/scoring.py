"""InterPodAffinity's PreScore, Score and NormalizeScore (kube-scheduler interpodaffinity/scoring.go).

PreScore walks every node of the snapshot (not only the feasible ones, as kube-scheduler's shared
lister does) and sums, per topology key and value, the weights of the terms that match: the
incoming pod's preferred (anti-)affinity against existing pods, and existing pods' required
affinity (times hardPodAffinityWeight) and preferred (anti-)affinity against the incoming pod.
Score adds up the node's entries; NormalizeScore scales min..max to 0..100.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity.terms import (
    AffinityTerm,
    IncomingTerm,
    NamespaceLister,
    TermCache,
    WeightedTerm,
)

NAME = "InterPodAffinity"
PRE_SCORE_KEY = "PreScore" + NAME

ScoreMap = dict[str, dict[str, int]]  # topology key -> value -> score


class PreScoreState:
    __slots__ = ("topology_score",)

    def __init__(self, topology_score: ScoreMap) -> None:
        self.topology_score = topology_score


def _has_preferred(pod: Pod) -> bool:
    aff = pod.spec.affinity
    if aff is None:
        return False
    return bool((aff.pod_affinity is not None and aff.pod_affinity.preferred)
                or (aff.pod_anti_affinity is not None and aff.pod_anti_affinity.preferred))


def _add(m: ScoreMap, labels: Mapping[str, str], key: str, value: int) -> None:
    tv = labels.get(key)
    if tv is not None:
        scores = m.setdefault(key, {})
        scores[tv] = scores.get(tv, 0) + value


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
    preferred = [(IncomingTerm(w.term, namespaces), w.weight) for w in own.preferred_affinity]
    preferred += [(IncomingTerm(w.term, namespaces), -w.weight) for w in own.preferred_anti_affinity]
    ns_labels = namespaces.labels_of(incoming.metadata.namespace)

    def existing_terms(t: AffinityTerm | WeightedTerm, weight: int, labels: Mapping[str, str]) -> None:
        term = t.term if isinstance(t, WeightedTerm) else t
        if term.matches(incoming, ns_labels):
            _add(topology_score, labels, term.topology_key, weight)

    topology_score: ScoreMap = {}
    # Unless the pod has preferred terms, only nodes holding pods with affinity can score.
    for ni in snapshot.node_infos if has_constraints else snapshot.nodes_with_affinity():
        labels = ni.labels
        if not labels:
            continue
        pods = ni.pods if has_constraints else ni.pods_with_affinity
        for other in pods.values():
            p = other.pod
            for it, weight in preferred:
                if it.matches(p):
                    _add(topology_score, labels, it.topology_key, weight)
            theirs = terms.of(p)
            if hard_pod_affinity_weight > 0:
                for t in theirs.required_affinity:
                    existing_terms(t, hard_pod_affinity_weight, labels)
            for w in theirs.preferred_affinity:
                existing_terms(w, w.weight, labels)
            for w in theirs.preferred_anti_affinity:
                existing_terms(w, -w.weight, labels)
    if not topology_score:
        return None, SKIP
    return PreScoreState(topology_score), None


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
    for key, values in s.topology_score.items():
        column = snapshot.label_codes.get(key)
        if column is None:
            continue
        lut = np.array([values.get(v, 0) for v in snapshot.label_values[key]] + [0], dtype=np.int64)
        total += lut[snapshot.take(column, rows)]
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
