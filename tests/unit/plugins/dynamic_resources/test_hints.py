"""DynamicResources' queueing hints: upstream's TestIsSchedulableAfterClaimChange and
TestIsSchedulableAfterTargetPodUpdate tables. A case upstream expects an error of (a wrong object)
is QUEUE here: the queue treats a hint's error as QUEUE. The DeletedFinalStateUnknown cases are left
out: kubesched's informer re-lists and diffs, so a deletion always carries the object."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import QueueingHint
from kubesched.model.objects import Pod
from kubesched.model.resource import AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources.hints import CLAIM_NARROWING, after_claim_change, after_target_pod_update
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker
from tests.builders import make_pod
from tests.unit.plugins.dynamic_resources.dra_builders import (
    ALLOCATED_CLAIM,
    ALLOCATION_RESULT,
    CLAIM_NAME,
    CLASS_NAME,
    NAMESPACE,
    PENDING_CLAIM,
    POD_NAME,
    POD_UID,
    RESOURCE_NAME,
    RESOURCE_NAME2,
    from_claim,
    make_claim,
    pod_with_claim_name,
    pod_with_claim_template,
    pod_with_claim_template_in_status,
)

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
POD_WITH_CLAIM_NAME = pod_with_claim_name().obj()
POD_WITH_CLAIM_TEMPLATE = pod_with_claim_template().obj()
OTHER_ALLOCATED_CLAIM = from_claim(make_claim("not-my-claim", NAMESPACE).request(CLASS_NAME).obj()) \
    .allocation(ALLOCATION_RESULT).obj()


def _wrong_owner() -> ResourceClaim:
    return from_claim(ALLOCATED_CLAIM).owner_reference(POD_NAME, POD_UID + "123").obj()


def _renamed() -> ResourceClaim:
    claim = from_claim(ALLOCATED_CLAIM).uid("uid-other").obj()
    claim.metadata.name += "-foo"
    return claim


def _with_finalizer() -> ResourceClaim:
    return from_claim(PENDING_CLAIM).finalizer("foo").obj()


def _with_allocation() -> ResourceClaim:
    claim = from_claim(PENDING_CLAIM).obj()
    claim.status.allocation = AllocationResult()
    return claim


def _deallocated() -> ResourceClaim:
    claim = from_claim(OTHER_ALLOCATED_CLAIM).obj()
    claim.status.allocation = None
    return claim


@pytest.mark.parametrize(("pod", "claims", "old", "new", "want"), [
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [], PENDING_CLAIM, None, SKIP, id="skip-deletes"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [], ALLOCATED_CLAIM, None, QUEUE, id="queue-on-delete-with-allocation"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [], None, "not-a-claim", QUEUE, id="backoff-wrong-new-object"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [], None, _wrong_owner(), SKIP, id="skip-wrong-claim"),
    pytest.param(POD_WITH_CLAIM_TEMPLATE, [ALLOCATED_CLAIM], None, _renamed(), SKIP, id="skip-unrelated-claim"),
    pytest.param(POD_WITH_CLAIM_NAME, [], None, PENDING_CLAIM, QUEUE, id="queue-on-add"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], "not-a-claim", PENDING_CLAIM, QUEUE,
                 id="backoff-wrong-old-object"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM, _with_finalizer(), SKIP,
                 id="skip-adding-finalizer"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM], PENDING_CLAIM, _with_allocation(), QUEUE,
                 id="queue-on-status-change"),
    pytest.param(POD_WITH_CLAIM_NAME, [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM], OTHER_ALLOCATED_CLAIM, _deallocated(),
                 QUEUE, id="claim-deallocate"),
])
def test_after_claim_change(pod: Pod, claims: list[ResourceClaim], old: Any, new: Any, want: QueueingHint) -> None:
    tracker = ClaimTracker(claims)
    if isinstance(new, ResourceClaim):
        # The tracker has the change by the time the queue asks (the event comes from it).
        tracker.add(from_claim(new).resource_version("2").obj())
    assert after_claim_change(tracker, pod, old, new) is want


POD_WITH_TWO_CLAIM_TEMPLATES = make_pod(POD_NAME, NAMESPACE).uid(POD_UID) \
    .resource_claim(RESOURCE_NAME, template=CLAIM_NAME).resource_claim(RESOURCE_NAME2, template=CLAIM_NAME).obj()


@pytest.mark.parametrize(("claims", "pod", "new", "want"), [
    pytest.param([], POD_WITH_CLAIM_TEMPLATE, "not-a-claim", QUEUE, id="backoff-wrong-new-object"),
    pytest.param([PENDING_CLAIM], POD_WITH_CLAIM_TEMPLATE, pod_with_claim_template_in_status().obj(), QUEUE,
                 id="complete"),
    pytest.param([], POD_WITH_CLAIM_TEMPLATE, pod_with_claim_template_in_status().obj(), SKIP, id="missing-claim"),
    pytest.param([PENDING_CLAIM], POD_WITH_TWO_CLAIM_TEMPLATES, make_pod(POD_NAME, NAMESPACE).uid(POD_UID)
                 .resource_claim(RESOURCE_NAME, template=CLAIM_NAME).resource_claim(RESOURCE_NAME2, template=CLAIM_NAME)
                 .claim_status(RESOURCE_NAME, CLAIM_NAME).obj(), SKIP, id="incomplete"),
])
def test_after_target_pod_update(claims: list[ResourceClaim], pod: Pod, new: Any, want: QueueingHint) -> None:
    assert after_target_pod_update(ClaimTracker(claims), pod, None, new) is want


def _reference_after_claim_change(claims: ClaimTracker, pod: Pod, old: Any, new: Any) -> QueueingHint:
    """The hint before its shortcut for claims the pod cannot name, to check the shortcut against."""
    from kubesched.plugins.dynamic_resources.claims import ClaimError, pod_claims
    if new is None:
        return QUEUE if old is not None and old.status.allocation is not None else SKIP
    try:
        uses = any(c.metadata.uid == new.metadata.uid for _, c in pod_claims(pod, claims))
    except ClaimError:
        return SKIP
    if old is not None and old.status.allocation is not None and new.status.allocation is None:
        return QUEUE
    if not uses:
        return SKIP
    if old is None:
        return QUEUE
    return SKIP if old.status == new.status else QUEUE


_PODS = [POD_WITH_CLAIM_NAME, POD_WITH_CLAIM_TEMPLATE, pod_with_claim_template_in_status().obj()]
_CLAIMS = [None, PENDING_CLAIM, ALLOCATED_CLAIM, OTHER_ALLOCATED_CLAIM, _deallocated(), _renamed(), _wrong_owner(),
           _with_finalizer(), _with_allocation(),
           from_claim(make_claim(CLAIM_NAME, "elsewhere").request(CLASS_NAME).obj()).uid("uid-elsewhere").obj()]


@pytest.mark.parametrize("pod", [pytest.param(p, id=f"pod-{i}") for i, p in enumerate(_PODS)])
def test_the_shortcut_for_claims_a_pod_cannot_name_answers_as_the_whole_hint(pod: Pod) -> None:
    for known in ([], [PENDING_CLAIM], [ALLOCATED_CLAIM], [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM]):
        tracker = ClaimTracker(known)
        for old in _CLAIMS:
            for new in _CLAIMS:
                if new is None and old is None:
                    continue
                want = _reference_after_claim_change(tracker, pod, old, new)
                assert after_claim_change(tracker, pod, old, new) == want, (known, old, new)


@pytest.mark.parametrize("pod", [pytest.param(p, id=f"pod-{i}") for i, p in enumerate(_PODS)])
def test_the_claim_narrowing_leaves_out_only_pods_the_hint_skips(pod: Pod) -> None:
    for known in ([], [PENDING_CLAIM], [ALLOCATED_CLAIM], [PENDING_CLAIM, OTHER_ALLOCATED_CLAIM]):
        tracker = ClaimTracker(known)
        for old in [*_CLAIMS, "not-a-claim"]:
            for new in [*_CLAIMS, "not-a-claim"]:
                if new is None and old is None:
                    continue
                keys = CLAIM_NARROWING.event_keys(old, new)
                if keys is not None and not keys & CLAIM_NARROWING.pod_keys(pod):
                    assert after_claim_change(tracker, pod, old, new) is SKIP, (known, old, new)


def test_the_claim_narrowing_keys_a_pod_by_the_claims_it_names_and_was_given() -> None:
    assert CLAIM_NARROWING.pod_keys(POD_WITH_CLAIM_NAME) == frozenset({(NAMESPACE, CLAIM_NAME)})
    assert CLAIM_NARROWING.pod_keys(POD_WITH_CLAIM_TEMPLATE) == frozenset()
    given = pod_with_claim_template_in_status().obj()
    assert CLAIM_NARROWING.pod_keys(given) == {(NAMESPACE, s.resource_claim_name)
                                               for s in given.status.resource_claim_statuses or ()}
    assert CLAIM_NARROWING.event_keys(None, PENDING_CLAIM) == frozenset({(NAMESPACE, CLAIM_NAME)})
    assert CLAIM_NARROWING.event_keys(ALLOCATED_CLAIM, None) is None
    assert CLAIM_NARROWING.event_keys(PENDING_CLAIM, None) == frozenset()
