"""Builders for DynamicResources' plugin tests, shaped as upstream's st.MakeResourceClaim /
st.MakeResourceSlice wrappers (kube-scheduler v1.37.2 pkg/scheduler/testing/wrappers.go), and the
objects of dynamicresources_test.go that the ported cases share, under the same names."""

from __future__ import annotations

from typing import Self, TypeVar

import msgspec

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectMeta, OwnerReference
from kubesched.model.resource import (
    FINALIZER_DELETE_PROTECTION,
    AllocatedDeviceStatus,
    AllocationResult,
    CELDeviceSelector,
    ClaimMeta,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSelector,
    DeviceSubRequest,
    DeviceTaint,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from tests.builders import PodBuilder, make_node, make_pod

T = TypeVar("T")


def copy(obj: T) -> T:
    """A deep copy of a model object (msgspec structs, raw JSON included)."""
    return msgspec.json.decode(msgspec.json.encode(obj), type=type(obj))


def node_name_selector(*names: str) -> NodeSelector:
    """st.MakeNodeSelector().In("metadata.name", names, MatchFields)."""
    return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[
        NodeSelectorRequirement(key="metadata.name", operator="In", values=list(names))])])


class ClaimBuilder:
    def __init__(self, claim: ResourceClaim) -> None:
        self._c = claim

    def obj(self) -> ResourceClaim:
        return self._c

    def uid(self, uid: str) -> Self:
        self._c.metadata.uid = uid
        return self

    def resource_version(self, rv: str) -> Self:
        self._c.metadata.resource_version = rv
        return self

    def request(self, device_class: str, count: int = 1) -> Self:
        requests = self._c.spec.devices.requests
        return self.request_named(f"req-{len(requests) + 1}", device_class, count)

    def request_named(self, name: str, device_class: str, count: int = 1) -> Self:
        self._c.spec.devices.requests.append(DeviceRequest(name=name, exactly=ExactDeviceRequest(
            device_class_name=device_class, allocation_mode="ExactCount", count=count)))
        return self

    def request_with_prioritized_list(self, *subs: DeviceSubRequest) -> Self:
        requests = self._c.spec.devices.requests
        requests.append(DeviceRequest(name=f"req-{len(requests) + 1}", first_available=list(subs)))
        return self

    def owner_reference(self, name: str, uid: str, kind: str = "Pod", api_version: str = "v1") -> Self:
        self._c.metadata.owner_references = [OwnerReference(kind=kind, name=name, uid=uid, api_version=api_version,
                                                            controller=True)]
        return self

    def allocation(self, allocation: AllocationResult | None) -> Self:
        """As upstream's wrapper: the delete-protection finalizer comes with it (and stays when the
        allocation is removed)."""
        if FINALIZER_DELETE_PROTECTION not in self._c.metadata.finalizers:
            self.finalizer(FINALIZER_DELETE_PROTECTION)
        self._c.status.allocation = None if allocation is None else copy(allocation)
        return self

    def device_statuses(self, statuses: list[AllocatedDeviceStatus]) -> Self:
        self._c.status.devices = list(statuses)
        return self

    def reserved_for_pod(self, name: str, uid: str) -> Self:
        self._c.status.reserved_for.append(ResourceClaimConsumerReference(resource="pods", name=name, uid=uid))
        return self

    def finalizer(self, name: str) -> Self:
        self._c.metadata.finalizers = [*self._c.metadata.finalizers, name]
        return self

    def deleting(self) -> Self:
        self._c.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
        return self


def make_claim(name: str, namespace: str = "default") -> ClaimBuilder:
    return ClaimBuilder(ResourceClaim(ClaimMeta(name=name, namespace=namespace, uid=f"uid-{name}",
                                                resource_version="1")))


def from_claim(claim: ResourceClaim) -> ClaimBuilder:
    return ClaimBuilder(copy(claim))


def sub_request(name: str, device_class: str, count: int, *expressions: str) -> DeviceSubRequest:
    """st.SubRequest / st.SubRequestWithSelector."""
    return DeviceSubRequest(name=name, device_class_name=device_class, allocation_mode="ExactCount", count=count,
                            selectors=[DeviceSelector(cel=CELDeviceSelector(e)) for e in expressions])


class SliceBuilder:
    def __init__(self, s: ResourceSlice) -> None:
        self._s = s

    def obj(self) -> ResourceSlice:
        return self._s

    def device(self, name: str, attributes: dict[str, DeviceAttribute] | None = None,
               taints: list[DeviceTaint] | None = None) -> Self:
        self._s.spec.devices.append(Device(name=name, attributes=attributes or {}, taints=taints or []))
        return self


def make_slice(node: str, driver: str) -> SliceBuilder:
    """st.MakeResourceSlice: named <node>-<driver>, local to the node, one slice in pool <node>."""
    return SliceBuilder(ResourceSlice(ObjectMeta(name=f"{node}-{driver}"), ResourceSliceSpec(
        driver=driver, node_name=node, pool=ResourcePool(name=node, resource_slice_count=1))))


def result(driver: str, pool: str, device: str, request: str, share_id: str | None = None,
           consumed: dict[str, str] | None = None) -> DeviceRequestAllocationResult:
    return DeviceRequestAllocationResult(request=request, driver=driver, pool=pool, device=device, share_id=share_id,
                                         consumed_capacity=consumed or {})


def allocation(*results: DeviceRequestAllocationResult, node: str | None = None) -> AllocationResult:
    return AllocationResult(DeviceAllocationResult(list(results)),
                            node_selector=None if node is None else node_name_selector(node))


# --- dynamicresources_test.go's objects ------------------------------------------------------------

NODE_NAME, NODE2_NAME, NODE3_NAME = "worker", "worker-2", "worker-3"
DRIVER, DRIVER2 = "some-driver", "some-driver-2"
SHARED_DEVICE_NAME = "shared-instance"
POD_NAME, POD_UID = "my-pod", "1234"
RESOURCE_NAME = "my-resource"
RESOURCE_NAME2 = RESOURCE_NAME + "-2"
CAPACITY_NAME = "my-cap"
CLAIM_NAME = POD_NAME + "-" + RESOURCE_NAME
CLAIM_NAME2 = POD_NAME + "-" + RESOURCE_NAME2
CLASS_NAME = "my-resource-class"
NAMESPACE = "default"
ATTR_NAME = "healthy"

DEVICE_CLASS = DeviceClass(ObjectMeta(name=CLASS_NAME))


def pod_with_claim_name() -> PodBuilder:
    return make_pod(POD_NAME, NAMESPACE).uid(POD_UID).resource_claim(RESOURCE_NAME, claim=CLAIM_NAME)


def pod_with_claim_template() -> PodBuilder:
    return make_pod(POD_NAME, NAMESPACE).uid(POD_UID).resource_claim(RESOURCE_NAME, template=CLAIM_NAME)


def pod_with_claim_template_in_status() -> PodBuilder:
    return pod_with_claim_template().claim_status(RESOURCE_NAME, CLAIM_NAME)


WORKER_NODE = make_node(NODE_NAME).label("kubernetes.io/hostname", NODE_NAME).obj()
WORKER_NODE2 = make_node(NODE2_NAME).label("kubernetes.io/hostname", NODE2_NAME).obj()
WORKER_NODE3 = make_node(NODE3_NAME).label("kubernetes.io/hostname", NODE3_NAME).obj()
HEALTHY = {ATTR_NAME: DeviceAttribute(bool_value=True)}
WORKER_NODE_SLICE = make_slice(NODE_NAME, DRIVER).device("instance-1").obj()
LARGE_WORKER_NODE_SLICE = make_slice(NODE_NAME, DRIVER).device("instance-1").device("instance-2") \
    .device("instance-3").device("instance-4").obj()
WORKER_NODE2_SLICE = make_slice(NODE2_NAME, DRIVER).device("instance-1", HEALTHY).obj()
WORKER_NODE3_SLICE = make_slice(NODE3_NAME, DRIVER).device("instance-1", HEALTHY).obj()
DEVICE_TAINT = DeviceTaint(key="taint-key", value="taint-value", effect="NoSchedule")
BROKEN_SELECTOR = f'device.attributes["{DRIVER}"].{ATTR_NAME}'

CLAIM = make_claim(CLAIM_NAME, NAMESPACE).request(CLASS_NAME).obj()
CLAIM2 = make_claim(CLAIM_NAME2, NAMESPACE).request(CLASS_NAME).obj()
LARGE_CLAIM = make_claim(CLAIM_NAME, NAMESPACE).request(CLASS_NAME).request(CLASS_NAME).request(CLASS_NAME) \
    .request(CLASS_NAME).request(CLASS_NAME).obj()
CLAIM_WITH_PRIORITIZED_LIST = make_claim(CLAIM_NAME, NAMESPACE).request_with_prioritized_list(
    sub_request("subreq-1", CLASS_NAME, 1)).obj()
CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR = make_claim(CLAIM_NAME, NAMESPACE).request_with_prioritized_list(
    sub_request("subreq-1", CLASS_NAME, 1, BROKEN_SELECTOR), sub_request("subreq-2", CLASS_NAME, 1)).obj()
CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = make_claim(CLAIM_NAME, NAMESPACE).request_with_prioritized_list(
    sub_request("subreq-1", CLASS_NAME, 2), sub_request("subreq-2", CLASS_NAME, 1)).request_with_prioritized_list(
    sub_request("subreq-1", CLASS_NAME, 2), sub_request("subreq-2", CLASS_NAME, 1)).obj()
CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = make_claim(CLAIM_NAME2, NAMESPACE) \
    .request_with_prioritized_list(sub_request("subreq-1", CLASS_NAME, 4), sub_request("subreq-2", CLASS_NAME, 3),
                                   sub_request("subreq-3", CLASS_NAME, 2), sub_request("subreq-4", CLASS_NAME, 1)).obj()


def pending(claim: ResourceClaim) -> ResourceClaim:
    """Owned by the pod (as the resourceclaim controller makes claims from templates)."""
    return from_claim(claim).owner_reference(POD_NAME, POD_UID).obj()


PENDING_CLAIM = pending(CLAIM)
PENDING_CLAIM2 = pending(CLAIM2)
PENDING_CLAIM_WITH_PRIORITIZED_LIST = pending(CLAIM_WITH_PRIORITIZED_LIST)
PENDING_CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR = pending(CLAIM_WITH_PRIORITIZED_LIST_AND_SELECTOR)
PENDING_CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = pending(CLAIM_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS)
PENDING_CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = pending(
    CLAIM2_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS)

ALLOCATION_RESULT = allocation(result(DRIVER, NODE_NAME, "instance-1", "req-1"), node=NODE_NAME)
ALLOCATION_RESULT2 = allocation(result(DRIVER2, NODE_NAME, "instance-2", "req-2"), node=NODE_NAME)
ALLOCATION_RESULT_WITH_SHARED_DEVICE = allocation(
    result(DRIVER, NODE_NAME, SHARED_DEVICE_NAME, "req-1", share_id="share-123"), node=NODE_NAME)
ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY = allocation(
    result(DRIVER, NODE_NAME, SHARED_DEVICE_NAME, "req-1", share_id="share-123", consumed={CAPACITY_NAME: "1"}),
    node=NODE_NAME)
ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY2 = allocation(
    result(DRIVER, NODE_NAME, SHARED_DEVICE_NAME, "req-1", share_id="share-456", consumed={CAPACITY_NAME: "1"}),
    node=NODE_NAME)
ALLOCATION_RESULT_WITH_PRIORITIZED_LIST = allocation(result(DRIVER, NODE_NAME, "instance-1", "req-1/subreq-1"),
                                                     node=NODE_NAME)
ALLOCATION_RESULT_WITH_PRIORITIZED_LIST_AND_MULTIPLE_SUBREQUESTS = allocation(
    *(result(DRIVER, NODE_NAME, f"instance-{i}", "req-1/subreq-2") for i in (1, 2, 3)), node=NODE_NAME)
ALLOCATION_RESULT_WITH_MULTIPLE_PRIORITIZED_LIST_REQUESTS = allocation(
    *(result(DRIVER, NODE_NAME, f"instance-{i}", f"req-{r}/subreq-1") for r in (1, 2) for i in (1, 2)),
    node=NODE_NAME)

IN_USE_CLAIM = from_claim(PENDING_CLAIM).allocation(ALLOCATION_RESULT).reserved_for_pod(POD_NAME, POD_UID).obj()
ALLOCATED_CLAIM = from_claim(PENDING_CLAIM).allocation(ALLOCATION_RESULT).obj()
ALLOCATED_CLAIM2 = from_claim(PENDING_CLAIM2).allocation(ALLOCATION_RESULT2).obj()
