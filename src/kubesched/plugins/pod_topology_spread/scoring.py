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

from kubesched.framework.interface import MAX_NODE_SCORE, Bools, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.node_affinity import required_node_affinity
from kubesched.plugins.pod_topology_spread.common import (
    LABEL_HOSTNAME,
    Constraint,
    Inclusion,
    count_matching,
    node_has_keys,
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


def topology_normalizing_weight(size: int) -> float:
    return math.log(size + 2)


def go_round(x: float) -> int:
    """Go's math.Round (half away from zero) for x >= 0, exactly."""
    t = math.trunc(x)
    return int(t) + (1 if x - t >= 0.5 else 0)


def compute_state(snapshot: Snapshot, rows: Rows, pod: PodInfo, constraints: Sequence[Constraint],
                  require_all: bool) -> PreScoreState:
    """initPreScoreState over the filtered rows, then the counts over all nodes."""
    node_infos = snapshot.node_infos
    counts: list[dict[str, int]] = [{} for _ in constraints]
    ignored: set[str] = set()
    ignored_rows = np.zeros(len(rows), dtype=np.bool_)
    for pos, row in enumerate(rows.tolist()):
        ni = node_infos[row]
        if require_all and not node_has_keys(ni.labels, constraints):
            ignored.add(ni.name)
            ignored_rows[pos] = True
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != LABEL_HOSTNAME:
                counts[i].setdefault(ni.labels.get(c.topology_key, ""), 0)
    weights = []
    for i, c in enumerate(constraints):
        size = len(rows) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(counts[i])
        weights.append(topology_normalizing_weight(size))

    inclusion = Inclusion(required_node_affinity(pod), pod)
    namespace = pod.pod.metadata.namespace
    if any(counts):
        for ni in node_infos:
            if require_all and not node_has_keys(ni.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                m = counts[i]
                if not m or not inclusion.matches(c, ni):
                    continue
                value = ni.labels.get(c.topology_key, "")
                if value in m and ni.pods:
                    m[value] += count_matching(ni, c.selector, namespace)
    return PreScoreState(constraints, ignored, ignored_rows, counts, weights)


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
    node_infos = snapshot.node_infos
    total = np.zeros(len(rows), dtype=np.float64)
    for i, c in enumerate(s.constraints):
        key = c.topology_key
        col = snapshot.label_codes.get(key)
        if col is None:
            continue
        codes = snapshot.take(col, rows)
        has = codes >= 0
        if key == LABEL_HOSTNAME:
            cnt = np.fromiter((count_matching(node_infos[r], c.selector, namespace) if h else 0
                               for r, h in zip(rows.tolist(), has.tolist(), strict=True)),
                              dtype=np.float64, count=len(rows))
        else:
            lut = np.zeros(len(snapshot.label_values[key]) + 1, dtype=np.float64)
            for value, num in s.counts[i].items():
                code = snapshot.label_code(key, value)
                if code >= 0:
                    lut[code] = num
            cnt = lut[codes]
        part = cnt * s.weights[i] + float(c.max_skew - 1)
        total = np.where(has, total + part, total)
    t = np.trunc(total)
    rounded = (t + (total - t >= 0.5)).astype(np.int64)
    rounded[s.ignored_rows] = 0
    return rounded


def normalize(s: PreScoreState, scores: Scores) -> Scores:
    valid = ~s.ignored_rows
    if not valid.any():
        return np.zeros(len(scores), dtype=np.int64)
    kept = scores[valid]
    lo = int(kept.min())
    hi = max(int(kept.max()), 0)
    out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64) if hi == 0 else MAX_NODE_SCORE * (hi + lo - scores) // hi
    out[s.ignored_rows] = 0
    return out
