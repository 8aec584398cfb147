"""NodeResourcesFit: the pod's requests must fit the node's free allocatable (and a pod slot);
scores by LeastAllocated (default), MostAllocated or RequestedToCapacityRatio.

An extended resource a DeviceClass maps (DRAExtendedResource, GA) is left to DynamicResources on
each node whose allocatable lacks it (shouldDelegateResourceToDRA): it allocates devices there. A
DeviceClass added or changed to map a resource the pod asks for queues the pod again."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import Bools, PreFilterResult, Rows, Scores
from kubesched.framework.resources import CPU, MEMORY, Resource, is_extended_resource_name
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.model.resource import DeviceClass
from kubesched.plugins.helper.dra_extended import (
    DEVICE_CLASS_PREFIX,
    DeviceScoring,
    DeviceTotals,
    asks_for_dra_extended_resources,
    class_mapping,
    cycle_devices,
    mapped_resources,
    write_cycle_devices,
)
from kubesched.plugins.node_resources import scoring as rs

NAME = "NodeResourcesFit"
REASON_TOO_MANY_PODS = "Too many pods"
_PRE_SCORE_KEY = "PreScore" + NAME
_DELEGATED_KEY = "DRAExtendedResources" + NAME
_DEVICES_KEY = "DRAPreScore" + NAME
_NONE: frozenset[str] = frozenset()

ClassList = Callable[[], Iterable[DeviceClass]]

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"

I64 = npt.NDArray[np.int64]


def insufficient_resources(req: Resource, node: NodeInfo, ignored: frozenset[str] = frozenset(),
                           ignored_groups: frozenset[str] = frozenset(),
                           mapped: frozenset[str] = _NONE) -> list[tuple[str, bool]]:
    """(reason, unresolvable) for each resource the node lacks, in kube-scheduler's order; the
    `mapped` ones (a DeviceClass maps them) are DynamicResources' where the node has none."""
    out: list[tuple[str, bool]] = []
    if len(node.pods) + 1 > node.allocatable.allowed_pod_number:
        out.append((REASON_TOO_MANY_PODS, False))
    if req.is_zero():
        return out
    alloc, used = node.allocatable, node.requested
    if req.milli_cpu > 0 and req.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(("Insufficient cpu", req.milli_cpu > alloc.milli_cpu))
    if req.memory > 0 and req.memory > alloc.memory - used.memory:
        out.append(("Insufficient memory", req.memory > alloc.memory))
    if req.ephemeral_storage > 0 and req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(("Insufficient ephemeral-storage", req.ephemeral_storage > alloc.ephemeral_storage))
    for name in sorted(req.scalar):
        q = req.scalar[name]
        if q <= 0 or _ignored(name, ignored, ignored_groups):
            continue
        cap = alloc.scalar.get(name, 0)
        if cap <= 0 and name in mapped:
            continue
        if q > cap - used.scalar.get(name, 0):
            out.append((f"Insufficient {name}", q > cap))
    return out


def _ignored(name: str, ignored: frozenset[str], groups: frozenset[str]) -> bool:
    return is_extended_resource_name(name) and (name in ignored or name.split("/")[0] in groups)


class NodeResourcesFit:
    name = NAME

    # Resources free up when an assigned pod goes or shrinks (in-place resize), or a node arrives
    # or grows (kube-scheduler Fit.EventsToRegister with InPlacePodVerticalScaling, GA).
    _EVENTS = (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
               ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
               ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
               ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_DOWN))

    def events_to_register(self) -> tuple[ClusterEvent | ClusterEventWithHint, ...]:
        # A pod may wait for a class to map an extended resource it asks for.
        return (*self._EVENTS, ClusterEventWithHint(
            ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE), after_device_class_event))

    def __init__(self, ignored_resources: Sequence[str] = (), ignored_resource_groups: Sequence[str] = (),
                 strategy: str = LEAST_ALLOCATED, resources: Sequence[rs.ResourceSpec] = rs.DEFAULT_RESOURCES,
                 shape: Sequence[int] | None = None, classes: ClassList | None = None,
                 devices: DeviceScoring | None = None) -> None:
        self.ignored = frozenset(ignored_resources)
        self.ignored_groups = frozenset(ignored_resource_groups)
        self.strategy = strategy
        self.resources = tuple(resources)
        self.weights = [r.weight for r in self.resources]
        self.shape = list(shape) if shape is not None else None
        positions = rs.cpu_memory_positions(self.resources)
        # Non-positive weights (which config validation rejects) keep the general path, whose
        # weight-sum guard covers them.
        fast = strategy in (LEAST_ALLOCATED, MOST_ALLOCATED) and all(w > 0 for w in self.weights)
        self._cpu_mem = positions if fast else None
        self._statuses: dict[tuple[tuple[str, bool], ...], Status] = {}
        self.classes = classes
        self.devices = devices

    # --- filter ---------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        # The requests are computed once per pod, in PodInfo; the classes are read once per cycle.
        state.write(_DELEGATED_KEY, self._compute_mapped(pod))
        return None, None

    def _compute_mapped(self, pod: PodInfo) -> frozenset[str]:
        scalar = pod.requests.scalar
        if self.classes is None or not asks_for_dra_extended_resources(scalar):
            return _NONE
        return mapped_resources(scalar, class_mapping(self.classes()))

    def _mapped(self, state: CycleState, pod: PodInfo) -> frozenset[str]:
        """The pod's requested resources a DeviceClass maps (almost always none)."""
        found: frozenset[str] | None = state.get(_DELEGATED_KEY)
        return found if found is not None else self._compute_mapped(pod)

    def _status(self, found: list[tuple[str, bool]]) -> Status:
        # Keyed by the (reason, unresolvable) pairs as found: every node of a cycle that rejects
        # asks, so nothing is derived before the lookup.
        key = tuple(found)
        status = self._statuses.get(key)
        if status is None:
            code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(u for _, u in found) else Code.UNSCHEDULABLE
            status = self._statuses[key] = Status(code, *(r for r, _ in found))
        return status

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        found = insufficient_resources(pod.requests, node, self.ignored, self.ignored_groups, self._mapped(state, pod))
        return self._status(found) if found else None

    def _checks(self, pod: PodInfo, snapshot: Snapshot, rows: Rows, unresolvable: bool = True,
                mapped: frozenset[str] = _NONE,
                ) -> list[tuple[str, npt.NDArray[np.bool_], npt.NDArray[np.bool_] | bool]]:
        """(reason, fails, unresolvable) columns, in the order of insufficient_resources; without
        `unresolvable`, the third column is False throughout (the batch Filter needs no statuses)."""
        take = snapshot.take
        checks: list[tuple[str, npt.NDArray[np.bool_], npt.NDArray[np.bool_] | bool]] = [
            (REASON_TOO_MANY_PODS, take(snapshot.pod_count, rows) >= take(snapshot.alloc_pods, rows), False)]
        req = pod.requests
        if req.is_zero():
            return checks
        columns: tuple[tuple[str, int, I64, I64], ...] = (
                ("Insufficient cpu", req.milli_cpu, snapshot.alloc_cpu, snapshot.req_cpu),
                ("Insufficient memory", req.memory, snapshot.alloc_mem, snapshot.req_mem),
                ("Insufficient ephemeral-storage", req.ephemeral_storage, snapshot.alloc_eph, snapshot.req_eph))
        for reason, q, alloc_col, req_col in columns:
            if q > 0:
                alloc = take(alloc_col, rows)
                checks.append((reason, q > alloc - take(req_col, rows), q > alloc if unresolvable else False))
        for name in sorted(req.scalar):
            q = req.scalar[name]
            if q <= 0 or _ignored(name, self.ignored, self.ignored_groups):
                continue
            scalar_col = snapshot.scalar_allocatable(name)
            if scalar_col is None:
                if name in mapped:
                    continue
                everywhere = np.ones(len(rows), dtype=np.bool_)
                checks.append((f"Insufficient {name}", everywhere, everywhere))
                continue
            used_col = snapshot.scalar_requested(name)
            alloc = take(scalar_col, rows)
            free = alloc - take(used_col, rows) if used_col is not None else alloc
            fails, short = q > free, q > alloc
            if name in mapped:
                listed = alloc > 0
                fails, short = fails & listed, short & listed
            checks.append((f"Insufficient {name}", fails, short if unresolvable else False))
        return checks

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        r = pod.requests
        mapped = self._mapped(state, pod)
        # Whether the pod fits reads only each node's columns, these requests and what classes map.
        fits = snapshot.kept_values((self, "filter", r.milli_cpu, r.memory, r.ephemeral_storage,
                                     tuple(sorted(r.scalar.items())), mapped),
                                    lambda some: self._fits(pod, snapshot, some, mapped), rows,
                                    lambda node: not insufficient_resources(r, node, self.ignored, self.ignored_groups,
                                                                            mapped))
        return None if np.count_nonzero(fits) == len(fits) else fits

    def _fits(self, pod: PodInfo, snapshot: Snapshot, rows: Rows, mapped: frozenset[str]) -> Bools:
        checks = self._checks(pod, snapshot, rows, unresolvable=False, mapped=mapped)
        failed = checks[0][1].copy()
        for _, fails, _ in checks[1:]:
            np.logical_or(failed, fails, out=failed)
        return np.logical_not(failed, out=failed)

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        checks = self._checks(pod, snapshot, rows, mapped=self._mapped(state, pod))
        columns = [(reason, fails.tolist(),
                    unresolvable.tolist() if isinstance(unresolvable, np.ndarray) else [False] * len(rows))
                   for reason, fails, unresolvable in checks]
        out = []
        for j in range(len(rows)):
            found = [(reason, unres[j]) for reason, fails, unres in columns if fails[j]]
            out.append(self._status(found))
        return out

    # --- score ----------------------------------------------------------------------------------

    def pod_requests(self, pod: PodInfo) -> list[int]:
        """The pod's request per scored resource; cpu/memory count 100m/200Mi per empty container."""
        out = []
        for spec in self.resources:
            if spec.name == CPU:
                out.append(pod.score_cpu)
            elif spec.name == MEMORY:
                out.append(pod.score_mem)
            else:
                out.append(pod.requests.get(spec.name))
        return out

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        state.write(_PRE_SCORE_KEY, self.pod_requests(pod))
        write_cycle_devices(state, _DEVICES_KEY, self.devices, [r.name for r in self.resources])
        return None

    def _devices(self, state: CycleState) -> DeviceTotals | None:
        return cycle_devices(state, _DEVICES_KEY, self.devices, [r.name for r in self.resources])

    def _requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        found: list[int] | None = state.get(_PRE_SCORE_KEY)
        return found if found is not None else self.pod_requests(pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        requested, _, allocatable = rs.allocation(node, self.resources, self._requests(state, pod), False,
                                                  self._devices(state))
        if self.strategy == MOST_ALLOCATED:
            return rs.most_allocated(requested, allocatable, self.weights)
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            assert self.shape is not None
            return rs.requested_to_capacity_ratio(self.shape, requested, allocatable, self.weights)
        return rs.least_allocated(requested, allocatable, self.weights)

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        if self._devices(state) is not None:
            return rs.per_node(snapshot, rows, lambda node: self.score(state, pod, node, snapshot))
        requests = self._requests(state, pod)
        positions = self._cpu_mem
        if positions is not None and snapshot.cpu_mem_allocatable_everywhere:
            c, m = positions
            cpu, mem, most = requests[c], requests[m], self.strategy == MOST_ALLOCATED
            weights = self.weights[c], self.weights[m]
            def columns(r: Rows) -> Scores:
                return rs.fit_cpu_memory_columns(snapshot, r, cpu, mem, *weights, most)

            def one(node: NodeInfo) -> int:
                if rs.small_cpu_memory(node, cpu, mem, requested=False):
                    return self.score(state, pod, node, snapshot)
                return int(columns(np.array([snapshot.index[node.name]], dtype=np.intp))[0])
            return snapshot.kept_values((self, "score", cpu, mem, weights, most), columns, rows, one)
        requested, _, allocatable = rs.allocation_columns(snapshot, rows, self.resources, requests, False)
        if self.strategy == MOST_ALLOCATED:
            return rs.most_allocated_columns(requested, allocatable, self.weights)
        if self.strategy == REQUESTED_TO_CAPACITY_RATIO:
            assert self.shape is not None
            return rs.requested_to_capacity_ratio_columns(self.shape, requested, allocatable, self.weights)
        return rs.least_allocated_columns(requested, allocatable, self.weights)


_STRATEGIES: dict[str, Callable[[Mapping[str, Any]], list[int] | None]] = {
    LEAST_ALLOCATED: lambda s: None,
    MOST_ALLOCATED: lambda s: None,
    REQUESTED_TO_CAPACITY_RATIO: lambda s: rs.parse_shape((s.get("requestedToCapacityRatio") or {}).get("shape") or []),
}


def after_device_class_event(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterDeviceClassEvent: a class that now maps a resource the pod asks for."""
    if not isinstance(new, DeviceClass) or not isinstance(old, DeviceClass | None):
        return QueueingHint.QUEUE
    if old is not None:
        if (old.spec.extended_resource_name or "") == (new.spec.extended_resource_name or ""):
            return QueueingHint.QUEUE_SKIP
    elif _requests(pod, DEVICE_CLASS_PREFIX + new.metadata.name):
        return QueueingHint.QUEUE
    if new.spec.extended_resource_name is not None and _requests(pod, new.spec.extended_resource_name):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _requests(pod: Pod, name: str) -> bool:
    """Whether resource.PodRequests of the pod has the name (asked by a container, an init
    container or the overhead, even as 0)."""
    spec = pod.spec
    return (any(name in c.resources.requests for c in (*spec.init_containers, *spec.containers))
            or name in (spec.overhead or {}))


def new(args: Mapping[str, Any], classes: ClassList | None = None,
        devices: DeviceScoring | None = None) -> NodeResourcesFit:
    """args as in NodeResourcesFitArgs: ignoredResources, ignoredResourceGroups, scoringStrategy;
    `classes` lists the DeviceClasses (the scheduler's informer), for extended resources backed by DRA,
    and `devices` counts their devices for the score."""
    strategy: Mapping[str, Any] = args.get("scoringStrategy") or {}
    kind = strategy.get("type") or LEAST_ALLOCATED
    if kind not in _STRATEGIES:
        raise ValueError(f"NodeResourcesFit args: scoringStrategy.type {kind!r} is not supported; "
                         f"valid: {sorted(_STRATEGIES)}")
    return NodeResourcesFit(
        ignored_resources=list(args.get("ignoredResources") or ()),
        ignored_resource_groups=list(args.get("ignoredResourceGroups") or ()),
        strategy=kind,
        resources=rs.parse_resources(strategy.get("resources")),
        shape=_STRATEGIES[kind](strategy),
        classes=classes,
        devices=devices,
    )
