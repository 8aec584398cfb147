"""Pod and node resource arithmetic, as kube-scheduler's resource helpers compute it.

Requests are summed as exact decimals and rounded up only at the end (MilliValue for cpu, Value
otherwise), as Quantity arithmetic does, so odd quantities round exactly like kube-scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import lru_cache

from kubesched.model.objects import Container, ContainerStatus, Pod
from kubesched.model.quantity import ceil_int64, parse_decimal

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Scoring counts a container without a request as asking for this much (kube-scheduler util).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

DEFAULT_NON_MISSING: Mapping[str, Decimal] = {
    CPU: Decimal(DEFAULT_MILLI_CPU_REQUEST) / 1000,
    MEMORY: Decimal(DEFAULT_MEMORY_REQUEST),
}

_ZERO = Decimal(0)


@lru_cache(maxsize=4096)
def quantity(text: str) -> Decimal:
    return parse_decimal(text)


# One object's amounts saturate at int64 max (model.quantity); the sums over a node's pods stay exact
# Python ints, so removing a pod restores them exactly, and the snapshot saturates its columns.

def milli_of(d: Decimal) -> int:
    return ceil_int64(d * 1000)


def value_of(d: Decimal) -> int:
    return ceil_int64(d)


def amount(name: str, d: Decimal) -> int:
    return milli_of(d) if name == CPU else value_of(d)


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    return not is_native_resource(name) and not name.startswith("requests.")


def is_scalar_resource_name(name: str) -> bool:
    """Resources kube-scheduler tracks beyond cpu/memory/ephemeral-storage/pods."""
    return (is_extended_resource_name(name) or name.startswith("hugepages-")
            or "kubernetes.io/" in name or name.startswith("attachable-volumes-"))


def _is_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def pod_level_requests_set(pod: Pod) -> bool:
    res = pod.spec.resources
    return res is not None and any(_is_pod_level_resource(n) for n in res.requests)


def _parsed(requests: Mapping[str, str]) -> dict[str, Decimal]:
    return {name: quantity(text) for name, text in requests.items()}


def _add(into: dict[str, Decimal], other: Mapping[str, Decimal]) -> None:
    for name, q in other.items():
        into[name] = into.get(name, _ZERO) + q


def _max_into(into: dict[str, Decimal], other: Mapping[str, Decimal]) -> None:
    for name, q in other.items():
        cur = into.get(name)
        if cur is None or q > cur:
            into[name] = q


# Where a container's requests come from, given its status (or None) and whether the pod's resize
# is infeasible: component-helpers' containerSpecRequests / containerAllocatedRequests /
# containerActuatedRequests. None means "nothing" (Go's nil list).
_Source = Callable[[Container, ContainerStatus | None, bool], Mapping[str, str] | None]


def _spec_source(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, str] | None:
    return c.resources.requests


def _allocated_source(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, str] | None:
    if cs is not None and cs.allocated_resources is not None:
        return cs.allocated_resources
    return None if infeasible else c.resources.requests


def _actuated_source(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, str] | None:
    if cs is not None and cs.resources is not None and cs.resources.requests is not None:
        return cs.resources.requests
    if cs is not None and cs.allocated_resources is not None:
        return cs.allocated_resources
    return None if infeasible else c.resources.requests


def is_pod_resize_infeasible(pod: Pod) -> bool:
    """The first PodResizePending condition says Infeasible (component-helpers IsPodResizeInfeasible)."""
    for cond in pod.status.conditions:
        if cond.type == "PodResizePending":
            return cond.reason == "Infeasible"
    return False


def status_may_differ(pod: Pod) -> bool:
    """Whether pod_requests reads the pod's status (a resize under way or infeasible): a pending pod's
    requests are then a function of its spec alone."""
    return _has_resize_status(pod) or is_pod_resize_infeasible(pod)


def _has_resize_status(pod: Pod) -> bool:
    """Whether any status source can differ from the spec; without one, all three sources are the spec."""
    status = pod.status
    if status.resources is not None or status.allocated_resources is not None:
        return True
    for statuses in (status.container_statuses, status.init_container_statuses):
        for cs in statuses or ():
            if cs.allocated_resources is not None or cs.resources is not None:
                return True
    return False


def _find_status(pod: Pod, name: str) -> ContainerStatus | None:
    """Containers' statuses first, then init containers', by name (component-helpers findContainerStatus)."""
    for statuses in (pod.status.container_statuses, pod.status.init_container_statuses):
        for cs in statuses or ():
            if cs.name == name:
                return cs
    return None


def _container_requests(requests: Mapping[str, str] | None,
                        non_missing: Mapping[str, Decimal] | None) -> dict[str, Decimal]:
    reqs = _parsed(requests) if requests else {}
    if non_missing:
        for name, q in non_missing.items():
            if requests is None or name not in requests:
                reqs[name] = q
    return reqs


def _aggregate(pod: Pod, source: _Source, non_missing: Mapping[str, Decimal] | None,
               use_status: bool, infeasible: bool) -> dict[str, Decimal]:
    """Containers add up; an init container runs alone (plus the restartable sidecars started before
    it), so the pod needs the larger of the two; sidecars keep running and add to the containers."""
    spec = pod.spec

    def requests(c: Container) -> dict[str, Decimal]:
        cs = _find_status(pod, c.name) if use_status else None
        return _container_requests(source(c, cs, infeasible), non_missing)

    result: dict[str, Decimal] = {}
    for c in spec.containers:
        _add(result, requests(c))
    if spec.init_containers:
        sidecars: dict[str, Decimal] = {}
        init_peak: dict[str, Decimal] = {}
        for c in spec.init_containers:
            reqs = requests(c)
            if c.restart_policy == "Always":
                _add(result, reqs)
                _add(sidecars, reqs)
                running = dict(sidecars)
            else:
                running = dict(reqs)
                _add(running, sidecars)
            _max_into(init_peak, running)
        _max_into(result, init_peak)
    return result


def _max_of(*lists: Mapping[str, Decimal] | None) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for reqs in lists:
        if reqs:
            _max_into(out, reqs)
    return out


def pod_requests(pod: Pod, non_missing: Mapping[str, Decimal] | None = None,
                 use_status: bool = True) -> dict[str, Decimal]:
    """component-helpers v0.37.2 resource.PodRequests as kube-scheduler's NodeInfo calls it:
    PodLevelResources, InPlacePodVerticalScaling (UseStatusResources) and
    InPlacePodLevelResourcesVerticalScaling all on.

    A running pod counts for the larger of what its spec asks, what the kubelet allocated and what
    it actuated (status.resources), each summed over the containers first; when the resize is
    infeasible the spec is left out. Pod-level status maps, when both are set, stand for the
    containers' allocated/actuated sums. Pod-level cpu/memory/hugepages requests replace the
    containers' sum; overhead is added on top. `non_missing` fills a container's missing requests
    (the scoring defaults). A pending pod has no status sources, so for it this is its spec (what
    NodeResourcesFit's PreFilter computes without UseStatusResources).
    """
    spec = pod.spec
    status = pod.status
    with_status = use_status and (_has_resize_status(pod) or is_pod_resize_infeasible(pod))
    infeasible = with_status and is_pod_resize_infeasible(pod)
    result = _aggregate(pod, _spec_source, non_missing, with_status, infeasible)
    if with_status:
        allocated: Mapping[str, Decimal]
        actuated: Mapping[str, Decimal]
        if (status.allocated_resources is not None and status.resources is not None
                and status.resources.requests is not None):
            allocated = _parsed(status.allocated_resources)
            actuated = _parsed(status.resources.requests)
        else:
            allocated = _aggregate(pod, _allocated_source, non_missing, True, infeasible)
            actuated = _aggregate(pod, _actuated_source, non_missing, True, infeasible)
        result = _max_of(actuated, allocated) if infeasible else _max_of(result, actuated, allocated)
    if spec.resources is not None and pod_level_requests_set(pod):
        effective = _parsed(spec.resources.requests)
        if with_status and status.resources is not None:
            effective = _max_of(None if infeasible else effective,
                                _parsed(status.resources.requests or {}),
                                _parsed(status.allocated_resources or {}))
        for name, q in effective.items():
            if _is_pod_level_resource(name):
                result[name] = q
    if spec.overhead:
        _add(result, _parsed(spec.overhead))
    return result


class Resource:
    """Integer resource amounts: millicores for cpu, units (bytes) otherwise (kube-scheduler Resource)."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0,
                 allowed_pod_number: int = 0, scalar: dict[str, int] | None = None) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = scalar if scalar is not None else {}

    @classmethod
    def from_decimals(cls, reqs: Mapping[str, Decimal]) -> Resource:
        r = cls()
        for name, q in reqs.items():
            if name == CPU:
                r.milli_cpu += milli_of(q)
            elif name == MEMORY:
                r.memory += value_of(q)
            elif name == EPHEMERAL_STORAGE:
                r.ephemeral_storage += value_of(q)
            elif name == PODS:
                r.allowed_pod_number += value_of(q)
            elif is_scalar_resource_name(name):
                r.scalar[name] = r.scalar.get(name, 0) + value_of(q)
        return r

    @classmethod
    def from_list(cls, resources: Mapping[str, str]) -> Resource:
        return cls.from_decimals(_parsed(resources))

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalar)

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        for name, v in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * v

    def copy(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                {k: v for k, v in self.scalar.items() if v}) == (
                other.milli_cpu, other.memory, other.ephemeral_storage, other.allowed_pod_number,
                {k: v for k, v in other.scalar.items() if v})

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, "
                f"ephemeral_storage={self.ephemeral_storage}, pods={self.allowed_pod_number}, "
                f"scalar={self.scalar})")
