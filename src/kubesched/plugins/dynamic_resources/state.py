"""The allocator's inputs and outputs besides the API objects: its feature switches, the devices
already allocated, the results, and a uniform view of `exactly` requests and firstAvailable
subrequests (upstream's requestAccessor)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from kubesched.model.objects import NodeSelector
from kubesched.model.resource import (
    DeviceAllocationConfiguration,
    DeviceRequest,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
)
from kubesched.plugins.dynamic_resources.capacity import ConsumedCapacity
from kubesched.plugins.dynamic_resources.pools import DeviceID


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's feature switches, at kube-scheduler v1.37.2's defaults."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = False


@dataclass(slots=True)
class AllocatedState:
    """Devices allocated to claims already (or in flight), as the scheduler gathers them."""

    allocated_devices: set[DeviceID] = field(default_factory=set)
    # (device, shareID) of the allocations of devices that allow multiple allocations.
    allocated_shared_device_ids: set[tuple[DeviceID, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, ConsumedCapacity] = field(default_factory=dict)
    # For the kept outcomes (node_outcomes.py): per pool (driver, pool name), a number that changes
    # whenever what the allocated or in-flight claims take of it changes. None when the state was
    # not gathered from a tracker: nothing is kept then.
    pool_marks: dict[tuple[str, str], int] | None = None
    # The devices of allocated_shared_device_ids, built at the first question (the state is complete
    # by then): upstream scans every shared allocation for each device it checks, which made an
    # attempt on a cluster full of shared devices quadratic (ConsumableCapacity/full_1000nodes).
    _shared_devices: set[DeviceID] | None = field(default=None, init=False, repr=False, compare=False)

    def is_shared(self, device_id: DeviceID) -> bool:
        """Whether some allocation shares the device (a DeviceID of allocated_shared_device_ids)."""
        shared = self._shared_devices
        if shared is None:
            shared = self._shared_devices = {d for d, _ in self.allocated_shared_device_ids}
        return device_id in shared

    def is_allocated(self, device_id: DeviceID) -> bool:
        """IsDeviceAllocated: taken whole, shared, or with capacity consumed."""
        return (device_id in self.allocated_devices or self.is_shared(device_id)
                or device_id in self.aggregated_capacity)


@dataclass(slots=True)
class DeviceResult:
    """One device of an allocation (DeviceRequestAllocationResult)."""

    request: str  # "<request>" or "<request>/<subrequest>"
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = field(default_factory=list)
    share_id: str | None = None
    consumed_capacity: dict[str, Decimal] = field(default_factory=dict)
    binding_conditions: list[str] = field(default_factory=list)
    binding_failure_conditions: list[str] = field(default_factory=list)
    # The quantity text each consumed capacity came from (for the format it is written in).
    capacity_sources: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(slots=True)
class ClaimAllocation:
    """The allocation of one claim: its devices in the order found, and where they can be used
    (None: every node)."""

    results: list[DeviceResult]
    node_selector: NodeSelector | None
    # The opaque configs of the classes and the claim, for the requests they apply to.
    config: list[DeviceAllocationConfiguration] = field(default_factory=list)


class Request:
    """requestAccessor: an `exactly` request or one firstAvailable subrequest, read alike."""

    __slots__ = ("admin_access", "allocation_mode", "capacity_requests", "count", "device_class_name",
                 "has_admin_access", "name", "selectors", "tolerations")

    def __init__(self, name: str, device_class_name: str, allocation_mode: str, count: int,
                 admin_access: bool | None, selectors: list[DeviceSelector],
                 tolerations: list[DeviceToleration], capacity_requests: dict[str, str] | None) -> None:
        self.name = name
        self.device_class_name = device_class_name
        self.allocation_mode = allocation_mode
        self.count = count
        self.admin_access = bool(admin_access)
        self.has_admin_access = admin_access is not None
        self.selectors = selectors
        self.tolerations = tolerations
        self.capacity_requests = capacity_requests


def exact_request(request: DeviceRequest) -> Request:
    e = request.exactly
    if e is None:
        return Request(request.name, "", "", 0, None, [], [], None)
    return Request(request.name, e.device_class_name, e.allocation_mode, e.count, e.admin_access, e.selectors,
                    e.tolerations, None if e.capacity is None else e.capacity.requests)


def sub_requests(request: DeviceRequest) -> list[Request]:
    return [Request(s.name, s.device_class_name, s.allocation_mode, s.count, None, s.selectors, s.tolerations,
                     None if s.capacity is None else s.capacity.requests) for s in request.first_available]


def claim_key(claim: ResourceClaim) -> str:
    """klog.KObj: namespace/name."""
    m = claim.metadata
    return f"{m.namespace}/{m.name}" if m.namespace else m.name
