"""Scores a pod on built nodes by the one-node and the batch path, which must agree, for the plugins'
score tests."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.framework import CycleState, PodInfo
from kubesched.model.objects import Pod
from tests.builders import NodeBuilder, PodBuilder
from tests.unit.scheduling_helpers import pod_of, snapshot_with


def scores(plugin: object, pod: Pod | PodBuilder, nodes: list[NodeBuilder],
           existing: Sequence[Pod | PodBuilder] = ()) -> list[int]:
    """The scores of `pod` on `nodes`, with the `existing` pods bound to them."""
    snap = snapshot_with(list(nodes), list(existing))
    info, state = PodInfo(pod_of(pod)), CycleState()
    pre = getattr(plugin, "pre_score", None)
    if pre is not None:
        pre(state, info, snap, snap.all_rows)
    raw = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]  # type: ignore[attr-defined]
    batch = plugin.score_batch(state, info, snap, snap.all_rows)  # type: ignore[attr-defined]
    assert batch.tolist() == raw
    return raw
