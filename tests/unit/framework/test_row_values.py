"""Snapshot.kept_values: per-row values kept for a key from its second use, recomputed only for the
rows whose node or pods changed, and equal to computing them afresh."""

from __future__ import annotations

import random

import numpy as np
import numpy.typing as npt
import pytest

from kubesched.framework import CycleState, NodeCursor, PodInfo, ScheduleResult, schedule_pod
from kubesched.framework.row_values import FEW_ROWS, RowValues
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.plugins.node_resources import scoring as rs
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import cache_with, default_profile

I64 = npt.NDArray[np.int64]
Rows = npt.NDArray[np.intp]


def _pods_on(snapshot: Snapshot, rows: Rows) -> I64:
    return snapshot.pod_count[rows].copy()


@pytest.mark.parametrize("by_node", [pytest.param(False, id="vectorised"), pytest.param(True, id="one-by-one")])
def test_kept_values_follow_pod_and_node_changes(by_node: bool) -> None:
    cache = cache_with([make_node(f"n{i}") for i in range(4)])
    snap = cache.snapshot()
    calls: list[list[int]] = []

    def compute(rows: Rows) -> I64:
        calls.append(rows.tolist())
        return _pods_on(snap, rows)

    def per_node(ni: NodeInfo) -> int:
        calls.append([snap.index[ni.name]])
        return len(ni.pods)

    def values(rows: Rows) -> list[int]:
        got: list[int] = snap.kept_values("pods", compute, rows, per_node if by_node else None).tolist()
        return got

    assert values(snap.all_rows[[1, 2]]) == [0, 0]
    assert calls == [[1, 2]]  # the first use computes just its rows
    assert values(snap.all_rows) == [0, 0, 0, 0]
    assert calls[-1] == [0, 1, 2, 3]  # the second keeps every row
    cache.add_pod(make_pod("a").node("n2").obj())
    cache.add_pod(make_pod("b").node("n2").obj())
    cache.add_pod(make_pod("c").node("n0").obj())
    calls.clear()
    assert values(snap.all_rows) == [1, 0, 2, 0]
    assert sorted(r for c in calls for r in c) == [0, 2]  # only the changed rows, each once
    calls.clear()
    assert values(snap.all_rows[[2, 3]]) == [2, 0]
    assert calls == []
    cache.update_node(make_node("n3").label("x", "y").obj())
    assert values(snap.all_rows) == [1, 0, 2, 0]
    assert sorted(r for c in calls for r in c) == [3]


def test_a_long_change_log_or_many_rows_recompute_vectorised() -> None:
    rv = RowValues(np.arange(50, dtype=np.intp))
    state = np.zeros(50, dtype=np.int64)
    seen: list[int] = []

    def compute(rows: Rows) -> I64:
        seen.append(len(rows))
        found: I64 = state[rows].copy()
        return found

    def one(i: int) -> int:
        seen.append(-1)
        return int(state[i])

    rv.values("k", compute, rv.all_rows, one)
    rv.values("k", compute, rv.all_rows, one)
    for i in range(FEW_ROWS + 1):
        state[i] += 1
        rv.changed(i)
    seen.clear()
    assert rv.values("k", compute, rv.all_rows, one).tolist() == state.tolist()
    assert seen == [FEW_ROWS + 1]  # more than a few rows: one vectorised call
    for _ in range(4 * 50 + 65):  # past the log's cut
        state[7] += 1
        rv.changed(7)
    seen.clear()
    assert rv.values("k", compute, rv.all_rows, one).tolist() == state.tolist()
    assert seen == [50]


def test_an_overcommitted_node_does_not_stop_the_kept_resource_scores() -> None:
    """Kept scores cover every node, the ones the filters reject too: a node whose bound pod asks
    more than int64 holds (its sums saturate, then wrap when a request is added) must not make the
    second pod of a kind fail its cycle, as it did in the integration test of odd objects."""
    cache = cache_with([make_node(f"n{i}").capacity(cpu="8", memory="16Gi", pods="110") for i in range(4)]
                       + [make_node("odd").capacity(cpu="8", memory="16Gi", pods="110")])  # type: ignore[arg-type]
    cache.add_pod(make_pod("huge").node("odd").req(cpu="10P", memory="100Pi",
                                                   example_com__widgets="9223372036854775807").obj())
    profile = default_profile()
    cursor, rng = NodeCursor(), random.Random(0)
    for k in range(12):
        info = PodInfo(make_pod(f"p{k}").req(cpu="100m").obj())
        result = schedule_pod(profile, cache.snapshot(), info, rng=rng, cursor=cursor)
        assert isinstance(result, ScheduleResult), result
        assert result.suggested_host != "odd"
        cache.assume_pod(info, result.suggested_host)


def test_a_compute_that_fails_on_rows_not_asked_for_is_not_kept() -> None:
    rv = RowValues(np.arange(4, dtype=np.intp))

    def compute(rows: Rows) -> I64:
        if 3 in rows.tolist():
            raise IndexError("row 3 is out of this function's domain")
        found: I64 = rows.astype(np.int64) * 10
        return found

    asked = np.array([0, 2], dtype=np.intp)
    for _ in range(3):  # first use, then the tries to keep every row
        assert rv.values("k", compute, asked).tolist() == [0, 20]
    with pytest.raises(IndexError):
        rv.values("k", compute, rv.all_rows)  # what the caller asks for still raises


@pytest.mark.parametrize("memory", [pytest.param("32Gi", id="small"), pytest.param(str(2**60), id="int64-wraps")])
def test_kept_fit_score_of_a_changed_node_is_the_columns_score(memory: str) -> None:
    """A node changed since its score was kept is scored again; on amounts whose products pass
    int64 (which the columns wrap, like kube-scheduler) through the columns, not the exact ints."""
    cache = cache_with([make_node("big").capacity(cpu="8", memory=memory, pods="110"),
                        make_node("n").capacity(cpu="8", memory="32Gi", pods="110")])
    profile = default_profile()
    fit = next(pl for pl, _ in profile.score if pl.name == "NodeResourcesFit")
    snap = cache.snapshot()

    def scores(name: str) -> list[int]:
        info = PodInfo(make_pod(name).req(cpu="100m", memory="1Gi").obj())
        state = CycleState()
        for pl in profile.pre_score:
            pl.pre_score(state, info, snap, snap.all_rows)
        kept: list[int] = fit.score_batch(state, info, snap, snap.all_rows).tolist()  # type: ignore[attr-defined]
        fresh = rs.fit_cpu_memory_columns(snap, snap.all_rows, info.score_cpu, info.score_mem, 1, 1, False).tolist()
        assert kept == fresh
        return kept

    scores("a")
    scores("b")  # kept from here on
    cache.add_pod(make_pod("on-big").node("big").req(cpu="1", memory="1Gi").obj())
    scores("c")


def test_kept_fit_score_of_a_node_with_a_huge_cpu_allocatable_wraps_like_go() -> None:
    """A node changed since its score was kept is scored again through the columns when its cpu
    allocatable is past 2**52 (not only its memory). By hand from least_allocated.go's int64
    leastRequestedScore on "big" (cpu 2**60m; pod "on-big" 1 cpu / 1Gi, the pod 100m / 1Gi):
    cpu (2**60 - 1100) * 100 wraps to 2**62 - 110000 (100 * 2**60 = 25 * 2**62, and 2**64 divides
    24 * 2**62), / 2**60 = 3; memory (32Gi - 2Gi) * 100 / 32Gi = 93; (3 + 93) / 2 = 48. With exact
    integers cpu would be 99, and the score 96."""
    cache = cache_with([make_node("big").capacity(cpu=f"{2**60}m", memory="32Gi", pods="110"),
                        make_node("n").capacity(cpu="8", memory="32Gi", pods="110")])
    profile = default_profile()
    fit = next(pl for pl, _ in profile.score if pl.name == "NodeResourcesFit")
    snap = cache.snapshot()

    def big_score(name: str) -> int:
        info = PodInfo(make_pod(name).req(cpu="100m", memory="1Gi").obj())
        state = CycleState()
        for pl in profile.pre_score:
            pl.pre_score(state, info, snap, snap.all_rows)
        got: list[int] = fit.score_batch(state, info, snap, snap.all_rows).tolist()  # type: ignore[attr-defined]
        return got[snap.index["big"]]

    big_score("a")
    big_score("b")  # kept from here on
    cache.add_pod(make_pod("on-big").node("big").req(cpu="1", memory="1Gi").obj())
    assert big_score("c") == 48
