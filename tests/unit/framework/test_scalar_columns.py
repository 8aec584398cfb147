"""The snapshot's scalar-resource columns, kept sparse: what a cycle reads equals a dense column per
name (what the snapshot held before), whatever the order of node and pod updates and reads."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.cache import Cache
from kubesched.framework import FitError, NodeCursor, PodInfo, scalar_columns, schedule_pod
from kubesched.framework.scalar_columns import ScalarColumns
from kubesched.model.quantity import INT64_MAX
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import default_profile


def test_a_name_never_seen_is_absent_and_one_seen_stays_as_zeros() -> None:
    cols = ScalarColumns(3)
    assert cols.column("example.com/gpu") is None
    cols.set_row(1, {"example.com/gpu": 2})
    assert cols.column("example.com/gpu").tolist() == [0, 2, 0]  # type: ignore[union-attr]
    cols.set_row(1, {})
    assert cols.column("example.com/gpu").tolist() == [0, 0, 0]  # type: ignore[union-attr]


def test_a_row_loses_the_names_it_no_longer_has() -> None:
    cols = ScalarColumns(2)
    cols.set_row(0, {"a": 1, "b": 2})
    kept = cols.column("a")
    cols.set_row(0, {"b": 3})
    assert kept is not None
    assert kept.tolist() == [0, 0]  # the column asked for before, updated in place
    assert cols.column("b").tolist() == [3, 0]  # type: ignore[union-attr]


def test_amounts_saturate_at_int64_max() -> None:
    cols = ScalarColumns(1)
    cols.set_row(0, {"a": 2**70})
    assert cols.column("a").tolist() == [INT64_MAX]  # type: ignore[union-attr]


def test_past_the_kept_columns_a_name_is_made_again_with_its_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scalar_columns, "KEPT", 2)
    cols = ScalarColumns(2)
    for name in ("a", "b", "c"):
        cols.set_row(0, {name: 1})
        assert cols.column(name) is not None
    cols.set_row(1, {"a": 5})  # "a" is no longer kept dense: only its rows change
    assert cols.column("a").tolist() == [0, 5]  # type: ignore[union-attr]
    assert cols.column("c").tolist() == [1, 0]  # type: ignore[union-attr]


NAMES = ("a", "b", "c", "d")
ops = st.lists(st.one_of(
    st.tuples(st.just("set"), st.integers(0, 4), st.dictionaries(st.sampled_from(NAMES), st.integers(0, 3))),
    st.tuples(st.just("read"), st.sampled_from(NAMES), st.none()),
), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ops=ops)
def test_reads_equal_dense_columns(ops: list[tuple[str, object, object]]) -> None:
    """Against the snapshot's former dense columns: every node update zeroes the row in every column
    made so far, then writes the node's amounts; a name is absent until some row had it."""
    scalar_columns_kept = scalar_columns.KEPT
    scalar_columns.KEPT = 2  # evictions happen within a few reads
    try:
        cols = ScalarColumns(5)
        dense: dict[str, np.ndarray[Any, np.dtype[np.int64]]] = {}
        for op, a, b in ops:
            if op == "set":
                assert isinstance(a, int)
                assert isinstance(b, dict)
                for col in dense.values():
                    col[a] = 0
                for name, v in b.items():
                    dense.setdefault(name, np.zeros(5, np.int64))[a] = v
                cols.set_row(a, b)
            else:
                assert isinstance(a, str)
                got = cols.column(a)
                want = dense.get(a)
                assert (got is None) == (want is None)
                if want is not None:
                    assert got is not None
                    assert got.tolist() == want.tolist()
    finally:
        scalar_columns.KEPT = scalar_columns_kept


def test_a_name_on_each_node_costs_its_rows_not_names_by_nodes() -> None:
    """scheduler_perf's SchedulingWithExtendedResource: a resource of its own on each node, a pod
    asking for it lands there, and the snapshot holds no dense column per name."""
    cache = Cache()
    for i in range(200):
        cache.add_node(make_node(f"n{i}").capacity(cpu="4", memory="32Gi", pods="110",
                                                  **{f"foo.com/bar-{i}": "1"}).obj())
    pod = make_pod("p7").req(**{"foo.com/bar-7": "1"}).obj()
    result = schedule_pod(default_profile(), cache.snapshot(), PodInfo(pod), rng=random.Random(0), cursor=NodeCursor())
    assert not isinstance(result, FitError)
    assert result.suggested_host == "n7"
    cache.assume_pod(PodInfo(pod), "n7")
    snap = cache.snapshot()
    row = snap.index["n7"]
    alloc, req = snap.scalar_allocatable("foo.com/bar-7"), snap.scalar_requested("foo.com/bar-7")
    assert alloc is not None
    assert req is not None
    assert (int(alloc[row]), int(req[row]), int(alloc.sum()), int(req.sum())) == (1, 1, 1, 1)
    assert len(snap.scalar_alloc._dense) <= scalar_columns.KEPT
