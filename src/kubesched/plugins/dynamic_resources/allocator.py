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
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from kubesched.model.resource import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_RESULTS_MAX_SIZE,
    CONFIG_SOURCE_CLAIM,
    CONFIG_SOURCE_CLASS,
    Device,
    DeviceAllocationConfiguration,
    DeviceClass,
    DeviceSelector,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.capacity import (
    CapacityError,
    ConsumedCapacity,
    cmp_request_over_capacity,
    consumed_capacity_from_request,
)
from kubesched.plugins.dynamic_resources.constraints import Constraint, new_constraint
from kubesched.plugins.dynamic_resources.counters import CounterTracker
from kubesched.plugins.dynamic_resources.pools import (
    AllocatorError,
    DeviceID,
    NodeAllocationError,
    NodeView,
    Pool,
    gather_pools,
    node_matches,
)
from kubesched.plugins.dynamic_resources.results import allocation_node_selector
from kubesched.plugins.dynamic_resources.selectors import (
    CelDevice,
    SelectorCache,
    SelectorCompileError,
    SelectorRuntimeError,
)
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
from kubesched.plugins.dynamic_resources.taints import taint_prevents_allocation

__all__ = ["AllocatedState", "Allocator", "AllocatorError", "ClaimAllocation", "DeviceID", "DeviceResult",
           "Features", "NodeAllocationError", "NodeView"]


@dataclass(slots=True)
class _DeviceWithID:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@dataclass(slots=True)
class _RequestData:
    request: Request
    parent: Request | None
    device_class: DeviceClass | None = None
    num_devices: int = 0
    # The subrequest picked (kept on the first subrequest's entry, as upstream does; upstream reads it
    # only to copy class config into the result, which kubesched does not write).
    selected_sub_request_index: int = 0
    all_devices: list[_DeviceWithID] = field(default_factory=list)


@dataclass(slots=True)
class _Result:
    request: str
    parent_request: str
    id: DeviceID
    device: Device
    slice: ResourceSlice
    request_data: _RequestData
    share_id: str | None = None
    consumed_capacity: dict[str, Decimal] = field(default_factory=dict)
    admin_access: bool | None = None


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: unwinds to the next subrequest or claim boundary."""


Key = tuple[int, int, int]  # claim, request, subrequest


class Allocator:
    """NewAllocator: the slices, classes and allocated state of one scheduling attempt; `allocate`
    runs once per node and keeps nothing of a run but the pools' available counters."""

    def __init__(self, slices: Sequence[ResourceSlice], classes: Mapping[str, DeviceClass],
                 allocated: AllocatedState, selectors: SelectorCache, features: Features | None = None, *,
                 new_share_id: Callable[[], str] = lambda: str(uuid.uuid4()),
                 aborted: Callable[[], str | None] = lambda: None) -> None:
        self.features = features or Features()
        self.allocated = allocated
        self.classes = classes
        self.selectors = selectors
        self.all_slices = list(slices)
        self.slices_on_node: dict[str, list[ResourceSlice]] = {}
        self.slices_shared: list[ResourceSlice] = []
        for s in slices:
            if s.spec.node_name:
                self.slices_on_node.setdefault(s.spec.node_name, []).append(s)
            else:
                self.slices_shared.append(s)
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


class _Run:
    """The `allocator` of one Allocate call."""

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

    def _is_selectable(self, key: Key, data: _RequestData, s: ResourceSlice, device: Device) -> bool:
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        device_id = DeviceID(s.spec.driver, s.spec.pool.name, device.name)
        cache_key = (device_id, key)
        cached = self.matches.get(cache_key)
        if cached is not None:
            return cached
        match = True
        if data.device_class is not None:
            match = self._selectors_match(key, device, device_id, data.device_class, data.device_class.spec.selectors)
        if match:
            match = self._selectors_match(key, device, device_id, None, data.request.selectors)
        if match and s.spec.per_device_node_selection:
            match = node_matches(self.node, device.node_name or "", bool(device.all_nodes), device.node_selector)
        self.matches[cache_key] = match
        return match

    def _selectors_match(self, key: Key, device: Device, device_id: DeviceID, device_class: DeviceClass | None,
                         selectors: list[DeviceSelector]) -> bool:
        who = f"class {device_class.metadata.name}" if device_class is not None else \
            f"claim {claim_key(self.claims[key[0]])}"
        for i, selector in enumerate(selectors):
            if selector.cel is None:
                raise AllocatorError(f"{who}: selector #{i}: CEL expression empty (unsupported selector type?)")
            compiled = self.a.selectors.get(selector.cel.expression)
            if isinstance(compiled, SelectorCompileError):
                raise AllocatorError(f"{who}: selector #{i}: CEL compile error: {compiled}")
            try:
                matches = compiled(CelDevice(device_id.driver, device.allow_multiple_allocations,
                                             device.attributes, device.capacity))
            except SelectorRuntimeError as e:
                raise AllocatorError(f"{who}: selector #{i} on device {device_id}: CEL runtime error: {e}") from None
            if not matches:
                return False
        return True

    def _capacity_fits(self, claim: ResourceClaim, data: _RequestData, device_id: DeviceID, device: Device,
                       verb: str = "checking") -> bool:
        try:
            return cmp_request_over_capacity(self.a.allocated.aggregated_capacity.get(device_id, {}),
                                             data.request.capacity_requests, device.capacity,
                                             self.allocating_capacity.get(device_id, {}),
                                             self.features.fractional_capacity_range)
        except CapacityError as e:
            raise AllocatorError(f"claim {claim_key(claim)}, request {data.request.name}: {verb} capacity for "
                                 f"device {device_id}: {e}") from None

    def _device_in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated.allocated_devices or bool(self.allocating_devices.get(device_id))

    def _device_capacity_in_use(self, device_id: DeviceID) -> bool:
        allocated = self.a.allocated
        return (device_id in allocated.aggregated_capacity
                or any(d == device_id for d, _ in allocated.allocated_shared_device_ids)
                or device_id in self.allocating_capacity)

    def _allocate_device(self, ci: int, ri: int, si: int, d: _DeviceWithID,
                         must: bool) -> tuple[bool, Callable[[], None]]:
        """allocateDevice: (allocated, undo)."""
        claim = self.claims[ci]
        data = self.request_data[(ci, ri, si)]
        request = data.request
        device = d.device
        multi = self.features.consumable_capacity and device.allow_multiple_allocations is True
        if not multi and request.admin_access and ci in self.allocating_devices.get(d.id, ()):
            return False, _nothing
        if not request.admin_access and self._device_in_use(d.id):
            return False, _nothing
        if not self.features.partitionable_devices and device.consumes_counters:
            return False, _nothing
        skip_counter_check = multi and self._device_capacity_in_use(d.id)
        counters_reserved = False
        if not skip_counter_check and device.consumes_counters:
            if not self.counters.reserve(d.pool, device):
                return False, _nothing
            counters_reserved = True
        if data.parent is None:
            base_name, sub_name = request.name, ""
        else:
            base_name, sub_name = data.parent.name, request.name
        previous_results = len(self.results[ci])
        constraints_added = 0
        device_marked = False
        capacity_inserted: ConsumedCapacity | None = None
        capacity_entry_existed = False
        result_added = False

        def rollback() -> None:
            if result_added:
                del self.results[ci][previous_results:]
            if capacity_inserted is not None:
                self._remove_allocating_capacity(d.id, capacity_inserted, capacity_entry_existed)
            if device_marked:
                self.allocating_devices[d.id].discard(ci)
            for i in range(constraints_added - 1, -1, -1):
                self.constraints[ci][i].remove(base_name, sub_name, device, d.id)
            if counters_reserved:
                self.counters.release(d.pool, device)

        if self.features.device_taints and taint_prevents_allocation(device.taints, request.tolerations):
            rollback()
            return False, _nothing
        for constraint in self.constraints[ci]:
            if not constraint.add(base_name, sub_name, device, d.id):
                rollback()
                if must:
                    raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: cannot add device "
                                         f"{d.id} because a claim constraint would not be satisfied")
                return False, _nothing
            constraints_added += 1
        if not multi:
            self.allocating_devices.setdefault(d.id, set()).add(ci)
            device_marked = True
        consumed: dict[str, Decimal] = {}
        share_id: str | None = None
        if self.features.consumable_capacity:
            try:
                fits = self._capacity_fits(claim, data, d.id, device, "rechecking")
            except AllocatorError:
                rollback()
                raise
            if not fits:
                rollback()
                return False, _nothing
            if multi:
                try:
                    consumed = consumed_capacity_from_request(request.capacity_requests, device.capacity,
                                                              self.features.fractional_capacity_range)
                except CapacityError as e:
                    rollback()
                    raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: computing consumed "
                                         f"capacity for device {d.id}: {e}") from None
                share_id = self.a.new_share_id()
                capacity_entry_existed = d.id in self.allocating_capacity
                self._insert_allocating_capacity(d.id, consumed)
                capacity_inserted = consumed
        self.results[ci].append(_Result(
            request=request.name, parent_request=base_name if sub_name else "", id=d.id, device=device,
            slice=d.slice, request_data=data, share_id=share_id, consumed_capacity=dict(consumed),
            admin_access=True if request.admin_access else None))
        result_added = True
        return True, rollback

    def _insert_allocating_capacity(self, device_id: DeviceID, consumed: ConsumedCapacity) -> None:
        current = self.allocating_capacity.setdefault(device_id, {})
        for name, amount in consumed.items():
            current[name] = current.get(name, Decimal(0)) + amount

    def _remove_allocating_capacity(self, device_id: DeviceID, consumed: ConsumedCapacity, existed: bool) -> None:
        current = self.allocating_capacity.get(device_id)
        if current is None:
            return
        for name, amount in consumed.items():
            if name in current:
                current[name] -= amount
        if all(v == 0 for v in current.values()):
            del self.allocating_capacity[device_id]
            if existed:
                # An entry that was there before this device's insert stays, if only empty: it still
                # counts as "capacity in use" (upstream's rollbackDevice).
                self.allocating_capacity[device_id] = {}

    # --- the result -------------------------------------------------------------------------------

    def _claim_result(self, ci: int) -> ClaimAllocation:
        out: list[DeviceResult] = []
        for r in self.results[ci]:
            data = r.request_data
            out.append(DeviceResult(
                request=r.request if not r.parent_request else f"{r.parent_request}/{r.request}",
                driver=r.id.driver, pool=r.id.pool, device=r.id.device, admin_access=r.admin_access,
                tolerations=list(data.request.tolerations), share_id=r.share_id,
                consumed_capacity=r.consumed_capacity,
                capacity_sources=_capacity_sources(r.consumed_capacity, data.request, r.device),
                binding_conditions=list(r.device.binding_conditions or []) if self.features.device_binding_and_status
                else [],
                binding_failure_conditions=list(r.device.binding_failure_conditions)
                if self.features.device_binding_and_status else []))
        picked = [(r.slice, r.device) for r in self.results[ci]]
        return ClaimAllocation(out, allocation_node_selector(picked, self.node.name, self.claims[ci].metadata.name),
                               self._claim_config(ci))

    def _selected(self, ci: int, ri: int) -> _RequestData:
        """The request's data, or for a firstAvailable request its chosen subrequest's."""
        data = self.request_data[(ci, ri, 0)]
        if data.parent is not None:
            data = self.request_data[(ci, ri, data.selected_sub_request_index)]
        return data

    def _claim_config(self, ci: int) -> list[DeviceAllocationConfiguration]:
        """The class configs of the requests' classes (each class's once, naming every request of
        it), then the claim's configs that name an allocated request; a config naming every request
        names none ("all")."""
        claim = self.claims[ci]
        requests = claim.spec.devices.requests
        config: list[DeviceAllocationConfiguration] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(requests)):
            data = self._selected(ci, ri)
            cls = data.device_class
            if cls is None:
                continue
            name = _request_name(data)
            found = class_ranges.get(cls.metadata.name)
            if found is not None:
                for i in range(*found):
                    config[i].requests.append(name)
                continue
            start = len(config)
            config.extend(DeviceAllocationConfiguration(CONFIG_SOURCE_CLASS, [name], c.opaque)
                          for c in cls.spec.config)
            class_ranges[cls.metadata.name] = (start, len(config))
        for c in claim.spec.devices.config:
            if not c.requests:
                config.append(DeviceAllocationConfiguration(CONFIG_SOURCE_CLAIM, [], c.opaque))
                continue
            for ri, request in enumerate(requests):
                if request.name in c.requests:
                    config.append(DeviceAllocationConfiguration(CONFIG_SOURCE_CLAIM, list(c.requests), c.opaque))
                    break
                data = self._selected(ci, ri)
                if data.parent is not None and _request_name(data) in c.requests:
                    config.append(DeviceAllocationConfiguration(CONFIG_SOURCE_CLAIM, list(c.requests), c.opaque))
                    break
        for entry in config:
            if entry.requests and all(
                    request.name in entry.requests or _request_name(self._selected(ci, ri)) in entry.requests
                    for ri, request in enumerate(requests)):
                entry.requests = []
        return config


def _capacity_sources(consumed: Mapping[str, Decimal], request: Request, device: Device) -> dict[str, str]:
    """For each consumed capacity, the quantity text it was computed from (the request's, the
    policy's default, or the device's capacity): its format is the one a Go Quantity keeps."""
    out: dict[str, str] = {}
    requests = request.capacity_requests or {}
    for name in consumed:
        cap = device.capacity.get(name)
        policy = cap.request_policy if cap is not None else None
        if name in requests:
            out[name] = requests[name]
        elif policy is not None and policy.default is not None:
            out[name] = policy.default
        elif cap is not None:
            out[name] = cap.value
    return out


def _request_name(data: _RequestData) -> str:
    return data.request.name if data.parent is None else f"{data.parent.name}/{data.request.name}"


def _nothing() -> None:
    pass
