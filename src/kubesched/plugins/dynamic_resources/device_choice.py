"""The structured allocator's checks of one device for a request (allocator_incubating.go
isSelectable, selectorsMatch, allocateDevice with its rollback, consumable capacity's bookkeeping):
a part of a run of the allocator (allocator.py)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from kubesched.model.resource import (
    Device,
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
from kubesched.plugins.dynamic_resources.pools import (
    AllocatorError,
    DeviceID,
    node_matches,
)
from kubesched.plugins.dynamic_resources.run_data import (
    Key,
    _DeviceWithID,
    _RequestData,
    _Result,
    _RunFields,
)
from kubesched.plugins.dynamic_resources.selectors import (
    SelectorCompileError,
    SelectorRuntimeError,
)
from kubesched.plugins.dynamic_resources.state import (
    claim_key,
)
from kubesched.plugins.dynamic_resources.taints import taint_prevents_allocation


class _DeviceChoice(_RunFields):
    """Whether a device can be taken for a request, and taking it."""

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
                matches = self.a.selectors.matches(selector.cel.expression, compiled, device_id.driver, device)
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
        return (device_id in allocated.aggregated_capacity or allocated.is_shared(device_id)
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


def _nothing() -> None:
    pass
