"""DynamicResources (kube-scheduler v1.37.2 dynamicresources/dynamicresources.go): a pod's
ResourceClaims must be allocatable on the node, and the chosen devices are written into the claims
before the pod is bound.

    PreEnqueue  every claim exists (a template's claim named in status.resourceClaimStatuses), is
                not being deleted and is the pod's
    PreFilter   allocated claims pin the pod to their allocation's node selector; a claim being
                allocated for another pod makes it wait; unallocated claims' classes must exist;
                the structured allocator is set up over the slices, the classes and the devices
                already allocated or in flight
    Filter      per node, the allocator (CEL selectors compiled once), within filterTimeout
    PostFilter  an allocated claim no node could use, reserved for nobody else, is deallocated
    Score       the firstAvailable subrequests chosen (earlier ones score more), normalised
    Reserve     the node's allocations held in flight, so the next pod cannot take those devices
    Unreserve   released, and the pod's reservation removed from claims it was reserved in
    PreBind     finalizer, allocation and reservation written (prebind.py), then binding conditions
                waited for

PostFilter, Reserve, Unreserve and PreBind are in binding.py.

Pods without claims are skipped at PreFilter. A pod asking for extended resources backed by DRA
gets one more claim, last, made in memory and created in PreBind (extended.py, extended_bind.py).
PodGroup claims and node-allocatable devices (off by default) are left out.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from typing import Any, cast

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, PreFilterResult, Scores
from kubesched.framework.normalize import default_normalize_score
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, SchedulingError, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.model.resource import AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources import hints
from kubesched.plugins.dynamic_resources.allocator import Allocator, AllocatorError, NodeAllocationError, NodeView
from kubesched.plugins.dynamic_resources.args import (
    DEFAULT_BINDING_TIMEOUT,
    DEFAULT_FILTER_TIMEOUT,
    parse_args,
    seconds,
)
from kubesched.plugins.dynamic_resources.binding import ReserveAndBind
from kubesched.plugins.dynamic_resources.cel.cache import CelSelectorCache
from kubesched.plugins.dynamic_resources.claims import (
    ClaimError,
    can_be_reserved,
    is_reserved_for_pod,
    pod_claims,
)
from kubesched.plugins.dynamic_resources.extended import (
    CannotFit,
    NodeClaim,
    asks_for_dra_extended_resources,
    class_mapping,
    find_extended_resource_claim,
    has_mapped_extended_resource,
    node_claim,
    node_extended_resources,
    special_claim,
)
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.dynamic_resources.node_outcomes import MISS, Attempt, NodeOutcomes
from kubesched.plugins.dynamic_resources.plugin_state import (
    NAME,
    NOT_FOUND,
    STATE_KEY,
    ClaimInfo,
    DraState,
    NodeAllocation,
    error,
    unresolvable,
)
from kubesched.plugins.dynamic_resources.prebind import (
    BindError,
    claim_ready_for_binding,
    claim_timed_out,
    kobj,
)
from kubesched.plugins.dynamic_resources.scoring import ScoreError, compute_score
from kubesched.plugins.dynamic_resources.selectors import SelectorCache
from kubesched.plugins.dynamic_resources.state import ClaimAllocation, Features
from kubesched.plugins.helper.node_selector import Selector

__all__ = ["NAME", "DynamicResources", "new", "parse_args"]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class DynamicResources(ReserveAndBind):
    name = NAME

    def __init__(self, dra: DraManager, handle: Handle, filter_timeout: float, binding_timeout: float,
                 features: Features | None = None, selectors: SelectorCache | None = None,
                 now: Callable[[], dt.datetime] = _utc_now,
                 new_uid: Callable[[], str] = lambda: str(uuid.uuid4())) -> None:
        self.dra = dra
        self.handle = handle
        self.filter_timeout = filter_timeout
        self.binding_timeout = binding_timeout
        self.features = features or Features()
        # kube-scheduler keeps the ten most recent CEL compilations across cycles.
        self.selectors = selectors if selectors is not None else CelSelectorCache()
        self.outcomes = NodeOutcomes()
        self.now = now
        self.new_uid = new_uid

    # --- events ------------------------------------------------------------------------------------

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        claims = self.dra.claims
        return (
            # Topology of a device may depend on node labels; a new node may have devices.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE
                                              | ActionType.DELETE),
                                 lambda pod, old, new: hints.after_claim_change(claims, pod, old, new),
                                 hints.CLAIM_NARROWING),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 lambda pod, old, new: hints.after_target_pod_update(claims, pod, old, new)),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        )

    # --- PreEnqueue / PreFilter --------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.spec.resource_claims:
            return None
        try:
            pod_claims(pod, self.dra.claims)
        except ClaimError as e:
            return unresolvable(str(e))
        return None

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        s = DraState()
        state.write(STATE_KEY, s)
        p = pod.pod
        try:
            claims = [c for _, c in pod_claims(p, self.dra.claims)] if p.spec.resource_claims else []
        except ClaimError as e:
            return None, unresolvable(str(e))
        s.num_user_owned = len(claims)
        extended = self._pre_filter_extended(pod, s)
        if extended is not None:
            claims.append(extended)
            s.initial_extended_uid = extended.metadata.uid
        if not claims:
            return None, SKIP
        infos = [ClaimInfo() for _ in claims]
        to_allocate = 0
        for claim, info in zip(claims, infos, strict=True):
            allocation = claim.status.allocation
            if allocation is not None and not can_be_reserved(claim) and not is_reserved_for_pod(p, claim):
                return None, unresolvable("resourceclaim in use")
            if allocation is not None:
                selector, status = _node_selector(allocation)
                if status is not None:
                    return None, status
                info.available_on_nodes = selector
                continue
            to_allocate += 1
            if self.dra.claims.pending_allocation(claim.metadata.uid) is not None:
                return None, unresolvable(f"resource claim {kobj(claim)} is in the process of being allocated")
            if claim is extended:
                # Made without a spec, or stale from an earlier cycle: Filter tells.
                continue
            status = self._check_requests(claim)
            if status is not None:
                return None, status
        if to_allocate:
            allocated = self.dra.claims.gather_allocated_state()
            classes = {c.metadata.name: c for c in self.dra.classes.list()}
            s.allocator = Allocator(self.dra.slices.layout(), classes, allocated, self.selectors, self.features)
            s.outcomes = self.outcomes.attempt(self.dra.slices.version, s.allocator.slices_on_node,
                                               bool(s.allocator.slices_shared), classes, allocated)
        s.claims, s.infos = claims, infos
        return None, None

    def _pre_filter_extended(self, pod: PodInfo, s: DraState) -> ResourceClaim | None:
        """preFilterExtendedResources: the claim for the pod's extended resources that a class maps,
        the one from an earlier cycle or a new one in memory; None when it asks for none."""
        scalar = pod.requests.scalar
        if not asks_for_dra_extended_resources(scalar):
            return None
        mapping = class_mapping(self.dra.classes.list())
        if not has_mapped_extended_resource(scalar, mapping):
            return None
        s.pod_scalar, s.mapping = dict(scalar), mapping
        found = find_extended_resource_claim(pod.pod, self.dra.claims.extended_claims_of(pod.pod.metadata.uid))
        return found if found is not None else special_claim(pod.pod, self.new_uid())

    def _check_requests(self, claim: ResourceClaim) -> Status | None:
        """Every request's class exists: scheduling cannot go on without it, however the claim
        were allocated."""
        for request in claim.spec.devices.requests:
            if request.exactly is not None:
                status = self._validate_class(request.exactly.device_class_name, request.name)
            elif request.first_available:
                if not self.features.prioritized_list:
                    return unresolvable(f"resource claim {kobj(claim)}, request {request.name}: has subrequests, "
                                         "but the DRAPrioritizedList feature is disabled")
                status = None
                for sub in request.first_available:
                    status = self._validate_class(sub.device_class_name, f"{request.name}/{sub.name}")
                    if status is not None:
                        break
            else:
                return unresolvable(f"resource claim {kobj(claim)}, request {request.name}: unknown request type")
            if status is not None:
                return status
        return None

    def _validate_class(self, name: str, request: str) -> Status | None:
        if not name:
            return error(f"request {request}: unsupported request type")
        if self.dra.classes.get(name) is None:
            # Unschedulable until a DeviceClass event.
            return unresolvable(f"request {request}: device class {name} does not exist")
        return None

    # --- Filter --------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: DraState | None = state.get(STATE_KEY)
        if s is None:
            return error(NOT_FOUND)
        if s.empty():
            return None
        extended, status = self._filter_extended(s, pod.pod, node)
        if status is not None:
            return status
        if extended is None and s.no_user_claim():
            # Only extended resources, every one in the node's allocatable: NodeResourcesFit's.
            return None
        unavailable: list[int] = []
        for i, claim in enumerate(s.claims):
            selector = s.infos[i].available_on_nodes
            if selector is not None and not selector.matches(node.node.metadata.labels, node.name):
                unavailable.append(i)
                continue
            if claim.status.allocation is not None and self.features.device_binding_and_status:
                try:
                    ready = claim_ready_for_binding(claim)
                except BindError:
                    unavailable.append(i)
                else:
                    if not ready and claim_timed_out(claim, self.binding_timeout, self.now()):
                        unavailable.append(i)
        allocations: list[ClaimAllocation] = []
        if s.allocator is not None:
            # The extended-resource claim as this node must satisfy it.
            to_allocate = [extended.claim if extended is not None and s.is_extended(i) else c
                           for i, c in s.to_allocate()]
            status, found, reused = self._allocate(s.allocator, node, to_allocate, s.outcomes)
            if status is not None:
                return status
            allocations = found
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return unresolvable("resourceclaim not available on the node")
        if s.allocator is not None:
            s.node_allocations[node.name] = NodeAllocation(
                allocations, extended.claim if extended is not None else None,
                extended.mappings if extended is not None else [],
                new_share_id=s.allocator.new_share_id if reused else None)
        return None

    def _filter_extended(self, s: DraState, pod: Pod, node: NodeInfo) -> tuple[NodeClaim | None, Status | None]:
        """filterExtendedResources: the extended-resource claim with the requests this node must
        satisfy through DRA; None when there is nothing to allocate for it here."""
        claim = s.extended_claim()
        if claim is None:
            return None, None
        if claim.spec.devices.requests:
            # From an earlier cycle: PostFilter deletes it and the pod starts anew.
            return None, unresolvable("cannot schedule extended resource claim")
        try:
            extended = node_extended_resources(s.pod_scalar, node.allocatable.scalar, s.mapping)
        except CannotFit:
            return None, unresolvable("cannot fit resource")
        if (s.no_user_claim() and not extended) or claim.status.allocation is not None:
            return None, None
        # Nodes that must satisfy the same requests share one claim: its spec is then encoded once
        # for the kept outcomes, not once per node.
        key = tuple(extended.items())
        found = s.node_claims.get(key)
        if found is None:
            found = s.node_claims[key] = node_claim(claim, pod, extended, s.mapping)
        return found, None

    def _allocate(self, allocator: Allocator, node: NodeInfo, claims: list[ResourceClaim],
                  outcomes: Attempt | None = None) -> tuple[Status | None, list[ClaimAllocation], bool]:
        """(status, allocations, whether they are an outcome kept from another pod's attempt)."""
        kept = MISS if outcomes is None else outcomes.get(node.name, claims)
        if kept is not MISS:
            return *self._allocated(cast("list[ClaimAllocation] | None", kept), claims), True
        clock = self.handle.clock
        timed_out = False
        if self.filter_timeout > 0:
            deadline = clock() + self.filter_timeout

            def aborted() -> str | None:
                nonlocal timed_out
                if clock() >= deadline:
                    timed_out = True
                    return "context deadline exceeded"
                return None
            allocator.aborted = aborted
        else:
            allocator.aborted = lambda: None
        try:
            found = allocator.allocate(NodeView(node.name, node.node.metadata.labels), claims)
        except NodeAllocationError as e:
            return unresolvable(str(e)), [], False
        except AllocatorError as e:
            if timed_out:
                # Possibly transient: an error sends the pod to backoff, not to wait for an event.
                return error(f"node {node.name}: timed out trying to allocate devices"), [], False
            return error(str(e)), [], False
        if outcomes is not None:
            outcomes.put(node.name, claims, found)
        return *self._allocated(found, claims), False

    @staticmethod
    def _allocated(found: list[ClaimAllocation] | None,
                   claims: list[ResourceClaim]) -> tuple[Status | None, list[ClaimAllocation]]:
        if found is None or len(found) != len(claims):
            return unresolvable("cannot allocate all claims"), []
        return None, found

    # --- Score -------------------------------------------------------------------------------------

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        s: DraState | None = state.get(STATE_KEY)
        if s is None or s.empty() or not self.features.prioritized_list:
            return 0
        allocations = s.node_allocations.get(node.name)
        if allocations is None:
            return 0
        try:
            return compute_score(s.claims, allocations.results)
        except ScoreError as e:
            raise SchedulingError(Status(Code.ERROR, f'running Score plugin "{NAME}": {e}', plugin=NAME)) from None

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Any) -> Scores:
        """Score over many nodes; nothing to compute for a pod without claims (most pods)."""
        s: DraState | None = state.get(STATE_KEY)
        if s is None or s.empty() or not s.node_allocations or not self.features.prioritized_list or \
                not _has_first_available(s.claims):
            # computeScore adds only for firstAvailable requests: 0 on every node without any.
            return np.zeros(len(rows), dtype=np.int64)
        infos = snapshot.node_infos
        return np.fromiter((self.score(state, pod, infos[r], snapshot) for r in rows.tolist()), dtype=np.int64,
                           count=len(rows))

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def _has_first_available(claims: list[ResourceClaim]) -> bool:
    return any(r.first_available for c in claims for r in c.spec.devices.requests)


def _node_selector(allocation: AllocationResult) -> tuple[Selector | None, Status | None]:
    if allocation.node_selector is None:
        return None, None
    selector = Selector.parse(allocation.node_selector)
    if not selector.is_valid():
        return None, error("invalid node selector in the claim's allocation")
    return selector, None


def new(args: Mapping[str, Any], handle: Handle, dra: DraManager | None = None) -> DynamicResources:
    """From parsed DynamicResourcesArgs (args.parse_args) and the DRA objects the scheduler feeds."""
    return DynamicResources(dra if dra is not None else DraManager(), handle,
                            seconds(args, "filterTimeout", DEFAULT_FILTER_TIMEOUT),
                            seconds(args, "bindingTimeout", DEFAULT_BINDING_TIMEOUT))
