"""InterPodAffinity's PreFilter and Filter (kube-scheduler interpodaffinity/filtering.go, with the
InterPodAffinityHostnameFastPath gate off, its default in v1.37).

PreFilter counts, per topology pair (label key, value), the existing pods whose required
anti-affinity the incoming pod violates, and the existing pods that match the incoming pod's
required affinity (all terms at once) and anti-affinity terms; Filter then checks a node in
O(terms + labels), or a whole column of nodes with one lookup table per topology key.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kubesched.framework.interface import Bools, Rows
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity.terms import (
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
    """What PreFilter computes for Filter (kube-scheduler's preFilterState)."""

    __slots__ = ("affinity_counts", "affinity_terms", "anti_affinity_counts", "anti_affinity_terms",
                 "existing_anti_affinity_counts", "namespace_labels", "pod", "self_match", "terms")

    def __init__(self, pod: Pod, affinity_terms: tuple[IncomingTerm, ...],
                 anti_affinity_terms: tuple[IncomingTerm, ...], namespace_labels: Mapping[str, str] | None,
                 terms: TermCache) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.terms = terms
        self.existing_anti_affinity_counts: Counts = {}
        self.affinity_counts: Counts = {}
        self.anti_affinity_counts: Counts = {}
        # The first pod of a self-affine group: the pod matches all its own affinity terms.
        self.self_match = matches_all(affinity_terms, pod)

    def clone(self) -> PreFilterState:
        c = PreFilterState.__new__(PreFilterState)
        c.pod = self.pod
        c.affinity_terms = self.affinity_terms
        c.anti_affinity_terms = self.anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.terms = self.terms
        c.self_match = self.self_match
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
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


def compute_pre_filter(pod: PodInfo, snapshot: Snapshot, terms: TermCache,
                       namespaces: NamespaceLister) -> tuple[PreFilterState | None, Status | None]:
    own = terms.of(pod.pod)
    if own.error is not None:
        return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"parsing pod: {own.error}")
    incoming = pod.pod
    affinity = tuple(IncomingTerm(t, namespaces) for t in own.required_affinity)
    anti = tuple(IncomingTerm(t, namespaces) for t in own.required_anti_affinity)
    ns_labels = namespaces.labels_of(incoming.metadata.namespace)
    s = PreFilterState(incoming, affinity, anti, ns_labels, terms)

    existing = s.existing_anti_affinity_counts
    for ni in snapshot.nodes_with_required_anti_affinity():
        labels = ni.labels
        for other in ni.pods_with_required_anti_affinity.values():
            for t in terms.of(other.pod).required_anti_affinity:
                if t.matches(incoming, ns_labels):
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        existing[pair] = existing.get(pair, 0) + 1

    if affinity or anti:
        aff_counts, anti_counts = s.affinity_counts, s.anti_affinity_counts
        for ni in snapshot.node_infos:
            labels = ni.labels
            for other in ni.pods.values():
                p = other.pod
                if affinity and matches_all(affinity, p):
                    for it in affinity:
                        tv = labels.get(it.topology_key)
                        if tv is not None:
                            pair = (it.topology_key, tv)
                            aff_counts[pair] = aff_counts.get(pair, 0) + 1
                for it in anti:
                    if it.matches(p):
                        tv = labels.get(it.topology_key)
                        if tv is not None:
                            pair = (it.topology_key, tv)
                            anti_counts[pair] = anti_counts.get(pair, 0) + 1

    if not existing and not affinity and not anti:
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

def _positive_by_key(counts: Counts) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for (key, value), n in counts.items():
        if n > 0:
            out.setdefault(key, set()).add(value)
    return out


def _in_values(snapshot: Snapshot, rows: Rows, key: str, values: set[str] | None) -> tuple[Bools, Bools]:
    """(has the key, its value is one of values) for each row."""
    column = snapshot.label_codes.get(key)
    if column is None:
        none = np.zeros(len(rows), dtype=np.bool_)
        return none, none
    codes = snapshot.take(column, rows)
    lut = np.zeros(len(snapshot.label_values[key]) + 1, dtype=np.bool_)  # the last entry: code -1
    if values:
        for i, v in enumerate(snapshot.label_values[key]):
            if v in values:
                lut[i] = True
    return codes >= 0, lut[codes]


def filter_mask(s: PreFilterState, snapshot: Snapshot, rows: Rows) -> Bools | None:
    ok = np.ones(len(rows), dtype=np.bool_)
    if s.affinity_terms:
        positive = _positive_by_key(s.affinity_counts)
        all_keys = np.ones(len(rows), dtype=np.bool_)
        all_exist = np.ones(len(rows), dtype=np.bool_)
        for t in s.affinity_terms:
            has, hit = _in_values(snapshot, rows, t.topology_key, positive.get(t.topology_key))
            all_keys &= has
            all_exist &= hit
        if not s.affinity_counts and s.self_match:
            ok &= all_keys
        else:
            ok &= all_keys & all_exist
    if s.anti_affinity_counts:
        positive = _positive_by_key(s.anti_affinity_counts)
        for t in s.anti_affinity_terms:
            _, hit = _in_values(snapshot, rows, t.topology_key, positive.get(t.topology_key))
            ok &= ~hit
    if s.existing_anti_affinity_counts:
        for key, values in _positive_by_key(s.existing_anti_affinity_counts).items():
            _, hit = _in_values(snapshot, rows, key, values)
            ok &= ~hit
    return None if ok.all() else ok
