"""The structured allocator against the cases of upstream's allocator tests
(k8s.io/dynamic-resource-allocation v0.37.2, structured/internal/allocatortesting/allocator_testing.go),
each with the upstream case's name as id. Features are per case as upstream sets them (off unless named).
Upstream compares the results of a claim as a set; these compare them in the order found."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.model.quantity import parse_decimal
from kubesched.model.resource import (
    ALLOCATION_RESULTS_MAX_SIZE,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    DeviceToleration,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.allocator import AllocatedState, Allocator, AllocatorError, Features
from kubesched.plugins.dynamic_resources.pools import DeviceID
from kubesched.plugins.dynamic_resources.selectors import SelectorCache
from tests.unit.plugins.dynamic_resources.allocator_fixtures import (
    BOOL_ATTRIBUTE,
    CAPACITY0,
    CAPACITY1,
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    COUNTER_SET2,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DEVICE4,
    DRIVER_A,
    DRIVER_B,
    FIXED_SHARE_ID,
    INT_ATTRIBUTE,
    NODE1,
    NODE2,
    NODE_SELECTION_ALL,
    NODE_SELECTION_PER_DEVICE,
    NON_EXISTENT_ATTRIBUTE,
    PLANET_KEY,
    PLANET_VALUE_EARTH,
    POOL1,
    POOL2,
    POOL3,
    POOL4,
    REGION1,
    REGION2,
    REGION_KEY,
    REQ0,
    REQ0_SUB_REQ0,
    REQ0_SUB_REQ1,
    REQ1,
    REQ1_SUB_REQ0,
    REQ1_SUB_REQ1,
    REQ2,
    REQ3,
    SLICE1,
    SLICE2,
    SLICE3,
    SLICE4,
    STRING_ATTRIBUTE,
    SUB_REQ0,
    SUB_REQ1,
    VERSION_ATTRIBUTE,
    Case,
    R,
    all_request,
    allocation,
    attrs,
    claim_with_request,
    claim_with_requests,
    class_with_allow_multiple_allocations,
    compile_stub,
    consumption,
    counter_set,
    device,
    device_class,
    distinct,
    features,
    local_node_selector,
    match,
    node,
    node_label_selector,
    request,
    request_with_prioritized_list,
    resource_pool,
    run,
    sel,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_multiple_devices,
    slice_with_one_device,
    sub_request,
    taint,
)

CLASSES_A = [device_class(CLASS_A, DRIVER_A)]
CLASSES_AB = [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)]
LOCAL1 = local_node_selector(NODE1)


def sdev(name: str, value: str) -> Device:
    return device(name, None, attrs(stringAttribute=value))


def mem(amount: str) -> dict[str, str]:
    return {"memory": amount}


def small_large(req0_sel: str, req1_sel: str) -> tuple[DeviceSelector, DeviceSelector]:
    return (sel(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{req0_sel}")) >= 0'),
            sel(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{req1_sel}")) >= 0'))


S1G, S2G = small_large("1Gi", "2Gi")


def _admin(c: ResourceClaim, *indices: int, mode: str | None = None, count: int | None = None) -> ResourceClaim:
    for i in indices:
        e = c.spec.devices.requests[i].exactly
        assert e is not None
        e.admin_access = True
        if mode is not None:
            e.allocation_mode = mode
        if count is not None:
            e.count = count
    return c


def _first_all(c: ResourceClaim) -> ResourceClaim:
    sub = c.spec.devices.requests[0].first_available[0]
    sub.allocation_mode, sub.count = "All", 0
    return c


def _pl_all_claim() -> ResourceClaim:
    return _first_all(claim_with_requests(CLAIM0, None, request_with_prioritized_list(
        REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_B, 1))))


def _obsolete_slices() -> list[ResourceSlice]:
    a = slice_with_devices("slice-1-obsolete", NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1))
    b = slice_with_devices("slice-1-obsolete", NODE1, resource_pool(POOL1, 2, generation=2), DRIVER_A, device(DEVICE2))
    return [a, b]


def _duplicate_slices() -> list[ResourceSlice]:
    a = slice_with_one_device(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A)
    b = slice_with_one_device(SLICE1 + "-2", NODE1, resource_pool(POOL1, 2), DRIVER_A)
    return [a, b]


WITH_CONSTRAINT_ATTRS = attrs(driverVersion=("version", "1.0.0"), numa=1, stringAttribute="stringAttributeValue",
                              boolAttribute=True)

CASES = [
    Case("simple", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("other-node", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B), slice_with_one_device(SLICE2, NODE2, POOL2, DRIVER_A)],
         [allocation(local_node_selector(NODE2), R(REQ0, DRIVER_A, POOL2, DEVICE1))], node=node(NODE2, REGION2)),
    Case("small-and-large", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, S1G),
                                                 request(REQ1, CLASS_A, 1, S2G))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, mem("1Gi")), device(DEVICE2, mem("2Gi")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    Case("small-and-large-backtrack-requests",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, S1G), request(REQ1, CLASS_A, 1, S2G))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, mem("2Gi")), device(DEVICE1, mem("1Gi")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    Case("small-and-large-backtrack-claims",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, S1G)),
          claim_with_requests(CLAIM1, None, request(REQ1, CLASS_A, 1, S2G))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE2, mem("2Gi")), device(DEVICE1, mem("1Gi")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1)),
          allocation(LOCAL1, R(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    Case("devices-split-across-different-slices", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
         CLASSES_A, [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A),
                     slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    Case("obsolete-slice", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A, _obsolete_slices(), []),
    Case("duplicate-slice", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A, _duplicate_slices(),
         error="invalid resource pools were encountered"),
    Case("no-slices", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A, [], None),
    Case("not-enough-suitable-devices",
         [claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ1, CLASS_A)], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], None),
    Case("no-classes", [claim_with_request(CLAIM0, REQ0, CLASS_A)], [],
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], error="could not retrieve device class class-a"),
    Case("unknown-class", [claim_with_request(CLAIM0, REQ0, "unknown-class")], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="could not retrieve device class unknown-class"),
    Case("empty-class", [claim_with_request(CLAIM0, REQ0, "")], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    Case("no-claims-to-allocate", [], CLASSES_A, [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], None),
    Case("all-devices-single", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("all-devices-with-consumed-counters", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A,
                             device(DEVICE1, consumes_counters=[consumption(COUNTER_SET1, mem("4Gi"))])),
          slice_with_counter_sets(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A,
                                  counter_set(COUNTER_SET1, mem("8Gi")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))], features=features(partitionable_devices=True)),
    Case("all-devices-many", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    Case("all-devices-of-the-incomplete-pool",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, mode="All"))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A)],
         error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently "
               "being updated"),
    Case("all-devices-plus-another",
         [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
          claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1))], CLASSES_AB,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1)),
          allocation(LOCAL1, R(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    Case("all-devices-plus-another-reversed",
         [claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1)),
          claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_AB,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0, DRIVER_B, POOL1, DEVICE1)),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("all-devices-many-plus-another",
         [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
          claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
          slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL1, DEVICE2)),
          allocation(LOCAL1, R(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    Case("all-devices-many-plus-another-reversed",
         [claim_with_requests(CLAIM1, None, request(REQ0, CLASS_B, 1)),
          claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
          slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0, DRIVER_B, POOL1, DEVICE1)),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    Case("all-devices-no-solution",
         [claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1)),
          claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], None),
    Case("all-devices-no-solution-reversed",
         [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A)),
          claim_with_requests(CLAIM1, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], None),
    Case("all-devices-slice-without-devices", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A)], None),
    Case("all-devices-no-slices", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A, [], None),
    Case("all-devices-some-allocated", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], None,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("all-devices-some-allocated-admin-access", [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0, mode="All")],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True), R(REQ0, DRIVER_A, POOL1, DEVICE2, True))],
         features=features(admin_access=True), allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("all-devices-some-allocating-admin-access",
         [_admin(_admin(claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1)), 0),
                 1, mode="All")],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))], None,
         features=features(admin_access=True)),
    Case("count-devices-some-allocated-admin-access",
         [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0, count=2)],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True), R(REQ0, DRIVER_A, POOL1, DEVICE2, True))],
         features=features(admin_access=True), allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("separate-claims-share-device-admin-access",
         [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0), _admin(claim_with_request(CLAIM1, REQ0, CLASS_A), 0)],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True)),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True))], features=features(admin_access=True)),
    Case("admin-access-claims-device-allocating-for-non-admin-access",
         [claim_with_request(CLAIM0, REQ0, CLASS_A), _admin(claim_with_request(CLAIM1, REQ0, CLASS_A), 0)],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1)),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True))], features=features(admin_access=True)),
    Case("all-devices-slice-without-devices-prioritized-list", [_pl_all_claim()], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))], features=features(prioritized_list=True)),
    Case("all-devices-no-slices-prioritized-list", [_pl_all_claim()], CLASSES_AB,
         [slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))], features=features(prioritized_list=True)),
    Case("all-devices-some-allocated-prioritized-list", [_pl_all_claim()], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
          slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_B, POOL2, DEVICE1))], features=features(prioritized_list=True),
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("network-attached-device", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)],
         [allocation(node_label_selector(REGION_KEY, REGION1), R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("unsuccessful-allocation-network-attached-device", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A)], None,
         node=node(NODE2, REGION2)),
    Case("many-network-attached-devices", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 4))], CLASSES_A,
         [slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
          slice_with_one_device(SLICE1, NODE_SELECTION_ALL, POOL2, DRIVER_A),
          slice_with_one_device(SLICE1, node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH), POOL3, DRIVER_A),
          slice_with_one_device(SLICE1, local_node_selector(NODE1), POOL4, DRIVER_A)],
         [allocation(NodeSelector([NodeSelectorTerm(
             match_expressions=[NodeSelectorRequirement(REGION_KEY, "In", [REGION1]),
                                NodeSelectorRequirement(PLANET_KEY, "In", [PLANET_VALUE_EARTH])],
             match_fields=[NodeSelectorRequirement("metadata.name", "In", [NODE1])])]),
             R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL2, DEVICE1),
             R(REQ0, DRIVER_A, POOL3, DEVICE1), R(REQ0, DRIVER_A, POOL4, DEVICE1))]),
    Case("local-and-network-attached-devices", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))],
         CLASSES_A, [slice_with_one_device(SLICE1, node_label_selector(REGION_KEY, REGION1), POOL1, DRIVER_A),
                     slice_with_one_device(SLICE1, NODE1, POOL2, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL2, DEVICE1))]),
    Case("several-different-drivers",
         [claim_with_request(CLAIM0, REQ0, CLASS_A), claim_with_request(CLAIM0, REQ0, CLASS_B)], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2)),
          slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_B)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1)),
          allocation(LOCAL1, R(REQ0, DRIVER_B, POOL1, DEVICE1))]),
    Case("already-allocated-devices", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], None,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("admin-access-disabled", [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0)], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    Case("admin-access-enabled", [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0)], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True))], features=features(admin_access=True),
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("with-constraint",
         [claim_with_requests(CLAIM0, [match(INT_ATTRIBUTE), match(VERSION_ATTRIBUTE), match(STRING_ATTRIBUTE),
                                       match(BOOL_ATTRIBUTE)], request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, WITH_CONSTRAINT_ATTRS),
                                        device(DEVICE2, None, WITH_CONSTRAINT_ATTRS))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    Case("with-constraint-non-existent-attribute",
         [claim_with_request(CLAIM0, REQ0, CLASS_A, match(NON_EXISTENT_ATTRIBUTE))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], None),
    Case("with-constraint-not-matching-int-attribute",
         [claim_with_requests(CLAIM0, [match(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(numa=1)),
                             device(DEVICE2, None, attrs(numa=2)))], None),
    Case("with-constraint-not-matching-int-attribute-all-devices",
         [claim_with_requests(CLAIM0, [match(INT_ATTRIBUTE)], all_request(REQ0, CLASS_A))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(numa=1)),
                             device(DEVICE2, None, attrs(numa=2)))],
         error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
               "would not be satisfied"),
    Case("partitionable-all-mode-constraint-must-error-with-reserved-counter",
         [claim_with_requests(CLAIM0, [match(INT_ATTRIBUTE)], all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 2), DRIVER_A, device(DEVICE1, None, attrs(numa=1)),
                             device(DEVICE2, None, attrs(numa=2),
                                    consumes_counters=[consumption(COUNTER_SET1, {"c": "1"})])),
          slice_with_counter_sets(SLICE2, NODE1, resource_pool(POOL1, 2), DRIVER_A,
                                  counter_set(COUNTER_SET1, {"c": "1"}))],
         error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint "
               "would not be satisfied", features=features(partitionable_devices=True)),
    Case("with-constraint-not-matching-string-attribute",
         [claim_with_requests(CLAIM0, [match(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             sdev(DEVICE1, "stringAttributeValue"),
                             sdev(DEVICE2, "stringAttributeValue2"))], None),
    Case("with-constraint-not-matching-bool-attribute",
         [claim_with_requests(CLAIM0, [match(BOOL_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(boolAttribute=True)),
                             device(DEVICE2, None, attrs(boolAttribute=False)))], None),
    Case("with-constraint-not-matching-version-attribute",
         [claim_with_requests(CLAIM0, [match(VERSION_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             device(DEVICE1, None, attrs(driverVersion=("version", "1.0.0"))),
                             device(DEVICE2, None, attrs(driverVersion=("version", "2.0.0"))))], None),
    Case("with-constraint-for-request",
         [claim_with_requests(CLAIM0, [match(VERSION_ATTRIBUTE, REQ0)], request(REQ0, CLASS_A, 1),
                              request(REQ1, CLASS_A, 1))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             device(DEVICE1, None, attrs(driverVersion=("version", "1.0.0"))),
                             device(DEVICE2, None, attrs(driverVersion=("version", "2.0.0"))))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1, DRIVER_A, POOL1, DEVICE2))]),
    Case("with-constraint-for-request-retry",
         [claim_with_requests(CLAIM0, [match(VERSION_ATTRIBUTE, REQ0), match(STRING_ATTRIBUTE)],
                              request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             device(DEVICE1, None, attrs(driverVersion=("version", "1.0.0"), stringAttribute="a")),
                             device(DEVICE2, None, attrs(driverVersion=("version", "2.0.0"), stringAttribute="b")),
                             device(DEVICE3, None, attrs(driverVersion=("version", "3.0.0"), stringAttribute="b")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2), R(REQ1, DRIVER_A, POOL1, DEVICE3))]),
]


def _selectors(c: ResourceClaim, *selectors: DeviceSelector, mode: str | None = None) -> ResourceClaim:
    e = c.spec.devices.requests[0].exactly
    assert e is not None
    e.selectors = list(selectors)
    if mode is not None:
        e.allocation_mode = mode
    return c


def _mode(c: ResourceClaim, mode: str) -> ResourceClaim:
    e = c.spec.devices.requests[0].exactly
    assert e is not None
    e.allocation_mode = mode
    return c


def _class_with(name: str, expression: str) -> DeviceClass:
    c = device_class(name, DRIVER_A)
    c.spec.selectors = [sel(expression)]
    return c


def mem_sel(amount: str) -> DeviceSelector:
    return sel(f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{amount}")) >= 0')


MAX = ALLOCATION_RESULTS_MAX_SIZE
MAX_INT = 2**63 - 1
PL = features(prioritized_list=True)
V1, V2 = attrs(driverVersion=("version", "1.0.0")), attrs(driverVersion=("version", "2.0.0"))

CASES += [
    Case("unknown-selector", [_selectors(claim_with_request(CLAIM0, REQ0, CLASS_A), DeviceSelector())], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="CEL expression empty (unsupported selector type?)"),
    Case("unknown-allocation-mode", [_mode(claim_with_request(CLAIM0, REQ0, CLASS_A), "future-mode")], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], error="unsupported count mode future-mode"),
    Case("unknown-constraint", [claim_with_request(CLAIM0, REQ0, CLASS_A, DeviceConstraint())], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="empty constraint (unsupported constraint type?)"),
    Case("invalid-CEL-one-device", [_selectors(claim_with_request(CLAIM0, REQ0, CLASS_A), sel("noSuchVar"))],
         CLASSES_A, [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], error="undeclared reference"),
    Case("invalid-CEL-one-device-class", [claim_with_request(CLAIM0, REQ0, CLASS_A)],
         [_class_with(CLASS_A, "noSuchVar")], [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="undeclared reference"),
    Case("invalid-CEL-all-devices",
         [_selectors(claim_with_request(CLAIM0, REQ0, CLASS_A), sel("noSuchVar"), mode="All")], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)], error="undeclared reference"),
    Case("too-many-devices-single-request", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))],
         CLASSES_A, [], error="exceeds the claim limit"),
    Case("many-devices-okay", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX))], CLASSES_A, [], None),
    Case("too-many-devices-total",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX), request(REQ1, CLASS_A, 1))], CLASSES_A,
         [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX + 1)], error="exceeds the claim limit"),
    Case("exact-count-total-overflows-claim-limit",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX_INT // 2 + 1),
                              request(REQ1, CLASS_A, MAX_INT // 2 + 1))], CLASSES_A, [],
         error="exceeds the claim limit"),
    Case("exact-count-total-would-wrap-to-zero",
         [claim_with_requests(CLAIM0, None, *(request(r, CLASS_A, MAX_INT // 2 + 1)
                                                    for r in (REQ0, REQ1, REQ2, REQ3)))],
         CLASSES_A, [], error="exceeds the claim limit"),
    Case("exact-count-sum-exceeds-claim-limit",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 20), request(REQ1, CLASS_A, 20))], CLASSES_A, [],
         error="request req-1: adding 20 devices exceeds the claim limit"),
    Case("exact-count-sum-exactly-fills-claim-limit",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, MAX // 2), request(REQ1, CLASS_A, MAX // 2))],
         CLASSES_A, [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX)],
         [allocation(LOCAL1, *(R(REQ0, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX // 2)),
                     *(R(REQ1, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX // 2, MAX)))]),
    Case("all-devices-invalid-CEL", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 500))], CLASSES_A, [],
         error="exceeds the claim limit"),
    Case("prioritized-list-first-unavailable",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_AB,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))], features=PL),
    Case("prioritized-list-non-available",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_B, 2), sub_request(SUB_REQ1, CLASS_A, 2)))], CLASSES_AB,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A), slice_with_one_device(SLICE2, NODE1, POOL2, DRIVER_B)],
         None, features=PL),
    Case("prioritized-list-subrequests-with-expressions",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1, mem_sel("1Gi")), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("4Gi")),
             sub_request(SUB_REQ1, CLASS_A, 2, mem_sel("2Gi"))))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, mem("2Gi")),
                                        device(DEVICE2, mem("2Gi")), device(DEVICE3, mem("1Gi")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE3), R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE1),
                     R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))], features=PL),
    Case("prioritized-list-subrequests-with-constraints-ref-parent-request",
         [claim_with_requests(CLAIM0, [match(VERSION_ATTRIBUTE, REQ0, REQ1)], request(REQ0, CLASS_A, 1, mem_sel("8Gi")),
                              request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("2Gi")),
                                                            sub_request(SUB_REQ1, CLASS_A, 1, mem_sel("1Gi"))))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, mem("8Gi"), V1)),
                     slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, mem("2Gi"), V2),
                                        device(DEVICE3, mem("1Gi"), V1))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1_SUB_REQ1, DRIVER_A, POOL2, DEVICE3))],
         features=PL),
    Case("prioritized-list-subrequests-with-constraints-ref-sub-request",
         [claim_with_requests(CLAIM0, [match(VERSION_ATTRIBUTE, REQ0, REQ1_SUB_REQ0)],
                              request(REQ0, CLASS_A, 1, mem_sel("8Gi")),
                              request_with_prioritized_list(REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("2Gi")),
                                                            sub_request(SUB_REQ1, CLASS_A, 1, mem_sel("1Gi"))))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, mem("8Gi"), V1)),
                     slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, mem("2Gi"), V2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1_SUB_REQ1, DRIVER_A, POOL2, DEVICE2))],
         features=PL),
    Case("prioritized-list-subrequests-with-allocation-mode-all",
         [_first_all(claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1), sub_request(SUB_REQ1, CLASS_A, 1))))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))], features=PL,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("prioritized-list-allocation-mode-all-multiple-requests",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 0, mode="All"), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))],
         features=PL),
    Case("prioritized-list-disabled",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1)))],
         CLASSES_A, [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"),
    Case("prioritized-list-multi-request",
         [claim_with_requests(CLAIM0, None, request(REQ1, CLASS_A, 1, mem_sel("8Gi")), request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("8Gi")),
             sub_request(SUB_REQ1, CLASS_A, 1, mem_sel("4Gi"))))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, mem("8Gi"), {})),
                     slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, mem("4Gi"), {}))],
         [allocation(LOCAL1, R(REQ1, DRIVER_A, POOL1, DEVICE1), R(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE2))],
         features=PL),
    Case("prioritized-list-with-backtracking",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("8Gi")),
             sub_request(SUB_REQ1, CLASS_A, 1, mem_sel("4Gi"))),
             request(REQ1, CLASS_A, 1, mem_sel("8Gi")))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, mem("8Gi"), {})),
                     slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE2, mem("4Gi"), {}))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE2), R(REQ1, DRIVER_A, POOL1, DEVICE1))],
         features=PL),
    Case("prioritized-list-too-many-in-first-subrequest",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_B, 500), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_AB,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))], features=PL),
    Case("prioritized-list-minimum-sum-exceeds-claim-limit",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 20), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 20), sub_request(SUB_REQ1, CLASS_A, 24)))], CLASSES_A, [],
         error="request req-1: adding 20 devices exceeds the claim limit", features=PL),
    Case("prioritized-list-overflowing-first-subrequest-is-pruned",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, MAX_INT), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1), device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))],
         features=PL, invocations=8),
]


PD = features(partitionable_devices=True)
PD_PL = features(partitionable_devices=True, prioritized_list=True)
TAINTS = features(device_taints=True)
TAINT_NONE = taint("taint-key", "taint-value", "None")
TAINT_NO_SCHEDULE = taint("taint-key", "taint-value", "NoSchedule")
TAINT_NO_EXECUTE = taint("taint-key", "taint-value-2", "NoExecute")
TOLERATION_NO_SCHEDULE = DeviceToleration(key="taint-key", operator="Exists", effect="NoSchedule")
TOLERATION_NO_EXECUTE = DeviceToleration(key="taint-key", operator="Equal", value="taint-value-2", effect="NoExecute")


def pdev(name: str, counter_set_name: str, values: dict[str, str], from_counters: bool = False,
         attributes: dict[str, DeviceAttribute] | None = None, **kw: Any) -> Device:
    """device(name, fromCounters or nil, attributes).withDeviceCounterConsumption(...)"""
    return device(name, dict(values) if from_counters else None, attributes,
                  consumes_counters=[consumption(counter_set_name, values)], **kw)


def counters_slice(name: str, pool: str | ResourcePool, values: dict[str, str],
                   node_selection: str | NodeSelector = NODE1, driver: str = DRIVER_A,
                   set_name: str = COUNTER_SET1) -> ResourceSlice:
    return slice_with_counter_sets(name, node_selection, pool, driver, counter_set(set_name, values))


def _tolerations(c: ResourceClaim, *tolerations: DeviceToleration) -> ResourceClaim:
    for r in c.spec.devices.requests:
        assert r.exactly is not None
        r.exactly.tolerations = [*r.exactly.tolerations, *tolerations]
    return c


POOL1_2 = resource_pool(POOL1, 2)
POOL2_2 = resource_pool(POOL2, 2)
C1 = {"c": "1"}

CASES += [
    Case("partitionable-devices-single-device", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("4Gi"))),
                     counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))], features=PD),
    Case("partitionable-devices-counter-quantities-are-not-modified",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, {"c": "9000000000000000000"}),
                             pdev(DEVICE2, COUNTER_SET1, C1)),
          counters_slice(SLICE2, POOL1_2, {"c": "10000000000000000000"})],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2))], features=PD,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("partitionable-devices-counter-cache-scoped-by-pool-ID",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1)),
          claim_with_requests(CLAIM1, None, request(REQ1, CLASS_B, 1))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, C1)),
          counters_slice(SLICE2, POOL1_2, C1),
          slice_with_devices(SLICE3, NODE1, POOL1_2, DRIVER_B, pdev(DEVICE2, COUNTER_SET1, {"c": "2"})),
          counters_slice(SLICE4, POOL1_2, {"c": "2"}, driver=DRIVER_B)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1)), allocation(LOCAL1, R(REQ1, DRIVER_B, POOL1, DEVICE2))],
         features=PD),
    Case("partitionable-devices-counter-cache-not-crossed-between-driver-schemas",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1)),
          claim_with_requests(CLAIM1, None, request(REQ1, CLASS_B, 1))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, C1)),
          counters_slice(SLICE2, POOL1_2, C1),
          slice_with_devices(SLICE3, NODE1, POOL1_2, DRIVER_B, pdev(DEVICE2, COUNTER_SET2, {"d": "2"})),
          counters_slice(SLICE4, POOL1_2, {"d": "1"}, driver=DRIVER_B, set_name=COUNTER_SET2)], [], features=PD),
    Case("partitionable-devices-taint-releases-counter", [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, C1, taints=[TAINT_NO_SCHEDULE]),
                             pdev(DEVICE2, COUNTER_SET1, C1)),
          counters_slice(SLICE2, POOL1_2, C1)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2))],
         features=features(partitionable_devices=True, device_taints=True)),
    Case("partitionable-devices-constraint-releases-counter",
         [claim_with_requests(CLAIM0, [match(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, C1, attributes=attrs(stringAttribute="red")),
                             pdev(DEVICE2, COUNTER_SET1, C1, attributes=attrs(stringAttribute="blue")),
                             pdev(DEVICE3, COUNTER_SET1, C1, attributes=attrs(stringAttribute="blue"))),
          counters_slice(SLICE2, POOL1_2, {"c": "2"})],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2), R(REQ0, DRIVER_A, POOL1, DEVICE3))], features=PD),
    Case("partitionable-devices-prioritized-list",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("6Gi")),
             sub_request(SUB_REQ1, CLASS_A, 1, mem_sel("4Gi"))))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True),
                             pdev(DEVICE2, COUNTER_SET1, mem("6Gi"), True),
                             pdev(DEVICE3, COUNTER_SET1, mem("4Gi"), True)),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3))],
         features=PD_PL),
    Case("partitionable-devices-multiple-devices",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True),
                             pdev(DEVICE2, COUNTER_SET1, mem("6Gi"), True),
                             pdev(DEVICE3, COUNTER_SET1, mem("4Gi"), True)),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1, DRIVER_A, POOL1, DEVICE3))], features=PD),
    Case("partitionable-devices-unused-counters-in-counter-set",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 2))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("5Gi")),
                             pdev(DEVICE2, COUNTER_SET1, mem("4Gi")), pdev(DEVICE3, COUNTER_SET1, mem("4Gi"))),
          counters_slice(SLICE2, POOL1_2, {"memory": "8Gi", "unused": "1Gi"})],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2), R(REQ0, DRIVER_A, POOL1, DEVICE3))], features=PD),
    Case("partitionable-devices-no-capacity-available",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True),
                             pdev(DEVICE2, COUNTER_SET1, mem("16Gi"), True)),
          counters_slice(SLICE2, POOL1, mem("18Gi"))], None, features=PD,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("partitionable-devices-overallocated-capacity-pool",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True),
                             pdev(DEVICE2, COUNTER_SET1, mem("20Gi"), True)),
          counters_slice(SLICE2, POOL1, mem("18Gi"))], None, features=PD,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("partitionable-devices-disabled-device-consumes-counters",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("4Gi"))),
          counters_slice(SLICE2, POOL1, mem("18Gi"))], None),
    Case("partitionable-devices-disabled-other-device-do-not-consume-counters",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, mem("4Gi")), device(DEVICE2)),
          counters_slice(SLICE2, POOL1_2, mem("18Gi"))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    Case("partitionable-devices-disabled-per-device-node-selection",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1, DRIVER_A, device(DEVICE2, node_name=NODE1))],
         None),
    Case("partitionable-devices-per-device-node-selection-nodename",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("6Gi")),
             sub_request(SUB_REQ1, CLASS_A, 1, mem_sel("4Gi"))))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True, node_name=NODE1),
                             pdev(DEVICE2, COUNTER_SET1, mem("6Gi"), True, node_name=NODE2)),
          counters_slice(SLICE2, POOL1_2, mem("18Gi"), node_selection=NODE_SELECTION_PER_DEVICE)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))], features=PD_PL),
    Case("partitionable-devices-per-device-node-selection-node-selector",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True,
                                  node_selector=node_label_selector(REGION_KEY, REGION1))),
          counters_slice(SLICE2, POOL1_2, mem("18Gi"), node_selection=NODE_SELECTION_PER_DEVICE)],
         [allocation(node_label_selector(REGION_KEY, REGION1), R(REQ0, DRIVER_A, POOL1, DEVICE1))], features=PD_PL),
    Case("partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
         [claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 3), request(REQ1, CLASS_B, 3))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE_SELECTION_PER_DEVICE, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, mem("4Gi"), True,
                                  node_selector=node_label_selector(REGION_KEY, REGION1)),
                             pdev(DEVICE2, COUNTER_SET1, mem("4Gi"), True, node_name=NODE1),
                             pdev(DEVICE3, COUNTER_SET1, mem("4Gi"), True, all_nodes=True)),
          counters_slice(SLICE2, POOL1_2, mem("18Gi"), node_selection=NODE_SELECTION_PER_DEVICE),
          slice_with_devices(SLICE3, NODE1, POOL2_2, DRIVER_B, *(pdev(d, COUNTER_SET2, mem("4Gi"), True)
                                                                 for d in (DEVICE1, DEVICE2, DEVICE3))),
          counters_slice(SLICE4, POOL2_2, mem("12Gi"), driver=DRIVER_B, set_name=COUNTER_SET2)],
         [allocation(LOCAL1, *(R(REQ0, DRIVER_A, POOL1, d) for d in (DEVICE1, DEVICE2, DEVICE3)),
                     *(R(REQ1, DRIVER_B, POOL2, d) for d in (DEVICE1, DEVICE2, DEVICE3)))], features=PD_PL),
    Case("tainted-two-devices", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                             device(DEVICE2, taints=[TAINT_NO_EXECUTE]))], None, features=TAINTS),
    Case("tainted-one-device-two-taints", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))], None, features=TAINTS),
    Case("tainted-two-devices-tolerated",
         [_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_EXECUTE)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                             device(DEVICE2, taints=[TAINT_NO_EXECUTE]))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2, tolerations=(TOLERATION_NO_EXECUTE,)))],
         features=TAINTS),
    Case("tainted-two-devices-prioritized-list-tolerated",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1),
             sub_request(SUB_REQ1, CLASS_A, 1, tolerations=[TOLERATION_NO_EXECUTE])))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]),
                             device(DEVICE2, taints=[TAINT_NO_EXECUTE]))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, tolerations=(TOLERATION_NO_EXECUTE,)))],
         features=features(device_taints=True, prioritized_list=True)),
    Case("tainted-no-effect", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NONE]))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))], features=TAINTS),
    Case("tainted-one-device-two-taints-both-tolerated",
         [_tolerations(claim_with_request(CLAIM0, REQ0, CLASS_A), TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE)],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                                        device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1,
                               tolerations=(TOLERATION_NO_SCHEDULE, TOLERATION_NO_EXECUTE)))], features=TAINTS),
    Case("tainted-disabled", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             device(DEVICE1, taints=[TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("tainted-prioritized-list",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))], None,
         features=features(device_taints=True, prioritized_list=True)),
    Case("tainted-prioritized-list-disabled",
         [claim_with_requests(CLAIM0, None, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_B, 1), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_AB,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))], features=PL),
    Case("tainted-admin-access", [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))], None,
         features=features(device_taints=True, admin_access=True),
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("tainted-admin-access-disabled", [_admin(claim_with_request(CLAIM0, REQ0, CLASS_A), 0)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, True))], features=features(admin_access=True),
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1), DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("tainted-all-devices-single", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))], None,
         features=TAINTS),
    Case("tainted-all-devices-single-disabled", [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, taints=[TAINT_NO_SCHEDULE]))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
]


CC = features(consumable_capacity=True)
MULTI_A = [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, True)]
DEDICATED_A = [class_with_allow_multiple_allocations(CLASS_A, DRIVER_A, False)]


def cc(*amount: str) -> dict[str, Any]:
    """withConsumedCapacity(&fixedShareID, {capacity0: amount}) (or nil)."""
    return {"share_id": FIXED_SHARE_ID,
            "consumed_capacity": tuple((CAPACITY0, parse_decimal(a)) for a in amount)}


def policy_range(value: str) -> DeviceCapacity:
    """withCapacityRequestPolicyRange: default 2, min 2, step 2, max 4."""
    return DeviceCapacity(value, CapacityRequestPolicy(default="2", valid_range=CapacityRequestPolicyRange(
        min="2", step="2", max="4")))


def policy_values(default: str, value: str, *additional: str) -> DeviceCapacity:
    """withCapacityRequestPolicyValidValues"""
    return DeviceCapacity(value, CapacityRequestPolicy(default=default, valid_values=[default, *additional]))


def cdev(name: str, capacity: DeviceCapacity | str | None, multi: bool = True, name_of: str = CAPACITY0,
         **kw: Any) -> Device:
    d = device(name, **kw)
    if capacity is not None:
        d.capacity = {name_of: DeviceCapacity(capacity) if isinstance(capacity, str) else capacity}
    if multi:
        d.allow_multiple_allocations = True
    return d


def creq(name: str, amount: str | None, cls: str = CLASS_A, count: int = 1) -> DeviceRequest:
    return request(name, cls, count, capacity=amount)


def call(name: str, amount: str | None) -> DeviceRequest:
    return all_request(name, CLASS_A, capacity=amount)


def one_claim(name: str, *requests: DeviceRequest) -> ResourceClaim:
    return claim_with_requests(name, None, *requests)


def slice1(*devices: Device) -> list[ResourceSlice]:
    return [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, *devices)]


CASES += [
    Case("consumable-capacity-disabled-feature", [one_claim(CLAIM0, creq(REQ0, "1"))], CLASSES_A,
         [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled",
         features=features(device_binding_and_status=True)),
    Case("consumable-capacity-disabled-feature-with-prioritized-list",
         [one_claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 1, capacity="1"),
                                                          sub_request(SUB_REQ1, CLASS_A, 1, capacity="1")))],
         CLASSES_A, [slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
         error="claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is "
               "disabled", features=features(prioritized_list=True, device_binding_and_status=True)),
    Case("consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, "1"))], CLASSES_A, slice1(cdev(DEVICE1, "1", name_of=CAPACITY1)), [],
         features=CC),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
         [one_claim(CLAIM0, call(REQ0, "1"))], MULTI_A, slice1(cdev(DEVICE1, "1", name_of=CAPACITY1)), [],
         features=CC),
    Case("consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, None)), one_claim(CLAIM1, creq(REQ0, None))], MULTI_A,
         slice1(cdev(DEVICE1, None)),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc())),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc()))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, None)), one_claim(CLAIM1, creq(REQ0, None))], MULTI_A,
         slice1(cdev(DEVICE1, "1"), cdev(DEVICE2, "1")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("1"))),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2, **cc("1")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
         [one_claim(CLAIM0, creq(REQ0, None)), one_claim(CLAIM1, creq(REQ0, None))], MULTI_A,
         slice1(cdev(DEVICE1, "2")), [], features=CC),
    Case("consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, "1")), one_claim(CLAIM1, creq(REQ0, "1"))], MULTI_A,
         slice1(cdev(DEVICE1, "2")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("1"))),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("1")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, None)), one_claim(CLAIM1, creq(REQ0, None))], MULTI_A,
         slice1(cdev(DEVICE1, policy_range("4"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2"))),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-zero-request-policy",
         [one_claim(CLAIM0, creq(REQ0, None)), one_claim(CLAIM1, creq(REQ0, None))], MULTI_A,
         slice1(cdev(DEVICE1, policy_values("0", "1"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("0"))),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("0")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
         [one_claim(CLAIM0, creq(REQ0, "1"))], MULTI_A, slice1(cdev(DEVICE1, policy_values("0", "1"))), [],
         features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, "1")), one_claim(CLAIM1, creq(REQ0, "1"))], MULTI_A,
         slice1(cdev(DEVICE1, policy_range("4"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2"))),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-range-policy-step", [one_claim(CLAIM0, creq(REQ0, "3"))],
         MULTI_A, slice1(cdev(DEVICE1, policy_range("4"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("4")))], features=CC),
    Case("consumable-capacity-range-policy-request-above-int64-rejected",
         [one_claim(CLAIM0, creq(REQ0, "18446744073709551616"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("4"))),
         error="cannot be represented", features=CC),
    Case("consumable-capacity-range-policy-rounded-value-overflow-rejected",
         [one_claim(CLAIM0, creq(REQ0, "9223372036854775807"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("4"))),
         error="cannot be represented", features=CC),
    Case("consumable-capacity-range-policy-overflow-aborts-not-skip",
         [one_claim(CLAIM0, creq(REQ0, "18446744073709551616"))], MULTI_A,
         slice1(cdev(DEVICE1, policy_range("4")), cdev(DEVICE2, "36893488147419103232")),
         error="cannot be represented", features=CC),
    Case("consumable-capacity-range-policy-allocation-mode-all-overflow-aborts",
         [one_claim(CLAIM0, call(REQ0, "18446744073709551616"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("4"))),
         error="cannot be represented", features=CC),
    Case("consumable-capacity-negative-request-aborts", [one_claim(CLAIM0, creq(REQ0, "-5"))], MULTI_A,
         slice1(cdev(DEVICE1, "10")), error="negative", features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-valid-values-policy", [one_claim(CLAIM0, creq(REQ0, "2"))],
         MULTI_A, slice1(cdev(DEVICE1, policy_values("1", "4", "2"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
         [one_claim(CLAIM0, creq(REQ0, "2"))], MULTI_A, slice1(cdev(DEVICE1, policy_values("1", "3", "3"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("3")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, "1")), one_claim(CLAIM1, creq(REQ0, "2"))], MULTI_A,
         slice1(cdev(DEVICE1, policy_range("2"))), [], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
         [one_claim(CLAIM0, creq(REQ0, "6"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("10"))), [], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
         [one_claim(CLAIM0, creq(REQ0, "2"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("4"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")))], features=CC,
         allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("2")}}),
    Case("consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
         [one_claim(CLAIM0, creq(REQ0, "2"))], MULTI_A,
         slice1(cdev(DEVICE1, policy_range("2")), cdev(DEVICE2, policy_range("2"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2, **cc("2")))], features=CC,
         allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("2")}}),
    Case("consumable-capacity-with-multi-allocatable-device-backtrack",
         [claim_with_requests(CLAIM0, [match(STRING_ATTRIBUTE)], creq(REQ0, "2"), creq(REQ1, "2")),
          one_claim(CLAIM1, creq(REQ0, "2"))], CLASSES_A,
         slice1(cdev(DEVICE2, policy_range("2"), attributes=attrs(stringAttribute="stringAttributeValue1")),
                cdev(DEVICE1, policy_range("4"), attributes=attrs(stringAttribute="stringAttributeValue2"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")),
                     R(REQ1, DRIVER_A, POOL1, DEVICE1, **cc("2"))),
          allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2, **cc("2")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-with-subrequest",
         [one_claim(CLAIM0, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1, capacity="4"), sub_request(SUB_REQ1, CLASS_A, 1, capacity="2"),
             sub_request(SUB_REQ1, CLASS_A, 1)))], MULTI_A, slice1(cdev(DEVICE1, policy_range("2"))),
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, **cc("2")))],
         features=features(consumable_capacity=True, prioritized_list=True)),
    Case("consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
         [one_claim(CLAIM0, creq(REQ0, "2"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("2"))), [], features=CC,
         allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("2")}}),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
         [one_claim(CLAIM0, call(REQ0, "2"))], MULTI_A, slice1(cdev(DEVICE1, "2"), cdev(DEVICE2, None)),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
         [one_claim(CLAIM0, call(REQ0, "2"))], MULTI_A, slice1(cdev(DEVICE1, "2"), cdev(DEVICE2, "1")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
         [one_claim(CLAIM0, creq(REQ0, "1"), call(REQ1, "1"))], CLASSES_A,
         slice1(cdev(DEVICE1, "2"), cdev(DEVICE2, "1")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("1")), R(REQ1, DRIVER_A, POOL1, DEVICE1, **cc("1")),
                     R(REQ1, DRIVER_A, POOL1, DEVICE2, **cc("1")))], features=CC),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
         [one_claim(CLAIM0, call(REQ0, "1"))], CLASSES_A, slice1(cdev(DEVICE1, "2"), cdev(DEVICE2, "1")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("1")),
                     R(REQ0, DRIVER_A, POOL1, DEVICE2, **cc("1")))],
         features=CC, allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("1")}}),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
         [one_claim(CLAIM0, creq(REQ0, "1"), call(REQ1, "1"))], CLASSES_A,
         slice1(cdev(DEVICE1, "1"), cdev(DEVICE2, "1")), [], features=CC),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
         [one_claim(CLAIM0, call(REQ0, "1"))], CLASSES_A, slice1(cdev(DEVICE1, "1"), cdev(DEVICE2, "1")), [],
         features=CC, allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("1")}}),
    Case("consumable-capacity-dedicated-device-with-consumable-capacity-request", [one_claim(CLAIM0, creq(REQ0, "1"))],
         DEDICATED_A, slice1(cdev(DEVICE1, "1", multi=False)),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))], features=CC),
    Case("consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
         [one_claim(CLAIM0, creq(REQ0, "1")), one_claim(CLAIM1, creq(REQ0, "1"))], DEDICATED_A,
         slice1(cdev(DEVICE1, policy_range("2"), multi=False)), [], features=CC),
    Case("consumable-capacity-requests-are-not-modified",
         [one_claim(CLAIM0, creq(REQ0, "2"), creq(REQ1, "1000000000000000000000"))], CLASSES_A,
         slice1(cdev(DEVICE1, DeviceCapacity("1000000000000000000002", CapacityRequestPolicy(
             default="1000000000000000000000", valid_range=CapacityRequestPolicyRange(min="2"))))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")),
                     R(REQ1, DRIVER_A, POOL1, DEVICE1, **cc("1000000000000000000000")))], features=CC),
    Case("allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
         [one_claim(CLAIM0, creq(REQ0, "1"))], DEDICATED_A, slice1(cdev(DEVICE1, "1")), [], features=CC),
    Case("allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
         [one_claim(CLAIM0, creq(REQ0, "1"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("2"))), [], features=CC,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
         [one_claim(CLAIM0, creq(REQ0, "1"))], MULTI_A, slice1(cdev(DEVICE1, policy_range("2"), multi=False)), [],
         features=CC, allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("1")}}),
]


def _gen_slice(name: str, node_name: str, device_name: str, generation: int) -> ResourceSlice:
    return slice_with_devices(name, node_name, resource_pool(POOL1, 2, generation), DRIVER_A, device(device_name))


def fractional_range(value: str) -> DeviceCapacity:
    """withFractionalCapacityRequestPolicyRange: default 200m, min 200m, step 100m, max 1."""
    return DeviceCapacity(value, CapacityRequestPolicy(default="200m", valid_range=CapacityRequestPolicyRange(
        min="200m", step="100m", max="1")))


BOOL_SEL = sel(f'device.attributes["{DRIVER_A}"].boolAttribute')
S_ATTR = "stringAttribute"

CASES += [
    Case("with-distinct-constraints",
         [claim_with_requests(CLAIM0, [distinct(BOOL_ATTRIBUTE, REQ0, REQ1),
                                       distinct(VERSION_ATTRIBUTE, REQ0, REQ1, REQ2),
                                       distinct(INT_ATTRIBUTE, REQ0, REQ1, REQ2, REQ3)],
                              *(request(r, CLASS_A, 1) for r in (REQ0, REQ1, REQ2, REQ3)))], CLASSES_A,
         slice1(cdev(DEVICE1, None, attributes=attrs(driverVersion=("version", "1.0.0"), numa=0, boolAttribute=True)),
                cdev(DEVICE2, None, attributes=attrs(driverVersion=("version", "1.0.1"), numa=1, boolAttribute=False)),
                cdev(DEVICE3, None, attributes=attrs(driverVersion=("version", "1.0.2"), numa=2, boolAttribute=True)),
                cdev(DEVICE4, None, attributes=attrs(driverVersion=("version", "1.0.0"), numa=3, boolAttribute=True))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc()), R(REQ1, DRIVER_A, POOL1, DEVICE2, **cc()),
                     R(REQ2, DRIVER_A, POOL1, DEVICE3, **cc()), R(REQ3, DRIVER_A, POOL1, DEVICE4, **cc()))],
         features=CC),
    Case("distinct-constraint-single-request-count-3-not-distinct",
         [claim_with_requests(CLAIM0, [distinct(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 3))], CLASSES_A,
         slice1(sdev(DEVICE1, "value1"), sdev(DEVICE2, "value2"),
                sdev(DEVICE3, "value1")), None, features=CC),
    Case("distinct-constraint-single-request-count-3-all-distinct",
         [claim_with_requests(CLAIM0, [distinct(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 3))], CLASSES_A,
         slice1(sdev(DEVICE1, "value1"), sdev(DEVICE2, "value2"),
                sdev(DEVICE3, "value3")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL1, DEVICE2),
                     R(REQ0, DRIVER_A, POOL1, DEVICE3))], features=CC),
    Case("distinct-constraint-two-requests-with-count-not-distinct",
         [claim_with_requests(CLAIM0, [distinct(STRING_ATTRIBUTE, REQ0, REQ1)], request(REQ0, CLASS_A, 2),
                              request(REQ1, CLASS_A, 1))], CLASSES_A,
         slice1(sdev(DEVICE1, "value1"), sdev(DEVICE2, "value2"),
                sdev(DEVICE3, "value1")), None, features=CC),
    Case("with-distinct-constraints-attribute-not-set",
         [claim_with_requests(CLAIM0, [distinct(BOOL_ATTRIBUTE, REQ0)], request(REQ0, CLASS_A, 1))], CLASSES_A,
         slice1(cdev(DEVICE1, None)), [], features=CC),
    Case("with-distinct-constraints-unknown-type-attribute",
         [claim_with_requests(CLAIM0, [distinct(BOOL_ATTRIBUTE, REQ0)], request(REQ0, CLASS_A, 1))], CLASSES_A,
         slice1(cdev(DEVICE1, None, attributes=attrs(boolAttribute=None))), error="unsupported attribute value",
         features=CC),
    Case("with-distinct-constraints-with-subrequests",
         [claim_with_requests(CLAIM0, [distinct(BOOL_ATTRIBUTE, REQ0, REQ1)], *(request_with_prioritized_list(
             r, sub_request(SUB_REQ0, CLASS_A, 1, BOOL_SEL), sub_request(SUB_REQ1, CLASS_A, 1))
             for r in (REQ0, REQ1, REQ2)))],
         CLASSES_A, slice1(cdev(DEVICE1, None, attributes=attrs(boolAttribute=True)),
                           cdev(DEVICE2, None, attributes=attrs(boolAttribute=False))),
         [allocation(LOCAL1, R(REQ0_SUB_REQ0, DRIVER_A, POOL1, DEVICE1, **cc()),
                     R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2, **cc()),
                     R("req-2/subReq-0", DRIVER_A, POOL1, DEVICE1, **cc()))],
         features=features(consumable_capacity=True, prioritized_list=True)),
    Case("distinct-constraint-single-request-multiple-devices-attribute-not-set",
         [claim_with_requests(CLAIM0, [distinct(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 3))], CLASSES_A,
         slice1(device(DEVICE1), device(DEVICE2), device(DEVICE3)), [], features=CC),
    Case("distinct-constraint-single-request-not-enough-distinct-values",
         [claim_with_requests(CLAIM0, [distinct(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 3))], CLASSES_A,
         slice1(*(device(d, None, attrs(numa=n)) for d, n in ((DEVICE1, 1), (DEVICE2, 2), (DEVICE3, 2), (DEVICE4, 2)))),
         [], features=CC),
    Case("distinct-constraint-single-request-multiple-devices-attribute-set",
         [claim_with_requests(CLAIM0, [distinct(INT_ATTRIBUTE)], request(REQ0, CLASS_A, 3))], CLASSES_A,
         slice1(*(device(d, None, attrs(numa=n)) for d, n in ((DEVICE1, 1), (DEVICE2, 2), (DEVICE3, 1), (DEVICE4, 3)))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ0, DRIVER_A, POOL1, DEVICE2),
                     R(REQ0, DRIVER_A, POOL1, DEVICE4))], features=CC),
    Case("distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
         [claim_with_requests(CLAIM0, [distinct(STRING_ATTRIBUTE)], creq(REQ0, "1"), creq(REQ1, "1"))], MULTI_A,
         slice1(cdev(DEVICE1, policy_range("2"), attributes=attrs(stringAttribute="stringAttributeValue"))), [],
         features=CC),
    Case("distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
         [claim_with_requests(CLAIM0, [distinct(STRING_ATTRIBUTE)], creq(REQ0, "2"), creq(REQ1, "2"))], MULTI_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, cdev(DEVICE1, policy_range("4"), attributes=attrs(
             stringAttribute="stringAttributeValue1"))),
          slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, cdev(DEVICE2, policy_range("4"), attributes=attrs(
              stringAttribute="stringAttributeValue2")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2")),
                     R(REQ1, DRIVER_A, POOL1, DEVICE2, **cc("2")))],
         features=CC),
    Case("consumable-capacity-fractional-range-gate-disabled", [one_claim(CLAIM0, creq(REQ0, "200m"))], MULTI_A,
         slice1(cdev(DEVICE1, fractional_range("1"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("1")))], features=CC),
    Case("consumable-capacity-fractional-range-gate-enabled-round-up", [one_claim(CLAIM0, creq(REQ0, "250m"))],
         MULTI_A, slice1(cdev(DEVICE1, fractional_range("1"))),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("300m")))],
         features=features(consumable_capacity=True, fractional_capacity_range=True)),
    Case("allocation-mode-all-with-multi-host-resource-pool",
         [claim_with_requests(CLAIM0, None, all_request(REQ0, CLASS_A))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, device(DEVICE1)),
          slice_with_devices(SLICE2, NODE2, POOL1_2, DRIVER_A, device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("multi-host-resource-pool-with-stale-slice-for-current-node", [claim_with_request(CLAIM0, REQ0, CLASS_A)],
         CLASSES_A, [_gen_slice(SLICE1, NODE1, DEVICE1, 1), _gen_slice(SLICE2, NODE2, DEVICE2, 2)], None),
    Case("multi-host-resource-pool-complete-update-from-node-1-to-node-2", [claim_with_request(CLAIM0, REQ0, CLASS_A)],
         CLASSES_A, [_gen_slice(SLICE1, NODE1, DEVICE1, 1), _gen_slice(SLICE1, NODE1, DEVICE2, 1),
                     _gen_slice(SLICE2, NODE2, DEVICE1, 2), _gen_slice(SLICE2, NODE2, DEVICE2, 2)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("multi-host-resource-pool-complete-update-from-node-2-to-node-1", [claim_with_request(CLAIM0, REQ0, CLASS_A)],
         CLASSES_A, [_gen_slice(SLICE1, NODE2, DEVICE1, 1), _gen_slice(SLICE1, NODE2, DEVICE2, 1),
                     _gen_slice(SLICE2, NODE1, DEVICE1, 2), _gen_slice(SLICE2, NODE1, DEVICE2, 2)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
         [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [_gen_slice(SLICE1, NODE1, DEVICE1, 1), _gen_slice(SLICE1, NODE1, DEVICE2, 1),
          _gen_slice(SLICE2, NODE2, DEVICE1, 2)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))]),
    Case("multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
         [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [_gen_slice(SLICE1, NODE2, DEVICE1, 1), _gen_slice(SLICE1, NODE2, DEVICE2, 1),
          _gen_slice(SLICE2, NODE1, DEVICE1, 2)], None),
]


def tdev(name: str, value: str, **kw: Any) -> Device:
    return device(name, None, attrs(type=value), **kw)


def type_sel(value: str) -> DeviceSelector:
    return sel(f'device.attributes["{DRIVER_A}"].type == "{value}"')


FOUR = (DEVICE1, DEVICE2, DEVICE3, DEVICE4)

CASES += [
    Case("partitionable-devices-same-counter-set-name-in-different-resource-slices",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 4), DRIVER_A, device(DEVICE1)),
          counters_slice(SLICE2, resource_pool(POOL1, 4), {}),
          slice_with_devices(SLICE3, NODE1, resource_pool(POOL1, 4), DRIVER_A, device(DEVICE2)),
          counters_slice(SLICE4, resource_pool(POOL1, 4), {})],
         error="invalid resource pools were encountered", features=PD),
    Case("partitionable-devices-device-counter-consumption-references-unknown-counter-set",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET2, {})),
          counters_slice(SLICE2, POOL1_2, {})], error="invalid resource pools were encountered", features=PD),
    Case("partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("8Gi"))),
          counters_slice(SLICE2, POOL1_2, {"other-memory": "8Gi"})],
         error="invalid resource pools were encountered", features=PD),
    Case("partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, pdev(DEVICE1, COUNTER_SET1, mem("8Gi"))),
          counters_slice(SLICE2, POOL2, mem("8Gi"))], error="invalid resource pools were encountered", features=PD),
    Case("partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
         [one_claim(CLAIM0, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1,
                 mem_sel("2Gi"))))],
         CLASSES_A,
         [counters_slice(SLICE1, resource_pool(POOL1, 3), mem("8Gi")),
          slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 3), DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, mem("6Gi"), True), pdev(DEVICE2, COUNTER_SET1, mem("2Gi"),
                                 True)),
          slice_with_devices(SLICE3, NODE2, resource_pool(POOL1, 3), DRIVER_A, pdev(DEVICE3, COUNTER_SET1,
              mem("6Gi")))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))], features=PD_PL,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE3)]),
    Case("partitionable-devices-devices-consume-counter-set-in-different-nodes",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [counters_slice(SLICE1, resource_pool(POOL1, 3), mem("8Gi")),
          slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 3), DRIVER_A, pdev(DEVICE1, COUNTER_SET1,
              mem("6Gi"), True)),
          slice_with_devices(SLICE3, NODE2, resource_pool(POOL1, 3), DRIVER_A,
                             pdev(DEVICE2, COUNTER_SET1, mem("6Gi"), True), pdev(DEVICE3, COUNTER_SET1, mem("2Gi"),
                                 True))],
         [allocation(local_node_selector(NODE2), R(REQ0, DRIVER_A, POOL1, DEVICE3))], features=PD,
         node=node(NODE2, REGION1), allocated=[DeviceID(DRIVER_A, POOL1, DEVICE1)]),
    Case("partitionable-devices-validation-error-on-non-targeting-slice",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [counters_slice(SLICE1, resource_pool(POOL1, 3), mem("8Gi")),
          slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 3), DRIVER_A, pdev(DEVICE1, COUNTER_SET1,
              mem("6Gi"), True)),
          slice_with_devices(SLICE3, NODE2, resource_pool(POOL1, 3), DRIVER_A, pdev(DEVICE3, COUNTER_SET2,
              mem("6Gi")))],
         error="invalid resource pools were encountered", features=PD),
    Case("different-resourceslices-in-pool-can-target-different-nodes", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE2, POOL1_2, DRIVER_A, device(DEVICE1)),
                     slice_with_devices(SLICE2, NODE1, POOL1_2, DRIVER_A, device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2))]),
    Case("invalid-pool-is-ok-if-devices-can-be-allocated-from-other", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, device(DEVICE1)),
                     slice_with_devices(SLICE2, NODE1, POOL1_2, DRIVER_A, device(DEVICE1)),
                     slice_with_devices(SLICE3, NODE1, resource_pool(POOL2, 1), DRIVER_A, device(DEVICE2))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL2, DEVICE2))]),
    Case("invalid-pool-is-error-if-no-other-device-can-be-allocated", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))],
         CLASSES_A, [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, device(DEVICE1)),
                     slice_with_devices(SLICE2, NODE1, POOL1_2, DRIVER_A, device(DEVICE1)),
                     slice_with_devices(SLICE3, NODE1, resource_pool(POOL2, 1), DRIVER_A, device(DEVICE2))],
         error="invalid resource pools were encountered", allocated=[DeviceID(DRIVER_A, POOL2, DEVICE2)]),
    Case("no-allocation-from-incomplete-pools", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, device(DEVICE1))], None),
    Case("check-combinations-within-single-request-single-pool-single-slice",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 5))], CLASSES_A, slice1(*(device(d) for d in FOUR)), None,
         invocations=16),
    Case("check-combinations-within-single-request-single-pool-multiple-slices",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 5))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, device(DEVICE1), device(DEVICE2)),
          slice_with_devices(SLICE2, NODE1, POOL1_2, DRIVER_A, device(DEVICE3), device(DEVICE4))], None,
         invocations=16),
    Case("check-combinations-within-single-request-multiple-pools-multiple-slices",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 5))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, device(DEVICE1)),
          slice_with_devices(SLICE2, NODE1, POOL1_2, DRIVER_A, device(DEVICE2)),
          slice_with_devices(SLICE3, NODE1, POOL2, DRIVER_A, device(DEVICE3), device(DEVICE4))], None,
         invocations=16),
    Case("check-combinations-within-single-request-many-pools", [one_claim(CLAIM0, request(REQ0, CLASS_A, 5))],
         CLASSES_A, [slice_with_devices(sl, NODE1, pool, DRIVER_A, device(d)) for sl, pool, d in
                     zip((SLICE1, SLICE2, SLICE3, SLICE4), (POOL1, POOL2, POOL3, POOL4), FOUR, strict=True)], None,
         invocations=16),
    Case("check-combinations-with-backtracking",
         [one_claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, type_sel("X")))], CLASSES_A,
         slice1(tdev(DEVICE1, "X"), tdev(DEVICE2, "Y"), tdev(DEVICE3, "Y")),
         [allocation(LOCAL1, R(REQ1, DRIVER_A, POOL1, DEVICE2), R(REQ1, DRIVER_A, POOL1, DEVICE3),
                     R(REQ2, DRIVER_A, POOL1, DEVICE1))], invocations=12),
    Case("check-combinations-with-backtracking-across-slices-and-pools",
         [one_claim(CLAIM0, request(REQ1, CLASS_A, 2), request(REQ2, CLASS_A, 1, type_sel("X")))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, tdev(DEVICE1, "X")),
          slice_with_devices(SLICE2, NODE1, POOL1_2, DRIVER_A, tdev(DEVICE2, "Y")),
          slice_with_devices(SLICE3, NODE1, POOL2, DRIVER_A, tdev(DEVICE3, "Y", binding_conditions=["IsPrepare"]))],
         [allocation(LOCAL1, R(REQ1, DRIVER_A, POOL1, DEVICE2),
                     R(REQ1, DRIVER_A, POOL2, DEVICE3, binding_conditions=("IsPrepare",)),
                     R(REQ2, DRIVER_A, POOL1, DEVICE1))], features=features(device_binding_and_status=True),
         invocations=12),
    Case("check-combinations-with-prioritized-list",
         [one_claim(CLAIM0, request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 3, type_sel("Y")), sub_request(SUB_REQ1, CLASS_A, 2)),
             request_with_prioritized_list(
             REQ2, sub_request(SUB_REQ0, CLASS_A, 2), sub_request(SUB_REQ1, CLASS_A, 1, type_sel("X"))))], CLASSES_A,
         slice1(tdev(DEVICE1, "X"), tdev(DEVICE2, "Y"), tdev(DEVICE3, "Y")),
         [allocation(LOCAL1, R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE2), R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3),
                     R("req-2/subReq-1", DRIVER_A, POOL1, DEVICE1))], features=PL, invocations=26),
]


BINDING = features(device_binding_and_status=True)


def gen_sel(value: str) -> DeviceSelector:
    return sel(f'device.attributes["{DRIVER_A}"].generation == "{value}"')


def bdev(name: str, suffix: str = "") -> Device:
    return device(name, binding_conditions=["IsPrepare" + suffix],
        binding_failure_conditions=["BindingFailed" + suffix])


def bres(request_name: str, name: str, suffix: str = "") -> R:
    return R(request_name, DRIVER_A, POOL1, name, binding_conditions=("IsPrepare" + suffix,),
             binding_failure_conditions=("BindingFailed" + suffix,))


GEN_ALL = request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 0, gen_sel("v6"), mode="All"),
                                        sub_request(SUB_REQ1, CLASS_A, 0, gen_sel("v5"), mode="All"))

CASES += [
    Case("prioritized-list-allocation-mode-all",
         [one_claim(CLAIM0, request_with_prioritized_list(
             REQ0, sub_request(SUB_REQ0, CLASS_A, 0, mode="All"), sub_request(SUB_REQ1, CLASS_A, 1)))], CLASSES_A,
         slice1(device(DEVICE1), device(DEVICE2)), [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))],
         features=PL, allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2)]),
    Case("prioritized-list-allocation-mode-all-with-selectors", [one_claim(CLAIM0, GEN_ALL)], CLASSES_A,
         slice1(device(DEVICE1, None, attrs(generation="v5"))),
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))], features=PL),
    Case("prioritized-list-allocation-mode-all-with-selectors-multiple-pools", [one_claim(CLAIM0, GEN_ALL)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(generation="v5"))),
          slice_with_devices(SLICE2, NODE1, POOL2, DRIVER_A, device(DEVICE1, None, attrs(generation="v5")))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1), R(REQ0_SUB_REQ1, DRIVER_A, POOL2, DEVICE1))],
         features=PL),
    Case("prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes", [one_claim(CLAIM0,
        GEN_ALL)],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, device(DEVICE1, None, attrs(generation="v5"))),
          slice_with_devices(SLICE2, NODE2, POOL2, DRIVER_A, device(DEVICE1, None, attrs(generation="v5")),
                             device(DEVICE2, None, attrs(generation="v6")))],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE1))], features=PL),
    Case("prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset", [one_claim(CLAIM0, GEN_ALL)],
         [_class_with(CLASS_A, f'device.driver == "{DRIVER_A}" && device.attributes["{DRIVER_A}"].selected')],
         slice1(device(DEVICE1, None, attrs(generation="v6", selected=False)),
                device(DEVICE2, None, attrs(generation="v5", selected=False)),
                device(DEVICE3, None, attrs(generation="v5", selected=True))),
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE3))], features=PL),
    Case("max-number-devices", [one_claim(CLAIM0, request(REQ0, CLASS_A, MAX))], CLASSES_A,
         [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX)],
         [allocation(LOCAL1, *(R(REQ0, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX)))]),
    Case("device-binding-conditions", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A, slice1(bdev(DEVICE1)),
         [allocation(LOCAL1, bres(REQ0, DEVICE1))], features=BINDING),
    Case("binding-conditions-multiple-devices",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 2), request(REQ1, CLASS_A, 1))], CLASSES_A,
         slice1(bdev(DEVICE1), bdev(DEVICE2, "2"), bdev(DEVICE3, "3")),
         [allocation(LOCAL1, bres(REQ0, DEVICE1), bres(REQ0, DEVICE2, "2"), bres(REQ1, DEVICE3, "3"))],
         features=BINDING),
    Case("binding-conditions-with-and-without",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))], CLASSES_A,
         slice1(device(DEVICE1), bdev(DEVICE2)),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), bres(REQ1, DEVICE2))], features=BINDING),
    Case("binding-conditions-without-feature-gate", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         slice1(bdev(DEVICE1)), None),
    Case("node-restriction", [claim_with_request(CLAIM0, REQ0, CLASS_A)], CLASSES_A,
         [slice_with_devices(SLICE1, node_label_selector(PLANET_KEY, PLANET_VALUE_EARTH), POOL1, DRIVER_A,
                             device(DEVICE1, binds_to_node=True))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1))], features=BINDING),
]


def test_interrupt() -> None:
    """upstream's "interrupt" subtests: a cancelled attempt fails with the context's cause."""
    claims = [one_claim(CLAIM0, request(REQ0, CLASS_A, 6))]
    slices = slice1(*(device(d) for d in (*FOUR, "device-5")))
    allocator = Allocator(slices, {CLASS_A: CLASSES_A[0]}, AllocatedState(), SelectorCache(compile_stub),
                          aborted=lambda: "context deadline exceeded")
    with pytest.raises(AllocatorError, match="filter operation aborted: context deadline exceeded"):
        allocator.allocate(node(NODE1, REGION1), claims)
    off = Allocator(slices, {CLASS_A: CLASSES_A[0]}, AllocatedState(), SelectorCache(compile_stub))
    assert off.allocate(node(NODE1, REGION1), claims) is None


PD_CC = features(partitionable_devices=True, consumable_capacity=True)


def kind_sel(*kinds: str) -> DeviceSelector:
    return sel(" || ".join(f'device.attributes["{DRIVER_A}"].kind == "{k}"' for k in kinds))


def str_sel(value: str) -> DeviceSelector:
    return sel(f'device.attributes["{DRIVER_A}"].stringAttribute == "{value}"')


def mem_consumed(amount: str) -> dict[str, Any]:
    return {"share_id": FIXED_SHARE_ID, "consumed_capacity": (("memory", parse_decimal(amount)),)}


CASES += [
    Case("partitionable-consumable-capacity-backtrack-releases-counter",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1, kind_sel("shared")),
                    request(REQ1, CLASS_A, 1, kind_sel("counteronly")))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             cdev(DEVICE1, None, attributes=attrs(kind="shared"),
                                  consumes_counters=[consumption(COUNTER_SET1, C1)]),
                             device(DEVICE2, None, attrs(kind="shared")),
                             pdev(DEVICE3, COUNTER_SET1, C1, attributes=attrs(kind="counteronly"))),
          counters_slice(SLICE2, POOL1_2, C1)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2), R(REQ1, DRIVER_A, POOL1, DEVICE3))], features=PD_CC),
    Case("consumable-capacity-rejection-rolls-back-constraints",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1, str_sel("cap"), capacity="2")),
          claim_with_requests(CLAIM1, [match(STRING_ATTRIBUTE)], request_with_prioritized_list(
              REQ0, sub_request(SUB_REQ0, CLASS_A, 1, str_sel("cap"), mode="All", capacity="2"),
              sub_request(SUB_REQ1, CLASS_A, 1, str_sel("fb"))))], CLASSES_A,
         slice1(cdev(DEVICE1, "2", attributes=attrs(stringAttribute="cap")), sdev(DEVICE2, "fb")),
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc("2"))),
          allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, DEVICE2))],
         features=features(consumable_capacity=True, prioritized_list=True)),
    Case("partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1, kind_sel("shared"))),
          claim_with_requests(CLAIM1, [match(STRING_ATTRIBUTE, REQ1, REQ2)],
                              request(REQ1, CLASS_A, 1, kind_sel("shared", "fallback")),
                              request(REQ2, CLASS_A, 1, kind_sel("gate")), request(REQ3, CLASS_A, 1,
                                  kind_sel("shared")))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             cdev(DEVICE1, None, attributes=attrs(kind="shared", stringAttribute="red"),
                                  consumes_counters=[consumption(COUNTER_SET1, C1)]),
                             device(DEVICE2, None, attrs(kind="fallback", stringAttribute="blue")),
                             device(DEVICE3, None, attrs(kind="gate", stringAttribute="blue"))),
          counters_slice(SLICE2, POOL1_2, C1)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc())),
          allocation(LOCAL1, R(REQ1, DRIVER_A, POOL1, DEVICE2), R(REQ2, DRIVER_A, POOL1, DEVICE3),
                     R(REQ3, DRIVER_A, POOL1, DEVICE1, **cc()))], features=PD_CC),
    Case("allow-multiple-allocations-with-partitionable-device",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1,
                 mem_sel("4Gi"))))],
         MULTI_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             *(pdev(d, COUNTER_SET1, mem(m), True, allow_multiple_allocations=True)
                               for d, m in ((DEVICE1, "4Gi"), (DEVICE2, "6Gi"), (DEVICE3, "4Gi")))),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **mem_consumed("4Gi")),
                     R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3, **mem_consumed("4Gi")))],
         features=features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True)),
    Case("allow-multiple-allocations-with-shared-device-counter-cross-cycle",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1, sel(f'device.attributes["{DRIVER_A}"].mode == "b"'),
                                    capacity="1"))], MULTI_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             pdev(DEVICE1, COUNTER_SET1, {CAPACITY0: "1"}, True, attributes=attrs(mode="a"),
                                  allow_multiple_allocations=True),
                             pdev(DEVICE2, COUNTER_SET1, {CAPACITY0: "1"}, True, attributes=attrs(mode="b"),
                                  allow_multiple_allocations=True)),
          counters_slice(SLICE2, POOL1_2, {CAPACITY0: "1"})], [], features=PD_CC,
         allocated_shared={(DeviceID(DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID)},
         allocated_capacity={DeviceID(DRIVER_A, POOL1, DEVICE1): {CAPACITY0: parse_decimal("1")}}),
    Case("partitionable-consumable-capacity-shared-device-counter-not-recharged",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             cdev(DEVICE1, None, consumes_counters=[consumption(COUNTER_SET1, C1)])),
          counters_slice(SLICE2, POOL1_2, C1)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **cc()))], features=PD_CC,
         allocated_shared={(DeviceID(DRIVER_A, POOL1, DEVICE1), FIXED_SHARE_ID)}),
]


def list_dev(name: str, attribute: str, *values: str) -> Device:
    return device(name, None, {attribute: DeviceAttribute(string_values=list(values))})


CASES += [
    Case("list-attributes-disabled-match-constraint-with-lists",
         [claim_with_requests(CLAIM0, [match(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_A,
         slice1(list_dev(DEVICE1, S_ATTR, "value1", "value2", "value3"),
                list_dev(DEVICE2, S_ATTR, "value2", "value3", "value4")), None),
    Case("list-attributes-disabled-distinct-constraint-with-lists",
         [claim_with_requests(CLAIM0, [distinct(STRING_ATTRIBUTE)], request(REQ0, CLASS_A, 2))], CLASSES_A,
         slice1(list_dev(DEVICE1, S_ATTR, "value1", "value2", "value3"),
                list_dev(DEVICE2, S_ATTR, "value2", "value3", "value4")), None, features=CC),
]


def mdev(name: str, *sets: tuple[str, dict[str, str]]) -> Device:
    """device(name, fromCounters, nil) consuming from several counter sets."""
    capacity: dict[str, str] = {}
    for _, values in sets:
        capacity.update(values)
    return device(name, capacity, None, consumes_counters=[consumption(n, v) for n, v in sets])


def cpu_mem(cpus: str, memory: str) -> dict[str, str]:
    return {"cpus": cpus, "memory": memory}


CASES += [
    Case("partitionable-devices-multiple-capacity-pools",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 1, mem_sel("6Gi")), sub_request(SUB_REQ1, CLASS_A, 1,
                 mem_sel("4Gi"))))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             *(mdev(d, (COUNTER_SET1, mem(m)), (COUNTER_SET2, {"cpus": c}))
                               for d, m, c in ((DEVICE1, "4Gi", "4"), (DEVICE2, "6Gi", "6"), (DEVICE3, "4Gi", "4")))),
          slice_with_counter_sets(SLICE2, NODE1, POOL1_2, DRIVER_A, counter_set(COUNTER_SET1, mem("18Gi")),
                                  counter_set(COUNTER_SET2, {"cpus": "8"}))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1), R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE3))],
         features=PD_PL),
    Case("partitionable-devices-multiple-counters",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             mdev(DEVICE1, (COUNTER_SET1, cpu_mem("6", "4Gi")), (COUNTER_SET2, cpu_mem("4", "2Gi"))),
                             mdev(DEVICE2, (COUNTER_SET1, cpu_mem("4", "6Gi")), (COUNTER_SET2, cpu_mem("6", "6Gi"))),
                             mdev(DEVICE3, (COUNTER_SET1, cpu_mem("4", "4Gi")), (COUNTER_SET2, cpu_mem("4", "4Gi")))),
          slice_with_counter_sets(SLICE2, NODE1, POOL1_2, DRIVER_A, counter_set(COUNTER_SET1, cpu_mem("8", "18Gi")),
                                  counter_set(COUNTER_SET2, cpu_mem("12", "18Gi")))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2), R(REQ1, DRIVER_A, POOL1, DEVICE3))], features=PD),
    Case("partitionable-devices-multiple-pools",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1), request(REQ1, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             *(mdev(d, (COUNTER_SET1, cpu_mem(c, m)))
                               for d, c, m in ((DEVICE1, "6", "4Gi"), (DEVICE2, "4", "6Gi"), (DEVICE3, "4", "4Gi")))),
          counters_slice(SLICE2, POOL1_2, cpu_mem("8", "18Gi")),
          slice_with_devices(SLICE3, NODE1, POOL2_2, DRIVER_A,
                             *(mdev(d, (COUNTER_SET1, cpu_mem(c, m)))
                               for d, c, m in ((DEVICE1, "6", "4Gi"), (DEVICE2, "1", "7Gi"), (DEVICE3, "1", "7Gi")))),
          counters_slice(SLICE4, POOL2_2, cpu_mem("8", "18Gi"))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL2, DEVICE2), R(REQ1, DRIVER_A, POOL2, DEVICE3))], features=PD,
         allocated=[DeviceID(DRIVER_A, POOL1, DEVICE2), DeviceID(DRIVER_A, POOL1, DEVICE3),
                    DeviceID(DRIVER_A, POOL2, DEVICE1)]),
]


def special(name: str, value: bool, cpu: str) -> Device:
    return device(name, None, attrs(special=value), consumes_counters=[
        consumption(COUNTER_SET1, {cpu: "1"}), consumption(COUNTER_SET2, {"mem": "10Gi"})])


CASES += [
    Case("partitionable-devices-with-attribute-selector",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 2),
                    request(REQ1, CLASS_A, 1, sel(f'device.attributes["{DRIVER_A}"].special')))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, special(DEVICE1, True, "cpu1"),
                             special(DEVICE2, False, "cpu2"), special(DEVICE3, False, "cpu3")),
          slice_with_counter_sets(SLICE2, NODE1, POOL1_2, DRIVER_A,
                                  counter_set(COUNTER_SET1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                                  counter_set(COUNTER_SET2, {"mem": "30Gi"}))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE2), R(REQ0, DRIVER_A, POOL1, DEVICE3),
                     R(REQ1, DRIVER_A, POOL1, DEVICE1))], features=PD),
    Case("prioritized-list-max-allocation-limit-request",
         [one_claim(CLAIM0, *(request_with_prioritized_list(r, sub_request(SUB_REQ0, CLASS_A, MAX),
                                                            sub_request(SUB_REQ1, CLASS_A, MAX // 2))
                              for r in (REQ0, REQ1)))], CLASSES_A,
         [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX * 2)],
         [allocation(LOCAL1, *(R(REQ0_SUB_REQ1, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX // 2)),
                     *(R(REQ1_SUB_REQ1, DRIVER_A, POOL1, f"device-{i}") for i in range(MAX // 2, MAX)))],
         features=PL, invocations=75),
    Case("prioritized-list-max-allocation-allocation-mode-all",
         [one_claim(CLAIM0, request_with_prioritized_list(REQ0, sub_request(SUB_REQ0, CLASS_A, 0, mode="All"),
                                                          sub_request(SUB_REQ1, CLASS_A, 2)),
                    request(REQ1, CLASS_B, 2))], CLASSES_AB,
         [slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, MAX - 1),
          slice_with_multiple_devices(SLICE2, NODE1, POOL2, DRIVER_B, 2)],
         [allocation(LOCAL1, R(REQ0_SUB_REQ1, DRIVER_A, POOL1, "device-0"), R(REQ0_SUB_REQ1, DRIVER_A, POOL1,
             "device-1"),
                     R(REQ1, DRIVER_B, POOL2, "device-0"), R(REQ1, DRIVER_B, POOL2, "device-1"))],
         features=PL, invocations=42),
]


PD_BINDING = features(partitionable_devices=True, device_binding_and_status=True)
PD_BINDING_TAINTS = features(partitionable_devices=True, device_binding_and_status=True, device_taints=True)
TOLERATION_NO_SCHEDULE_KEY1 = DeviceToleration(key="key1", operator="Exists", effect="NoSchedule")
TAINT_KEY1 = taint("key1", "value1", "NoSchedule")


def pbdev(name: str, counter_set_name: str, memory: str, conditions: tuple[str, str] | None, **kw: Any) -> Device:
    d = pdev(name, counter_set_name, mem(memory), True, **kw)
    if conditions is not None:
        d.binding_conditions, d.binding_failure_conditions = [conditions[0]], [conditions[1]]
    return d


def pbres(name: str, conditions: tuple[str, str] | None, *tolerations: DeviceToleration) -> R:
    c = ((conditions[0],), (conditions[1],)) if conditions else ((), ())
    return R(REQ0, DRIVER_A, POOL1, name, tolerations=tolerations, binding_conditions=c[0],
             binding_failure_conditions=c[1])


PREPARE = ("IsPrepare", "BindingFailed")

CASES += [
    Case("partitionable-devices-with-binding-conditions", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pbdev(DEVICE1, COUNTER_SET1, "4Gi", PREPARE)),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, pbres(DEVICE1, PREPARE))], features=PD_BINDING),
    Case("partitionable-devices-with-binding-conditions-multiple", [one_claim(CLAIM0, request(REQ0, CLASS_A, 2))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pbdev(DEVICE1, COUNTER_SET1, "4Gi", PREPARE),
                             pbdev(DEVICE2, COUNTER_SET1, "4Gi", ("IsPrepare2", "BindingFailed2"))),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, pbres(DEVICE1, PREPARE), pbres(DEVICE2, ("IsPrepare2", "BindingFailed2")))],
         features=PD_BINDING),
    Case("partitionable-devices-with-binding-conditions-some-devices-no-conditions",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 3))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pbdev(DEVICE1, COUNTER_SET1, "2Gi", PREPARE),
                             pbdev(DEVICE2, COUNTER_SET1, "2Gi", None),
                             pbdev(DEVICE3, COUNTER_SET1, "4Gi", ("IsReady", "BindingTimeout"))),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, pbres(DEVICE1, PREPARE), pbres(DEVICE2, None),
                     pbres(DEVICE3, ("IsReady", "BindingTimeout")))], features=PD_BINDING),
    Case("partitionable-devices-with-binding-conditions-multi-slices", [one_claim(CLAIM0, request(REQ0, CLASS_A, 2))],
         CLASSES_A,
         [slice_with_devices(SLICE4, NODE1, resource_pool(POOL1, 4), DRIVER_A,
                             pbdev(DEVICE1, COUNTER_SET1, "4Gi", PREPARE)),
          counters_slice(SLICE3, resource_pool(POOL1, 4), mem("8Gi")),
          slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 4), DRIVER_A, pbdev(DEVICE2, COUNTER_SET2, "4Gi",
              None)),
          counters_slice(SLICE1, resource_pool(POOL1, 4), mem("8Gi"), set_name=COUNTER_SET2)],
         [allocation(LOCAL1, pbres(DEVICE2, None), pbres(DEVICE1, PREPARE))], features=PD_BINDING),
    Case("partitionable-devices-with-binding-conditions-and-taints", [one_claim(CLAIM0, request(REQ0, CLASS_A, 2))],
         CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A,
                             pbdev(DEVICE1, COUNTER_SET1, "4Gi", PREPARE, taints=[TAINT_KEY1]),
                             pbdev(DEVICE2, COUNTER_SET1, "4Gi", None)),
          counters_slice(SLICE2, POOL1, mem("8Gi"))], None, features=PD_BINDING_TAINTS),
    Case("partitionable-devices-with-binding-conditions-and-taints-tolerated",
         [_tolerations(one_claim(CLAIM0, request(REQ0, CLASS_A, 2)), TOLERATION_NO_SCHEDULE_KEY1)], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A,
                             pbdev(DEVICE1, COUNTER_SET1, "4Gi", PREPARE, taints=[TAINT_KEY1]),
                             pbdev(DEVICE2, COUNTER_SET1, "4Gi", None)),
          counters_slice(SLICE2, POOL1_2, mem("8Gi"))],
         [allocation(LOCAL1, pbres(DEVICE1, PREPARE, TOLERATION_NO_SCHEDULE_KEY1),
                     pbres(DEVICE2, None, TOLERATION_NO_SCHEDULE_KEY1))], features=PD_BINDING_TAINTS),
]


def cap_sel(amount: str) -> DeviceSelector:
    return sel(f'device.capacity["{DRIVER_A}"]["{CAPACITY0}"].compareTo(quantity("{amount}")) >= 0')


def two_caps(c0: str, c1: str) -> dict[str, Any]:
    return {"share_id": FIXED_SHARE_ID,
            "consumed_capacity": ((CAPACITY0, parse_decimal(c0)), (CAPACITY1, parse_decimal(c1)))}


def pcdev(name: str, c0: str) -> Device:
    d = mdev(name, (COUNTER_SET1, {CAPACITY0: c0}), (COUNTER_SET2, {CAPACITY1: "4"}))
    d.allow_multiple_allocations = True
    d.capacity[CAPACITY1] = policy_range("4")
    return d


CASES += [
    Case("consumable-capacity-with-partitionable-device-multiple-capacity-pools",
         [one_claim(CLAIM0, creq(REQ0, "1"), creq(REQ2, "2"), request_with_prioritized_list(
             REQ1, sub_request(SUB_REQ0, CLASS_A, 1, cap_sel("4"), capacity="1"),
             sub_request(SUB_REQ1, CLASS_A, 1, cap_sel("2"), capacity="1")))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, pcdev(DEVICE1, "2"), pcdev(DEVICE2, "4"),
                             pcdev(DEVICE3, "2")),
          slice_with_counter_sets(SLICE2, NODE1, POOL1_2, DRIVER_A, counter_set(COUNTER_SET1, {CAPACITY0: "4"}),
                                  counter_set(COUNTER_SET2, {CAPACITY1: "8"}))],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL1, DEVICE1, **two_caps("1", "2")),
                     R(REQ2, DRIVER_A, POOL1, DEVICE3, **two_caps("2", "2")),
                     R(REQ1_SUB_REQ1, DRIVER_A, POOL1, DEVICE1, **two_caps("1", "2")))],
         features=features(prioritized_list=True, partitionable_devices=True, consumable_capacity=True)),
]


def grouped(name: str, counter_set_name: str, amount: str, *groups: str) -> Device:
    c = consumption(counter_set_name, {CAPACITY0: amount})
    c.compatibility_groups = list(groups)
    return device(name, consumes_counters=[c])


CASES += [
    Case("empty", [], [], [], None),
    Case("compatibility-groups-disabled-skips-grouped-pool", [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, POOL1_2, DRIVER_A, grouped(DEVICE1, COUNTER_SET1, "2", "mig")),
          counters_slice(SLICE2, POOL1_2, {CAPACITY0: "4"}),
          slice_with_devices(SLICE3, NODE1, POOL2_2, DRIVER_A, grouped(DEVICE2, COUNTER_SET2, "2")),
          counters_slice(SLICE4, POOL2_2, {CAPACITY0: "4"}, set_name=COUNTER_SET2)],
         [allocation(LOCAL1, R(REQ0, DRIVER_A, POOL2, DEVICE2))], features=PD),
    Case("compatibility-groups-disabled-skips-ungrouped-device-in-grouped-pool",
         [one_claim(CLAIM0, request(REQ0, CLASS_A, 1))], CLASSES_A,
         [slice_with_devices(SLICE1, NODE1, resource_pool(POOL1, 3), DRIVER_A,
                             grouped(DEVICE1, COUNTER_SET1, "1", "mig")),
          slice_with_devices(SLICE2, NODE1, resource_pool(POOL1, 3), DRIVER_A, grouped(DEVICE2, COUNTER_SET1, "1")),
          counters_slice(SLICE3, resource_pool(POOL1, 3), {CAPACITY0: "4"})], None, features=PD),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocator(case: Case) -> None:
    run(case)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)


def test_default_features_are_kube_schedulers() -> None:
    """kube-scheduler v1.37.2's default gates (pkg/features/kube_features.go): AdminAccess and
    PrioritizedList GA, DeviceTaints GA, PartitionableDevices, ConsumableCapacity and
    DeviceBindingConditions beta and on, ResourceClaimDeviceStatus GA; FractionalCapacityRange on only
    from a minimum compatibility version of 1.37, which defaults to the binary's minus one."""
    f = Features()
    assert (f.admin_access, f.prioritized_list, f.partitionable_devices, f.device_taints,
            f.device_binding_and_status, f.consumable_capacity) == (True,) * 6
    assert f.fractional_capacity_range is False


def test_random_share_ids_are_distinct_version_4_uuids() -> None:
    import uuid

    from kubesched.plugins.dynamic_resources.allocator import random_share_id
    ids = [random_share_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids[:200]:
        u = uuid.UUID(text)
        assert str(u) == text
        assert (u.version, u.variant) == (4, uuid.RFC_4122)
