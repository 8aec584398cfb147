"""What the allocator found on a node, kept for the next pod whose claims are the same.

kube-scheduler runs the structured allocator for every pod on every node it filters. Pods made
from one template ask for the same devices, and between two of them at most a few nodes change:
the one the previous pod took a device on, those whose slices changed. So an outcome (the
allocations, or that none fits) is kept per node and per set of claim specs, and reused as long as
everything the allocator read for that node is the same:

- the claims' specs (byte for byte, encoded), and the DeviceClasses they name (equal);
- the node's slices (the same objects: an update or a taint rule makes a new one) and no slice
  change anywhere since (the slice tracker's version: pool completeness reads other slices too);
- what is taken of the pools of the node's slices: the tracker's count of changes to each pool's
  allocated and in-flight devices (an allocation come or gone there, in flight or written).

Only the plain case is kept: every slice is local to one node (none shared, none selecting nodes
per device), and no device of the node consumes counters or can be allocated more than once (those
read state beyond which devices are taken). Otherwise the allocator simply runs, as upstream's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from kubesched.model.resource import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.plugins.dynamic_resources.state import AllocatedState, ClaimAllocation

MAX_KEPT = 50_000

_encode = msgspec.json.Encoder().encode
_Key = tuple[int, str, tuple[bytes, ...]]


@dataclass(slots=True)
class _Kept:
    slices: tuple[ResourceSlice, ...]
    classes: tuple[DeviceClass | None, ...]
    in_use: tuple[int, ...]  # per slice's pool, its mark
    found: list[ClaimAllocation] | None


@dataclass(slots=True, frozen=True)
class _SliceFacts:
    obj: ResourceSlice
    # No shared counters, no device consuming counters or allocatable more than once.
    plain: bool


@dataclass(slots=True, frozen=True)
class _NodeFacts:
    """A node's slices under one slice version: found once, asked by every pod's filter."""

    slices: tuple[ResourceSlice, ...]
    pools: tuple[tuple[str, str], ...]
    plain: bool


class NodeOutcomes:
    """The plugin's memory of outcomes; one `Attempt` per scheduling attempt reads and fills it."""

    def __init__(self, max_kept: int = MAX_KEPT) -> None:
        self._max = max_kept
        self._kept: dict[_Key, _Kept] = {}
        self.hits = 0
        self.misses = 0
        self._slice_version = -1
        # What each slice object is, found once (kept beside it so the id stays its): every node of
        # every pod's filter asks.
        self._facts: dict[int, _SliceFacts] = {}
        self._nodes: dict[str, _NodeFacts] = {}

    def facts(self, s: ResourceSlice) -> _SliceFacts:
        found = self._facts.get(id(s))
        if found is None or found.obj is not s:
            if len(self._facts) >= self._max:
                self._facts.clear()
            spec = s.spec
            plain = not spec.shared_counters and not any(d.consumes_counters or d.allow_multiple_allocations
                                                         for d in spec.devices)
            found = self._facts[id(s)] = _SliceFacts(s, plain)
        return found

    def node_facts(self, node: str, slices_on_node: dict[str, list[ResourceSlice]]) -> _NodeFacts:
        """Valid for the version the last attempt started under (each new version clears them)."""
        found = self._nodes.get(node)
        if found is None:
            slices = tuple(slices_on_node.get(node, ()))
            found = self._nodes[node] = _NodeFacts(
                slices, tuple((s.spec.driver, s.spec.pool.name) for s in slices),
                all(self.facts(s).plain for s in slices))
        return found

    def attempt(self, slice_version: int, slices_on_node: dict[str, list[ResourceSlice]], shared: bool,
                classes: dict[str, DeviceClass], allocated: AllocatedState) -> Attempt | None:
        """None when the attempt is not the plain case (a shared or per-device slice)."""
        if slice_version != self._slice_version:
            # Nothing kept under another version can match again: let go of it and its slices.
            self._kept.clear()
            self._nodes.clear()
            self._slice_version = slice_version
        if shared or allocated.pool_marks is None:
            return None
        return Attempt(self, slice_version, slices_on_node, classes, allocated)

    def _get(self, key: _Key) -> _Kept | None:
        return self._kept.get(key)

    def _put(self, key: _Key, kept: _Kept) -> None:
        if len(self._kept) >= self._max:
            self._kept.clear()
        self._kept[key] = kept

    def __len__(self) -> int:
        return len(self._kept)


MISS = object()


class Attempt:
    def __init__(self, outcomes: NodeOutcomes, slice_version: int, slices_on_node: dict[str, list[ResourceSlice]],
                 classes: dict[str, DeviceClass], allocated: AllocatedState) -> None:
        self._outcomes = outcomes
        self._version = slice_version
        self._slices_on_node = slices_on_node
        self._classes = classes
        assert allocated.pool_marks is not None
        self._marks = allocated.pool_marks
        self._specs: dict[int, tuple[ResourceClaim, bytes]] = {}
        # What depends on the claims alone, not on the node: found once per attempt.
        self._claim_views: dict[tuple[int, ...], tuple[tuple[ResourceClaim, ...], tuple[bytes, ...],
                                                       tuple[DeviceClass | None, ...]]] = {}

    def _spec(self, claim: ResourceClaim) -> bytes:
        found = self._specs.get(id(claim))
        if found is None or found[0] is not claim:
            found = self._specs[id(claim)] = (claim, _encode(claim.spec))
        return found[1]

    def _claims_view(self, claims: Sequence[ResourceClaim]) -> tuple[tuple[bytes, ...], tuple[DeviceClass | None, ...]]:
        given = tuple(claims)
        ids = tuple(map(id, given))
        found = self._claim_views.get(ids)
        # Tuples compare items by identity first: the same claims cost no more than `is`, and
        # claims equal in value (an id reused) have the same view anyway.
        if found is None or found[0] != given:
            names = sorted({r.exactly.device_class_name for c in claims for r in c.spec.devices.requests
                            if r.exactly is not None} |
                           {sub.device_class_name for c in claims for r in c.spec.devices.requests
                            for sub in r.first_available})
            found = self._claim_views[ids] = (given, tuple(self._spec(c) for c in claims),
                                              tuple(self._classes.get(n) for n in names))
        return found[1], found[2]

    def _view(self, node: str, claims: Sequence[ResourceClaim]) -> tuple[_Key, _Kept] | None:
        facts = self._outcomes.node_facts(node, self._slices_on_node)
        if not facts.plain:
            return None
        specs, classes = self._claims_view(claims)
        marks = self._marks
        in_use = tuple([marks.get(p, 0) for p in facts.pools])
        key = (self._version, node, specs)
        return key, _Kept(facts.slices, classes, in_use, None)

    def get(self, node: str, claims: Sequence[ResourceClaim]) -> list[ClaimAllocation] | object | None:
        """The kept outcome, or MISS."""
        view = self._view(node, claims)
        if view is None:
            return MISS
        key, now = view
        kept = self._outcomes._get(key)
        if kept is None or (kept.slices is not now.slices and (
                len(kept.slices) != len(now.slices)
                or any(a is not b for a, b in zip(kept.slices, now.slices, strict=True)))) or \
                kept.classes != now.classes or \
                kept.in_use != now.in_use:
            self._outcomes.misses += 1
            return MISS
        self._outcomes.hits += 1
        return kept.found

    def put(self, node: str, claims: Sequence[ResourceClaim], found: list[ClaimAllocation] | None) -> None:
        view = self._view(node, claims)
        if view is None:
            return
        key, now = view
        now.found = found
        self._outcomes._put(key, now)
