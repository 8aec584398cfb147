"""Decoding resource.k8s.io/v1 objects, in the JSON shapes the apiserver serves (the objects are
those of kube-scheduler's scheduler_perf DRA templates, plus what an allocated claim's status holds)."""

from __future__ import annotations

import json
from typing import TypeVar

import msgspec

from kubesched.model.decode import TolerantDecoder
from kubesched.model.resource import (
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

T = TypeVar("T")


def _decode(type_: type[T], obj: object) -> T:
    return TolerantDecoder(type_).decode(json.dumps(obj).encode())


def test_device_class_selectors_and_extended_resource_name() -> None:
    cls = _decode(DeviceClass, {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": "test-class"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "test-driver.cdi.k8s.io"'}}],
                 "extendedResourceName": "example.com/gpu",
                 "config": [{"opaque": {"driver": "d", "parameters": {"a": 1}}}]},
    })
    assert cls.metadata.name == "test-class"
    assert cls.spec.selectors[0].cel is not None
    assert cls.spec.selectors[0].cel.expression == 'device.driver == "test-driver.cdi.k8s.io"'
    assert cls.spec.extended_resource_name == "example.com/gpu"
    assert _decode(DeviceClass, {"spec": {}}).spec.extended_resource_name is None


def test_claim_with_exactly_constraints_and_status() -> None:
    claim = _decode(ResourceClaim, {
        "metadata": {"name": "test-claim-0", "namespace": "default", "uid": "u1"},
        "spec": {"devices": {
            "requests": [{"name": "req-0", "exactly": {
                "deviceClassName": "test-class", "allocationMode": "ExactCount", "count": 2,
                "adminAccess": True,
                "selectors": [{"cel": {"expression": "true"}}],
                "tolerations": [{"key": "example.com/taint", "operator": "Exists", "effect": "NoSchedule",
                                 "tolerationSeconds": 5}],
                "capacity": {"requests": {"bandwidth": "2500M"}}}}],
            "constraints": [{"requests": ["req-0"], "distinctAttribute": "dra.example.com/index"},
                            {"matchAttribute": "dra.example.com/numa"}],
            "config": [{"requests": ["req-0"], "opaque": {"driver": "d", "parameters": {}}}],
        }},
        "status": {
            "allocation": {
                "devices": {"results": [{
                    "request": "req-0", "driver": "test-driver.cdi.k8s.io", "pool": "pool-0",
                    "device": "dev-0", "adminAccess": True, "shareID": "abc",
                    "consumedCapacity": {"bandwidth": "2500M"},
                    "tolerations": [{"key": "k", "operator": "Exists"}]}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
                "allocationTimestamp": "2026-01-01T00:00:00Z",
            },
            "reservedFor": [{"resource": "pods", "name": "pod-0", "uid": "p1"}],
            "devices": [{"driver": "d", "pool": "p", "device": "x", "conditions": []}],
        },
    })
    exactly = claim.spec.devices.requests[0].exactly
    assert exactly is not None
    assert (exactly.device_class_name, exactly.allocation_mode, exactly.count) == ("test-class", "ExactCount", 2)
    assert exactly.admin_access is True
    assert exactly.tolerations[0].operator == "Exists"
    assert exactly.tolerations[0].toleration_seconds == 5
    assert exactly.capacity is not None
    assert exactly.capacity.requests == {"bandwidth": "2500M"}
    c0, c1 = claim.spec.devices.constraints
    assert c0.requests == ["req-0"]
    assert c0.distinct_attribute == "dra.example.com/index"
    assert c0.match_attribute is None
    assert c1.requests == []
    assert c1.match_attribute == "dra.example.com/numa"
    alloc = claim.status.allocation
    assert alloc is not None
    r = alloc.devices.results[0]
    assert (r.request, r.driver, r.pool, r.device, r.admin_access, r.share_id) == (
        "req-0", "test-driver.cdi.k8s.io", "pool-0", "dev-0", True, "abc")
    assert r.consumed_capacity == {"bandwidth": "2500M"}
    assert alloc.node_selector is not None
    assert alloc.node_selector.node_selector_terms[0].match_fields[0].values == ["node-1"]
    assert alloc.allocation_timestamp == "2026-01-01T00:00:00Z"
    assert [(c.resource, c.name, c.uid) for c in claim.status.reserved_for] == [("pods", "pod-0", "p1")]


def test_claim_template_first_available() -> None:
    tmpl = _decode(ResourceClaimTemplate, {
        "metadata": {"name": "test-claim-template", "namespace": "ns"},
        "spec": {"metadata": {"labels": {"a": "b"}}, "spec": {"devices": {"requests": [{
            "name": "req-0",
            "firstAvailable": [{"name": "sub-0", "deviceClassName": "no-devices-class"},
                               {"name": "sub-1", "deviceClassName": "test-class", "allocationMode": "All",
                                "selectors": [{"cel": {"expression": "true"}}],
                                "capacity": {"requests": {"memory": "1Gi"}}}]}]}}},
    })
    assert tmpl.spec.metadata.labels == {"a": "b"}
    request = tmpl.spec.spec.devices.requests[0]
    assert request.exactly is None
    assert [s.name for s in request.first_available] == ["sub-0", "sub-1"]
    sub1 = request.first_available[1]
    assert (sub1.device_class_name, sub1.allocation_mode, sub1.count) == ("test-class", "All", 0)
    assert sub1.capacity is not None
    assert sub1.capacity.requests == {"memory": "1Gi"}


def test_slice_with_attributes_capacity_and_policies() -> None:
    s = _decode(ResourceSlice, {
        "kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": "resourceslice-0"},
        "spec": {
            "pool": {"name": "resourceslice-0", "generation": 1, "resourceSliceCount": 1},
            "driver": "test-driver.cdi.k8s.io", "nodeName": "scheduler-perf-dra-0",
            "devices": [{
                "name": "shareable-device-0", "allowMultipleAllocations": True,
                "attributes": {"dra.example.com/index": {"int": 0}, "model": {"string": "a100"},
                               "healthy": {"bool": False}, "driverVersion": {"version": "1.2.3"},
                               "cores": {"ints": [1, 2]}},
                "capacity": {"bandwidth": {"value": "10G", "requestPolicy": {
                    "default": "1M", "validRange": {"min": "1M", "step": "8"}}},
                    "memory": {"value": "80Gi", "requestPolicy": {"validValues": ["1Gi", "2Gi"]}}},
                "taints": [{"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule",
                            "timeAdded": "2026-01-01T00:00:00Z"}],
                "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"], "bindsToNode": True,
            }],
        },
    })
    assert s.spec.node_name == "scheduler-perf-dra-0"
    assert (s.spec.pool.name, s.spec.pool.generation, s.spec.pool.resource_slice_count) == ("resourceslice-0", 1, 1)
    assert s.spec.all_nodes is None
    assert s.spec.node_selector is None
    assert s.spec.per_device_node_selection is None
    d = s.spec.devices[0]
    assert d.allow_multiple_allocations is True
    attrs = d.attributes
    assert attrs["dra.example.com/index"].int_value == 0
    assert attrs["dra.example.com/index"].string_value is None
    assert attrs["model"].string_value == "a100"
    assert attrs["healthy"].bool_value is False
    assert attrs["driverVersion"].version_value == "1.2.3"
    assert attrs["cores"].int_values == [1, 2]
    bw = d.capacity["bandwidth"]
    assert bw.value == "10G"
    assert bw.request_policy is not None
    assert bw.request_policy.default == "1M"
    assert bw.request_policy.valid_range is not None
    assert (bw.request_policy.valid_range.min, bw.request_policy.valid_range.step,
            bw.request_policy.valid_range.max) == ("1M", "8", None)
    assert d.capacity["memory"].request_policy is not None
    assert d.capacity["memory"].request_policy.valid_values == ["1Gi", "2Gi"]
    assert d.taints[0].effect == "NoSchedule"
    assert d.taints[0].time_added == "2026-01-01T00:00:00Z"
    assert d.binding_conditions == ["ready"]
    assert d.binding_failure_conditions == ["failed"]
    assert d.binds_to_node is True
    assert s.spec.devices[0].binding_conditions is not None
    plain = _decode(ResourceSlice, {"spec": {"devices": [{"name": "x"}]}})
    assert plain.spec.devices[0].binding_conditions is None


def test_partitionable_slices_counters_and_per_device_node_selection() -> None:
    counters = _decode(ResourceSlice, {
        "metadata": {"name": "resourceslice-countersets-0"},
        "spec": {"pool": {"name": "resourceslice-0", "generation": 1, "resourceSliceCount": 2},
                 "driver": "test-driver.cdi.k8s.io", "nodeName": "scheduler-perf-dra-0",
                 "sharedCounters": [{"name": "counter-set", "counters": {"counter1": {"value": "1"},
                                                                       "counter2": {"value": "1"}}}]},
    })
    assert counters.spec.shared_counters[0].name == "counter-set"
    assert counters.spec.shared_counters[0].counters["counter2"].value == "1"
    devices = _decode(ResourceSlice, {
        "metadata": {"name": "resourceslice-devices-0"},
        "spec": {"pool": {"name": "resourceslice-0", "generation": 1, "resourceSliceCount": 2},
                 "driver": "test-driver.cdi.k8s.io", "perDeviceNodeSelection": True,
                 "devices": [
                     {"name": "device-1", "nodeName": "n1", "consumesCounters": [{
                         "counterSet": "counter-set",
                         "counters": {"counter1": {"value": "1"}, "counter2": {"value": "1"}}}]},
                     {"name": "device-2", "allNodes": True},
                     {"name": "device-3", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "zone", "operator": "In", "values": ["a"]}]}]}}]},
    })
    assert devices.spec.per_device_node_selection is True
    d1, d2, d3 = devices.spec.devices
    assert d1.node_name == "n1"
    assert d1.consumes_counters[0].counter_set == "counter-set"
    assert d1.consumes_counters[0].counters["counter1"].value == "1"
    assert d2.all_nodes is True
    assert d2.node_name is None
    assert d3.node_selector is not None
    assert d3.node_selector.node_selector_terms[0].match_expressions[0].key == "zone"


def test_device_taint_rule_with_null_selector() -> None:
    rule = _decode(DeviceTaintRule, {
        "metadata": {"name": "taint-all-devices"},
        "spec": {"deviceSelector": None, "taint": {"key": "example.com/taint", "value": "tainted",
                                                   "effect": "NoSchedule"}},
    })
    assert rule.spec.device_selector is None
    assert (rule.spec.taint.key, rule.spec.taint.value, rule.spec.taint.effect) == (
        "example.com/taint", "tainted", "NoSchedule")
    one = _decode(DeviceTaintRule, {"spec": {"deviceSelector": {"driver": "d", "pool": "p", "device": "x"}}})
    assert one.spec.device_selector is not None
    assert (one.spec.device_selector.driver, one.spec.device_selector.pool,
            one.spec.device_selector.device) == ("d", "p", "x")


def test_nulls_decode_as_unset() -> None:
    # Go writes null for nil slices and maps in some clients' objects; they must not fail the decode.
    claim = _decode(ResourceClaim, {
        "metadata": {"name": "c", "labels": None},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {
            "deviceClassName": "c", "selectors": None, "tolerations": None}, "firstAvailable": None}],
            "constraints": None}},
        "status": {"allocation": None, "reservedFor": None},
    })
    assert claim.spec.devices.requests[0].exactly is not None
    assert claim.spec.devices.requests[0].exactly.selectors == []
    assert claim.status.allocation is None
    assert claim.status.reserved_for == []
    s = _decode(ResourceSlice, {"spec": {"devices": [{"name": "x", "attributes": None, "capacity": None}],
                                         "sharedCounters": None}})
    assert s.spec.devices[0].attributes == {}


def test_round_trip_omits_defaults() -> None:
    claim = _decode(ResourceClaim, {"metadata": {"name": "c"},
                                    "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                        "deviceClassName": "cls"}}]}}})
    assert json.loads(msgspec.json.encode(claim)) == {
        "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "cls"}}]}},
        "status": {}}
