"""The writes for the claim of a pod's extended resources backed by DRA (extendeddynamicresources.go
createExtendedResourceClaimInAPI, waitForExtendedClaimInAssumeCache, patchPodExtendedResourceClaimStatus,
deleteClaim): PreBind creates the claim Filter made for the node, allocates and reserves it as any
claim, waits for the informer to bring it (polled every second, up to two minutes) to lay the
written version over it, and writes the pod's status.extendedResourceClaimStatus; PostFilter and
Unreserve delete a created claim, its delete-protection finalizer removed first (retried on
conflict as client-go's retry.DefaultRetry)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from kubesched.framework.handle import ResourceClaimWrites, WriteFailure
from kubesched.model.objects import Pod, PodExtendedResourceClaimStatus
from kubesched.model.resource import FINALIZER_DELETE_PROTECTION, AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources.claims import binding_for
from kubesched.plugins.dynamic_resources.extended import (
    ASSUME_POLL_SECONDS,
    ASSUME_TIMEOUT_SECONDS,
    is_special_claim_name,
)
from kubesched.plugins.dynamic_resources.plugin_state import NodeAllocation
from kubesched.plugins.dynamic_resources.prebind import RETRY_DELAY, RETRY_STEPS, BindError, ClaimBinder, Sleep, kobj
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ExtendedClaimWriter:
    writes: ResourceClaimWrites
    tracker: ClaimTracker
    sleep: Sleep
    clock: Callable[[], float]

    async def bind(self, binder: ClaimBinder, claim: ResourceClaim, allocation: AllocationResult | None,
                   pod: Pod, node_name: str, found: NodeAllocation,
                   created: Callable[[ResourceClaim], None]) -> ResourceClaim:
        """bindClaim for the extended-resource claim: the claim as written; raises BindError with
        kube-scheduler's message. `created` learns of the claim as soon as it exists."""
        made = False
        if is_special_claim_name(claim.metadata.name):
            if found.extended_claim is None:
                raise BindError(f"extended resource claim not found for node {node_name}")
            answer = await self.writes.create(found.extended_claim)
            if isinstance(answer, WriteFailure):
                # klog.KObj of the claim with its name cleared for the create.
                raise BindError(f"create claim for extended resources {found.extended_claim.metadata.namespace}/: "
                                f"{answer.message}")
            claim, made = answer, True
            created(answer)
        written: ResourceClaim | None = None
        try:
            written = await binder.bind(claim, allocation, binding_for(pod), assume=False)
        finally:
            if made or written is not None:
                await self._wait_assumed(written if written is not None else claim)
        m = pod.metadata
        if not found.mappings:
            raise BindError(f"nil or empty request mappings, no update of pod {m.namespace}/{m.name} "
                            "ExtendedResourceClaimStatus")
        status = PodExtendedResourceClaimStatus(list(found.mappings), written.metadata.name)
        failure = await self.writes.set_extended_resource_claim_status(pod, status)
        if failure is not None:
            raise BindError(f"update pod {m.namespace}/{m.name} ExtendedResourceClaimStatus: {failure.message}")
        return written

    async def _wait_assumed(self, claim: ResourceClaim) -> None:
        """The claim was just created: the informer may not have it yet."""
        deadline = self.clock() + ASSUME_TIMEOUT_SECONDS
        m = claim.metadata
        while True:
            if self.tracker.get(m.namespace, m.name) is not None:
                reason = self.tracker.assume(claim)
                if reason is not None:
                    log.debug("claim not stored in the assume cache: %s", reason)
                return
            if self.clock() >= deadline:
                log.debug("claim %s not stored in the assume cache after retries", kobj(claim))
                return
            await self.sleep(ASSUME_POLL_SECONDS)

    async def delete(self, claim: ResourceClaim) -> None:
        """deleteClaim: the delete-protection finalizer removed, then the claim deleted."""
        m = claim.metadata
        current = msgspec.json.decode(msgspec.json.encode(claim), type=ResourceClaim)
        for attempt in range(RETRY_STEPS):
            if attempt:
                await self.sleep(RETRY_DELAY)
                fresh = await self.writes.get(m.namespace, m.name)
                if isinstance(fresh, WriteFailure):
                    log.warning("delete of ResourceClaim failed", extra={
                        "claim": kobj(claim), "detail": f"get resourceclaim {m.namespace}/{m.name}: {fresh.message}"})
                    return
                current = fresh
            if FINALIZER_DELETE_PROTECTION in current.metadata.finalizers:
                current.metadata.finalizers.remove(FINALIZER_DELETE_PROTECTION)
            updated = await self.writes.update(current)
            if not isinstance(updated, WriteFailure):
                break
            if not updated.conflict or attempt == RETRY_STEPS - 1:
                log.warning("delete of ResourceClaim failed", extra={
                    "claim": kobj(claim), "detail": f"update resourceclaim {m.namespace}/{m.name}: {updated.message}"})
                return
        failure = await self.writes.delete(m.namespace, m.name)
        if failure is not None:
            log.warning("delete of ResourceClaim failed", extra={"claim": kobj(claim), "detail": failure.message})
