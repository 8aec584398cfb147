"""What DynamicResources keeps about one pod through its cycles (upstream's stateData and
informationForClaim): the pod's claims as PreFilter found them (replaced as PreBind writes them),
per claim where its allocation can be used and the allocation Reserve chose, the allocator, the
claims that ruled a node out, and each node's allocations as Filter found them.

It has no clone(): a cloned CycleState shares it, as upstream's stateData.Clone returns itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kubesched.model.resource import AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources.allocator import Allocator
from kubesched.plugins.helper.node_selector import Selector


@dataclass(slots=True)
class ClaimInfo:
    # Set when the claim is allocated (or its allocation is in flight): where it can be used.
    available_on_nodes: Selector | None = None
    # Set by Reserve, written by PreBind; None when nothing had to be allocated.
    allocation: AllocationResult | None = None


@dataclass(slots=True)
class DraState:
    claims: list[ResourceClaim] = field(default_factory=list)
    infos: list[ClaimInfo] = field(default_factory=list)
    allocator: Allocator | None = None
    # Indices of allocated claims some node could not use (PostFilter may deallocate one).
    unavailable_claims: set[int] = field(default_factory=set)
    # Node name -> the allocations Filter found there, in the order of to_allocate().
    node_allocations: dict[str, list[AllocationResult]] = field(default_factory=dict)

    def empty(self) -> bool:
        return not self.claims

    def to_allocate(self) -> Iterator[tuple[int, ResourceClaim]]:
        """(index, claim) of the claims with no allocation yet."""
        for i, claim in enumerate(self.claims):
            if claim.status.allocation is None:
                yield i, claim
