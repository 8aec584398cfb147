"""DynamicResources through its extension points: upstream's TestPlugin cases
(dynamicresources_test.go, kube-scheduler v1.37.2), by their names, as far as kubesched implements
the plugin. Left out, as kubesched does not evaluate them: the podgroup-*, extended-resource-* and
node-allocatable-* cases (DRAWorkloadResourceClaims, DRAExtendedResource, DRANodeAllocatableResources),
the allocated-skip-node-operations-* cases (DRAOptionalNodeOperations, alpha), "canceled" (nothing
cancels a Filter here), the metrics of the binding-condition cases, and those that only switch a
gate kube-scheduler v1.37.2 locks (DRA-disabled, empty-with-extended-resources-enabled)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.model.resource import (
    AllocatedDeviceStatus,
    AllocationResult,
    CELDeviceSelector,
    Condition,
    DeviceAttribute,
    DeviceSelector,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.dynamic_resources.plugin import DynamicResources
from kubesched.plugins.dynamic_resources.state import Features
from tests.builders import make_pod
from tests.unit.plugins.dynamic_resources.dra_builders import (
    ALLOCATED_CLAIM,
    ALLOCATION_RESULT,
    ALLOCATION_RESULT_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS,
    ALLOCATION_RESULT_WITH_PRIORITIZED_LIST,
    ALLOCATION_RESULT_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS,
    ATTR_NAME,
    BROKEN_SELECTOR,
    CLAIM,
    CLAIM_NAME,
    CLAIM_NAME2,
    CLAIM_WITH_PRIORITIZED_LIST,
    CLASS_NAME,
    DEVICE_CLASS,
    DEVICE_TAINT,
    DRIVER,
    DRIVER2,
    IN_USE_CLAIM,
    LARGE_CLAIM,
    LARGE_WORKER_NODE_SLICE,
    NAMESPACE,
    NODE2_NAME,
    NODE3_NAME,
    NODE_NAME,
    PENDING_CLAIM,
    PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS,
    PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS,
    PENDING_CLAIM_WITH_PRIORITIZED_LIST,
    PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR,
    POD_NAME,
    POD_UID,
    RESOURCE_NAME,
    RESOURCE_NAME2,
    WORKER_NODE,
    WORKER_NODE2,
    WORKER_NODE2_SLICE,
    WORKER_NODE3,
    WORKER_NODE3_SLICE,
    WORKER_NODE_SLICE,
    allocation,
    copy,
    from_claim,
    make_claim,
    make_slice,
    node_name_selector,
    pod_with_claim_name,
    pod_with_claim_template,
    pod_with_claim_template_in_status,
    result,
)
from tests.unit.plugins.dynamic_resources.plugin_harness import Case, ClaimChange, Prepare, Result, Want, run
from tests.unit.scheduling_helpers import snapshot_with

POD = POD_WITH_CLAIM_NAME = pod_with_claim_name().obj()
POD_WITH_CLAIM_TEMPLATE = pod_with_claim_template().obj()
POD_WITH_CLAIM_TEMPLATE_IN_STATUS = pod_with_claim_template_in_status().obj()
POD_WITH_TWO_CLAIM_NAMES = make_pod(POD_NAME, NAMESPACE).uid(POD_UID).resource_claim(RESOURCE_NAME, claim=CLAIM_NAME) \
    .resource_claim(RESOURCE_NAME2, claim=CLAIM_NAME2).obj()

OTHER_CLAIM = make_claim("not-my-claim", NAMESPACE).request(CLASS_NAME).obj()
OTHER_ALLOCATED_CLAIM = from_claim(OTHER_CLAIM).allocation(ALLOCATION_RESULT).obj()
OTHER_ALLOCATED_CLAIM_OTHER_DEVICE = from_claim(OTHER_ALLOCATED_CLAIM).obj()
assert OTHER_ALLOCATED_CLAIM_OTHER_DEVICE.status.allocation is not None
OTHER_ALLOCATED_CLAIM_OTHER_DEVICE.status.allocation.devices.results[0].device += "-other"


def unschedulable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def error(reason: str) -> Status:
    return Status(Code.ERROR, reason)


def reserve(claim: ResourceClaim, name: str = POD_NAME, uid: str = POD_UID) -> ResourceClaim:
    return from_claim(claim).reserved_for_pod(name, uid).obj()


def timestamped(claim: ResourceClaim) -> ResourceClaim:
    """addAllocationTimestamp: only whether it is set is compared."""
    claim = copy(claim)
    assert claim.status.allocation is not None
    claim.status.allocation.allocation_timestamp = "2026-01-01T00:00:00Z"
    return claim


def admin_access(claim: ResourceClaim) -> ResourceClaim:
    claim = copy(claim)
    for request in claim.spec.devices.requests:
        if request.exactly is not None:
            request.exactly.admin_access = True
    if claim.status.allocation is not None:
        for r in claim.status.allocation.devices.results:
            r.admin_access = True
    return claim


def break_cel_in_claim(claim: ResourceClaim) -> ResourceClaim:
    claim = copy(claim)
    for request in claim.spec.devices.requests:
        assert request.exactly is not None
        request.exactly.selectors = [DeviceSelector(cel=CELDeviceSelector(BROKEN_SELECTOR))]
    return claim


def with_class(claim: ResourceClaim, name: str) -> ResourceClaim:
    """updateDeviceClassName."""
    claim = copy(claim)
    for request in claim.spec.devices.requests:
        if request.exactly is not None:
            request.exactly.device_class_name = name
        for sub in request.first_available:
            sub.device_class_name = name
    return claim


def taint_devices(s: ResourceSlice) -> ResourceSlice:
    s = copy(s)
    for d in s.spec.devices:
        d.taints = [*d.taints, DEVICE_TAINT]
    return s


def in_claim(name: str, fn: ClaimChange) -> ClaimChange:
    """A change for the claim of that name only."""
    def change(claim: ResourceClaim) -> ResourceClaim:
        return fn(claim) if claim.metadata.name == name else claim
    return change


def status_of(source: ResourceClaim, stamp: bool = True) -> ClaimChange:
    """The claim's finalizers and status as `source` has them (the allocation timestamped)."""
    def change(claim: ResourceClaim) -> ResourceClaim:
        claim = copy(claim)
        claim.metadata.finalizers = list(source.metadata.finalizers)
        claim.status = copy(source.status)
        return timestamped(claim) if stamp else claim
    return change


def reserved_for_pod(claim: ResourceClaim) -> ResourceClaim:
    return timestamped(reserve(claim))


def without_finalizers(claim: ResourceClaim) -> ResourceClaim:
    claim = copy(claim)
    claim.metadata.finalizers = []
    return claim


def unreserved(claim: ResourceClaim) -> ResourceClaim:
    claim = copy(claim)
    claim.status.reserved_for = []
    return claim


def deallocated(claim: ResourceClaim) -> ResourceClaim:
    return from_claim(claim).allocation(None).device_statuses([]).obj()


BROKEN_CLASS = copy(DEVICE_CLASS)
BROKEN_CLASS.spec.selectors = [DeviceSelector(cel=CELDeviceSelector(BROKEN_SELECTOR))]
CEL_ERROR = ("selector #0 on device some-driver/worker/instance-1: CEL runtime error: no such key: "
             f"{ATTR_NAME}. consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
             "with has() for optional fields")

WRONG_TOPOLOGY = from_claim(ALLOCATED_CLAIM).allocation(AllocationResult(node_selector=NodeSelector([NodeSelectorTerm(
    match_expressions=[NodeSelectorRequirement("no-such-label", "In", ["no-such-value"])])]))).obj()
GOOD_TOPOLOGY = from_claim(ALLOCATED_CLAIM).allocation(AllocationResult(node_selector=NodeSelector([NodeSelectorTerm(
    match_expressions=[NodeSelectorRequirement("kubernetes.io/hostname", "In", [NODE_NAME])])]))).obj()

# Binding conditions.
BINDING_CONDITIONS, BINDING_FAILURE_CONDITIONS = ["condition"], ["failed"]


def fabric_slice(driver: str, device: str) -> ResourceSlice:
    s = make_slice(NODE_NAME, driver).device(device).obj()
    d = s.spec.devices[0]
    d.binds_to_node, d.binding_conditions, d.binding_failure_conditions = True, BINDING_CONDITIONS, \
        BINDING_FAILURE_CONDITIONS
    s.spec.node_name = None
    s.spec.node_selector = node_name_selector(NODE_NAME)
    return s


FABRIC_SLICE = fabric_slice(DRIVER, "instance-1")
FABRIC_SLICE2 = fabric_slice(DRIVER2, "instance-2")


def with_conditions(a: AllocationResult, stamp: str | None = "2026-01-01T00:00:00Z") -> AllocationResult:
    a = copy(a)
    for r in a.devices.results:
        r.binding_conditions, r.binding_failure_conditions = BINDING_CONDITIONS, BINDING_FAILURE_CONDITIONS
    a.allocation_timestamp = stamp
    return a


ALLOCATION_WITH_BINDING_CONDITIONS = with_conditions(ALLOCATION_RESULT)
ALLOCATION_WITH_BINDING_CONDITIONS2 = with_conditions(allocation(result(DRIVER2, NODE_NAME, "instance-2", "req-2"),
                                                                 node=NODE_NAME))
ALLOCATED_CLAIM2 = from_claim(PENDING_CLAIM).obj()
ALLOCATED_CLAIM2.metadata.name = CLAIM_NAME2
BIND_CLAIM = from_claim(ALLOCATED_CLAIM).allocation(ALLOCATION_WITH_BINDING_CONDITIONS).obj()


def device_status(driver: str, device: str, condition: str, failed: str) -> AllocatedDeviceStatus:
    return AllocatedDeviceStatus(driver=driver, pool=NODE_NAME, device=device, conditions=[
        Condition(type="condition", status=condition), Condition(type="failed", status=failed)])


BOUND_CLAIM = from_claim(ALLOCATED_CLAIM).allocation(ALLOCATION_WITH_BINDING_CONDITIONS).device_statuses(
    [device_status(DRIVER, "instance-1", "True", "False")]).obj()
BOUND_CLAIM2 = from_claim(ALLOCATED_CLAIM2).allocation(ALLOCATION_WITH_BINDING_CONDITIONS2).device_statuses(
    [device_status(DRIVER2, "instance-2", "True", "False")]).obj()
FAILED_BINDING_CLAIM = from_claim(ALLOCATED_CLAIM).allocation(ALLOCATION_WITH_BINDING_CONDITIONS).device_statuses(
    [device_status(DRIVER, "instance-1", "False", "True")]).obj()
FAILED_BINDING_CLAIM2 = from_claim(ALLOCATED_CLAIM2).allocation(ALLOCATION_WITH_BINDING_CONDITIONS2).device_statuses(
    [device_status(DRIVER2, "instance-2", "False", "True")]).obj()


def allocated_at(stamp: str, conditions: list[Condition] | None = None) -> ResourceClaim:
    claim = from_claim(ALLOCATED_CLAIM).allocation(with_conditions(ALLOCATION_RESULT, stamp)).obj()
    claim.status.devices = [AllocatedDeviceStatus(driver=DRIVER, pool=NODE_NAME, device="instance-1",
                                                  conditions=conditions or [])]
    return claim


# BASE_TIME of the harness is 2026-06-01T12:00:00Z.
TIMED_OUT = allocated_at("2026-06-01T11:49:59Z")
TIMES_OUT_IN_10S = allocated_at("2026-06-01T11:50:10Z")
MIXED = allocated_at("2026-06-01T11:49:59Z", [Condition(type="condition1", status="True"),
                                              Condition(type="condition2", status="False")])


def allocated(claim: ResourceClaim, a: AllocationResult) -> ResourceClaim:
    return from_claim(claim).allocation(a).obj()


ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST = allocated(PENDING_CLAIM_WITH_PRIORITIZED_LIST,
                                                  ALLOCATION_RESULT_WITH_PRIORITIZED_LIST)
ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR = allocated(PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR,
                                                               ALLOCATION_RESULT_WITH_PRIORITIZED_LIST)
ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = allocated(
    PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS,
    ALLOCATION_RESULT_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS)
ALLOCATED_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = allocated(
    PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS, ALLOCATION_RESULT_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS)


def with_resources(claim: ResourceClaim = ALLOCATED_CLAIM, pod: str = POD_NAME, **kw: object) -> Want:
    """The Want of a claim allocated on the worker and written in PreBind (upstream's with-resources)."""
    want = Want(reserve=Result(in_flight_claims=[claim]),
                pre_bind=Result(assumed_claim=timestamped(reserve(claim)),
                                changes=in_claim(claim.metadata.name, status_of(reserve(claim))),
                                ))
    return dataclasses.replace(want, **kw)  # type: ignore[arg-type]


def reserved_only(claim: ResourceClaim) -> Want:
    """An allocated claim: PreBind only reserves it for the pod."""
    return Want(pre_bind=Result(assumed_claim=reserved_for_pod(claim),
                                changes=in_claim(claim.metadata.name, reserved_for_pod)))


NO_DEVICE = Want(filter={NODE_NAME: Result(unschedulable("cannot allocate all claims"))},
                 post_filter=Result(Status(Code.UNSCHEDULABLE)))
DEALLOCATED = Result(Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
                     changes=deallocated)
NOT_AVAILABLE = {NODE_NAME: Result(unschedulable("resourceclaim not available on the node"))}
HEALTHY_TRUE = {ATTR_NAME: DeviceAttribute(bool_value=True)}
HEALTHY_FALSE = {ATTR_NAME: DeviceAttribute(bool_value=False)}

CASES = [
    pytest.param(Case(make_pod("foo").obj(), want=Want(
        pre_filter=Result(Status(Code.SKIP)), post_filter=Result(Status(Code.UNSCHEDULABLE)),
        pre_bind_pre_flight_status=Status(Code.SKIP))), id="empty"),
    pytest.param(Case(POD, claims=[ALLOCATED_CLAIM, OTHER_CLAIM],
                      want=reserved_only(ALLOCATED_CLAIM)), id="claim-reference"),
    pytest.param(Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[ALLOCATED_CLAIM, OTHER_CLAIM],
                      want=reserved_only(ALLOCATED_CLAIM)), id="claim-template"),
    pytest.param(Case(POD_WITH_CLAIM_TEMPLATE, claims=[ALLOCATED_CLAIM, OTHER_CLAIM], want=Want(
        pre_enqueue=Result(unschedulable('pod "default/my-pod": ResourceClaim not created yet')))), id="missing-claim"),
    pytest.param(Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[from_claim(ALLOCATED_CLAIM).deleting().obj()],
                      want=Want(pre_enqueue=Result(unschedulable(
                          'resourceclaim "my-pod-my-resource" is being deleted')))),
                 id="deleted-claim"),
    pytest.param(Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS,
                      claims=[from_claim(ALLOCATED_CLAIM).owner_reference(POD_NAME, POD_UID + "123").obj()],
                      want=Want(pre_enqueue=Result(unschedulable(
                          "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod "
                          "(Pod is not owner)")))), id="wrong-claim"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], want=NO_DEVICE),
                 id="no-resources"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      want=with_resources()), id="with-resources"),
    pytest.param(Case(POD, claims=[from_claim(PENDING_CLAIM).finalizer(
        "resource.kubernetes.io/delete-protection").obj()], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
        want=with_resources()), id="with-resources-has-finalizer"),
    pytest.param(Case(POD, claims=[from_claim(PENDING_CLAIM).finalizer(
        "resource.kubernetes.io/delete-protection").obj()], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
        prepare=Prepare(pre_bind=without_finalizers), want=with_resources()),
        id="with-resources-finalizer-gets-removed"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      prepare=Prepare(pre_bind=lambda c: from_claim(c).finalizer(
                          "resource.kubernetes.io/delete-protection").obj()),
                      want=with_resources()), id="with-resources-finalizer-gets-added"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      want=Want(reserve=Result(in_flight_claims=[ALLOCATED_CLAIM]),
                                unreserve_before_pre_bind=Result())), id="skip-bind"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], classes=[DEVICE_CLASS],
                      slices=[WORKER_NODE_SLICE], want=NO_DEVICE), id="exhausted-resources-in-informer-cache"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM, OTHER_CLAIM], in_flight_claims=[OTHER_ALLOCATED_CLAIM],
                      classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE], want=Want(
                          pre_enqueue=Result(in_flight_claims=[OTHER_ALLOCATED_CLAIM]),
                          pre_filter=Result(in_flight_claims=[OTHER_ALLOCATED_CLAIM]),
                          filter={NODE_NAME: Result(unschedulable("cannot allocate all claims"),
                                                    in_flight_claims=[OTHER_ALLOCATED_CLAIM])},
                          post_filter=Result(Status(Code.UNSCHEDULABLE), in_flight_claims=[OTHER_ALLOCATED_CLAIM]))),
                 id="exhausted-resources-in-flight-claim"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM, OTHER_CLAIM],
                      in_flight_claims=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE], classes=[DEVICE_CLASS],
                      slices=[WORKER_NODE_SLICE], want=with_resources(
                          pre_enqueue=Result(in_flight_claims=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]),
                          pre_filter=Result(in_flight_claims=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]),
                          filter={NODE_NAME: Result(in_flight_claims=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE])},
                          reserve=Result(in_flight_claims=[ALLOCATED_CLAIM, OTHER_ALLOCATED_CLAIM_OTHER_DEVICE]),
                          pre_bind=Result(in_flight_claims=[OTHER_ALLOCATED_CLAIM_OTHER_DEVICE],
                                          assumed_claim=timestamped(reserve(ALLOCATED_CLAIM)),
                                          changes=in_claim(CLAIM_NAME, status_of(reserve(ALLOCATED_CLAIM)))))),
                 id="other-resources-in-flight-claim"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS],
                      slices=[taint_devices(WORKER_NODE_SLICE)], features=Features(device_taints=False),
                      want=with_resources()), id="tainted-device-disabled"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS],
                      slices=[taint_devices(WORKER_NODE_SLICE)], want=NO_DEVICE), id="tainted-device-enabled"),
    pytest.param(Case(POD, claims=[admin_access(PENDING_CLAIM), OTHER_ALLOCATED_CLAIM],
                      classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      want=with_resources(admin_access(ALLOCATED_CLAIM))),
                 id="request-admin-access-with-DRAAdminAccess-featuregate"),
    pytest.param(Case(POD, claims=[admin_access(PENDING_CLAIM), OTHER_ALLOCATED_CLAIM],
                      classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE], features=Features(admin_access=False),
                      want=Want(filter={NODE_NAME: Result(error(
                          "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature "
                          "is disabled"))})),
                 id="request-admin-access-without-DRAAdminAccess-featuregate"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM, admin_access(OTHER_ALLOCATED_CLAIM)],
                      classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE], want=with_resources()),
                 id="structured-ignore-allocated-admin-access"),
    pytest.param(Case(POD, claims=[break_cel_in_claim(PENDING_CLAIM)], classes=[DEVICE_CLASS],
                      slices=[WORKER_NODE_SLICE], want=Want(filter={NODE_NAME: Result(error(
                          f"claim default/my-pod-my-resource: {CEL_ERROR}"))})),
                 id="claim-parameters-CEL-runtime-error"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[BROKEN_CLASS], slices=[WORKER_NODE_SLICE],
                      want=Want(filter={NODE_NAME: Result(error(f"class my-resource-class: {CEL_ERROR}"))})),
                 id="class-parameters-CEL-runtime-error"),
    pytest.param(Case(POD, nodes=[WORKER_NODE, WORKER_NODE2], claims=[break_cel_in_claim(PENDING_CLAIM)],
                      classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE, WORKER_NODE2_SLICE],
                      want=Want(filter={NODE_NAME: Result(error(f"claim default/my-pod-my-resource: {CEL_ERROR}"))})),
                 id="CEL-runtime-error-for-one-of-two-nodes"),
    # The first node's error aborts the attempt: the other nodes are never filtered.
    pytest.param(Case(POD, nodes=[WORKER_NODE, WORKER_NODE2, WORKER_NODE3], claims=[break_cel_in_claim(PENDING_CLAIM)],
                      classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE, WORKER_NODE2_SLICE, WORKER_NODE3_SLICE],
                      want=Want(filter={NODE_NAME: Result(error(f"claim default/my-pod-my-resource: {CEL_ERROR}"))})),
                 id="CEL-runtime-error-for-one-of-three-nodes"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], want=Want(
        pre_filter=Result(unschedulable(f"request req-1: device class {CLASS_NAME} does not exist")),
        post_filter=Result(Status(Code.UNSCHEDULABLE)))), id="missing-class"),
    pytest.param(Case(POD, claims=[WRONG_TOPOLOGY], want=Want(filter=NOT_AVAILABLE,
                                                                              post_filter=DEALLOCATED)),
                 id="wrong-topology"),
    pytest.param(Case(POD, claims=[GOOD_TOPOLOGY], want=reserved_only(GOOD_TOPOLOGY)),
                 id="good-topology"),
    pytest.param(Case(POD, claims=[GOOD_TOPOLOGY], want=dataclasses.replace(
        reserved_only(GOOD_TOPOLOGY), unreserve_after_bind_failure=Result(
            assumed_claim=reserved_for_pod(GOOD_TOPOLOGY),
            changes=unreserved))), id="bind-failure"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      fail={"update": "claim bind error"}, want=Want(
                          reserve=Result(in_flight_claims=[ALLOCATED_CLAIM]),
                          pre_bind=Result(error("add finalizer to claim default/my-pod-my-resource: claim bind error"),
                                          in_flight_claims=[ALLOCATED_CLAIM]),
                          unreserve_after_bind_failure=Result())),
                 id="bind-failure-preserves-inflight-until-unreserve"),
    pytest.param(Case(POD, claims=[IN_USE_CLAIM]), id="reserved-okay"),
    pytest.param(Case(POD, claims=[with_class(CLAIM, "does-not-exist")], want=Want(
        pre_filter=Result(unschedulable("request req-1: device class does-not-exist does not exist")),
        post_filter=Result(Status(Code.UNSCHEDULABLE)))), id="claim-with-request-with-unknown-device-class"),
    pytest.param(Case(POD, claims=[CLAIM_WITH_PRIORITIZED_LIST], classes=[DEVICE_CLASS],
                      features=Features(prioritized_list=False), want=Want(
                          pre_filter=Result(unschedulable(
                              "resource claim default/my-pod-my-resource, request req-1: has subrequests, but the "
                              "DRAPrioritizedList feature is disabled")),
                          post_filter=Result(Status(Code.UNSCHEDULABLE)))),
                 id="claim-with-prioritized-list-feature-disabled"),
    pytest.param(Case(POD, claims=[with_class(CLAIM_WITH_PRIORITIZED_LIST, "does-not-exist")], want=Want(
        pre_filter=Result(unschedulable("request req-1/subreq-1: device class does-not-exist does not exist")),
        post_filter=Result(Status(Code.UNSCHEDULABLE)))), id="claim-with-prioritized-list-unknown-device-class"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM_WITH_PRIORITIZED_LIST], classes=[DEVICE_CLASS],
                      slices=[WORKER_NODE_SLICE], want=with_resources(ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST)),
                 id="claim-with-prioritized-list"),
    pytest.param(Case(POD, claims=[LARGE_CLAIM], classes=[DEVICE_CLASS], slices=[LARGE_WORKER_NODE_SLICE],
                      filter_timeout=1e-9, tick=1.0, want=Want(filter={NODE_NAME: Result(error(
                          "node worker: timed out trying to allocate devices"))})), id="timeout"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      filter_timeout=0, tick=1.0, want=with_resources()), id="timeout_zero"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      want=with_resources()), id="add-allocation-timestamp"),
    pytest.param(Case(POD, claims=[ALLOCATED_CLAIM],
                      prepare=Prepare(pre_bind=lambda c: from_claim(c).allocation(None).obj()),
                      want=Want(pre_bind=Result(error(
                          "claim default/my-pod-my-resource got deallocated elsewhere in the meantime"),
                          changes=lambda c: from_claim(c).allocation(None).obj()))),
                 id="add-allocation-timestamp-failure"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS], slices=[FABRIC_SLICE],
                      binding_timeout=1.0, want=Want(
                          reserve=Result(in_flight_claims=[from_claim(BIND_CLAIM).allocation(
                              with_conditions(ALLOCATION_RESULT, None)).obj()]),
                          pre_bind=Result(error("device binding timeout: context deadline exceeded"),
                                          in_flight_claims=[BIND_CLAIM], assumed_claim=reserve(BIND_CLAIM),
                                          changes=lambda c: reserve(BIND_CLAIM)))),
                 id="bind-claim-with-binding-conditions"),
    pytest.param(Case(POD, claims=[BOUND_CLAIM], want=Want(pre_bind=Result(
        assumed_claim=reserve(BOUND_CLAIM), changes=reserve))), id="bound-claim-with-succeeded-binding-conditions"),
    pytest.param(Case(POD, claims=[FAILED_BINDING_CLAIM], slices=[WORKER_NODE_SLICE],
                      want=Want(filter=NOT_AVAILABLE, post_filter=DEALLOCATED)), id="bound-claim-with-failed-binding"),
    pytest.param(Case(POD, claims=[TIMED_OUT], want=Want(filter=NOT_AVAILABLE, post_filter=DEALLOCATED)),
                 id="bound-claim-with-timed-out-binding"),
    pytest.param(Case(POD, claims=[TIMES_OUT_IN_10S], want=Want(pre_bind=Result(
        error("device binding timeout: claim=my-pod-my-resource"), assumed_claim=reserve(TIMES_OUT_IN_10S),
        changes=reserve))), id="prebind-fail-with-binding-timeout"),
    pytest.param(Case(POD, claims=[MIXED], want=Want(filter=NOT_AVAILABLE, post_filter=DEALLOCATED)),
                 id="bound-claim-with-mixed-binding-conditions"),
    pytest.param(Case(POD_WITH_CLAIM_TEMPLATE_IN_STATUS, claims=[ALLOCATED_CLAIM, OTHER_CLAIM],
                      want=reserved_only(ALLOCATED_CLAIM)), id="bound-claim-without-binding-conditions"),
    pytest.param(Case(POD_WITH_TWO_CLAIM_NAMES, claims=[BOUND_CLAIM, BOUND_CLAIM2], classes=[DEVICE_CLASS],
                      slices=[FABRIC_SLICE, FABRIC_SLICE2], want=Want(pre_bind=Result(
                          assumed_claim=reserve(BOUND_CLAIM), changes=reserve))),
                 id="multi-claims-binding-conditions-all-success"),
    pytest.param(Case(POD_WITH_TWO_CLAIM_NAMES, claims=[BOUND_CLAIM, FAILED_BINDING_CLAIM2], classes=[DEVICE_CLASS],
                      slices=[FABRIC_SLICE, FABRIC_SLICE2], want=Want(filter=NOT_AVAILABLE, post_filter=Result(
                          DEALLOCATED.status, changes=in_claim(CLAIM_NAME2, deallocated)))),
                 id="multi-claims-binding-conditions-one-fail"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR],
                      classes=[DEVICE_CLASS], nodes=[WORKER_NODE, WORKER_NODE2],
                      slices=[make_slice(NODE_NAME, DRIVER).device("instance-1", HEALTHY_TRUE).obj(),
                              make_slice(NODE2_NAME, DRIVER).device("instance-1", HEALTHY_FALSE).obj()],
                      want=with_resources(ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR,
                                          score_result={NODE_NAME: 8, NODE2_NAME: 7},
                                          normalize_score_result=[(NODE_NAME, 100), (NODE2_NAME, 87)])),
                 id="single-claim-prioritized-list-scoring"),
    pytest.param(Case(POD_WITH_TWO_CLAIM_NAMES, claims=[PENDING_CLAIM_WITH_PRIORITIZED_LIST,
                                                        PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS],
                      classes=[DEVICE_CLASS], nodes=[WORKER_NODE, WORKER_NODE2, WORKER_NODE3], slices=[
                          LARGE_WORKER_NODE_SLICE, make_slice(NODE2_NAME, DRIVER).device("instance-1")
                          .device("instance-2").obj(), make_slice(NODE3_NAME, DRIVER).device("instance-1").obj()],
                      want=Want(
                          filter={NODE3_NAME: Result(unschedulable("cannot allocate all claims"))},
                          score_result={NODE_NAME: 15, NODE2_NAME: 13},
                          normalize_score_result=[(NODE_NAME, 100), (NODE2_NAME, 86)],
                          reserve=Result(in_flight_claims=[ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST,
                                                           ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS]),
                          pre_bind=Result(assumed_claim=timestamped(reserve(ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST)),
                                          changes=lambda c: status_of(reserve(
                                              ALLOCATED_CLAIM_WITH_PRIORITIZED_LIST if c.metadata.name == CLAIM_NAME
                                              else ALLOCATED_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS))(
                                              c)))),
                 id="multiple-claims-prioritized-list-scoring"),
    pytest.param(Case(POD, claims=[PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS],
                      classes=[DEVICE_CLASS], nodes=[WORKER_NODE, WORKER_NODE2, WORKER_NODE3], slices=[
                          LARGE_WORKER_NODE_SLICE, make_slice(NODE2_NAME, DRIVER).device("instance-1")
                          .device("instance-2").device("instance-3").obj(),
                          make_slice(NODE3_NAME, DRIVER).device("instance-1").device("instance-2").obj()],
                      want=with_resources(ALLOCATED_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS,
                                          score_result={NODE_NAME: 16, NODE2_NAME: 15, NODE3_NAME: 14},
                                          normalize_score_result=[(NODE_NAME, 100), (NODE2_NAME, 93),
                                                                  (NODE3_NAME, 87)])),
                 id="multiple-requests-prioritized-list-scoring"),
]


@pytest.mark.parametrize("case", CASES)
def test_plugin(case: Case) -> None:
    run(case)


def _plugin() -> DynamicResources:
    return DynamicResources(DraManager(), Handle(), 10.0, 600.0)


def test_post_filter_no_op_status_has_no_user_visible_reason() -> None:
    """TestPostFilterNoOpStatusHasNoUserVisibleReason, "no claims": the message of a FitError is
    not touched."""
    state = CycleState()
    pod = PodInfo(make_pod("pod").obj())
    assert _plugin().pre_filter(state, pod, snapshot_with([])) == (None, Status(Code.SKIP))
    assert _plugin().post_filter(state, pod, None) == Status(Code.UNSCHEDULABLE)  # type: ignore[arg-type]


def test_points_without_pre_filter_state_fail_with_not_found() -> None:
    """When a PreFilter plugin ahead rejected the pod, this one's state was never written: its
    PostFilter errs with CycleState's "not found", so preemption is not tried and kube-scheduler's
    message ends in " not found"."""
    state, pod = CycleState(), PodInfo(make_pod("pod").obj())
    assert _plugin().post_filter(state, pod, None) == Status(Code.ERROR, "not found")  # type: ignore[arg-type]
    assert _plugin().pre_bind_pre_flight(state, pod, "n")[1] == Status(Code.ERROR, "not found")


def test_pre_bind_of_a_pod_without_claims() -> None:
    """PreBindPreFlight answers Skip for a pod without claims (no status.nominatedNodeName is
    written for it), and PreBind has nothing to do; both fail with "not found" without PreFilter."""
    pod = PodInfo(make_pod("pod").obj())
    state = CycleState()
    assert _plugin().pre_filter(state, pod, snapshot_with([])) == (None, Status(Code.SKIP))
    flight, status = _plugin().pre_bind_pre_flight(state, pod, "n1")
    assert flight is not None
    assert flight.allow_parallel
    assert status == Status(Code.SKIP)
    assert asyncio.run(_plugin().pre_bind(state, pod, "n1")) is None
    assert asyncio.run(_plugin().pre_bind(CycleState(), pod, "n1")) == Status(Code.ERROR, "not found")
