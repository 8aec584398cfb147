"""The structured allocator against the cases of upstream's allocator tests
(k8s.io/dynamic-resource-allocation v0.37.2, structured/internal/allocatortesting/allocator_testing.go),
each with the upstream case's name as id. Features are per case as upstream sets them (off unless named).
Upstream compares the results of a claim as a set; these compare them in the order found."""

from __future__ import annotations

import pytest

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.model.resource import DeviceSelector, ResourceClaim, ResourceSlice
from kubesched.plugins.dynamic_resources.pools import DeviceID
from tests.unit.plugins.dynamic_resources.allocator_fixtures import (
    BOOL_ATTRIBUTE,
    CLAIM0,
    CLAIM1,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DRIVER_A,
    DRIVER_B,
    INT_ATTRIBUTE,
    NODE1,
    NODE2,
    NODE_SELECTION_ALL,
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
    REQ0_SUB_REQ1,
    REQ1,
    SLICE1,
    SLICE2,
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
    consumption,
    counter_set,
    device,
    device_class,
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
    slice_with_one_device,
    sub_request,
)

CLASSES_A = [device_class(CLASS_A, DRIVER_A)]
CLASSES_AB = [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)]
LOCAL1 = local_node_selector(NODE1)


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
                             device(DEVICE1, None, attrs(stringAttribute="stringAttributeValue")),
                             device(DEVICE2, None, attrs(stringAttribute="stringAttributeValue2")))], None),
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


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_allocator(case: Case) -> None:
    run(case)


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
