"""The claim tracker: upstream's dra_manager_test.go cases (SignalClaimPendingAllocation,
GetPendingAllocation, MaybeRemoveClaimPendingAllocation), and the assume cache and allocated
devices it keeps as the informer, PreBind's writes and Unreserve change claims."""

from __future__ import annotations

import pytest

from kubesched.model.resource import AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources.pools import DeviceID
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker
from tests.unit.plugins.dynamic_resources.dra_builders import (
    ALLOCATED_CLAIM,
    ALLOCATED_CLAIM2,
    ALLOCATION_RESULT,
    ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY,
    ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY2,
    ALLOCATION_RESULT_WITH_SHARED_DEVICE,
    DRIVER,
    NODE_NAME,
    PENDING_CLAIM,
    SHARED_DEVICE_NAME,
    allocation,
    from_claim,
    make_claim,
    result,
)

CLAIM_UID, OTHER_CLAIM_UID = "claim-uid-1", "claim-uid-2"


def _in_flight(tracker: ClaimTracker) -> dict[str, tuple[ResourceClaim, int]]:
    return {uid: (f.claim, f.sharers) for uid, f in tracker._in_flight.items()}


def _with(tracker: ClaimTracker, in_flight: dict[str, tuple[ResourceClaim, int]]) -> ClaimTracker:
    for uid, (claim, sharers) in in_flight.items():
        tracker.signal_pending_allocation(uid, claim)
        tracker._in_flight[uid].sharers = sharers
    return tracker


@pytest.mark.parametrize(("in_flight", "cached", "allocated", "want"), [
    pytest.param({}, [from_claim(PENDING_CLAIM).uid(CLAIM_UID).obj()], ALLOCATED_CLAIM,
                 {CLAIM_UID: (ALLOCATED_CLAIM, 1)}, id="empty"),
    pytest.param({}, [from_claim(ALLOCATED_CLAIM).uid(CLAIM_UID).obj()], ALLOCATED_CLAIM, {},
                 id="claim-already-allocated"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 1), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, [], ALLOCATED_CLAIM,
                 {CLAIM_UID: (ALLOCATED_CLAIM, 2), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, id="already-exists"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 1)}, [], ALLOCATED_CLAIM2, {CLAIM_UID: (ALLOCATED_CLAIM, 2)},
                 id="already-exists-ignores-different-claim-argument"),
])
def test_signal_claim_pending_allocation(in_flight: dict[str, tuple[ResourceClaim, int]], cached: list[ResourceClaim],
                                         allocated: ResourceClaim, want: dict[str, tuple[ResourceClaim, int]]) -> None:
    tracker = _with(ClaimTracker(), in_flight)
    for claim in cached:
        tracker.add(claim)
    tracker.signal_pending_allocation(CLAIM_UID, allocated)
    assert _in_flight(tracker) == want


@pytest.mark.parametrize(("in_flight", "want"), [
    pytest.param({}, None, id="empty"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 1), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, ALLOCATION_RESULT,
                 id="claim"),
])
def test_get_pending_allocation(in_flight: dict[str, tuple[ResourceClaim, int]],
                                want: AllocationResult | None) -> None:
    tracker = _with(ClaimTracker(), in_flight)
    before = _in_flight(tracker)
    assert tracker.pending_allocation(CLAIM_UID) == want
    assert _in_flight(tracker) == before


@pytest.mark.parametrize(("in_flight", "force", "want", "want_in_flight"), [
    pytest.param({}, True, False, {}, id="empty"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 1), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, False, True,
                 {OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, id="delete-last-sharer"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 1), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, True, True,
                 {OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, id="force-delete-last-sharer"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 2), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, False, False,
                 {CLAIM_UID: (ALLOCATED_CLAIM, 1), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)},
                 id="decrement-remaining-sharers"),
    pytest.param({CLAIM_UID: (ALLOCATED_CLAIM, 2), OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, True, True,
                 {OTHER_CLAIM_UID: (ALLOCATED_CLAIM2, 10)}, id="force-delete-remaining-sharers"),
])
def test_maybe_remove_claim_pending_allocation(in_flight: dict[str, tuple[ResourceClaim, int]], force: bool, want: bool,
                                               want_in_flight: dict[str, tuple[ResourceClaim, int]]) -> None:
    tracker = _with(ClaimTracker(), in_flight)
    assert tracker.maybe_remove_pending_allocation(CLAIM_UID, force) is want
    assert _in_flight(tracker) == want_in_flight


INSTANCE_1 = DeviceID(DRIVER, NODE_NAME, "instance-1")
SHARED = DeviceID(DRIVER, NODE_NAME, SHARED_DEVICE_NAME)


def test_allocated_devices_follow_the_latest_versions() -> None:
    changes: list[tuple[str | None, str | None]] = []
    tracker = ClaimTracker()
    tracker.listeners.append(lambda old, new: changes.append(
        (old.metadata.resource_version if old else None, new.metadata.resource_version if new else None)))
    tracker.add(PENDING_CLAIM)
    assert tracker.gather_allocated_state().allocated_devices == set()
    # PreBind's write, assumed before the informer has it.
    written = from_claim(PENDING_CLAIM).allocation(ALLOCATION_RESULT).resource_version("2").obj()
    assert tracker.assume(written) is None
    assert tracker.get(PENDING_CLAIM.metadata.namespace, PENDING_CLAIM.metadata.name) is written
    assert tracker.gather_allocated_state().allocated_devices == {INSTANCE_1}
    # The informer brings the same version: nothing changes.
    tracker.update(PENDING_CLAIM, from_claim(written).obj())
    assert tracker.get(PENDING_CLAIM.metadata.namespace, PENDING_CLAIM.metadata.name) is written
    # A newer one, deallocated: the device is free.
    tracker.update(written, from_claim(PENDING_CLAIM).resource_version("3").obj())
    assert tracker.gather_allocated_state().allocated_devices == set()
    assert changes == [(None, "1"), ("1", "2"), ("2", "3")]


def test_restore_drops_the_assumed_version() -> None:
    tracker = ClaimTracker([PENDING_CLAIM])
    written = from_claim(PENDING_CLAIM).allocation(ALLOCATION_RESULT).resource_version("2").obj()
    tracker.assume(written)
    tracker.restore(PENDING_CLAIM.metadata.namespace, PENDING_CLAIM.metadata.name)
    assert tracker.get(PENDING_CLAIM.metadata.namespace, PENDING_CLAIM.metadata.name) is PENDING_CLAIM
    assert tracker.gather_allocated_state().allocated_devices == set()


def test_assume_refuses_an_older_or_unknown_claim() -> None:
    tracker = ClaimTracker([from_claim(PENDING_CLAIM).resource_version("5").obj()])
    assert tracker.assume(from_claim(PENDING_CLAIM).resource_version("4").obj()) == \
        'ResourceClaim "default/my-pod-my-resource" is out of sync (stored: 5, assume: 4)'
    assert tracker.assume(make_claim("other").obj()) == 'could not find ResourceClaim "default/other"'


def test_deleting_an_allocated_claim_frees_its_devices() -> None:
    tracker = ClaimTracker([ALLOCATED_CLAIM])
    assert tracker.gather_allocated_state().allocated_devices == {INSTANCE_1}
    tracker.delete(ALLOCATED_CLAIM)
    assert tracker.gather_allocated_state().allocated_devices == set()
    assert tracker.list() == []


def test_in_flight_allocations_count_as_allocated() -> None:
    tracker = ClaimTracker([PENDING_CLAIM])
    tracker.signal_pending_allocation(PENDING_CLAIM.metadata.uid, ALLOCATED_CLAIM)
    assert tracker.gather_allocated_state().allocated_devices == {INSTANCE_1}
    # The tracker's own sets are not touched by what is in flight.
    assert tracker.allocated.ids == set()


def test_shared_devices_and_consumed_capacity() -> None:
    a = make_claim("a").allocation(ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY).obj()
    b = make_claim("b").allocation(ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY2).obj()
    c = make_claim("c").allocation(ALLOCATION_RESULT_WITH_SHARED_DEVICE).obj()
    admin = make_claim("admin").allocation(allocation(result(DRIVER, NODE_NAME, "instance-9", "req-1"))).obj()
    assert admin.status.allocation is not None
    admin.status.allocation.devices.results[0].admin_access = True
    tracker = ClaimTracker([a, b, c, admin])
    state = tracker.gather_allocated_state()
    assert state.allocated_devices == set()
    assert state.allocated_shared_device_ids == {(SHARED, "share-123"), (SHARED, "share-456")}
    assert (state.is_shared(SHARED), state.is_allocated(SHARED)) == (True, True)
    assert (state.is_shared(INSTANCE_1), state.is_allocated(INSTANCE_1)) == (False, False)
    assert {d: {k: str(v) for k, v in c.items()} for d, c in state.aggregated_capacity.items()} == \
        {SHARED: {"my-cap": "2"}}
    tracker.delete(b)
    tracker.delete(a)
    assert tracker.gather_allocated_state().aggregated_capacity == {}
    # Without the feature a shared allocation holds the whole device.
    assert ClaimTracker([a], consumable_capacity=False).gather_allocated_state().allocated_devices == {SHARED}


def test_a_gathered_state_keeps_its_consumed_capacity_while_the_tracker_changes() -> None:
    a = make_claim("a").allocation(ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY).obj()
    b = make_claim("b").allocation(ALLOCATION_RESULT_WITH_CONSUMED_CAPACITY2).obj()
    tracker = ClaimTracker([a])
    before = tracker.gather_allocated_state()
    want = {d: dict(c) for d, c in before.aggregated_capacity.items()}
    tracker.add(b)
    during = tracker.gather_allocated_state()
    tracker.delete(a)
    tracker.delete(b)
    # The tracker replaces a device's entry rather than change it: states gathered before keep theirs.
    assert before.aggregated_capacity == want
    assert {d: {k: str(v) for k, v in c.items()} for d, c in during.aggregated_capacity.items()} == \
        {SHARED: {"my-cap": "2"}}
    assert tracker.gather_allocated_state().aggregated_capacity == {}


def _extended_claim(name: str, owner_uid: str, *, controller: bool = True, annotated: bool = True,
                    rv: str = "1") -> ResourceClaim:
    from kubesched.model.objects import OwnerReference
    from kubesched.model.resource import EXTENDED_RESOURCE_CLAIM_ANNOTATION
    c = make_claim(name).resource_version(rv).obj()
    c.metadata.owner_references = [OwnerReference(kind="Pod", name="p", uid=owner_uid, api_version="v1",
                                                  controller=controller)]
    if annotated:
        c.metadata.annotations = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    return c


def test_extended_claims_are_found_by_their_controlling_pod() -> None:
    a = _extended_claim("a", "pod-1")
    tracker = ClaimTracker([a, _extended_claim("b", "pod-2"), _extended_claim("c", "pod-1", controller=False),
                            _extended_claim("d", "pod-1", annotated=False)])
    assert [c.metadata.name for c in tracker.extended_claims_of("pod-1")] == ["a"]
    # A newer version that drops the annotation leaves the index; the claim back, it returns.
    plain = _extended_claim("a", "pod-1", annotated=False, rv="2")
    tracker.add(plain)
    assert tracker.extended_claims_of("pod-1") == []
    tracker.add(_extended_claim("a", "pod-1", rv="3"))
    assert [c.metadata.resource_version for c in tracker.extended_claims_of("pod-1")] == ["3"]
    # What the index finds is the latest version, the assumed one included.
    assert tracker.assume(_extended_claim("a", "pod-1", rv="4")) is None
    assert [c.metadata.resource_version for c in tracker.extended_claims_of("pod-1")] == ["4"]
    tracker.delete(a)
    assert tracker.extended_claims_of("pod-1") == []
    assert [c.metadata.name for c in tracker.extended_claims_of("pod-2")] == ["b"]
