"""A pod's claims (k8s.io/dynamic-resource-allocation v0.37.2 resourceclaim, and the plugin's
foreachPodResourceClaim): which claim each `spec.resourceClaims` entry names — directly, or for a
template the one the resourceclaim controller made, found in `status.resourceClaimStatuses` —, that
it exists, is not being deleted and, when made from a template, is owned by the pod. The errors
read as upstream's, word for word: the plugin reports them as the pod's unschedulable reason.
"""

from __future__ import annotations

from kubesched.model.objects import Pod, PodResourceClaim
from kubesched.model.resource import ResourceClaim, ResourceClaimConsumerReference
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker


class ClaimError(Exception):
    """The pod cannot be scheduled now: a claim is missing, being deleted, or someone else's."""


def claim_name(pod: Pod, pod_claim: PodResourceClaim) -> tuple[str | None, bool]:
    """resourceclaim.Name: (the claim's name, whether its owner must be checked). None when the
    controller decided the pod needs no claim for the entry."""
    if pod_claim.resource_claim_name is not None:
        return pod_claim.resource_claim_name, False
    meta = pod.metadata
    if pod_claim.resource_claim_template_name is not None:
        for status in pod.status.resource_claim_statuses or ():
            if status.name == pod_claim.name:
                return status.resource_claim_name, True
        raise ClaimError(f'pod "{meta.namespace}/{meta.name}": ResourceClaim not created yet')
    raise ClaimError(f'pod "{meta.namespace}/{meta.name}", spec.resourceClaim "{pod_claim.name}": '
                     "none of the supported fields are set")


def check_is_for_pod(pod: Pod, claim: ResourceClaim) -> None:
    """resourceclaim.IsForPod (PodGroup owners not accepted: DRAWorkloadResourceClaims is off)."""
    c, p = claim.metadata, pod.metadata
    if c.namespace != p.namespace:
        raise ClaimError(f"ResourceClaim {c.namespace}/{c.name} is not in the same namespace as Pod "
                         f"{p.namespace}/{p.name}")
    if not any(ref.controller and ref.uid == p.uid for ref in c.owner_references):
        raise ClaimError(f"ResourceClaim {c.namespace}/{c.name} was not created for Pod {p.namespace}/{p.name} "
                         "(Pod is not owner)")


def pod_claims(pod: Pod, claims: ClaimTracker) -> list[tuple[str, ResourceClaim]]:
    """foreachPodResourceClaim: (the entry's name, its claim) for each entry that has a claim, in
    spec order. Raises ClaimError on the first that stops the pod."""
    out: list[tuple[str, ResourceClaim]] = []
    for entry in pod.spec.resource_claims:
        name, must_check_owner = claim_name(pod, entry)
        if name is None:
            continue
        claim = claims.get(pod.metadata.namespace, name)
        if claim is None:
            raise ClaimError(f'could not find ResourceClaim "{pod.metadata.namespace}/{name}"')
        if claim.metadata.deletion_timestamp is not None:
            raise ClaimError(f'resourceclaim "{claim.metadata.name}" is being deleted')
        if must_check_owner:
            check_is_for_pod(pod, claim)
        out.append((entry.name, claim))
    return out


def is_reserved_for_pod(pod: Pod, claim: ResourceClaim) -> bool:
    return any(r.uid == pod.metadata.uid for r in claim.status.reserved_for)


def can_be_reserved(claim: ResourceClaim) -> bool:
    """No limit on sharing a claim in v1.37."""
    return True


def binding_for(pod: Pod) -> ResourceClaimConsumerReference:
    """What a claim's status.reservedFor gets for the pod (the core group is "")."""
    return ResourceClaimConsumerReference(api_group="", resource="pods", name=pod.metadata.name, uid=pod.metadata.uid)
