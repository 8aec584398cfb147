"""DynamicResources' Score (dynamicresources.go computeScore): for each firstAvailable request, the
subrequest the node's allocation used scores 8 minus its position (FirstAvailableDeviceRequestMaxSize
- i), summed over the pod's claims; a node where only later alternatives fit scores less."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.model.resource import FIRST_AVAILABLE_MAX_SIZE, AllocationResult, ResourceClaim


class ScoreError(Exception):
    pass


def compute_score(claims: Sequence[ResourceClaim], allocations: Sequence[AllocationResult]) -> int:
    """`allocations` are the node's, for the claims without an allocation, in order."""
    score = 0
    unallocated = 0
    for claim in claims:
        allocation = claim.status.allocation
        if allocation is None:
            if unallocated >= len(allocations):
                raise ScoreError(f"number of allocations {len(allocations)} is smaller than number of claims "
                                 "needing allocation")
            allocation = allocations[unallocated]
            unallocated += 1
        chosen = {r.request for r in allocation.devices.results if r.request.count("/") == 1}
        for request in claim.spec.devices.requests:
            if request.exactly is not None:
                continue
            for i, sub in enumerate(request.first_available):
                if f"{request.name}/{sub.name}" in chosen:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score
