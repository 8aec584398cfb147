"""kube-scheduler's helper.DefaultNormalizeScore, on a column of scores."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Scores = npt.NDArray[np.int64]


def default_normalize_score(max_priority: int, reverse: bool, scores: Scores) -> Scores:
    """Scale to 0..max_priority by the highest score (integer division); reversed: max - that."""
    top = int(scores.max()) if len(scores) else 0
    if top <= 0:
        if reverse:
            return np.full(len(scores), max_priority, np.int64)
        return scores
    scaled = max_priority * scores // top
    if reverse:
        return max_priority - scaled
    return scaled
