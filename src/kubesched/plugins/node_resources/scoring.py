"""The resource score formulas of NodeResourcesFit and NodeResourcesBalancedAllocation.

Each formula exists twice: on Python ints for one node (as kube-scheduler writes it, int64
arithmetic with truncating division) and on numpy columns for many nodes. The unit tests check that
the two agree.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.framework.interface import MAX_NODE_SCORE, Rows, Scores
from kubesched.framework.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.plugins.helper.dra_extended import DeviceTotals
from kubesched.plugins.helper.shape_score import MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION, broken_linear, go_div

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]



@dataclass(frozen=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def parse_resources(raw: Sequence[Mapping[str, Any]] | None) -> tuple[ResourceSpec, ...]:
    if not raw:
        return DEFAULT_RESOURCES
    return tuple(ResourceSpec(str(r["name"]), int(r.get("weight") or 1)) for r in raw)


def _go_div_array(a: I64, b: int) -> I64:
    q = np.abs(a) // abs(b)
    return np.where((a >= 0) == (b >= 0), q, -q)


# --- node values ---------------------------------------------------------------------------------

def node_values(node: NodeInfo, resource: str, use_requested: bool) -> tuple[int, int]:
    """(allocatable, allocated) of a node for a resource; non-zero requests unless use_requested."""
    if resource == CPU:
        return node.allocatable.milli_cpu, node.requested.milli_cpu if use_requested else node.non0_cpu
    if resource == MEMORY:
        return node.allocatable.memory, node.requested.memory if use_requested else node.non0_mem
    if resource == EPHEMERAL_STORAGE:
        return node.allocatable.ephemeral_storage, node.requested.ephemeral_storage
    return node.allocatable.scalar.get(resource, 0), node.requested.scalar.get(resource, 0)


def node_columns(snapshot: Snapshot, rows: Rows, resource: str, use_requested: bool) -> tuple[I64, I64]:
    take = snapshot.take
    if resource == CPU:
        return take(snapshot.alloc_cpu, rows), take(snapshot.req_cpu if use_requested else snapshot.nz_cpu, rows)
    if resource == MEMORY:
        return take(snapshot.alloc_mem, rows), take(snapshot.req_mem if use_requested else snapshot.nz_mem, rows)
    if resource == EPHEMERAL_STORAGE:
        return take(snapshot.alloc_eph, rows), take(snapshot.req_eph, rows)
    alloc = snapshot.scalar_allocatable(resource)
    if alloc is None:
        zeros = np.zeros(len(rows), dtype=np.int64)
        return zeros, zeros
    req = snapshot.scalar_requested(resource)
    return take(alloc, rows), (take(req, rows) if req is not None else np.zeros(len(rows), dtype=np.int64))


def allocation(node: NodeInfo, resources: Sequence[ResourceSpec], pod_requests: Sequence[int],
               use_requested: bool, devices: DeviceTotals | None = None) -> tuple[list[int], list[int], list[int]]:
    """(requested with the pod, allocated, allocatable) per resource; all zero for a resource the
    node does not have, or a scalar one the pod does not ask for. With `devices`, a scalar resource
    the node's allocatable lacks counts the devices of the class that maps it, if any."""
    k = len(resources)
    requested, allocated, allocatable = [0] * k, [0] * k, [0] * k
    for i, spec in enumerate(resources):
        if pod_requests[i] == 0 and is_scalar_resource_name(spec.name):
            continue
        alloc, used = node_values(node, spec.name, use_requested)
        if alloc == 0 and devices is not None and spec.name not in (CPU, MEMORY, EPHEMERAL_STORAGE):
            backed = devices.totals(spec.name, node.node)
            if backed[0] > 0:
                alloc, used = backed
        if alloc == 0:
            continue
        allocatable[i], allocated[i], requested[i] = alloc, used, used + pod_requests[i]
    return requested, allocated, allocatable


def allocation_columns(snapshot: Snapshot, rows: Rows, resources: Sequence[ResourceSpec],
                       pod_requests: Sequence[int], use_requested: bool) -> tuple[list[I64], list[I64], list[I64]]:
    requested: list[I64] = []
    allocated: list[I64] = []
    allocatable: list[I64] = []
    zeros = np.zeros(len(rows), dtype=np.int64)
    for i, spec in enumerate(resources):
        if pod_requests[i] == 0 and is_scalar_resource_name(spec.name):
            requested.append(zeros)
            allocated.append(zeros)
            allocatable.append(zeros)
            continue
        alloc, used = node_columns(snapshot, rows, spec.name, use_requested)
        has = alloc != 0
        allocatable.append(alloc)
        allocated.append(np.where(has, used, 0))
        requested.append(np.where(has, used + pod_requests[i], 0))
    return requested, allocated, allocatable


def cpu_memory_positions(resources: Sequence[ResourceSpec]) -> tuple[int, int] | None:
    """(index of cpu, index of memory) when the scored resources are exactly those two, the case
    the *_cpu_memory fast paths below cover; None otherwise."""
    names = [spec.name for spec in resources]
    if len(names) != 2 or set(names) != {CPU, MEMORY}:
        return None
    return names.index(CPU), names.index(MEMORY)


# Small constant arrays, cached because building one costs as much as a numpy operation on the
# columns and pods mostly repeat a handful of request sizes. Read-only since they are shared.

@functools.lru_cache(maxsize=256)
def _pair(cpu: int, mem: int) -> I64:
    """Shape (2, 1): broadcasts cpu/mem against a (2, n) cpu/memory array."""
    out = np.array([[cpu], [mem]], dtype=np.int64)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=256)
def _with_and_without(cpu: int, mem: int) -> I64:
    """Shape (2, 2, 1): adding it to (2, n) usage gives usage with the pod and without it at once."""
    out = np.array([[[cpu], [mem]], [[0], [0]]], dtype=np.int64)
    out.flags.writeable = False
    return out


# --- NodeResourcesFit strategies -----------------------------------------------------------------

def least_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    node_score = weight_sum = 0
    for req, cap, w in zip(requested, allocatable, weights, strict=True):
        if cap == 0:
            continue
        score = 0 if req > cap else (cap - req) * MAX_NODE_SCORE // cap
        node_score += score * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def most_allocated(requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
    node_score = weight_sum = 0
    for req, cap, w in zip(requested, allocatable, weights, strict=True):
        if cap == 0:
            continue
        node_score += min(req, cap) * MAX_NODE_SCORE // cap * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def least_allocated_columns(requested: Sequence[I64], allocatable: Sequence[I64], weights: Sequence[int]) -> Scores:
    return _weighted_columns(requested, allocatable, weights, most=False)


def most_allocated_columns(requested: Sequence[I64], allocatable: Sequence[I64], weights: Sequence[int]) -> Scores:
    return _weighted_columns(requested, allocatable, weights, most=True)


def _weighted_columns(requested: Sequence[I64], allocatable: Sequence[I64], weights: Sequence[int],
                      most: bool) -> Scores:
    n = len(requested[0]) if requested else 0
    node_score = np.zeros(n, dtype=np.int64)
    weight_sum = np.zeros(n, dtype=np.int64)
    for req, cap, w in zip(requested, allocatable, weights, strict=True):
        has = cap != 0
        if not np.count_nonzero(has):
            continue
        safe_cap = np.where(has, cap, 1)
        if most:
            score = np.minimum(req, safe_cap) * MAX_NODE_SCORE // safe_cap
        else:
            score = np.where(req > safe_cap, 0, (safe_cap - req) * MAX_NODE_SCORE // safe_cap)
        node_score += np.where(has, score * w, 0)
        weight_sum += has * np.int64(w)
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


# Below this, cpu and memory amounts times MAX_NODE_SCORE and a weight stay far inside int64: the
# one-node paths (exact ints) and the column paths (int64, which wrap like kube-scheduler's) agree.
_SMALL = 1 << 52


def small_cpu_memory(node: NodeInfo, cpu_request: int, mem_request: int, requested: bool) -> bool:
    """Whether the node's cpu and memory (allocatable, and the pods' sums: requested, or non-zero
    requested) and the pod's requests are small enough that the one-node path scores as the
    columns do (kept values recompute a changed node through it)."""
    a = node.allocatable
    used_cpu, used_mem = (node.requested.milli_cpu, node.requested.memory) if requested else (
        node.non0_cpu, node.non0_mem)
    return max(a.milli_cpu, a.memory, used_cpu, used_mem, cpu_request, mem_request) < _SMALL


def fit_cpu_memory_columns(snapshot: Snapshot, rows: Rows, cpu_request: int, mem_request: int,
                           cpu_weight: int, mem_weight: int, most: bool) -> Scores:
    """least_allocated_columns / most_allocated_columns over cpu and memory (non-zero requests),
    for a snapshot where every node has both (snapshot.cpu_mem_allocatable_everywhere): then no
    resource is skipped and the weight sum is the same on every node. Weights must be positive."""
    alloc = snapshot.take_cpu_mem(snapshot.alloc_cpu_mem, rows)
    used = snapshot.take_cpu_mem(snapshot.nz_cpu_mem, rows)
    if most:
        score = used + _pair(cpu_request, mem_request)
        np.minimum(score, alloc, out=score)
    else:
        # The free capacity clipped at 0 gives 0 exactly where the request exceeds capacity.
        # alloc - used - request wraps like alloc - (used + request), so the products match too.
        score = alloc - used
        score -= _pair(cpu_request, mem_request)
        np.maximum(score, 0, out=score)
    score *= MAX_NODE_SCORE
    score //= alloc
    if cpu_weight == 1 and mem_weight == 1:
        total: I64 = score[0] + score[1]
        total //= 2
        return total
    score *= _pair(cpu_weight, mem_weight)
    total = score[0] + score[1]
    total //= cpu_weight + mem_weight
    return total


def parse_shape(raw: Sequence[Mapping[str, Any]]) -> list[int]:
    points = [(int(p["utilization"]), int(p["score"]) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
              for p in raw]
    if not points:
        raise ValueError("requestedToCapacityRatio.shape must have at least one point")
    return broken_linear(points)


def requested_to_capacity_ratio(table: Sequence[int], requested: Sequence[int], allocatable: Sequence[int],
                                weights: Sequence[int]) -> int:
    node_score = weight_sum = 0
    for req, cap, w in zip(requested, allocatable, weights, strict=True):
        if cap == 0:
            continue
        score = table[MAX_UTILIZATION] if req > cap else table[req * MAX_UTILIZATION // cap]
        if score > 0:
            node_score += score * w
            weight_sum += w
    if weight_sum == 0:
        return 0
    # math.Round of the float quotient; for these small integers, exact half-up rounding.
    return (2 * node_score + weight_sum) // (2 * weight_sum)


def requested_to_capacity_ratio_columns(table: Sequence[int], requested: Sequence[I64],
                                        allocatable: Sequence[I64], weights: Sequence[int]) -> Scores:
    lut = np.array(table, dtype=np.int64)
    n = len(requested[0]) if requested else 0
    node_score = np.zeros(n, dtype=np.int64)
    weight_sum = np.zeros(n, dtype=np.int64)
    for req, cap, w in zip(requested, allocatable, weights, strict=True):
        has = cap != 0
        safe_cap = np.where(has, cap, 1)
        util = np.where(req > safe_cap, MAX_UTILIZATION, req * MAX_UTILIZATION // safe_cap)
        score = lut[np.clip(util, 0, MAX_UTILIZATION)]
        counted = has & (score > 0)
        node_score += np.where(counted, score * w, 0)
        weight_sum += counted * np.int64(w)
    safe_sum = np.maximum(weight_sum, 1)
    return np.where(weight_sum > 0, (2 * node_score + safe_sum) // (2 * safe_sum), 0)


# --- NodeResourcesBalancedAllocation -------------------------------------------------------------

def _balance(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    fractions: list[float] = []
    total = 0.0
    for req, cap in zip(requested, allocatable, strict=True):
        if cap == 0:
            continue
        f = min(float(req) / float(cap), 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_allocation(requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]) -> int:
    """Half the score for balance, half for how much placing the pod improves it."""
    with_pod = _balance(requested, allocatable)
    without_pod = _balance(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without_pod, 2)


def _balance_columns(requested: Sequence[I64], allocatable: Sequence[I64]) -> I64:
    k = len(requested)
    n = len(requested[0]) if k else 0
    has = [cap != 0 for cap in allocatable]
    fractions = [np.minimum(req.astype(np.float64) / np.where(h, cap, 1).astype(np.float64), 1.0)
                 for req, cap, h in zip(requested, allocatable, has, strict=True)]
    count = np.zeros(n, dtype=np.int64)
    for h in has:
        count += h
    if k == 2:
        std = np.where(count == 2, np.abs((fractions[0] - fractions[1]) / 2), 0.0)
    elif k > 2:
        total = np.zeros(n, dtype=np.float64)
        for f in fractions:
            total = total + f
        mean = total / k
        acc = np.zeros(n, dtype=np.float64)
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = np.where(count == k, np.sqrt(acc / k), 0.0)
    else:
        std = np.zeros(n, dtype=np.float64)
    result: I64 = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    if k > 2:
        # A node lacking some of the resources (rare) takes the exact path on its own.
        for j in np.flatnonzero(count < k).tolist():
            result[j] = _balance([int(r[j]) for r in requested], [int(c[j]) for c in allocatable])
    return result


def _balance_outcome(delta: int) -> int:
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + delta, 2)


# The balanced_allocation result for (score with the pod) - (score without it), a difference in
# [-MAX_NODE_SCORE, MAX_NODE_SCORE]; negative differences index from the end, as numpy allows.
_BALANCE_OUTCOMES: I64 = np.array(
    [_balance_outcome(d) for d in range(MAX_NODE_SCORE + 1)] +
    [_balance_outcome(d) for d in range(-MAX_NODE_SCORE, 0)], dtype=np.int64)


def balanced_allocation_cpu_memory_columns(snapshot: Snapshot, rows: Rows, cpu_request: int,
                                           mem_request: int) -> Scores:
    """balanced_allocation_columns over cpu and memory (requested, not non-zero), for a snapshot
    where every node has both (snapshot.cpu_mem_allocatable_everywhere)."""
    alloc = snapshot.take_cpu_mem(snapshot.alloc_cpu_mem, rows)
    used = snapshot.take_cpu_mem(snapshot.req_cpu_mem, rows)
    # [with the pod / without it][cpu / memory][node]; int64 / int64 divides as float64, the same
    # operation as the general path's astype then divide.
    fractions: F64 = (used + _with_and_without(cpu_request, mem_request)) / alloc
    # Clipped at 0 too: a fraction is never negative for a node the filters pass, but kept values
    # (Snapshot.kept_values) cover every node, and an overcommitted one's sums may have wrapped.
    np.clip(fractions, 0.0, 1.0, out=fractions)
    spread: F64 = fractions[:, 0] - fractions[:, 1]
    np.abs(spread, out=spread)
    # (2 - |d|) * 50 is bit-identical to the general path's (1 - |d / 2|) * 100: halving is exact,
    # so 1 - |d|/2 rounds to exactly half of 2 - |d| (the same real number, scaled by a power of
    # two), and multiplying that exact half by 100 rounds like multiplying 2 - |d| by 50.
    np.subtract(2.0, spread, out=spread)
    spread *= MAX_NODE_SCORE / 2
    score: I64 = spread.astype(np.int64)
    delta: I64 = score[0] - score[1]
    outcome: I64 = _BALANCE_OUTCOMES[delta]
    return outcome


def balanced_allocation_columns(requested: Sequence[I64], allocated: Sequence[I64],
                                allocatable: Sequence[I64]) -> Scores:
    with_pod = _balance_columns(requested, allocatable)
    without_pod = _balance_columns(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + _go_div_array(half + with_pod - without_pod, 2)


def per_node(snapshot: Snapshot, rows: Rows, score: Callable[[NodeInfo], int]) -> Scores:
    """Scores one node at a time: for resources backed by devices, which no column holds."""
    infos = snapshot.node_infos
    return np.array([score(infos[j]) for j in np.asarray(rows).tolist()], dtype=np.int64)
