"""Scores a pod on built nodes by the one-node and the batch path, which must agree, for the plugins'
score tests."""

from __future__ import annotations

from kubesched.framework import CycleState, PodInfo
from tests.builders import NodeBuilder, PodBuilder
from tests.unit.scheduling_helpers import snapshot_with


def scores(plugin: object, pod: PodBuilder, nodes: list[NodeBuilder]) -> list[int]:
    snap = snapshot_with(list(nodes))
    info, state = PodInfo(pod.obj()), CycleState()
    pre = getattr(plugin, "pre_score", None)
    if pre is not None:
        pre(state, info, snap, snap.all_rows)
    raw = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]  # type: ignore[attr-defined]
    batch = plugin.score_batch(state, info, snap, snap.all_rows)  # type: ignore[attr-defined]
    assert batch.tolist() == raw
    return raw
