"""The structured allocator: which devices of one node's pools satisfy a set of unallocated
ResourceClaims, as k8s.io/dynamic-resource-allocation v0.37.2 computes it.

Upstream keeps three variants (structured/internal/{stable,incubating,experimental}) and
`NewAllocator` picks the first whose supported features cover the enabled ones. kube-scheduler
v1.37.2's default gates enable AdminAccess, PrioritizedList, PartitionableDevices, DeviceTaints,
ConsumableCapacity and DeviceBindingConditions+ResourceClaimDeviceStatus; "stable" lacks the last
two, so the "incubating" variant runs, and this is a port of it (allocator_incubating.go,
pools_incubating.go, constraint.go, consumable_capacity.go). FractionalCapacityRange is on only
with --min-compatibility-version 1.37, so off by default; the alpha features (list-type attributes,
derived attributes, compatibility groups, optional node operations) are off, and a claim that needs
them is refused as upstream refuses it.

The search is upstream's depth-first backtracking: claims in order, requests in order, for a
firstAvailable request its subrequests in order, and for each device wanted the pools sorted by
driver and name (pools with binding conditions last), their slices by name, the devices as listed,
each next device of a request searched from after the previous one. The first complete assignment
wins. The opaque configs of the classes and the claim are carried into each allocation, as
upstream's are.

A run's data is in run_data.py, its checks of a device in device_choice.py and its results in
claim_results.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from kubesched.model.resource import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    DeviceClass,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.capacity import (
    CapacityError,
    ConsumedCapacity,
    cmp_request_over_capacity,
)
from kubesched.plugins.dynamic_resources.claim_results import _ClaimResults
from kubesched.plugins.dynamic_resources.constraints import Constraint, new_constraint
from kubesched.plugins.dynamic_resources.counters import CounterTracker
from kubesched.plugins.dynamic_resources.device_choice import _DeviceChoice
from kubesched.plugins.dynamic_resources.pools import (
    AllocatorError,
    DeviceID,
    NodeAllocationError,
    NodeView,
    Pool,
    gather_pools,
)
from kubesched.plugins.dynamic_resources.run_data import (
    Key,
    _DeviceWithID,
    _MaxSizeExceeded,
    _RequestData,
    _Result,
)
from kubesched.plugins.dynamic_resources.selectors import (
    SelectorCache,
)
from kubesched.plugins.dynamic_resources.slice_layout import SliceLayout, slice_layout
from kubesched.plugins.dynamic_resources.state import (
    AllocatedState,
    ClaimAllocation,
    DeviceResult,
    Features,
    Request,
    claim_key,
    exact_request,
    sub_requests,
)

__all__ = ["AllocatedState", "Allocator", "AllocatorError", "ClaimAllocation", "DeviceID", "DeviceResult",
           "Features", "NodeAllocationError", "NodeView"]


_share_ids = random.Random()  # seeded from os.urandom


def random_share_id() -> str:
    """A random (version 4) UUID, as upstream's GenerateShareID makes. The allocator makes one for
    each shared device it tries on each node, and uuid.uuid4's syscall and object cost 2.5 times
    this; a share ID needs to be unique, not unpredictable."""
    h = "%032x" % ((_share_ids.getrandbits(128) & ~(0xF000C000 << 48)) | (0x40008000 << 48))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Allocator:
    """NewAllocator: the slices, classes and allocated state of one scheduling attempt; `allocate`
    runs once per node and keeps nothing of a run but the pools' available counters."""

    def __init__(self, slices: Sequence[ResourceSlice] | SliceLayout, classes: Mapping[str, DeviceClass],
                 allocated: AllocatedState, selectors: SelectorCache, features: Features | None = None, *,
                 new_share_id: Callable[[], str] = random_share_id,
                 aborted: Callable[[], str | None] = lambda: None) -> None:
        self.features = features or Features()
        self.allocated = allocated
        self.classes = classes
        self.selectors = selectors
        layout = slices if isinstance(slices, SliceLayout) else slice_layout(slices)
        self.all_slices = layout.all
        self.slices_on_node = layout.on_node
        self.slices_shared = layout.shared
        self.counters = CounterTracker(allocated.is_allocated)
        self.new_share_id = new_share_id
        # The context's cause when the attempt is cancelled (the filter timeout), else None.
        self.aborted = aborted
        self.num_allocate_one_invocations = 0

    def allocate(self, node: NodeView, claims: Sequence[ResourceClaim]) -> list[ClaimAllocation] | None:
        """One allocation per claim, or None when they cannot all be allocated on this node.
        Raises AllocatorError (the whole attempt fails) or NodeAllocationError (this node fails)."""
        run = _Run(self, node, claims)
        return run.allocate()


class _Run(_DeviceChoice, _ClaimResults):
    """The `allocator` of one Allocate call."""

    a: Allocator

    def __init__(self, a: Allocator, node: NodeView, claims: Sequence[ResourceClaim]) -> None:
        self.a = a
        self.features = a.features
        self.node = node
        self.claims = claims
        self.pools: list[Pool] = []
        self.matches: dict[tuple[DeviceID, Key], bool] = {}
        self.constraints: list[list[Constraint]] = [[] for _ in claims]
        self.request_data: dict[Key, _RequestData] = {}
        self.allocating_devices: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, ConsumedCapacity] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.counters = a.counters.start()

    # --- setup ------------------------------------------------------------------------------------

    def allocate(self) -> list[ClaimAllocation] | None:
        a, f = self.a, self.features
        slices_for_node = a.slices_on_node.get(self.node.name, []) + a.slices_shared
        self.pools = gather_pools(slices_for_node, self.node, a.all_slices,
                                  partitionable_devices=f.partitionable_devices)
        for ci, claim in enumerate(self.claims):
            min_per_claim = 0
            for ri, request in enumerate(claim.spec.devices.requests):
                subs = sub_requests(request)
                if not f.prioritized_list and subs:
                    raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: has subrequests, "
                                         "but the DRAPrioritizedList feature is disabled")
                if not f.consumable_capacity:
                    if request.exactly is not None and request.exactly.capacity is not None:
                        raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: has capacity "
                                             "requests, but the DRAConsumableCapacity feature is disabled")
                    for api_sub in request.first_available:
                        if api_sub.capacity is not None:
                            raise AllocatorError(f"claim {claim_key(claim)}, subrequest {api_sub.name}: has capacity "
                                                 "requests, but the DRAConsumableCapacity feature is disabled")
                if subs:
                    parent = exact_request(request)
                    min_per_request = -1
                    for si, sub in enumerate(subs):
                        data = self._validate_request(sub, parent, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = data
                        min_per_request = data.num_devices if min_per_request < 0 else \
                            min(min_per_request, data.num_devices)
                else:
                    data = self._validate_request(exact_request(request), None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    min_per_request = data.num_devices
                if min_per_request > ALLOCATION_RESULTS_MAX_SIZE - min_per_claim:
                    raise AllocatorError(
                        f"claim {claim_key(claim)}, request {request.name}: adding {min_per_request} devices "
                        f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_per_claim} "
                        "already accounted for")
                min_per_claim += min_per_request
            constraints: list[Constraint] = []
            for i, c in enumerate(claim.spec.devices.constraints):
                constraint = new_constraint(c)
                if constraint is None:
                    raise AllocatorError(f"claim {claim_key(claim)}, constraint #{i}: empty constraint "
                                         "(unsupported constraint type?)")
                constraints.append(constraint)
            self.constraints[ci] = constraints
        self.matches = {}

        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            raise AllocatorError("allocation max size exceeded") from None
        if not done:
            if any(p.is_invalid for p in self.pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return [self._claim_result(ci) for ci in range(len(self.claims))]

    def _validate_request(self, request: Request, parent: Request | None, key: Key) -> _RequestData:
        claim = self.claims[key[0]]
        data = _RequestData(request, parent)
        where = f"claim {claim_key(claim)}, request {request.name}"
        for i, selector in enumerate(request.selectors):
            if selector.cel is None:
                raise AllocatorError(f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)")
        if not self.features.admin_access and request.has_admin_access:
            raise AllocatorError(f"{where}: admin access is requested, but the feature is disabled")
        if not request.device_class_name:
            raise AllocatorError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.a.classes.get(request.device_class_name)
        if device_class is None:
            raise AllocatorError(f"{where}: could not retrieve device class {request.device_class_name}: "
                                 f'deviceclass.resource.k8s.io "{request.device_class_name}" not found')
        data.device_class = device_class
        if request.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = request.count
        elif request.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocatorError(f"{where}: asks for all devices, but resource pool {pool.id} "
                                         "is currently being updated")
                if pool.is_invalid:
                    raise AllocatorError(f"{where}: asks for all devices, but resource pool {pool.id} "
                                         "is currently invalid")
                for s in pool.device_slices_targeting_node:
                    for device in s.spec.devices:
                        if not self._is_selectable(key, data, s, device):
                            continue
                        if self.features.consumable_capacity:
                            try:
                                fits = cmp_request_over_capacity({}, request.capacity_requests, device.capacity,
                                                                 {}, self.features.fractional_capacity_range)
                            except CapacityError as e:
                                raise AllocatorError(f"{where}: checking capacity for device {device.name}: "
                                                     f"{e}") from None
                            if not fits:
                                continue
                        data.all_devices.append(_DeviceWithID(
                            DeviceID(s.spec.driver, s.spec.pool.name, device.name), device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocatorError(f"{where}: unsupported count mode {request.allocation_mode}")
        return data

    # --- the search -------------------------------------------------------------------------------

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, allocate_sub_request: bool,
                      start: tuple[int, int, int]) -> bool:
        self.a.num_allocate_one_invocations += 1
        cause = self.a.aborted()
        if cause is not None:
            raise AllocatorError(f"filter operation aborted: {cause}")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.devices.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.request_data[key]
        if not allocate_sub_request and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    success = self._allocate_one(ci, ri, sub, di, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    data.selected_sub_request_index = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False

        request = data.request
        do_all = request.allocation_mode == ALLOCATION_MODE_ALL
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE - len(self.results[ci]):
            raise _MaxSizeExceeded

        if do_all:
            ok, undo = self._allocate_device(ci, ri, si, data.all_devices[di], must=True)
            if not ok:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, allocate_sub_request, (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        start_pool, start_slice, start_device = start
        for pi in range(start_pool, len(self.pools)):
            pool = self.pools[pi]
            if pool.is_incomplete or pool.is_invalid:
                continue
            slice_start = start_slice if pi == start_pool else 0
            for sli in range(slice_start, len(pool.device_slices_targeting_node)):
                s = pool.device_slices_targeting_node[sli]
                device_start = start_device if pi == start_pool and sli == start_slice else 0
                devices = s.spec.devices
                for dvi in range(device_start, len(devices)):
                    device = devices[dvi]
                    device_id = DeviceID(pool.id.driver, pool.id.pool, device.name)
                    if request.admin_access:
                        if ci in self.allocating_devices.get(device_id, ()):
                            continue
                    elif self._device_in_use(device_id):
                        continue
                    if not self._is_selectable(key, data, s, device):
                        continue
                    if self.features.consumable_capacity and not self._capacity_fits(claim, data, device_id, device):
                        continue
                    ok, undo = self._allocate_device(ci, ri, si, _DeviceWithID(device_id, device, s, pool),
                                                     must=False)
                    if not ok:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, allocate_sub_request, (pi, sli, dvi + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False
