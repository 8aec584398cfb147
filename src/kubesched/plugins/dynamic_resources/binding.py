"""DynamicResources after Filter (kube-scheduler v1.37.2 dynamicresources.go): PostFilter's
deallocation (or deletion of a stale extended-resource claim), Reserve's allocations held in flight,
Unreserve's release, and PreBind's writes of each claim (prebind.py, extended_bind.py) with the
binding conditions it may wait for. A part of DynamicResources (plugin.py), apart for its size."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

import msgspec

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import PreBindPreFlightResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.resource import FINALIZER_DELETE_PROTECTION, ResourceClaim
from kubesched.plugins.dynamic_resources.claims import binding_for, is_reserved_for_pod
from kubesched.plugins.dynamic_resources.extended import is_special_claim_name
from kubesched.plugins.dynamic_resources.extended_bind import ExtendedClaimWriter
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.dynamic_resources.plugin_state import NOT_FOUND, STATE_KEY, DraState, NodeAllocation, error
from kubesched.plugins.dynamic_resources.prebind import (
    BINDING_POLL_SECONDS,
    ERR_DEVICE_BINDING_TIMEOUT,
    BindError,
    ClaimBinder,
    claim_ready_for_binding,
    claim_timed_out,
    has_binding_conditions,
    kobj,
)
from kubesched.plugins.dynamic_resources.state import Features

log = logging.getLogger(__name__)


class ReserveAndBind:
    """The extension points after Filter, mixed into DynamicResources."""

    dra: DraManager
    handle: Handle
    features: Features
    binding_timeout: float
    now: Callable[[], dt.datetime]

    # --- PostFilter --------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        return self._post_filter(state, pod, write=True)

    def dry_run_post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError,
                            snapshot: Snapshot | None = None) -> Status | None:
        """What PostFilter would answer, writing nothing (kubesched explain)."""
        return self._post_filter(state, pod, write=False)

    def _post_filter(self, state: CycleState, pod: PodInfo, write: bool) -> Status | None:
        s: DraState | None = state.get(STATE_KEY)
        if s is None:
            return error(NOT_FOUND)
        if s.empty():
            return Status(Code.UNSCHEDULABLE)
        uid = pod.pod.metadata.uid
        extended = s.extended_claim()
        created = extended is not None and not is_special_claim_name(extended.metadata.name)
        # Upstream picks one at random; the lowest index is as good a choice.
        for i in sorted(s.unavailable_claims):
            claim = s.claims[i]
            if s.is_extended(i):
                if created:
                    break
                continue
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == uid):
                if write:
                    self.handle.spawn(self._deallocate(claim), f"deallocate/{kobj(claim)}")
                return Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if extended is not None and created:
            # Made in an earlier cycle that did not bind the pod: deleted, the pod starts anew.
            if write:
                self.handle.spawn(self._extended_writer().delete(extended), f"delete/{kobj(extended)}")
            return Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return Status(Code.UNSCHEDULABLE)

    def _extended_writer(self) -> ExtendedClaimWriter:
        return ExtendedClaimWriter(self.handle.resource_claims, self.dra.claims, self.handle.sleep, self.handle.clock)

    async def _deallocate(self, claim: ResourceClaim) -> None:
        cleared = _copy_claim(claim)
        cleared.status.reserved_for = []
        cleared.status.allocation = None
        cleared.status.devices = []
        written = await self.handle.resource_claims.update_status(cleared)
        if not isinstance(written, ResourceClaim):
            log.warning("deallocation of ResourceClaim failed", extra={"claim": kobj(claim), "detail": written.message})


    # --- Reserve / Unreserve -----------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: DraState | None = state.get(STATE_KEY)
        if s is None:
            return error(NOT_FOUND)
        to_allocate = list(s.to_allocate())
        if s.empty() or not to_allocate or s.allocator is None:
            # Allocated claims are reserved for real in PreBind: if another pod is faster, it fails.
            return None
        found = s.node_allocations.get(node_name)
        allocations = found.results if found is not None else []
        if not allocations:
            if all(s.is_extended(i) for i, _ in to_allocate):
                # Only the extended-resource claim, every resource in the node's allocatable.
                return None
            return error("claim allocation not found for node")
        if len(allocations) != len(to_allocate):
            return error(f"internal error, have {len(allocations)} allocations, {len(to_allocate)} claims to "
                          f"allocate, want {len(to_allocate)} claims")
        for (i, claim), allocation in zip(to_allocate, allocations, strict=True):
            s.infos[i].allocation = allocation
            if s.is_extended(i) and found is not None and found.extended_claim is not None:
                claim = found.extended_claim
            allocated = _copy_claim(claim)
            if FINALIZER_DELETE_PROTECTION not in allocated.metadata.finalizers:
                allocated.metadata.finalizers = [*allocated.metadata.finalizers, FINALIZER_DELETE_PROTECTION]
            allocated.status.allocation = allocation
            self.dra.claims.signal_pending_allocation(claim.metadata.uid, allocated)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s: DraState | None = state.get(STATE_KEY)
        if s is None or s.empty():
            return
        tracker = self.dra.claims
        for claim in s.claims[:s.num_user_owned]:
            if tracker.maybe_remove_pending_allocation(claim.metadata.uid, False):
                tracker.restore(claim.metadata.namespace, claim.metadata.name)
            if claim.status.allocation is not None and is_reserved_for_pod(pod.pod, claim):
                self.handle.spawn(self._unreserve(claim, pod.pod.metadata.uid), f"unreserve/{kobj(claim)}")
        extended = s.extended_claim()
        if extended is None:
            return
        if tracker.maybe_remove_pending_allocation(s.initial_extended_uid, False):
            tracker.restore(extended.metadata.namespace, extended.metadata.name)
        if not is_special_claim_name(extended.metadata.name):
            # Created in PreBind: deleted, so that no claim is left without its pod bound.
            self.handle.spawn(self._extended_writer().delete(extended), f"delete/{kobj(extended)}")

    async def _unreserve(self, claim: ResourceClaim, uid: str) -> None:
        written = await self.handle.resource_claims.unreserve(claim, uid)
        if not isinstance(written, ResourceClaim):
            # Tried again when the pod is scheduled again.
            log.warning("unreserve failed", extra={"claim": kobj(claim), "detail": written.message})

    # --- PreBind -----------------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo,
                            node_name: str) -> tuple[PreBindPreFlightResult | None, Status | None]:
        result = PreBindPreFlightResult(allow_parallel=True)
        s: DraState | None = state.get(STATE_KEY)
        if s is None:
            return result, error(NOT_FOUND)
        if s.empty():
            return result, SKIP
        return result, None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: DraState | None = state.get(STATE_KEY)
        if s is None:
            return error(NOT_FOUND)
        if s.empty():
            return None
        p = pod.pod
        binder = ClaimBinder(self.handle.resource_claims, self.dra.claims, self.handle.sleep, self.now)
        bound: list[str] = []
        for i, claim in enumerate(s.claims):
            if is_reserved_for_pod(p, claim):
                continue
            allocation = s.infos[i].allocation
            uid = claim.metadata.uid
            try:
                if s.is_extended(i):
                    if allocation is None and not claim.spec.devices.requests:
                        # Every extended resource in the node's allocatable (device plugins).
                        continue
                    uid = s.initial_extended_uid
                    found = s.node_allocations.get(node_name) or NodeAllocation()

                    def created(made: ResourceClaim, i: int = i) -> None:
                        # Unreserve deletes it if the pod is not bound after all.
                        s.claims[i] = made
                    s.claims[i] = await self._extended_writer().bind(
                        binder, claim, allocation, p, node_name, found, created)
                else:
                    s.claims[i] = await binder.bind(claim, allocation, binding_for(p))
            except BindError as e:
                return error(str(e))
            if allocation is not None:
                bound.append(uid)
        status = None
        if self.features.device_binding_and_status and has_binding_conditions(s.claims):
            status = await self._wait_for_binding_conditions(s)
        if status is None:
            # Written and bindable: no longer in flight (the tracker holds the claims as written).
            # On a failure Unreserve releases them.
            for uid in bound:
                self.dra.claims.maybe_remove_pending_allocation(uid, True)
        return status

    async def _wait_for_binding_conditions(self, s: DraState) -> Status | None:
        clock = self.handle.clock
        deadline = clock() + self.binding_timeout
        while True:
            try:
                if self._ready_for_binding(s):
                    return None
            except BindError as e:
                return error(str(e))
            if clock() >= deadline:
                return error(f"{ERR_DEVICE_BINDING_TIMEOUT}: context deadline exceeded")
            await self.handle.sleep(min(BINDING_POLL_SECONDS, max(deadline - clock(), 0.0)))

    def _ready_for_binding(self, s: DraState) -> bool:
        """isPodReadyForBinding, on the tracker's latest claims."""
        for i, claim in enumerate(s.claims):
            latest = self.dra.claims.get(claim.metadata.namespace, claim.metadata.name)
            if latest is None:
                raise BindError(f'could not find ResourceClaim "{kobj(claim)}"')
            s.claims[i] = latest
            if not claim_ready_for_binding(latest):
                if claim_timed_out(latest, self.binding_timeout, self.now()):
                    raise BindError(f"{ERR_DEVICE_BINDING_TIMEOUT}: claim={latest.metadata.name}")
                return False
        return True


def _copy_claim(claim: ResourceClaim) -> ResourceClaim:
    return msgspec.json.decode(msgspec.json.encode(claim), type=ResourceClaim)
