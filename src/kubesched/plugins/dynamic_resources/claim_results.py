"""The allocation of each claim once the structured allocator's search succeeded: the devices
with their results, the node selector and the opaque configs of the classes and the claim; a part of
a run of the allocator (allocator.py)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from kubesched.model.resource import (
    CONFIG_SOURCE_CLAIM,
    CONFIG_SOURCE_CLASS,
    Device,
    DeviceAllocationConfiguration,
)
from kubesched.plugins.dynamic_resources.results import allocation_node_selector
from kubesched.plugins.dynamic_resources.run_data import (
    _RequestData,
    _RunFields,
)
from kubesched.plugins.dynamic_resources.state import (
    ClaimAllocation,
    DeviceResult,
    Request,
)


class _ClaimResults(_RunFields):
    """What the run found, as each claim's allocation."""

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
