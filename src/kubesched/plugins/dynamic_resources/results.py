"""Where an allocation can be used: the node selector the allocator writes into a claim's
allocation (createNodeSelector): the node's name when a device is local to a node (a slice or,
with perDeviceNodeSelection, a device with a nodeName, or a device that binds to its node), else
the union of the requirements of the single-term node selectors of the devices' slices (or
devices), else none (available everywhere)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from decimal import Decimal

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.model.resource import (
    AllocationResult,
    Device,
    DeviceAllocationResult,
    DeviceRequestAllocationResult,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.pools import AllocatorError
from kubesched.plugins.dynamic_resources.state import ClaimAllocation, DeviceResult


def allocation_node_selector(picked: Sequence[tuple[ResourceSlice, Device]], node_name: str,
                             claim_name: str) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for s, device in picked:
        if s.spec.per_device_node_selection:
            name, selector = device.node_name, device.node_selector
        else:
            name, selector = s.spec.node_name, s.spec.node_selector
        if name is not None or device.binds_to_node:
            return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[NodeSelectorRequirement(
                key="metadata.name", operator="In", values=[node_name])])])
        if selector is not None:
            terms = selector.node_selector_terms
            if len(terms) == 1:
                _add_requirements(terms[0].match_fields, fields)
                _add_requirements(terms[0].match_expressions, expressions)
            elif len(terms) > 1:
                raise AllocatorError(f"create NodeSelector for claim {claim_name}: "
                                     f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if fields or expressions:
        return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=expressions,
                                                                  match_fields=fields)])
    return None


def _add_requirements(source: list[NodeSelectorRequirement], target: list[NodeSelectorRequirement]) -> None:
    for requirement in source:
        values = set(requirement.values)
        if not any(r.key == requirement.key and r.operator == requirement.operator and set(r.values) == values
                   for r in target):
            target.append(requirement)


def allocation_result(a: ClaimAllocation, new_share_id: Callable[[], str] | None = None) -> AllocationResult:
    """The AllocationResult the scheduler writes into the claim's status; with `new_share_id`, each
    shared device gets a new share ID (an allocation found for another pod, kept and reused)."""
    return AllocationResult(DeviceAllocationResult([_result(r, new_share_id) for r in a.results], list(a.config)),
                            node_selector=a.node_selector)


def _result(r: DeviceResult, new_share_id: Callable[[], str] | None) -> DeviceRequestAllocationResult:
    share_id = new_share_id() if new_share_id is not None and r.share_id is not None else r.share_id
    return DeviceRequestAllocationResult(
        request=r.request, driver=r.driver, pool=r.pool, device=r.device, admin_access=r.admin_access,
        tolerations=list(r.tolerations), binding_conditions=list(r.binding_conditions),
        binding_failure_conditions=list(r.binding_failure_conditions), share_id=share_id,
        consumed_capacity={name: quantity_text(amount, r.capacity_sources.get(name, ""))
                           for name, amount in r.consumed_capacity.items()})


_BINARY_SUFFIX = re.compile(r"[KMGTPE]i$")


def quantity_text(amount: Decimal, source: str) -> str:
    """An amount written so that the apiserver's canonical form of it is a Go Quantity's: binary
    (Ki, Mi, ...) when the quantity it came from was, else decimal."""
    if amount == amount.to_integral_value():
        whole = int(amount)
        if _BINARY_SUFFIX.search(source) and whole % 1024 == 0 and whole:
            return f"{whole // 1024}Ki"
        return str(whole)
    milli = amount * 1000
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return f"{int((amount * 10**9).to_integral_value())}n"
