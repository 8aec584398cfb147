"""Builders for the allocator tests, named and shaped as the helpers of upstream's
structured/internal/allocatortesting/allocator_testing.go (k8s.io/dynamic-resource-allocation
v0.37.2), and a CEL-free selector stub that understands the handful of expression shapes those
tests use."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectMeta
from kubesched.model.quantity import parse_decimal
from kubesched.model.resource import (
    CapacityRequirements,
    CELDeviceSelector,
    ClaimMeta,
    Counter,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaim,
    DeviceClass,
    DeviceClassSpec,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from kubesched.plugins.dynamic_resources.allocator import (
    AllocatedState,
    Allocator,
    AllocatorError,
    ClaimAllocation,
    DeviceID,
    Features,
    NodeView,
)
from kubesched.plugins.dynamic_resources.selectors import (
    CelDevice,
    CompiledSelector,
    SelectorCache,
    SelectorCompileError,
    SelectorRuntimeError,
)

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2, REQ3 = "req-0", "req-1", "req-2", "req-3"
SUB_REQ0, SUB_REQ1 = "subReq-0", "subReq-1"
REQ0_SUB_REQ0, REQ0_SUB_REQ1 = "req-0/subReq-0", "req-0/subReq-1"
REQ1_SUB_REQ0, REQ1_SUB_REQ1 = "req-1/subReq-0", "req-1/subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2, SLICE3, SLICE4 = "slice-1", "slice-2", "slice-3", "slice-4"
DEVICE0, DEVICE1, DEVICE2, DEVICE3, DEVICE4 = "device-0", "device-1", "device-2", "device-3", "device-4"
COUNTER_SET1, COUNTER_SET2 = "counter-set-1", "counter-set-2"
CAPACITY0, CAPACITY1 = "capacity-0", "capacity-1"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
FIELD_NAME_KEY, REGION_KEY, PLANET_KEY, PLANET_VALUE_EARTH = "metadata.name", "region", "planet", "earth"
NODE_SELECTION_ALL, NODE_SELECTION_PER_DEVICE = "nodeSelectionAll", "nodeSelectionPerDevice"

INT_ATTRIBUTE = DRIVER_A + "/numa"
VERSION_ATTRIBUTE = DRIVER_A + "/driverVersion"
STRING_ATTRIBUTE = DRIVER_A + "/stringAttribute"
BOOL_ATTRIBUTE = DRIVER_A + "/boolAttribute"
NON_EXISTENT_ATTRIBUTE = DRIVER_A + "/NonExistentAttribute"

NO_FEATURES = Features(admin_access=False, prioritized_list=False, partitionable_devices=False, device_taints=False,
                       device_binding_and_status=False, consumable_capacity=False, fractional_capacity_range=False)


def features(**on: bool) -> Features:
    """Upstream's Features{X: true}: everything else off."""
    return Features(**{**{f: False for f in Features.__dataclass_fields__}, **on})


def node(name: str, region: str) -> NodeView:
    return NodeView(name, {REGION_KEY: region, PLANET_KEY: PLANET_VALUE_EARTH})


def sel(expression: str) -> DeviceSelector:
    return DeviceSelector(cel=CELDeviceSelector(expression))


def device_class(name: str, driver: str) -> DeviceClass:
    return DeviceClass(ObjectMeta(name=name), DeviceClassSpec(selectors=[sel(f'device.driver == "{driver}"')]))


def class_with_allow_multiple_allocations(name: str, driver: str, multi: bool) -> DeviceClass:
    return DeviceClass(ObjectMeta(name=name), DeviceClassSpec(selectors=[
        sel(f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multi).lower()}')]))


def request(name: str, cls: str, count: int, *selectors: DeviceSelector, mode: str = "ExactCount",
            admin_access: bool | None = None, tolerations: Sequence[DeviceToleration] = (),
            capacity: str | None = None) -> DeviceRequest:
    return DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=cls, selectors=list(selectors), allocation_mode=mode, count=count,
        admin_access=admin_access, tolerations=list(tolerations),
        capacity=None if capacity is None else CapacityRequirements({CAPACITY0: capacity})))


def all_request(name: str, cls: str, **kw: Any) -> DeviceRequest:
    return request(name, cls, 0, mode="All", **kw)


def sub_request(name: str, cls: str, count: int, *selectors: DeviceSelector, mode: str = "ExactCount",
                tolerations: Sequence[DeviceToleration] = (), capacity: str | None = None) -> DeviceSubRequest:
    return DeviceSubRequest(name=name, device_class_name=cls, selectors=list(selectors), allocation_mode=mode,
                            count=count, tolerations=list(tolerations),
                            capacity=None if capacity is None else CapacityRequirements({CAPACITY0: capacity}))


def request_with_prioritized_list(name: str, *subs: DeviceSubRequest) -> DeviceRequest:
    return DeviceRequest(name=name, first_available=list(subs))


def claim_with_requests(name: str, constraints: Sequence[DeviceConstraint] | None,
                        *requests: DeviceRequest) -> ResourceClaim:
    return ResourceClaim(ClaimMeta(name=name), ResourceClaimSpec(DeviceClaim(list(requests), list(constraints or []))))


def claim_with_request(name: str, req: str, cls: str, *constraints: DeviceConstraint) -> ResourceClaim:
    return claim_with_requests(name, constraints, request(req, cls, 1))


def match(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(requests=list(requests), match_attribute=attribute)


def distinct(attribute: str, *requests: str) -> DeviceConstraint:
    return DeviceConstraint(requests=list(requests), distinct_attribute=attribute)


def attrs(**values: Any) -> dict[str, DeviceAttribute]:
    """int, bool and str values; a version as ("version", "1.0.0")."""
    out: dict[str, DeviceAttribute] = {}
    for name, v in values.items():
        if isinstance(v, tuple):
            out[name] = DeviceAttribute(version_value=v[1])
        elif isinstance(v, bool):
            out[name] = DeviceAttribute(bool_value=v)
        elif isinstance(v, int):
            out[name] = DeviceAttribute(int_value=v)
        elif v is None:
            out[name] = DeviceAttribute()
        else:
            out[name] = DeviceAttribute(string_value=v)
    return out


def device(name: str, capacity: Mapping[str, str] | None = None,
           attributes: Mapping[str, DeviceAttribute] | None = None, **kw: Any) -> Device:
    return Device(name=name, attributes=dict(attributes or {}),
                  capacity={k: DeviceCapacity(value=v) for k, v in (capacity or {}).items()}, **kw)


def counters(values: Mapping[str, str]) -> dict[str, Counter]:
    return {k: Counter(v) for k, v in values.items()}


def consumption(counter_set: str, values: Mapping[str, str]) -> DeviceCounterConsumption:
    return DeviceCounterConsumption(counter_set=counter_set, counters=counters(values))


def counter_set(name: str, values: Mapping[str, str]) -> CounterSet:
    return CounterSet(name, counters(values))


def resource_pool(name: str, count: int, generation: int = 1) -> ResourcePool:
    return ResourcePool(name=name, generation=generation, resource_slice_count=count)


def _slice(name: str, node_selection: str | NodeSelector, pool: str | ResourcePool, driver: str) -> ResourceSlice:
    spec = ResourceSliceSpec(driver=driver, pool=resource_pool(pool, 1) if isinstance(pool, str) else pool)
    if isinstance(node_selection, NodeSelector):
        spec.node_selector = node_selection
    elif node_selection == NODE_SELECTION_ALL:
        spec.all_nodes = True
    elif node_selection == NODE_SELECTION_PER_DEVICE:
        spec.per_device_node_selection = True
    else:
        spec.node_name = node_selection
    return ResourceSlice(ObjectMeta(name=name), spec)


def slice_with_devices(name: str, node_selection: str | NodeSelector, pool: str | ResourcePool, driver: str,
                       *devices: Device) -> ResourceSlice:
    s = _slice(name, node_selection, pool, driver)
    s.spec.devices = list(devices)
    return s


def slice_with_one_device(name: str, node_selection: str | NodeSelector, pool: str | ResourcePool,
                          driver: str) -> ResourceSlice:
    return slice_with_devices(name, node_selection, pool, driver, device(DEVICE1))


def slice_with_multiple_devices(name: str, node_selection: str | NodeSelector, pool: str | ResourcePool,
                                driver: str, count: int) -> ResourceSlice:
    return slice_with_devices(name, node_selection, pool, driver, *(device(f"device-{i}") for i in range(count)))


def slice_with_counter_sets(name: str, node_selection: str | NodeSelector, pool: str | ResourcePool, driver: str,
                            *sets: CounterSet) -> ResourceSlice:
    s = _slice(name, node_selection, pool, driver)
    s.spec.shared_counters = list(sets)
    return s


def node_label_selector(key: str, *values: str) -> NodeSelector:
    return NodeSelector([NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key, "In", list(values))])])


def local_node_selector(node_name: str) -> NodeSelector:
    return NodeSelector([NodeSelectorTerm(match_fields=[NodeSelectorRequirement(FIELD_NAME_KEY, "In", [node_name])])])


# --- expected results --------------------------------------------------------------------------------

@dataclass(frozen=True)
class R:
    """deviceAllocationResult"""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    tolerations: tuple[DeviceToleration, ...] = ()
    share_id: str | None = None
    consumed_capacity: tuple[tuple[str, Decimal], ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()


def consumed(share_id: str | None = FIXED_SHARE_ID, **values: str) -> dict[str, Any]:
    """withConsumedCapacity: keyword arguments for R."""
    return {"share_id": share_id,
            "consumed_capacity": tuple(sorted((k.replace("_", "-"), parse_decimal(v)) for k, v in values.items()))}


@dataclass(frozen=True)
class A:
    """allocationResult: the node selector and the devices."""

    selector: NodeSelector | None
    results: tuple[R, ...]


def allocation(selector: NodeSelector | None, *results: R) -> A:
    return A(selector, results)


@dataclass
class Case:
    id: str
    claims: list[ResourceClaim]
    classes: list[DeviceClass]
    slices: list[ResourceSlice]
    expect: list[A] | None = None  # None or []: nothing can be allocated
    features: Features = NO_FEATURES
    node: NodeView = field(default_factory=lambda: node(NODE1, REGION1))
    allocated: list[DeviceID] = field(default_factory=list)
    allocated_shared: set[tuple[DeviceID, str]] = field(default_factory=set)
    allocated_capacity: dict[DeviceID, dict[str, Decimal]] = field(default_factory=dict)
    error: str = ""  # a substring of the expected error
    invocations: int = 0  # expectNumAllocateOneInvocations, when upstream checks it


def _requirements(reqs: list[NodeSelectorRequirement]) -> frozenset[tuple[str, str, frozenset[str]]]:
    return frozenset((r.key, r.operator, frozenset(r.values)) for r in reqs)


def normalize_selector(s: NodeSelector | None) -> Any:
    if s is None:
        return None
    return sorted((sorted(_requirements(t.match_expressions)), sorted(_requirements(t.match_fields)))
                  for t in s.node_selector_terms)


def _got(a: ClaimAllocation) -> A:
    return A(a.node_selector, tuple(R(
        r.request, r.driver, r.pool, r.device, bool(r.admin_access), tuple(r.tolerations),
        FIXED_SHARE_ID if r.share_id is not None else None, tuple(sorted(r.consumed_capacity.items())),
        tuple(r.binding_conditions), tuple(r.binding_failure_conditions)) for r in a.results))


def run(case: Case, selectors: SelectorCache | None = None) -> None:
    """With the CEL-free stub unless `selectors` is given (the real CEL cache)."""
    allocated = AllocatedState(set(case.allocated), set(case.allocated_shared), dict(case.allocated_capacity))
    allocator = Allocator(case.slices, {c.metadata.name: c for c in case.classes}, allocated,
                          selectors if selectors is not None else SelectorCache(compile_stub), case.features)
    if case.error:
        with pytest.raises(AllocatorError, match=re.escape(case.error)):
            allocator.allocate(case.node, case.claims)
        return
    results = allocator.allocate(case.node, case.claims)
    got = [_got(a) for a in results or []]
    want = case.expect or []
    assert [normalize_selector(a.selector) for a in got] == [normalize_selector(a.selector) for a in want]
    assert [a.results for a in got] == [a.results for a in want]
    if case.invocations:
        assert allocator.num_allocate_one_invocations == case.invocations


# --- the selector stub -------------------------------------------------------------------------------

_DRIVER = re.compile(r'^device\.driver == "([^"]*)"$')
_MULTI = re.compile(r"^device\.allowMultipleAllocations == (true|false)$")
_ATTR = re.compile(r'^device\.attributes\["([^"]+)"\](?:\.(\w+)|\["(\w+)"\])(?: == ("[^"]*"|\d+|true|false))?$')
_CAP = re.compile(r'^device\.capacity\["([^"]+)"\](?:\.(\w+)|\["([\w-]+)"\])'
                  r'\.compareTo\(quantity\("([^"]+)"\)\) >= 0$')


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(a: DeviceAttribute, name: str) -> object:
    """As upstream's getAttributeValue: list values first (passed even with list types off)."""
    for values in (a.int_values, a.bool_values, a.string_values, a.version_values):
        if values:
            return list(values)
    for v in (a.int_value, a.bool_value, a.string_value, a.version_value):
        if v is not None:
            return v
    raise SelectorRuntimeError(f"attribute {name}: unsupported attribute value")


def _clause(text: str) -> CompiledSelector:
    text = text.strip()
    if text in ("true", "false"):
        value = text == "true"
        return lambda d: value
    if m := _DRIVER.match(text):
        want = m.group(1)
        return lambda d: d.driver == want
    if m := _MULTI.match(text):
        multi = m.group(1) == "true"
        return lambda d: bool(d.allow_multiple_allocations) == multi
    if m := _ATTR.match(text):
        domain, ident, literal = m.group(1), m.group(2) or m.group(3), m.group(4)

        def attribute(d: CelDevice) -> bool:
            values: dict[tuple[str, str], object] = {}
            for name, a in d.attributes.items():
                values[_split(name, d.driver)] = _attribute_value(a, name)
            if (domain, ident) not in values:
                raise SelectorRuntimeError(f"no such key: {ident}")
            v = values[(domain, ident)]
            if literal is None:
                return v is True
            want: object = literal.strip('"') if literal.startswith('"') else \
                (literal == "true" if literal in ("true", "false") else int(literal))
            return v == want
        return attribute
    if m := _CAP.match(text):
        domain, ident, quantity = m.group(1), m.group(2) or m.group(3), parse_decimal(m.group(4))

        def capacity(d: CelDevice) -> bool:
            for name, a in d.attributes.items():
                _attribute_value(a, name)
            for name, c in d.capacity.items():
                if _split(name, d.driver) == (domain, ident):
                    return parse_decimal(c.value) >= quantity
            raise SelectorRuntimeError(f"no such key: {ident}")
        return capacity
    raise SelectorCompileError(f"ERROR: <input>:1:1: undeclared reference to '{text}' (in container '')")


def compile_stub(expression: str) -> CompiledSelector:
    """`a && b`, `a || b` (no parentheses) over the clause shapes above."""
    alternatives = [[_clause(c) for c in alt.split("&&")] for alt in expression.split("||")]

    def evaluate(d: CelDevice) -> bool:
        for name, a in d.attributes.items():  # upstream converts every attribute first
            _attribute_value(a, name)
        return any(all(c(d) for c in conj) for conj in alternatives)
    return evaluate


def taint(key: str, value: str, effect: str) -> DeviceTaint:
    return DeviceTaint(key=key, value=value, effect=effect)
