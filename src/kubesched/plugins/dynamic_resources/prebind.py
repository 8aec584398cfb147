"""PreBind's writes (dynamicresources.go bindClaim) and the binding conditions it may wait for.

For each claim not yet reserved for the pod: the finalizer resource.kubernetes.io/delete-protection
added (an Update) when the claim is to be allocated, then status.allocation (with its
allocationTimestamp) and the pod appended to status.reservedFor (an UpdateStatus). A conflict
reads the claim again and retries, five attempts in all, as client-go's retry.DefaultRetry. The
claim as written is laid over the informer's in the tracker until the informer has it.

Binding conditions (DRADeviceBindingConditions, beta and on): a device a driver must prepare first
keeps the pod in PreBind, polled every 5 s, until every condition of its allocation is True in the
claim's status.devices, a failure condition is True, or bindingTimeout passes.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import msgspec

from kubesched.framework.handle import ResourceClaimWrites, WriteFailure
from kubesched.model.resource import (
    FINALIZER_DELETE_PROTECTION,
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker

log = logging.getLogger(__name__)
T = TypeVar("T")

# client-go retry.DefaultRetry: 5 steps, 10 ms apart (jitter 0.1).
RETRY_STEPS = 5
RETRY_DELAY = 0.01
# PreBind's poll of the binding conditions.
BINDING_POLL_SECONDS = 5.0

ERR_DEVICE_BINDING_TIMEOUT = "device binding timeout"
ERR_DEVICE_BINDING_FAILED = "device binding failed"

Sleep = Callable[[float], Awaitable[None]]
WallClock = Callable[[], dt.datetime]


class BindError(Exception):
    pass


def kobj(claim: ResourceClaim) -> str:
    m = claim.metadata
    return f"{m.namespace}/{m.name}" if m.namespace else m.name


def rfc3339(t: dt.datetime) -> str:
    """metav1.Time as JSON has it: seconds, UTC."""
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class ClaimBinder:
    writes: ResourceClaimWrites
    tracker: ClaimTracker
    sleep: Sleep
    now: WallClock

    async def bind(self, claim: ResourceClaim, allocation: AllocationResult | None,
                   binding: ResourceClaimConsumerReference, assume: bool = True) -> ResourceClaim:
        """The claim as written; raises BindError with kube-scheduler's message. Without `assume`,
        the caller lays the claim over the informer's (a claim just created may not be there yet)."""
        written: ResourceClaim | None = None
        try:
            current = _copy(claim)
            for attempt in range(RETRY_STEPS):
                if attempt:
                    await self.sleep(RETRY_DELAY)
                    fresh = await self.writes.get(claim.metadata.namespace, claim.metadata.name)
                    if isinstance(fresh, WriteFailure):
                        raise BindError(f"get updated claim {kobj(claim)} after conflict: {fresh.message}")
                    current = fresh
                outcome = await self._attempt(current, allocation, binding)
                if isinstance(outcome, ResourceClaim):
                    written = outcome
                    return outcome
                failure, text = outcome
                if not failure.conflict or attempt == RETRY_STEPS - 1:
                    raise BindError(text)
            raise AssertionError("unreachable")
        finally:
            if written is not None and assume:
                reason = self.tracker.assume(written)
                if reason is not None:
                    log.debug("claim not stored in the assume cache: %s", reason)

    async def _attempt(self, claim: ResourceClaim, allocation: AllocationResult | None,
                       binding: ResourceClaimConsumerReference) -> ResourceClaim | tuple[WriteFailure, str]:
        if claim.metadata.deletion_timestamp is not None:
            raise BindError(f"claim {kobj(claim)} got deleted in the meantime")
        if allocation is not None:
            if claim.status.allocation is not None:
                raise BindError(f"claim {kobj(claim)} got allocated elsewhere in the meantime")
            if FINALIZER_DELETE_PROTECTION not in claim.metadata.finalizers:
                claim.metadata.finalizers = [*claim.metadata.finalizers, FINALIZER_DELETE_PROTECTION]
                updated = await self.writes.update(claim)
                if isinstance(updated, WriteFailure):
                    return updated, f"add finalizer to claim {kobj(claim)}: {updated.message}"
                claim = updated
            # Shared with the in-flight claim, as upstream shares the pointer: the timestamp set below
            # shows there too.
            claim.status.allocation = allocation
        claim.status.reserved_for = [*claim.status.reserved_for, binding]
        if claim.status.allocation is None:
            raise BindError(f"claim {kobj(claim)} got deallocated elsewhere in the meantime")
        if claim.status.allocation.allocation_timestamp is None:
            claim.status.allocation.allocation_timestamp = rfc3339(self.now())
        updated = await self.writes.update_status(claim)
        if isinstance(updated, WriteFailure):
            what = "add allocation and reservation to claim" if allocation is not None else "add reservation to claim"
            return updated, f"{what} {kobj(claim)}: {updated.message}"
        return updated


def _copy(obj: T) -> T:
    return msgspec.json.decode(msgspec.json.encode(obj), type=type(obj))


# --- binding conditions ----------------------------------------------------------------------------

def _device_status(claim: ResourceClaim, r: DeviceRequestAllocationResult) -> AllocatedDeviceStatus | None:
    for d in claim.status.devices:
        if d.device == r.device and d.driver == r.driver and d.pool == r.pool:
            return d
    return None


def _is_true(status: AllocatedDeviceStatus, condition: str) -> bool:
    return any(c.type == condition and c.status == "True" for c in status.conditions)


def claim_ready_for_binding(claim: ResourceClaim) -> bool:
    """isClaimReadyForBinding: every binding condition True; raises BindError when a failure
    condition is True."""
    allocation = claim.status.allocation
    if allocation is None:
        return False
    for r in allocation.devices.results:
        if not r.binding_conditions:
            continue
        status = _device_status(claim, r)
        if status is None:
            return False
        for cond in r.binding_failure_conditions:
            for c in status.conditions:
                if c.type == cond and c.status == "True":
                    raise BindError(f'{ERR_DEVICE_BINDING_FAILED}: claim={claim.metadata.name}, '
                                    f'reason={c.reason}, message="{c.message}"')
        if not all(_is_true(status, cond) for cond in r.binding_conditions):
            return False
    return True


def claim_timed_out(claim: ResourceClaim, binding_timeout: float, now: dt.datetime) -> bool:
    """isClaimTimeout: allocated with binding conditions longer than bindingTimeout ago."""
    allocation = claim.status.allocation
    if allocation is None or allocation.allocation_timestamp is None:
        return False
    if not any(r.binding_conditions for r in allocation.devices.results):
        return False
    try:
        at = dt.datetime.fromisoformat(allocation.allocation_timestamp.replace("Z", "+00:00"))
    except ValueError:
        return False
    return at + dt.timedelta(seconds=binding_timeout) < now


def has_binding_conditions(claims: list[ResourceClaim]) -> bool:
    return any(r.binding_conditions for c in claims if c.status.allocation is not None
               for r in c.status.allocation.devices.results)
