"""Extended resources backed by DRA (DRAExtendedResource, GA in v1.37; kube-scheduler v1.37.2
extendeddynamicresources.go): a DeviceClass whose `spec.extendedResourceName` names a resource, or
any class through the implicit name `deviceclass.resource.kubernetes.io/<class>`, lets a pod ask for
devices with a plain `resources.requests` entry. On a node whose allocatable does not list the
resource, NodeResourcesFit leaves it to DynamicResources, which allocates devices for one claim
made for the pod:

    PreFilter  the pod's claim from an earlier cycle (annotated, owned by the pod), else one in
               memory named "<extended-resources>" with no requests and a temporary uid
    Filter     per node: the requests the node must satisfy through DRA (one per container and
               resource, "container-<i>-request-<j>"), allocated with the pod's other claims; a claim
               from an earlier cycle that has requests is stale and rules every node out
    PostFilter a stale claim is deleted
    PreBind    the claim created (generateName "<pod>-extended-resources-"), allocated and reserved
               as any claim, and the pod's status.extendedResourceClaimStatus written
    Unreserve  a created claim is deleted again

This module holds the parts without I/O: the name-to-class mapping, the claim in memory and the
per-node requests with their container mappings.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubesched.framework.resources import quantity
from kubesched.model.objects import ContainerExtendedResourceRequest, OwnerReference, Pod
from kubesched.model.quantity import QuantityError
from kubesched.model.resource import (
    ALLOCATION_MODE_EXACT_COUNT,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    ClaimMeta,
    DeviceClaim,
    DeviceRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
)
from kubesched.plugins.helper.dra_extended import (
    DEVICE_CLASS_PREFIX,
    ClassMapping,
    asks_for_dra_extended_resources,
    class_mapping,
    has_mapped_extended_resource,
    is_dra_extended_resource_name,
)

__all__ = ["DEVICE_CLASS_PREFIX", "ClassMapping", "asks_for_dra_extended_resources", "class_mapping",
           "has_mapped_extended_resource"]

# Not a valid object name, so never some real claim's: the claim gets its name when PreBind creates it.
SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"
# How long PreBind waits for the informer to bring a claim it created (AssumeExtendedResourceTimeoutDefaultSeconds).
ASSUME_TIMEOUT_SECONDS = 120.0
ASSUME_POLL_SECONDS = 1.0

def find_extended_resource_claim(pod: Pod, claims: Iterable[ResourceClaim]) -> ResourceClaim | None:
    """findExtendedResourceClaim: the claim made for the pod's extended resources in an earlier cycle."""
    p = pod.metadata
    for c in claims:
        if c.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        if any(r.name == p.name and r.controller and r.uid == p.uid for r in c.metadata.owner_references):
            return c
    return None


def special_claim(pod: Pod, uid: str | None = None) -> ResourceClaim:
    """The claim in memory until PreBind creates it; its temporary uid keys it while in flight."""
    p = pod.metadata
    return ResourceClaim(ClaimMeta(
        name=SPECIAL_CLAIM_IN_MEM_NAME, namespace=p.namespace, uid=uid or str(uuid.uuid4()),
        generate_name=p.name + "-extended-resources-",
        owner_references=[OwnerReference(kind="Pod", name=p.name, uid=p.uid, api_version="v1", controller=True)],
        annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}))


def is_special_claim_name(name: str) -> bool:
    return name == SPECIAL_CLAIM_IN_MEM_NAME


class CannotFit(Exception):
    """A requested extended resource the node neither lists in allocatable nor a class maps."""


def node_extended_resources(scalar: Mapping[str, int], allocatable: Mapping[str, int],
                            mapping: ClassMapping) -> dict[str, int]:
    """The requests the node must satisfy through DRA (filterExtendedResources): mapped and not in
    its allocatable (or listed as 0). Raises CannotFit for one neither listed nor mapped."""
    out: dict[str, int] = {}
    for name, q in scalar.items():
        if q == 0 or not is_dra_extended_resource_name(name):
            continue
        listed = allocatable.get(name)
        if name in mapping and not listed:
            out[name] = q
        elif listed is None:
            raise CannotFit(name)
    return out


@dataclass(slots=True)
class NodeClaim:
    """What Filter found for the node: the claim with the requests it must satisfy, and which
    container's resource each request serves (the pod's status.extendedResourceClaimStatus)."""

    claim: ResourceClaim
    mappings: list[ContainerExtendedResourceRequest]


def node_claim(claim: ResourceClaim, pod: Pod, extended: Mapping[str, int], mapping: ClassMapping) -> NodeClaim:
    requests, mappings = create_requests_and_mappings(pod, extended, mapping)
    copied = ResourceClaim(ClaimMeta(
        name=claim.metadata.name, namespace=claim.metadata.namespace, uid=claim.metadata.uid,
        resource_version=claim.metadata.resource_version, generate_name=claim.metadata.generate_name,
        owner_references=list(claim.metadata.owner_references), annotations=dict(claim.metadata.annotations),
        finalizers=list(claim.metadata.finalizers)), ResourceClaimSpec(DeviceClaim(requests=requests)))
    return NodeClaim(copied, mappings)


def _count(value: str) -> int:
    """Quantity.AsInt64: 0 (no request) when not a whole number that fits."""
    try:
        q = quantity(value)
    except QuantityError:
        return 0
    if q != q.to_integral_value() or abs(q) >= 2**63:
        return 0
    return int(q)


def _request_and_mappings(index: int, container_name: str, requests: Mapping[str, str], resource: str,
                          class_name: str, reusable: list[DeviceRequest | None],
                          ) -> tuple[DeviceRequest | None, list[ContainerExtendedResourceRequest]]:
    """createResourceRequestAndMappings: a container's request for one resource, after what
    `reusable` (later long-lived containers' requests, for an init container) already covers."""
    if resource not in requests:
        return None, []
    wanted = _count(requests[resource])
    if wanted == 0:
        return None, []
    mappings: list[ContainerExtendedResourceRequest] = []
    covered = 0
    for r in reusable:
        if r is None:
            continue
        assert r.exactly is not None
        covered += r.exactly.count
        mappings.append(ContainerExtendedResourceRequest(container_name, resource, r.name))
        if covered >= wanted:
            return None, mappings
    # The resource's position among the container's request names, sorted.
    position = sorted(requests).index(resource)
    name = f"container-{index}-request-{position}"
    request = DeviceRequest(name=name, exactly=ExactDeviceRequest(
        device_class_name=class_name, allocation_mode=ALLOCATION_MODE_EXACT_COUNT, count=wanted - covered))
    mappings.append(ContainerExtendedResourceRequest(container_name, resource, name))
    return request, mappings


def create_requests_and_mappings(pod: Pod, extended: Mapping[str, int], mapping: ClassMapping,
                                 ) -> tuple[list[DeviceRequest], list[ContainerExtendedResourceRequest]]:
    """createRequestsAndMappings: one request per container and resource, numbered over init
    containers then containers. Init containers that run to completion first reuse the devices of
    the long-lived containers after them (sidecars and regular containers) and share one request,
    the largest of theirs, as they never run together."""
    containers = [*pod.spec.init_containers, *pod.spec.containers]
    n_init = len(pod.spec.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and c.restart_policy != "Always"]
    device_requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(extended):
        cls = mapping.get(resource)
        if cls is None:
            continue
        class_name = cls.metadata.name
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[ContainerExtendedResourceRequest] = []
        for i in long_lived:
            c = containers[i]
            request, found = _request_and_mappings(i, c.name, c.resources.requests, resource, class_name, [])
            long_requests[i] = request
            long_mappings.extend(found)
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[ContainerExtendedResourceRequest] = []
        for i in short_lived:
            c = containers[i]
            request, found = _request_and_mappings(i, c.name, c.resources.requests, resource, class_name,
                                                   long_requests[i:])
            if request is not None:
                assert request.exactly is not None
                short_names.add(request.name)
                if largest is None or (largest.exactly is not None and largest.exactly.count < request.exactly.count):
                    largest = request
            short_mappings.extend(found)
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest.name)
            for m in short_mappings:
                if m.request_name in short_names:
                    m.request_name = largest.name
        if largest is not None:
            device_requests.append(largest)
        device_requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    device_requests.sort(key=lambda r: r.name)
    return device_requests, mappings
