"""The TaintToleration score, worked out from kube-scheduler's int64 arithmetic."""

from __future__ import annotations

import numpy as np

from kubesched.framework import CycleState, PodInfo
from kubesched.plugins import taint_toleration
from tests.builders import make_node, make_pod
from tests.unit.plugins.score_helpers import scores


def test_taint_toleration_score_counts_untolerated_prefer_no_schedule() -> None:
    nodes = [make_node("a"), make_node("b").taint("x", "1", "PreferNoSchedule"),
             make_node("c").taint("x", "1", "PreferNoSchedule").taint("y", "1", "PreferNoSchedule")]
    plugin = taint_toleration.TaintToleration()
    assert scores(plugin, make_pod("p"), nodes) == [0, 1, 2]
    assert scores(plugin, make_pod("p").toleration("x", "1", "PreferNoSchedule"), nodes) == [0, 0, 1]
    normalized = plugin.normalize_scores(CycleState(), PodInfo(make_pod("p").obj()),
                                         np.array([0, 1, 2]))
    assert normalized.tolist() == [100, 50, 0]
