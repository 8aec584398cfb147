"""DynamicResources' queueing hints (dynamicresources.go isSchedulableAfterClaimChange,
isSchedulableAfterTargetPodUpdate): whether a claim's change, or the pod's own update, may make a
pod the plugin rejected schedulable. They err on the side of trying again."""

from __future__ import annotations

from typing import Any

from kubesched.framework.events import EventNarrowing, QueueingHint
from kubesched.model.objects import Pod
from kubesched.model.resource import ResourceClaim
from kubesched.plugins.dynamic_resources.claims import ClaimError, pod_claims
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def after_claim_change(claims: ClaimTracker, pod: Pod, old: Any, new: Any) -> QueueingHint:
    if not isinstance(old, ResourceClaim | None) or not isinstance(new, ResourceClaim | None):
        return QUEUE  # not a claim: upstream's As() error, which queues
    if new is None:
        # Deleted: only an allocation it still had frees devices (the scheduler sees every
        # allocation come and go through its tracker, so a deallocation is not missed).
        return QUEUE if old is not None and old.status.allocation is not None else SKIP
    deallocated = old is not None and old.status.allocation is not None and new.status.allocation is None
    if not deallocated and not _may_use(pod, new):
        # Skipped on either path below (a claim of the pod that stops it, or one it does not
        # use): decided without looking the pod's claims up, as every pending pod is asked.
        return SKIP
    try:
        uses = any(c.metadata.uid == new.metadata.uid for _, c in pod_claims(pod, claims))
    except ClaimError:
        return SKIP  # still not schedulable, whatever this claim did
    if deallocated:
        return QUEUE  # deallocated: devices free for others
    if not uses:
        return SKIP
    if old is None:
        return QUEUE  # the pod's claim was created
    # The finalizer a driver adds, say: only a status change matters.
    return SKIP if old.status == new.status else QUEUE


def _may_use(pod: Pod, claim: ResourceClaim) -> bool:
    """Whether the pod can name the claim: its namespace, and the name of an entry's claim or of
    one made from an entry's template."""
    if claim.metadata.namespace != pod.metadata.namespace:
        return False
    name = claim.metadata.name
    if any(entry.resource_claim_name == name for entry in pod.spec.resource_claims):
        return True
    return any(status.resource_claim_name == name for status in pod.status.resource_claim_statuses or ())


def _claim_keys(old: Any, new: Any) -> frozenset[tuple[str, str]] | None:
    """The pods after_claim_change can queue for this change: those that can name the claim, or
    any (None) when devices may have come free."""
    if not isinstance(old, ResourceClaim | None) or not isinstance(new, ResourceClaim | None):
        return None
    if new is None:
        return None if old is not None and old.status.allocation is not None else frozenset()
    if old is not None and old.status.allocation is not None and new.status.allocation is None:
        return None
    return frozenset({(new.metadata.namespace, new.metadata.name)})


_NONE: frozenset[tuple[str, str]] = frozenset()


def _pod_claim_keys(pod: Pod) -> frozenset[tuple[str, str]]:
    """What _may_use accepts: (namespace, name) of each claim the pod names or was given."""
    if not pod.spec.resource_claims and not pod.status.resource_claim_statuses:
        return _NONE  # most pods: asked on every park
    ns = pod.metadata.namespace
    names = {entry.resource_claim_name for entry in pod.spec.resource_claims}
    names.update(status.resource_claim_name for status in pod.status.resource_claim_statuses or ())
    return frozenset((ns, name) for name in names if name)


# after_claim_change says QUEUE only for a pod _pod_claim_keys finds under _claim_keys.
CLAIM_NARROWING = EventNarrowing("DynamicResources/claims", _claim_keys, _pod_claim_keys)


def after_target_pod_update(claims: ClaimTracker, pod: Pod, old: Any, new: Any) -> QueueingHint:
    if not isinstance(new, Pod):
        return QUEUE
    try:
        pod_claims(new, claims)
    except ClaimError:
        return SKIP
    return QUEUE
