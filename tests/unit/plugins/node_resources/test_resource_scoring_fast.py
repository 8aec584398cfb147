"""The cpu/memory fast paths of NodeResourcesFit and NodeResourcesBalancedAllocation score exactly
like the general column path and the one-node Python path, and fall back when a node lacks cpu or
memory."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.cache import Cache
from kubesched.framework import CycleState, PodInfo, Snapshot
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.resources import CPU, MEMORY
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.plugins.node_resources import scoring as rs
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

INT64_MAX = 2**63 - 1
GI = 2**30

# Memory as nodes report it (32Gi..1Ti), small values that make ratios coarse, and values close
# to the int64 range where float64 rounds and the int64 products wrap.
memory_st = st.one_of(st.integers(1, 4096), st.integers(32 * GI, 1024 * GI), st.integers(2**52, 2**62))
cpu_st = st.one_of(st.integers(1, 4000), st.integers(4000, 512_000))
# One node in about six lacks cpu or memory: the fast path must then stay out of the way.
cap_st = st.tuples(st.one_of(st.just(0), cpu_st, cpu_st, cpu_st, cpu_st, cpu_st),
                   st.one_of(st.just(0), memory_st, memory_st, memory_st, memory_st, memory_st))
# Existing pods: (node index, cpu millis, memory bytes); None leaves the request out, so the
# non-zero columns (100m/200Mi stand-ins) differ from the requested ones. Usage may exceed capacity.
used_st = st.tuples(st.integers(0, 7), st.one_of(st.none(), st.integers(0, 600_000)),
                    st.one_of(st.none(), st.integers(0, 2**59)))
request_st = st.tuples(st.one_of(st.none(), st.integers(0, 600_000)),
                       st.one_of(st.none(), st.integers(0, 16 * GI), st.integers(0, 2**61)))
weights_st = st.tuples(st.integers(1, 7), st.integers(1, 7))


def _quantity(value: int | None, milli: bool) -> str | None:
    if value is None:
        return None
    return f"{value}m" if milli else str(value)


def _snapshot(caps: list[tuple[int, int]], used: list[tuple[int, int | None, int | None]]) -> Snapshot:
    nodes = [make_node(f"n{i}").capacity(cpu=f"{cpu}m", memory=str(mem)) for i, (cpu, mem) in enumerate(caps)]
    pods = [make_pod(f"e{j}").node(f"n{i % len(caps)}").req(cpu=_quantity(cpu, True), memory=_quantity(mem, False))
            for j, (i, cpu, mem) in enumerate(used)]
    return snapshot_with(list(nodes), list(pods))


def _rows(snap: Snapshot, pick: list[int]) -> npt.NDArray[np.intp]:
    """All rows (the snapshot's own array, which no scorer may write to) or some, in any order."""
    if not pick:
        return snap.all_rows
    return np.array([p % snap.n for p in pick], dtype=np.intp)


def _no_overflow(snap: Snapshot) -> bool:
    """Whether kube-scheduler's int64 (cap - req) * 100 cannot wrap, where Python's ints differ."""
    return int(snap.alloc_cpu_mem.max(initial=0)) <= INT64_MAX // MAX_NODE_SCORE


def _fit_general(plugin: node_resources_fit.NodeResourcesFit, requests: list[int], snap: Snapshot,
                 rows: npt.NDArray[np.intp]) -> list[int]:
    requested, _, allocatable = rs.allocation_columns(snap, rows, plugin.resources, requests, False)
    most = plugin.strategy == node_resources_fit.MOST_ALLOCATED
    columns = rs.most_allocated_columns if most else rs.least_allocated_columns
    out: list[int] = columns(requested, allocatable, plugin.weights).tolist()
    return out


def _balanced_general(plugin: balanced_allocation.BalancedAllocation, requests: list[int], snap: Snapshot,
                      rows: npt.NDArray[np.intp]) -> list[int]:
    requested, allocated, allocatable = rs.allocation_columns(snap, rows, plugin.resources, requests, True)
    out: list[int] = rs.balanced_allocation_columns(requested, allocated, allocatable).tolist()
    return out


@settings(max_examples=150, deadline=None)
@given(caps=st.lists(cap_st, min_size=1, max_size=8), used=st.lists(used_st, max_size=12), request=request_st,
       weights=weights_st, memory_first=st.booleans(), most=st.booleans(),
       pick=st.lists(st.integers(0, 7), max_size=10))
def test_fit_fast_path_matches(caps: list[tuple[int, int]], used: list[tuple[int, int | None, int | None]],
                               request: tuple[int | None, int | None], weights: tuple[int, int],
                               memory_first: bool, most: bool, pick: list[int]) -> None:
    snap = _snapshot(caps, used)
    rows = _rows(snap, pick)
    specs = [rs.ResourceSpec(CPU, weights[0]), rs.ResourceSpec(MEMORY, weights[1])]
    strategy = node_resources_fit.MOST_ALLOCATED if most else node_resources_fit.LEAST_ALLOCATED
    plugin = node_resources_fit.NodeResourcesFit(strategy=strategy,
                                                 resources=specs[::-1] if memory_first else specs)
    info = PodInfo(make_pod("p").req(cpu=_quantity(request[0], True), memory=_quantity(request[1], False)).obj())
    state = CycleState()
    plugin.pre_score(state, info, snap, rows)
    requests = plugin.pod_requests(info)
    everywhere = all(cpu and mem for cpu, mem in caps)
    assert snap.cpu_mem_allocatable_everywhere == everywhere

    general = _fit_general(plugin, requests, snap, rows)
    batch = plugin.score_batch(state, info, snap, rows).tolist()
    assert batch == general
    if everywhere:
        fast = rs.fit_cpu_memory_columns(snap, rows, info.score_cpu, info.score_mem, weights[0], weights[1], most)
        assert fast.tolist() == general
    if _no_overflow(snap):
        one_node = [plugin.score(state, info, snap.node_infos[r], snap) for r in rows.tolist()]
        assert batch == one_node


@settings(max_examples=150, deadline=None)
@given(caps=st.lists(cap_st, min_size=1, max_size=8), used=st.lists(used_st, max_size=12), request=request_st,
       memory_first=st.booleans(), pick=st.lists(st.integers(0, 7), max_size=10))
def test_balanced_fast_path_matches(caps: list[tuple[int, int]], used: list[tuple[int, int | None, int | None]],
                                    request: tuple[int | None, int | None], memory_first: bool,
                                    pick: list[int]) -> None:
    snap = _snapshot(caps, used)
    rows = _rows(snap, pick)
    specs = [rs.ResourceSpec(MEMORY), rs.ResourceSpec(CPU)] if memory_first else list(rs.DEFAULT_RESOURCES)
    plugin = balanced_allocation.BalancedAllocation(specs)
    info = PodInfo(make_pod("p").req(cpu=_quantity(request[0], True), memory=_quantity(request[1], False)).obj())
    state = CycleState()
    plugin.pre_score(state, info, snap, rows)
    requests = plugin.pod_requests(info)
    everywhere = all(cpu and mem for cpu, mem in caps)

    batch = plugin.score_batch(state, info, snap, rows).tolist()
    one_node = [plugin.score(state, info, snap.node_infos[r], snap) for r in rows.tolist()]
    assert batch == one_node
    if any(requests):
        assert batch == _balanced_general(plugin, requests, snap, rows)
        if everywhere:
            cpu, mem = info.requests.milli_cpu, info.requests.memory
            fast = rs.balanced_allocation_cpu_memory_columns(snap, rows, cpu, mem)
            assert fast.tolist() == one_node


def test_allocatable_flag_follows_node_updates() -> None:
    cache = Cache()
    for name in ("a", "b"):
        cache.add_node(make_node(name).capacity(cpu="4", memory="32Gi").obj())
    snap = cache.snapshot()
    assert snap.cpu_mem_allocatable_everywhere
    plugin = balanced_allocation.new({})
    fit = node_resources_fit.new({})
    info = PodInfo(make_pod("p").req(cpu="1", memory="1Gi").obj())

    def agree() -> None:
        for scorer in (plugin, fit):
            state = CycleState()
            scorer.pre_score(state, info, snap, snap.all_rows)
            one_node = [scorer.score(state, info, ni, snap) for ni in snap.node_infos]
            assert scorer.score_batch(state, info, snap, snap.all_rows).tolist() == one_node

    cache.update_node(make_node("b").capacity(cpu="4", memory="0").obj())
    assert cache.snapshot() is snap
    assert not snap.cpu_mem_allocatable_everywhere
    agree()
    cache.update_node(make_node("b").capacity(cpu="8", memory="64Gi").obj())
    assert snap.cpu_mem_allocatable_everywhere
    agree()
    cache.add_node(make_node("c").capacity(cpu="0", memory="1Gi").obj())
    snap = cache.snapshot()
    assert not snap.cpu_mem_allocatable_everywhere
    agree()


def test_shared_columns_are_not_written() -> None:
    snap = snapshot_with([make_node("a").capacity(cpu="2", memory="1Gi"), make_node("b")],
                         [make_pod("e").node("a").req(cpu="3", memory="2Gi")])
    before = [snap.alloc_cpu_mem.copy(), snap.req_cpu_mem.copy(), snap.nz_cpu_mem.copy()]
    rs.fit_cpu_memory_columns(snap, snap.all_rows, 500, GI, 1, 1, False)
    rs.fit_cpu_memory_columns(snap, snap.all_rows, 500, GI, 2, 3, True)
    rs.balanced_allocation_cpu_memory_columns(snap, snap.all_rows, 500, GI)
    after = [snap.alloc_cpu_mem, snap.req_cpu_mem, snap.nz_cpu_mem]
    assert all((x == y).all() for x, y in zip(before, after, strict=True))
