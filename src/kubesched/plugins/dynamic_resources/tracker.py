"""The claims as the scheduler sees them (kube-scheduler's claimTracker, dra_manager.go, over an
assume cache and allocateddevices.go): the informer's ResourceClaims, each possibly shadowed by the
version the scheduler itself wrote (assumed until the informer brings that version or a newer one),
the allocations decided in Reserve but not yet written (in flight, so two pods of a burst never take
one device), and the devices every allocated claim holds, kept up to date as claims change.

    informer add/update (newer resourceVersion) ──▶ latest = api = it
    assume(written claim, version ≥ latest's)   ──▶ latest = it, api unchanged
    restore                                      ──▶ latest = api
    informer delete                              ──▶ gone

Each change of a claim's latest version is reported to the listeners as (old, new) — new None for a
delete, old None for an add — which is what kube-scheduler's queue sees as ResourceClaim events.
The allocated devices follow the same changes: added when a claim gains an allocation, removed when
it loses it or is deleted (an allocation never changes in place).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from kubesched.model.quantity import parse_decimal
from kubesched.model.resource import EXTENDED_RESOURCE_CLAIM_ANNOTATION, AllocationResult, ResourceClaim
from kubesched.plugins.dynamic_resources.capacity import ConsumedCapacity
from kubesched.plugins.dynamic_resources.pools import DeviceID
from kubesched.plugins.dynamic_resources.state import AllocatedState

# (old latest version or None, new latest version or None)
ClaimListener = Callable[[ResourceClaim | None, ResourceClaim | None], None]


def claim_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _key_of(claim: ResourceClaim) -> str:
    return claim_key(claim.metadata.namespace, claim.metadata.name)


def _version(claim: ResourceClaim) -> int:
    try:
        return int(claim.metadata.resource_version or 0)
    except ValueError:
        return 0


@dataclass(slots=True)
class _Entry:
    latest: ResourceClaim
    api: ResourceClaim


@dataclass(slots=True)
class _InFlight:
    claim: ResourceClaim
    contribution: _Contribution
    sharers: int = 1


@dataclass(slots=True)
class _Contribution:
    """What one allocated claim adds to the allocated state (foreachAllocatedDevice)."""

    dedicated: list[DeviceID] = field(default_factory=list)
    shared: list[tuple[DeviceID, str]] = field(default_factory=list)
    capacity: list[tuple[DeviceID, ConsumedCapacity]] = field(default_factory=list)


def contribution(allocation: AllocationResult | None, consumable_capacity: bool) -> _Contribution:
    """The devices an allocation holds: admin-access results hold none; with consumable capacity, a
    result with a share ID holds a share (and the capacity it consumed), others (and every result
    without the feature) the whole device."""
    out = _Contribution()
    if allocation is None:
        return out
    for r in allocation.devices.results:
        if r.admin_access:
            continue
        device = DeviceID(r.driver, r.pool, r.device)
        if consumable_capacity and r.share_id is not None:
            out.shared.append((device, r.share_id))
            if r.consumed_capacity:
                out.capacity.append((device, {k: parse_decimal(v) for k, v in r.consumed_capacity.items()}))
            continue
        out.dedicated.append(device)
    return out


class AllocatedDevices:
    """allocatedDevices: the devices of every allocated claim (sets, as upstream keeps them)."""

    def __init__(self) -> None:
        self.ids: set[DeviceID] = set()
        self.share_ids: set[tuple[DeviceID, str]] = set()
        self.capacities: dict[DeviceID, ConsumedCapacity] = {}
        # Per pool, how many times what is taken of it changed (AllocatedState.pool_marks): by
        # these allocations, and by those in flight (the tracker touches for them).
        self.generations: dict[tuple[str, str], int] = {}

    def touch(self, c: _Contribution) -> None:
        pools = {(d.driver, d.pool) for d in c.dedicated} | {(d.driver, d.pool) for d, _ in c.shared} | \
            {(d.driver, d.pool) for d, _ in c.capacity}
        for pool in pools:
            self.generations[pool] = self.generations.get(pool, 0) + 1

    def add(self, c: _Contribution) -> None:
        self.touch(c)
        self.ids.update(c.dedicated)
        self.share_ids.update(c.shared)
        for device, consumed in c.capacity:
            _insert(self.capacities, device, consumed)

    def remove(self, c: _Contribution) -> None:
        self.touch(c)
        self.ids.difference_update(c.dedicated)
        self.share_ids.difference_update(c.shared)
        for device, consumed in c.capacity:
            current = self.capacities.get(device)
            if current is None:
                continue
            current = dict(current)
            for name, amount in consumed.items():
                if name in current:
                    current[name] -= amount
            if all(v == 0 for v in current.values()):
                del self.capacities[device]
            else:
                self.capacities[device] = current


def _insert(capacities: dict[DeviceID, ConsumedCapacity], device: DeviceID, consumed: ConsumedCapacity) -> None:
    """Adds what a share consumes to the device's entry. The entry is replaced, never changed in
    place: an attempt's AllocatedState shares the entries of the tracker's."""
    current = dict(capacities.get(device, {}))
    for name, amount in consumed.items():
        current[name] = current.get(name, Decimal(0)) + amount
    capacities[device] = current


class ClaimTracker:
    def __init__(self, claims: Iterable[ResourceClaim] = (), *, consumable_capacity: bool = True) -> None:
        self._entries: dict[str, _Entry] = {}
        self._in_flight: dict[str, _InFlight] = {}
        self._consumable_capacity = consumable_capacity
        self.allocated = AllocatedDevices()
        self.listeners: list[ClaimListener] = []
        # Extended-resource claims by the uid of the pod that controls them (their keys, in order):
        # every attempt of a pod asking for extended resources looks its own up.
        self._extended: dict[str, dict[str, None]] = {}
        for claim in claims:
            self.add(claim)

    # --- the informer's side ---------------------------------------------------------------------

    def add(self, claim: ResourceClaim) -> None:
        key = _key_of(claim)
        entry = self._entries.get(key)
        if entry is not None and _version(claim) <= _version(entry.latest):
            # Not newer than what is known (our own write, assumed): nothing changes.
            return
        old = entry.latest if entry is not None else None
        self._entries[key] = _Entry(claim, claim)
        self._changed(old, claim)

    def update(self, old: ResourceClaim, new: ResourceClaim) -> None:
        self.add(new)

    def delete(self, claim: ResourceClaim) -> None:
        entry = self._entries.pop(_key_of(claim), None)
        self._changed(entry.latest if entry is not None else claim, None)

    # --- reads -------------------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> ResourceClaim | None:
        entry = self._entries.get(claim_key(namespace, name))
        return entry.latest if entry is not None else None

    def list(self) -> list[ResourceClaim]:
        return [e.latest for e in self._entries.values()]

    def extended_claims_of(self, pod_uid: str) -> Sequence[ResourceClaim]:
        """The extended-resource claims a pod of this uid controls: those of list() that
        findExtendedResourceClaim could match for it, without reading every claim."""
        keys = self._extended.get(pod_uid)
        if not keys:
            return []
        return [e.latest for e in (self._entries.get(k) for k in keys) if e is not None]

    def __len__(self) -> int:
        return len(self._entries)

    # --- the assume cache --------------------------------------------------------------------------

    def assume(self, claim: ResourceClaim) -> str | None:
        """AssumeClaimAfterAPICall: the claim as the apiserver answered our write shadows the
        informer's until the informer catches up. The reason when it cannot (None: assumed)."""
        key = _key_of(claim)
        entry = self._entries.get(key)
        if entry is None:
            return f'could not find ResourceClaim "{key}"'
        stored, new = _version(entry.latest), _version(claim)
        if new < stored:
            return f'ResourceClaim "{key}" is out of sync (stored: {stored}, assume: {new})'
        old = entry.latest
        entry.latest = claim
        self._changed(old, claim)
        return None

    def restore(self, namespace: str, name: str) -> None:
        """AssumedClaimRestore: back to the informer's version."""
        entry = self._entries.get(claim_key(namespace, name))
        if entry is None or entry.latest is entry.api:
            return
        old = entry.latest
        entry.latest = entry.api
        self._changed(old, entry.api)

    # --- in-flight allocations ---------------------------------------------------------------------

    def pending_allocation(self, uid: str) -> AllocationResult | None:
        found = self._in_flight.get(uid)
        return found.claim.status.allocation if found is not None else None

    def signal_pending_allocation(self, uid: str, allocated: ResourceClaim) -> None:
        """SignalClaimPendingAllocation: the claim, with the allocation Reserve chose, is in flight
        until PreBind has written it or Unreserve drops it. A second pod sharing it counts as one
        more sharer; a claim already allocated (a stale cycle state) is not put in flight."""
        found = self._in_flight.get(uid)
        if found is not None:
            found.sharers += 1
            return
        current = self.get(allocated.metadata.namespace, allocated.metadata.name)
        if current is not None and current.metadata.uid == uid and current.status.allocation is not None:
            return
        flight = self._in_flight[uid] = _InFlight(allocated, contribution(allocated.status.allocation,
                                                                           self._consumable_capacity))
        self.allocated.touch(flight.contribution)

    def maybe_remove_pending_allocation(self, uid: str, force: bool) -> bool:
        """MaybeRemoveClaimPendingAllocation: whether the claim left the in-flight set (its last
        sharer gone, or `force`)."""
        found = self._in_flight.get(uid)
        if found is None:
            return False
        if force or found.sharers == 1:
            del self._in_flight[uid]
            self.allocated.touch(found.contribution)
            return True
        found.sharers -= 1
        return False

    def in_flight(self) -> Sequence[ResourceClaim]:
        return [f.claim for f in self._in_flight.values()]

    def gather_allocated_state(self) -> AllocatedState:
        """GatherAllocatedState: the devices of the allocated claims and of those in flight."""
        a = self.allocated
        # The entries are shared, not copied (one per shared device in the cluster, for every
        # attempt): both sides replace an entry rather than change it (_insert).
        state = AllocatedState(set(a.ids), set(a.share_ids), dict(a.capacities), dict(a.generations))
        for f in self._in_flight.values():
            c = f.contribution
            state.allocated_devices.update(c.dedicated)
            state.allocated_shared_device_ids.update(c.shared)
            for device, consumed in c.capacity:
                _insert(state.aggregated_capacity, device, consumed)
        return state

    # --- changes -----------------------------------------------------------------------------------

    def _changed(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        if old is not None or new is not None:
            self._index_extended(old, new)
        had = old is not None and old.status.allocation is not None
        has = new is not None and new.status.allocation is not None
        if new is None:
            if had:
                assert old is not None
                self.allocated.remove(contribution(old.status.allocation, self._consumable_capacity))
        elif not had and has:
            self.allocated.add(contribution(new.status.allocation, self._consumable_capacity))
        elif had and not has:
            assert old is not None
            self.allocated.remove(contribution(old.status.allocation, self._consumable_capacity))
        for listener in self.listeners:
            listener(old, new)

    def _index_extended(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        before, after = _controlling_pods(old), _controlling_pods(new)
        if before == after:
            return
        either = new if new is not None else old
        assert either is not None
        key = _key_of(either)
        for uid in before:
            keys = self._extended.get(uid)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self._extended[uid]
        for uid in after:
            self._extended.setdefault(uid, {})[key] = None


def _controlling_pods(claim: ResourceClaim | None) -> tuple[str, ...]:
    """The uids of the controllers of an extended-resource claim (findExtendedResourceClaim checks
    the annotation and a controller owner reference)."""
    if claim is None or claim.metadata.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
        return ()
    return tuple(r.uid for r in claim.metadata.owner_references if r.controller)
