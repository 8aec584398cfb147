"""What DynamicResources keeps about one pod through its cycles (upstream's stateData and
informationForClaim): the pod's claims as PreFilter found them (replaced as PreBind writes them),
per claim where its allocation can be used and the allocation Reserve chose, the allocator, the
claims that ruled a node out, and each node's allocations as Filter found them. The claim for the
pod's extended resources backed by DRA, when it has some, comes last among the claims
(upstream's claimStore).

It has no clone(): a cloned CycleState shares it, as upstream's stateData.Clone returns itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kubesched.framework.status import Code, Status
from kubesched.model.objects import ContainerExtendedResourceRequest
from kubesched.model.resource import AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources.allocator import Allocator
from kubesched.plugins.dynamic_resources.extended import ClassMapping, NodeClaim
from kubesched.plugins.dynamic_resources.node_outcomes import Attempt
from kubesched.plugins.dynamic_resources.results import allocation_result
from kubesched.plugins.dynamic_resources.state import ClaimAllocation
from kubesched.plugins.helper.node_selector import Selector

NAME = "DynamicResources"
STATE_KEY = NAME
# kube-scheduler's fwk.ErrNotFound, from CycleState.Read.
NOT_FOUND = "not found"


def unresolvable(reason: str) -> Status:
    """statusUnschedulable: upstream rejects as UnschedulableAndUnresolvable throughout."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


def error(reason: str) -> Status:
    return Status(Code.ERROR, reason)


@dataclass(slots=True)
class ClaimInfo:
    # Set when the claim is allocated (or its allocation is in flight): where it can be used.
    available_on_nodes: Selector | None = None
    # Set by Reserve, written by PreBind; None when nothing had to be allocated.
    allocation: AllocationResult | None = None


@dataclass(slots=True)
class NodeAllocation:
    """What Filter found for one node (upstream's nodeAllocation)."""

    # In the order of to_allocate(): the allocator's, written out as results only when read (most
    # nodes that fit are neither scored on it nor chosen).
    found: list[ClaimAllocation] = field(default_factory=list)
    # The claim for the pod's extended resources with the requests this node must satisfy.
    extended_claim: ResourceClaim | None = None
    mappings: list[ContainerExtendedResourceRequest] = field(default_factory=list)
    # Set when `found` was kept from another pod's attempt (node_outcomes.py): its shares get new
    # IDs when written out, so no two allocations of a device share one.
    new_share_id: Callable[[], str] | None = None
    _results: list[AllocationResult] | None = None

    @property
    def results(self) -> list[AllocationResult]:
        if self._results is None:
            self._results = [allocation_result(a, self.new_share_id) for a in self.found]
        return self._results


@dataclass(slots=True)
class DraState:
    claims: list[ResourceClaim] = field(default_factory=list)
    infos: list[ClaimInfo] = field(default_factory=list)
    allocator: Allocator | None = None
    # What other pods' attempts found on a node, where it still holds (node_outcomes.py).
    outcomes: Attempt | None = None
    # Indices of allocated claims some node could not use (PostFilter may deallocate one).
    unavailable_claims: set[int] = field(default_factory=set)
    node_allocations: dict[str, NodeAllocation] = field(default_factory=dict)
    # The claims before the extended-resource claim, if any (numUserOwned).
    num_user_owned: int = 0
    # The extended-resource claim's uid in PreFilter: it keys the claim in flight, while PreBind's
    # created claim gets another from the apiserver.
    initial_extended_uid: str = ""
    # The pod's scalar requests and the class mapping, when it asks for extended resources a class maps.
    pod_scalar: dict[str, int] = field(default_factory=dict)
    mapping: ClassMapping = field(default_factory=dict)
    # This attempt's extended-resource claims by the requests a node must satisfy (read only after).
    node_claims: dict[tuple[tuple[str, int], ...], NodeClaim] = field(default_factory=dict)

    def empty(self) -> bool:
        return not self.claims

    def extended_claim(self) -> ResourceClaim | None:
        return self.claims[self.num_user_owned] if self.num_user_owned < len(self.claims) else None

    def is_extended(self, index: int) -> bool:
        return index >= self.num_user_owned

    def no_user_claim(self) -> bool:
        return self.num_user_owned == 0

    def to_allocate(self) -> Iterator[tuple[int, ResourceClaim]]:
        """(index, claim) of the claims with no allocation yet."""
        for i, claim in enumerate(self.claims):
            if claim.status.allocation is None:
                yield i, claim
