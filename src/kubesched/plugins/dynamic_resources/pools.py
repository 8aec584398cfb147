"""The resource pools one node sees, as the structured allocator's `GatherPools` gathers them
(k8s.io/dynamic-resource-allocation v0.37.2, structured/internal/incubating/pools_incubating.go).

A pool is the set of ResourceSlices of one driver with one pool name. Only the slices of its newest
generation count. A pool whose slices for this node are not all there yet (fewer than
`resourceSliceCount` in the cluster) is *incomplete*: the allocator skips it, and a request for
All devices fails on it. A pool with duplicate device names or inconsistent counters is *invalid*.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from kubesched.model.objects import NodeSelector
from kubesched.model.resource import CounterSet, ResourceSlice
from kubesched.plugins.helper.node_selector import Selector


class AllocatorError(Exception):
    """A problem with the input (a CEL error, an invalid selector, a missing class): upstream's
    Allocate returns it as an error, and the scheduler aborts the whole attempt."""


class NodeAllocationError(AllocatorError):
    """An error that concerns only this node (upstream wraps ErrFailedAllocationOnNode): the
    scheduler reports its text as the node's unschedulable reason."""


class PoolID(NamedTuple):
    driver: str
    pool: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


class DeviceID(NamedTuple):
    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class NodeView:
    """What node selection needs of a node."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Pool:
    id: PoolID
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    # Sorted by slice name.
    device_slices_targeting_node: list[ResourceSlice] = field(default_factory=list)
    # Slices of a complete pool that do not target the node: only their counter use matters.
    device_slices_not_targeting_node: list[ResourceSlice] = field(default_factory=list)
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)


def _selector_text(selector: NodeSelector) -> str:
    return repr(selector)


def node_matches(node: NodeView | None, node_name: str, all_nodes: bool,
                 node_selector: NodeSelector | None) -> bool:
    """NodeMatches: by name, for all nodes, or by a node selector (whose terms are ORed)."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        selector = Selector.parse(node_selector)
        if not selector.is_valid():
            raise AllocatorError(f"failed to parse node selector {_selector_text(node_selector)}")
        return node is not None and selector.matches(node.labels, node.name)
    return False


def _uses_compatibility_groups(s: ResourceSlice) -> bool:
    return any(c.compatibility_groups for d in s.spec.devices for c in d.consumes_counters)


def gather_pools(slices_for_node: Iterable[ResourceSlice], node: NodeView,
                 all_slices: Sequence[ResourceSlice], *, partitionable_devices: bool = True,
                 compatibility_groups: bool = False) -> list[Pool]:
    """The pools for the node, sorted by driver and pool name, those with devices that have
    binding conditions last."""
    pools: dict[PoolID, list[ResourceSlice]] = {}
    for s in slices_for_node:
        spec = s.spec
        if not partitionable_devices and (spec.per_device_node_selection is not None or spec.shared_counters):
            continue
        if not compatibility_groups and _uses_compatibility_groups(s):
            continue
        if spec.node_name or spec.all_nodes or spec.node_selector is not None:
            try:
                relevant = node_matches(node, spec.node_name or "", bool(spec.all_nodes), spec.node_selector)
            except AllocatorError as e:
                raise AllocatorError(f"gather pool information: failed to perform node selection for slice "
                                     f"{s.metadata.name}: {e}") from None
        elif spec.per_device_node_selection:
            relevant = False
            for d in spec.devices:
                try:
                    match = node_matches(node, d.node_name or "", bool(d.all_nodes), d.node_selector)
                except AllocatorError as e:
                    raise AllocatorError(f"gather pool information: failed to perform node selection for device "
                                         f"{d.name} in slice {s.metadata.name}: {e}") from None
                if match:
                    relevant = True
                    break
        else:
            continue
        if relevant:
            _add_slice(pools, s)

    result: list[Pool] = []
    with_binding_conditions: list[Pool] = []
    for pool_id, slices in pools.items():
        first = slices[0].spec.pool
        pool: Pool
        if len(slices) == first.resource_slice_count:
            pool = _build_pool(pool_id, slices, partitionable_devices, ())
        else:
            obsolete, all_for_pool = _check_slices_in_pool(all_slices, pool_id, first.generation)
            if obsolete:
                continue
            if not compatibility_groups:
                all_for_pool = [x for x in all_for_pool if not _uses_compatibility_groups(x)]
            if len(all_for_pool) != first.resource_slice_count:
                result.append(Pool(pool_id, is_incomplete=True))
                continue
            pool = _build_pool(pool_id, slices, partitionable_devices, all_for_pool)
        (with_binding_conditions if _has_binding_conditions(pool) else result).append(pool)
    result.sort(key=lambda p: p.id)
    with_binding_conditions.sort(key=lambda p: p.id)
    return result + with_binding_conditions


def _add_slice(pools: dict[PoolID, list[ResourceSlice]], s: ResourceSlice) -> None:
    pool_id = PoolID(s.spec.driver, s.spec.pool.name)
    existing = pools.get(pool_id)
    if existing is None:
        pools[pool_id] = [s]
        return
    generation = existing[0].spec.pool.generation
    if s.spec.pool.generation < generation:
        return
    if s.spec.pool.generation > generation:
        pools[pool_id] = [s]
        return
    existing.append(s)


def _check_slices_in_pool(all_slices: Sequence[ResourceSlice], pool_id: PoolID,
                          generation: int) -> tuple[bool, list[ResourceSlice]]:
    """(obsolete, the pool's slices of that generation): obsolete when a newer generation exists."""
    found: list[ResourceSlice] = []
    for s in all_slices:
        if s.spec.driver != pool_id.driver or s.spec.pool.name != pool_id.pool:
            continue
        if s.spec.pool.generation == generation:
            found.append(s)
        elif s.spec.pool.generation > generation:
            return True, []
    return False, found


def _build_pool(pool_id: PoolID, slices: list[ResourceSlice], partitionable_devices: bool,
                all_for_pool: Sequence[ResourceSlice]) -> Pool:
    slices = sorted(slices, key=lambda s: s.metadata.name)
    device_slices: list[ResourceSlice] = []
    counter_set_slices: list[ResourceSlice] = []
    not_targeting: list[ResourceSlice] = []
    for s in slices:
        (counter_set_slices if partitionable_devices and s.spec.shared_counters else device_slices).append(s)
    if len(slices) < len(all_for_pool):
        targeting = {s.metadata.name for s in slices}
        for s in all_for_pool:
            if s.metadata.name in targeting:
                continue
            (counter_set_slices if partitionable_devices and s.spec.shared_counters else not_targeting).append(s)

    error = _duplicate_device_name(device_slices)
    if error:
        return Pool(pool_id, is_invalid=True, invalid_reason=error)
    if not partitionable_devices:
        return Pool(pool_id, device_slices_targeting_node=device_slices)
    counter_sets: dict[str, CounterSet] = {}
    for s in counter_set_slices:
        for cs in s.spec.shared_counters:
            if cs.name in counter_sets:
                return Pool(pool_id, is_invalid=True, invalid_reason=f"duplicate counter set name {cs.name}")
            counter_sets[cs.name] = cs
    error = _invalid_counter_consumption(counter_sets, device_slices) or \
        _invalid_counter_consumption(counter_sets, not_targeting)
    if error:
        return Pool(pool_id, is_invalid=True, invalid_reason=error)
    return Pool(pool_id, device_slices_targeting_node=device_slices,
                device_slices_not_targeting_node=not_targeting, counter_sets=counter_sets)


def _duplicate_device_name(slices: Iterable[ResourceSlice]) -> str:
    names: set[str] = set()
    for s in slices:
        for d in s.spec.devices:
            if d.name in names:
                return f"duplicate device name {d.name}"
            names.add(d.name)
    return ""


def _invalid_counter_consumption(counter_sets: Mapping[str, CounterSet], slices: Iterable[ResourceSlice]) -> str:
    for s in slices:
        for d in s.spec.devices:
            for consumption in d.consumes_counters:
                cs = counter_sets.get(consumption.counter_set)
                if cs is None:
                    return f"counter set {consumption.counter_set} not found"
                for name in consumption.counters:
                    if name not in cs.counters:
                        return f"counter {name} not found in counter set {cs.name}"
    return ""


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions is not None
               for s in pool.device_slices_targeting_node for d in s.spec.devices)
