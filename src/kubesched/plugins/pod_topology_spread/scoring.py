"""PodTopologySpread's soft constraints (kube-scheduler podtopologyspread/scoring.go).

PreScore sizes each constraint's domains over the filtered nodes (its weight is log(size + 2)) and
counts matching pods per topology value over all nodes; hostname counts are the node's own pods,
taken at Score. A node scores sum(count * weight + maxSkew - 1) over the constraints whose key it
has, rounded; NormalizeScore inverts: MaxNodeScore * (max + min - score) / max. Nodes missing a
topology key (when all are required) score 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.framework.interface import MAX_NODE_SCORE, Bools, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.pod_topology_spread.common import (
    LABEL_HOSTNAME,
    Constraint,
    InclusionMasks,
    count_matching,
    matching_per_node,
    nodes_with_keys,
)

PRE_SCORE_KEY = "PreScorePodTopologySpread"


@dataclass
class PreScoreState:
    constraints: Sequence[Constraint]
    ignored: set[str]  # names of filtered nodes missing some topology key
    ignored_rows: Bools  # the same, aligned with the rows PreScore was given
    # Per constraint (empty for hostname ones): topology value -> matching pods.
    counts: list[dict[str, int]]
    weights: list[float]
    # The same counts by the snapshot's label code of the value (None for hostname constraints).
    luts: list[npt.NDArray[np.float64] | None]


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def go_round(x: float) -> int:
    """Go's math.Round (half away from zero) for x >= 0, exactly."""
    t = math.trunc(x)
    return int(t) + (1 if x - t >= 0.5 else 0)


def compute_state(snapshot: Snapshot, rows: Rows, pod: PodInfo, constraints: Sequence[Constraint],
                  require_all: bool) -> PreScoreState:
    """initPreScoreState over the filtered rows, then the counts over all nodes, on columns: the
    matching pods per node come from the snapshot's per_row memo."""
    with_keys = nodes_with_keys(snapshot, constraints) if require_all else np.ones(snapshot.n, dtype=np.bool_)
    ignored_rows = ~with_keys[rows]
    names = snapshot.names
    ignored = {names[r] for r in rows[ignored_rows].tolist()} if np.count_nonzero(ignored_rows) else set()
    kept_rows = rows[~ignored_rows]
    inclusion = InclusionMasks(snapshot, pod)
    namespace = pod.pod.metadata.namespace
    counts: list[dict[str, int]] = []
    luts: list[npt.NDArray[np.float64] | None] = []
    weights = []
    for c in constraints:
        if c.topology_key == LABEL_HOSTNAME:
            counts.append({})
            luts.append(None)
            weights.append(topology_normalizing_weight(len(kept_rows)))
            continue
        key = c.topology_key
        column = snapshot.label_codes.get(key)
        values = snapshot.label_values.get(key, [])
        # A node without the key is in the "" domain (Go's map read of a missing label): the code of
        # the value "" if a node has it, else code len(values), a domain of its own.
        size = len(values) + 1
        empty = snapshot.label_code(key, "")
        missing = empty if empty >= 0 else len(values)
        codes = np.full(snapshot.n, missing, dtype=np.int64) if column is None else np.where(
            column >= 0, column, missing)
        domains = np.zeros(size, dtype=np.bool_)
        domains[codes[kept_rows]] = True
        weights.append(topology_normalizing_weight(int(np.count_nonzero(domains))))
        sums = np.zeros(size, dtype=np.float64)
        if np.count_nonzero(domains):
            counted = with_keys & inclusion.of(c) & domains[codes]
            per_node = matching_per_node(snapshot, c.selector, namespace)
            sums = np.bincount(codes[counted], weights=per_node[counted], minlength=size).astype(np.float64)
        found = np.flatnonzero(domains).tolist()
        counts.append({(values[d] if d < len(values) else ""): int(sums[d]) for d in found})
        # score_rows' table: by code, the last entry (code -1) reads 0 as the node is skipped anyway.
        lut = np.where(domains, sums, 0.0)
        lut[len(values)] = 0.0
        luts.append(lut)
    return PreScoreState(constraints, ignored, ignored_rows, counts, weights, luts)


def score_node(s: PreScoreState, pod: PodInfo, node: NodeInfo) -> int:
    if node.name in s.ignored:
        return 0
    namespace = pod.pod.metadata.namespace
    score = 0.0
    for i, c in enumerate(s.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            continue
        cnt = count_matching(node, c.selector, namespace) if c.topology_key == LABEL_HOSTNAME else s.counts[i][value]
        score += float(cnt) * s.weights[i] + float(c.max_skew - 1)
    return go_round(score)


def score_rows(s: PreScoreState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
    namespace = pod.pod.metadata.namespace
    total = np.zeros(len(rows), dtype=np.float64)
    for i, c in enumerate(s.constraints):
        key = c.topology_key
        col = snapshot.label_codes.get(key)
        if col is None:
            continue
        codes = snapshot.take(col, rows)
        has = codes >= 0
        lut = s.luts[i]
        cnt = (matching_per_node(snapshot, c.selector, namespace)[rows].astype(np.float64) if lut is None
               else lut.take(codes))
        part = cnt * s.weights[i] + float(c.max_skew - 1)
        total = np.where(has, total + part, total)
    t = np.trunc(total)
    rounded = (t + (total - t >= 0.5)).astype(np.int64)
    rounded[s.ignored_rows] = 0
    return rounded


def normalize(s: PreScoreState, scores: Scores) -> Scores:
    valid = ~s.ignored_rows
    if not np.count_nonzero(valid):
        return np.zeros(len(scores), dtype=np.int64)
    kept = scores[valid]
    lo = int(kept.min())
    hi = max(int(kept.max()), 0)
    out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64) if hi == 0 else MAX_NODE_SCORE * (hi + lo - scores) // hi
    out[s.ignored_rows] = 0
    return out
