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
  allocated and in-flight devices (an allocation come or gone there, in flight or written, a
  device's share and the capacity it consumed included). The shared counters of partitionable
  devices and the consumable capacity of devices allocatable more than once are read from those
  allocations of the node's pools, so the count covers them too.

Only attempts whose slices are all local to one node are kept (none shared, none selecting nodes
per device). Otherwise the allocator simply runs, as upstream's.

A kept outcome with shared devices is reused with the share IDs of the pod that found it: whoever
writes it out gives each share a new ID (plugin_state.NodeAllocation), as upstream's allocator
makes one per allocation."""

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
class _NodeFacts:
    """A node's slices under one slice version: found once, asked by every pod's filter."""

    slices: tuple[ResourceSlice, ...]
    pools: tuple[tuple[str, str], ...]


class NodeOutcomes:
    """The plugin's memory of outcomes; one `Attempt` per scheduling attempt reads and fills it."""

    def __init__(self, max_kept: int = MAX_KEPT) -> None:
        self._max = max_kept
        self._kept: dict[_Key, _Kept] = {}
        self.hits = 0
        self.misses = 0
        self._slice_version = -1
        self._nodes: dict[str, _NodeFacts] = {}

    def node_facts(self, node: str, slices_on_node: dict[str, list[ResourceSlice]]) -> _NodeFacts:
        """Valid for the version the last attempt started under (each new version clears them)."""
        found = self._nodes.get(node)
        if found is None:
            slices = tuple(slices_on_node.get(node, ()))
            found = self._nodes[node] = _NodeFacts(slices, tuple((s.spec.driver, s.spec.pool.name) for s in slices))
        return found

    def attempt(self, slice_version: int, slices_on_node: dict[str, list[ResourceSlice]], shared: bool,
                classes: dict[str, DeviceClass], allocated: AllocatedState) -> Attempt | None:
        """None when some slice is not local to one node (shared, or selecting nodes per device)."""
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

    def _view(self, node: str, claims: Sequence[ResourceClaim]) -> tuple[_Key, _Kept]:
        facts = self._outcomes.node_facts(node, self._slices_on_node)
        specs, classes = self._claims_view(claims)
        marks = self._marks
        in_use = tuple([marks.get(p, 0) for p in facts.pools])
        key = (self._version, node, specs)
        return key, _Kept(facts.slices, classes, in_use, None)

    def get(self, node: str, claims: Sequence[ResourceClaim]) -> list[ClaimAllocation] | object | None:
        """The kept outcome, or MISS."""
        key, now = self._view(node, claims)
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
        key, now = self._view(node, claims)
        now.found = found
        self._outcomes._put(key, now)
