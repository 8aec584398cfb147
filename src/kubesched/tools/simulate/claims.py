"""The resourceclaim controller's part in a simulation: a pod whose `spec.resourceClaims` entry
names a ResourceClaimTemplate given among the manifests gets the claim the controller would make
(v1.37 pkg/controller/resourceclaim): named `<pod>-<claim>-<5 chars>` (both parts cut in
proportion past 57 characters), owned by the pod, annotated `resource.kubernetes.io/pod-claim-name`,
with the template's labels, annotations and spec, and named in the pod's
`status.resourceClaimStatuses`. A template that is not given leaves the pod waiting for its claim,
as DynamicResources' PreEnqueue says."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

import msgspec

from kubesched.model.objects import OwnerReference, Pod, PodResourceClaimStatus
from kubesched.model.resource import (
    ClaimMeta,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
_MAX_BASE_LEN = 57  # a hyphen and five characters make 63


def apply_defaults(spec: ResourceClaimSpec) -> None:
    """The apiserver's defaults for a claim's requests (resource/v1 defaults.go): allocationMode
    ExactCount, and then a count of 1."""
    for r in spec.devices.requests:
        subs: list[ExactDeviceRequest | DeviceSubRequest] = [*r.first_available]
        if r.exactly is not None:
            subs.append(r.exactly)
        for sub in subs:
            if not sub.allocation_mode:
                sub.allocation_mode = "ExactCount"
            if sub.allocation_mode == "ExactCount" and sub.count == 0:
                sub.count = 1


def generate_name(pod: str, claim: str) -> str:
    base = f"{pod}-{claim}-"
    if len(base) <= _MAX_BASE_LEN:
        return base
    n = len(base)
    return pod[:len(pod) * _MAX_BASE_LEN // n] + "-" + claim[:len(claim) * _MAX_BASE_LEN // n]


def claims_for(pod: Pod, templates: Mapping[tuple[str, str], ResourceClaimTemplate],
               suffix: Callable[[], str], uid: Callable[[], str]) -> tuple[Pod, list[ResourceClaim]]:
    """The pod with its status naming the claims made for it, and those claims."""
    made: list[ResourceClaim] = []
    statuses = list(pod.status.resource_claim_statuses or [])
    named = {s.name for s in statuses}
    ns = pod.metadata.namespace
    for pc in pod.spec.resource_claims:
        if not pc.resource_claim_template_name or pc.name in named:
            continue
        template = templates.get((ns, pc.resource_claim_template_name))
        if template is None:
            continue
        meta = template.spec.metadata
        name = generate_name(pod.metadata.name, pc.name) + suffix()
        claim = ResourceClaim(ClaimMeta(
            name=name, namespace=ns, uid=uid(), resource_version="1", labels=dict(meta.labels),
            annotations={**meta.annotations, POD_CLAIM_NAME_ANNOTATION: pc.name},
            owner_references=[OwnerReference("Pod", pod.metadata.name, pod.metadata.uid, "v1", True)]),
            copy.deepcopy(template.spec.spec))
        made.append(claim)
        statuses.append(PodResourceClaimStatus(pc.name, name))
    if not made:
        return pod, made
    status = msgspec.structs.replace(pod.status, resource_claim_statuses=statuses)
    return msgspec.structs.replace(pod, status=status), made
