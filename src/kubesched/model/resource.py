"""Slim typed views of resource.k8s.io/v1, the API of Dynamic Resource Allocation: ResourceClaim,
ResourceClaimTemplate, ResourceSlice, DeviceClass and DeviceTaintRule. As in objects.py, every field
not named here is skipped (opaque device configuration, device status, derived attributes).

Field names follow k8s.io/api/resource/v1/types.go of v0.37.2. Quantities stay strings, as in the
rest of the model; model/quantity.py parses them. Where Go has a pointer whose nil differs from the
zero value (`adminAccess`, `allNodes`, `allowMultipleAllocations`, a request policy's `default`),
the field is `X | None`. Opaque driver parameters are kept as decoded JSON: the scheduler copies
them from a class or claim into the allocation it writes, never reads them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.model.objects import NodeSelector, ObjectMeta

# DeviceAllocationMode
ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
# DeviceTaintEffect
TAINT_EFFECT_NONE = "None"
TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"
# DeviceTolerationOperator
TOLERATION_OP_EXISTS = "Exists"
TOLERATION_OP_EQUAL = "Equal"
# The limit of results in one allocation (resourceapi.AllocationResultsMaxSize).
ALLOCATION_RESULTS_MAX_SIZE = 32
# The finalizer kube-scheduler puts on a claim it allocates.
FINALIZER_DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
# The claim kube-scheduler makes for a pod's extended resources backed by DRA has it "true".
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
# AllocationConfigSource
CONFIG_SOURCE_CLASS = "FromClass"
CONFIG_SOURCE_CLAIM = "FromClaim"
# The most subrequests a firstAvailable request may list (FirstAvailableDeviceRequestMaxSize).
FIRST_AVAILABLE_MAX_SIZE = 8


class ClaimMeta(ObjectMeta, gc=False, omit_defaults=True):
    """A claim's metadata: ObjectMeta and its finalizers, which only the scheduler's writes of a claim
    read (other kinds leave them out to keep every pod smaller)."""

    finalizers: list[str] = []
    # Set only on the claim kube-scheduler makes for a pod's extended resources backed by DRA.
    generate_name: str = ""


# --- shared pieces ---------------------------------------------------------------------------------

class CELDeviceSelector(msgspec.Struct, gc=False, omit_defaults=True):
    expression: str = ""


class DeviceSelector(msgspec.Struct, gc=False, omit_defaults=True):
    # None for a selector of a type this model (and the allocator) does not know.
    cel: CELDeviceSelector | None = None


class DeviceToleration(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    key: str = ""
    # Empty means Equal (the API defaults it).
    operator: str = ""
    value: str = ""
    # Empty tolerates every effect.
    effect: str = ""
    toleration_seconds: int | None = None


class DeviceTaint(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class CapacityRequirements(msgspec.Struct, gc=False, omit_defaults=True):
    requests: dict[str, str] = {}


class OpaqueDeviceConfiguration(msgspec.Struct, gc=False, omit_defaults=True):
    driver: str = ""
    # Arbitrary JSON for the driver (an object), passed through as it was read.
    parameters: Any = None


class DeviceClaimConfiguration(msgspec.Struct, gc=False, omit_defaults=True):
    # Empty: for every request of the claim.
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceClassConfiguration(msgspec.Struct, gc=False, omit_defaults=True):
    opaque: OpaqueDeviceConfiguration | None = None


class DeviceAllocationConfiguration(msgspec.Struct, gc=False, omit_defaults=True):
    source: str = ""
    requests: list[str] = []
    opaque: OpaqueDeviceConfiguration | None = None


# --- ResourceClaim ---------------------------------------------------------------------------------

class ExactDeviceRequest(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    # The apiserver defaults it to ExactCount; empty only in objects that skipped defaulting.
    allocation_mode: str = ""
    count: int = 0
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None


class DeviceSubRequest(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    device_class_name: str = ""
    selectors: list[DeviceSelector] = []
    allocation_mode: str = ""
    count: int = 0
    tolerations: list[DeviceToleration] = []
    capacity: CapacityRequirements | None = None


class DeviceRequest(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    # Exactly one of the two is set.
    exactly: ExactDeviceRequest | None = None
    first_available: list[DeviceSubRequest] = []


class DeviceConstraint(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    # Empty: the constraint applies to every request of the claim.
    requests: list[str] = []
    match_attribute: str | None = None
    distinct_attribute: str | None = None


class DeviceClaim(msgspec.Struct, gc=False, omit_defaults=True):
    requests: list[DeviceRequest] = []
    constraints: list[DeviceConstraint] = []
    config: list[DeviceClaimConfiguration] = []


class ResourceClaimSpec(msgspec.Struct, gc=False, omit_defaults=True):
    devices: DeviceClaim = msgspec.field(default_factory=DeviceClaim)


class DeviceRequestAllocationResult(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    # The request's name, or "<request>/<subrequest>" for a firstAvailable subrequest.
    request: str = ""
    driver: str = ""
    pool: str = ""
    device: str = ""
    admin_access: bool | None = None
    tolerations: list[DeviceToleration] = []
    binding_conditions: list[str] = []
    binding_failure_conditions: list[str] = []
    share_id: str | None = msgspec.field(default=None, name="shareID")
    consumed_capacity: dict[str, str] = {}


class DeviceAllocationResult(msgspec.Struct, gc=False, omit_defaults=True):
    results: list[DeviceRequestAllocationResult] = []
    config: list[DeviceAllocationConfiguration] = []


class AllocationResult(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    devices: DeviceAllocationResult = msgspec.field(default_factory=DeviceAllocationResult)
    # None: the devices are reachable from every node.
    node_selector: NodeSelector | None = None
    allocation_timestamp: str | None = None


class ResourceClaimConsumerReference(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    api_group: str = ""
    resource: str = ""
    name: str = ""
    uid: str = ""


class Condition(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """metav1.Condition, as far as binding conditions read it."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class AllocatedDeviceStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """`status.devices[]`: a driver's report on one allocated device (its binding conditions)."""

    driver: str = ""
    pool: str = ""
    device: str = ""
    share_id: str | None = msgspec.field(default=None, name="shareID")
    conditions: list[Condition] = []


class ResourceClaimStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    allocation: AllocationResult | None = None
    reserved_for: list[ResourceClaimConsumerReference] = []
    devices: list[AllocatedDeviceStatus] = []


class ResourceClaim(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ClaimMeta = msgspec.field(default_factory=ClaimMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)
    status: ResourceClaimStatus = msgspec.field(default_factory=ResourceClaimStatus)


class ResourceClaimTemplateSpec(msgspec.Struct, gc=False, omit_defaults=True):
    # Labels and annotations copied into the claims made from the template.
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


# --- ResourceSlice ---------------------------------------------------------------------------------

class ResourcePool(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    generation: int = 0
    resource_slice_count: int = 0


class DeviceAttribute(msgspec.Struct, gc=False, omit_defaults=True):
    """Exactly one value is set. The list-typed values (DRAListTypeAttributes, alpha and off by
    default) are decoded so that an attribute holding only one of them is seen as set."""

    int_value: int | None = msgspec.field(default=None, name="int")
    bool_value: bool | None = msgspec.field(default=None, name="bool")
    string_value: str | None = msgspec.field(default=None, name="string")
    version_value: str | None = msgspec.field(default=None, name="version")
    int_values: list[int] = msgspec.field(default_factory=list, name="ints")
    bool_values: list[bool] = msgspec.field(default_factory=list, name="bools")
    string_values: list[str] = msgspec.field(default_factory=list, name="strings")
    version_values: list[str] = msgspec.field(default_factory=list, name="versions")


class CapacityRequestPolicyRange(msgspec.Struct, gc=False, omit_defaults=True):
    min: str | None = None
    max: str | None = None
    step: str | None = None


class CapacityRequestPolicy(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    default: str | None = None
    valid_values: list[str] = []
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    value: str = "0"
    request_policy: CapacityRequestPolicy | None = None


class Counter(msgspec.Struct, gc=False, omit_defaults=True):
    value: str = "0"


class CounterSet(msgspec.Struct, gc=False, omit_defaults=True):
    name: str = ""
    counters: dict[str, Counter] = {}


class DeviceCounterConsumption(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    counter_set: str = ""
    counters: dict[str, Counter] = {}
    # DRADeviceCompatibilityGroups (alpha, off): a slice using it is ignored by the allocator.
    compatibility_groups: list[str] = []


class Device(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, DeviceCapacity] = {}
    consumes_counters: list[DeviceCounterConsumption] = []
    # Per device, when the slice sets perDeviceNodeSelection.
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    taints: list[DeviceTaint] = []
    binds_to_node: bool | None = None
    # None (not set) differs from [] only in the API; the allocator tests `is not None` as Go does.
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] = []
    allow_multiple_allocations: bool | None = None


class ResourceSliceSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    driver: str = ""
    pool: ResourcePool = msgspec.field(default_factory=ResourcePool)
    # Exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection is set.
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] = []
    shared_counters: list[CounterSet] = []


class ResourceSlice(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceSliceSpec = msgspec.field(default_factory=ResourceSliceSpec)


# --- DeviceClass, DeviceTaintRule --------------------------------------------------------------------

class DeviceClassSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    selectors: list[DeviceSelector] = []
    config: list[DeviceClassConfiguration] = []
    extended_resource_name: str | None = None


class DeviceClass(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = msgspec.field(default_factory=DeviceClassSpec)


class DeviceTaintSelector(msgspec.Struct, gc=False, omit_defaults=True):
    driver: str | None = None
    pool: str | None = None
    device: str | None = None


class DeviceTaintRuleSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    # None selects no device (the slice tracker skips such a rule); an unset field matches any.
    device_selector: DeviceTaintSelector | None = None
    taint: DeviceTaint = msgspec.field(default_factory=DeviceTaint)


class DeviceTaintRule(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceTaintRuleSpec = msgspec.field(default_factory=DeviceTaintRuleSpec)
