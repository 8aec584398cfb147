"""ImageLocality: prefer nodes that already have the pod's images, weighted by how widely spread
each image is (so one node holding a common image does not attract every pod)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper.shape_score import go_div as _go_div

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def _scaled(size: int, num_nodes: int, total_nodes: int) -> int:
    # Go: int64(float64(size) * (float64(numNodes) / float64(totalNodes)))
    return int(float(size) * (float(num_nodes) / float(total_nodes)))


def calculate_priority(sum_scores: int, image_count: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    numerator = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    # Go's truncating division; the denominator is negative only for a pod with no containers.
    return _go_div(numerator, max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = NAME

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        images = snapshot.images
        total = 0
        for name in pod.images:
            if name in node.image_sizes and name in images:
                size, holders = images[name]
                total += _scaled(size, len(holders), snapshot.n)
        return calculate_priority(total, len(pod.images))

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        images = snapshot.images
        present = [images[name] for name in pod.images if name in images]
        if not present:
            return np.zeros(len(rows), dtype=np.int64)
        per_row = np.zeros(snapshot.n, dtype=np.int64)
        for size, holders in present:
            per_row[holders] += _scaled(size, len(holders), snapshot.n)
        sums = per_row[rows]
        max_threshold = MAX_CONTAINER_THRESHOLD * len(pod.images)
        # A pod with images has max_threshold >= 1000 MB > MIN_THRESHOLD, so this is Go's clamp.
        clamped = np.clip(sums, MIN_THRESHOLD, max_threshold)
        return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def new(args: Mapping[str, Any]) -> ImageLocality:
    return ImageLocality()
