"""Outcomes kept per node (node_outcomes.py) never change a decision: a burst of pods with the same
claim spec, each taking a device in flight where it fits, with slices updated and allocations
dropped along the way, filtered by a plugin that keeps outcomes and by one that never does; both
must agree on every node's status and allocation, and the kept outcomes must be used."""

from __future__ import annotations

import random

import msgspec
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import ObjectMeta
from kubesched.model.resource import (
    CapacityRequirements,
    Counter,
    CounterSet,
    DeviceCapacity,
    DeviceClass,
    DeviceCounterConsumption,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.node_outcomes import Attempt, NodeOutcomes
from kubesched.plugins.dynamic_resources.plugin_state import DraState
from kubesched.plugins.dynamic_resources.state import ClaimAllocation
from tests.builders import make_node, make_pod
from tests.unit.plugins.dynamic_resources.dra_builders import from_claim, make_claim, make_slice
from tests.unit.plugins.dynamic_resources.plugin_harness import Case, setup
from tests.unit.scheduling_helpers import snapshot_with

CLASS = DeviceClass(ObjectMeta(name="gpu"))
DRIVER = "gpu.example.com"
NODES = [make_node(f"node-{i}").obj() for i in range(6)]


class NeverKept(NodeOutcomes):
    def attempt(self, *args: object, **kwargs: object) -> Attempt | None:
        return None


# The devices of the property below: plain ones; ones allocatable more than once, each with 4 of
# capacity "mem" (DRAConsumableCapacity); or partitions of 2 of a counter set of 4 (DRAPartitionableDevices).
KINDS = ("plain", "shared", "counters")


def slice_of(node: str, devices: int, generation: int = 1, kind: str = "plain") -> ResourceSlice:
    s = make_slice(node, DRIVER)
    for i in range(devices):
        s.device(f"dev-{i}")
    spec = s.obj().spec
    spec.pool.generation = generation
    for d in spec.devices:
        if kind == "shared":
            d.allow_multiple_allocations = True
            d.capacity = {"mem": DeviceCapacity(value="4")}
        elif kind == "counters":
            d.consumes_counters = [DeviceCounterConsumption(counter_set="set", counters={"c": Counter(value="2")})]
    if kind == "counters":
        spec.shared_counters = [CounterSet(name="set", counters={"c": Counter(value="4")})]
    return s.obj()


def claim(i: int, count: int, mem: str | None = None) -> ResourceClaim:
    c = make_claim(f"claim-{i}").request("gpu", count).obj()
    if mem is not None:
        exactly = c.spec.devices.requests[0].exactly
        assert exactly is not None
        exactly.capacity = CapacityRequirements({"mem": mem})
    return c


def _without_share_ids(allocation: object) -> tuple[object, list[str]]:
    """An allocation's builtins with its share IDs taken out, and the IDs."""
    found = msgspec.to_builtins(allocation)
    ids = [r.pop("shareID") for r in found["devices"]["results"] if "shareID" in r]
    return found, ids


def decide(ctx_plugin: object, i: int) -> tuple[list[tuple[str, str | None]], dict[str, list[object]]]:
    """Each node's status and allocations (share IDs aside: each must be new, which is checked)."""
    pod = PodInfo(make_pod(f"pod-{i}").uid(f"pod-uid-{i}").resource_claim("gpu", claim=f"claim-{i}").obj())
    state = CycleState()
    _, status = ctx_plugin.pre_filter(state, pod, snapshot_with(list(NODES)))  # type: ignore[attr-defined]
    assert status is None
    statuses = []
    for n in NODES:
        s = ctx_plugin.filter(state, pod, NodeInfo(n))  # type: ignore[attr-defined]
        statuses.append((n.metadata.name, None if s is None else s.message()))
    dra: DraState = state.read("DynamicResources")
    allocations: dict[str, list[object]] = {}
    for k, v in dra.node_allocations.items():
        for a in v.results:
            found, ids = _without_share_ids(a)
            allocations.setdefault(k, []).append(found)
            assert not set(ids) & SEEN_SHARE_IDS, f"pod {i} on {k}: a share ID used before"
            SEEN_SHARE_IDS.update(ids)
    return statuses, allocations


SEEN_SHARE_IDS: set[str] = set()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [pytest.param(s, id=f"seed-{s}") for s in range(12)])
def test_kept_outcomes_decide_as_the_allocator_does(seed: int, kind: str) -> None:
    rng = random.Random(seed)
    slices = [slice_of(n.metadata.name, rng.randint(1, 3), kind=kind) for n in NODES]
    claims = [claim(i, rng.choice([1, 1, 1, 2]), rng.choice(["1", "2", "3"]) if kind == "shared" else None)
              for i in range(40)]
    kept = setup(Case(pod=make_pod("x").obj(), claims=claims, classes=[CLASS], slices=slices))
    fresh = setup(Case(pod=make_pod("x").obj(), claims=claims, classes=[CLASS], slices=slices))
    fresh.plugin.outcomes = NeverKept()
    in_flight: dict[int, ResourceClaim] = {}
    written_claims: dict[int, ResourceClaim] = {}
    version = 100
    for i, c in enumerate(claims):
        got, want = decide(kept.plugin, i), decide(fresh.plugin, i)
        assert got == want, f"pod {i}"
        fits = [name for name, message in got[0] if message is None]
        if fits:
            # The pod's allocation goes in flight on the first node that fits, for both.
            node = fits[0]
            state = CycleState()
            pod = PodInfo(make_pod(f"pod-{i}").uid(f"pod-uid-{i}").resource_claim("gpu", claim=f"claim-{i}").obj())
            kept.plugin.pre_filter(state, pod, snapshot_with(list(NODES)))
            dra: DraState = state.read("DynamicResources")
            kept.plugin.filter(state, pod, NodeInfo(next(n for n in NODES if n.metadata.name == node)))
            allocated = msgspec.structs.replace(c, status=msgspec.structs.replace(
                c.status, allocation=dra.node_allocations[node].results[0]))
            for ctx in (kept, fresh):
                ctx.tracker.signal_pending_allocation(c.metadata.uid, allocated)
            in_flight[i] = allocated
        roll = rng.random()
        if roll < 0.15:
            # A driver republishes a node's slice, with more or fewer devices.
            j = rng.randrange(len(NODES))
            new = slice_of(NODES[j].metadata.name, rng.randint(1, 4), generation=2 + i, kind=kind)
            for ctx in (kept, fresh):
                ctx.plugin.dra.slices.update_slice(slices[j], new)
            slices[j] = new
        elif roll < 0.3 and i:
            # An earlier pod's claim is released.
            k = rng.randrange(i)
            for ctx in (kept, fresh):
                ctx.tracker.maybe_remove_pending_allocation(claims[k].metadata.uid, force=True)
            in_flight.pop(k, None)
        elif roll < 0.55 and in_flight:
            # PreBind wrote an allocation: the informer brings it and it leaves the in-flight set.
            k = rng.choice(sorted(in_flight))
            version += 1
            written = from_claim(in_flight.pop(k)).resource_version(str(version)).obj()
            for ctx in (kept, fresh):
                ctx.tracker.add(written)
                ctx.tracker.maybe_remove_pending_allocation(written.metadata.uid, force=True)
            written_claims[k] = written
        elif roll < 0.7 and written_claims:
            # An allocated claim is deallocated (its pod gone).
            k = rng.choice(sorted(written_claims))
            version += 1
            freed = from_claim(written_claims.pop(k)).resource_version(str(version)).obj()
            freed.status.allocation = None
            for ctx in (kept, fresh):
                ctx.tracker.add(freed)
    assert kept.plugin.outcomes.hits > 0


def test_an_attempt_with_a_slice_for_all_nodes_keeps_nothing() -> None:
    shared = slice_of("node-0", 1)
    shared.spec.node_name, shared.spec.all_nodes = None, True
    ctx = setup(Case(pod=make_pod("x").obj(), claims=[claim(0, 1)], classes=[CLASS], slices=[shared]))
    decide(ctx.plugin, 0)
    assert len(ctx.plugin.outcomes) == 0


@pytest.mark.parametrize("kind", ["shared", "counters"])
def test_devices_with_counters_or_shared_use_are_kept(kind: str) -> None:
    outcomes = NodeOutcomes()
    attempt = outcomes.attempt(0, {"node-0": [slice_of("node-0", 1, kind=kind)]}, False, {"gpu": CLASS}, setup(
        Case(pod=make_pod("x").obj())).tracker.gather_allocated_state())
    assert attempt is not None
    attempt.put("node-0", [claim(0, 1)], [ClaimAllocation([], None)])
    assert len(outcomes) == 1


def test_a_kept_shared_allocation_gets_new_share_ids_for_each_pod() -> None:
    ctx = setup(Case(pod=make_pod("x").obj(), claims=[claim(i, 1, "1") for i in range(3)], classes=[CLASS],
                     slices=[slice_of(n.metadata.name, 1, kind="shared") for n in NODES]))
    ids = []
    for i in range(3):
        pod = PodInfo(make_pod(f"pod-{i}").uid(f"pod-uid-{i}").resource_claim("gpu", claim=f"claim-{i}").obj())
        state = CycleState()
        ctx.plugin.pre_filter(state, pod, snapshot_with(list(NODES)))
        assert ctx.plugin.filter(state, pod, NodeInfo(NODES[0])) is None
        dra: DraState = state.read("DynamicResources")
        ids.append(dra.node_allocations["node-0"].results[0].devices.results[0].share_id)
    assert ctx.plugin.outcomes.hits == 2
    assert None not in ids
    assert len(set(ids)) == 3


def test_a_slice_change_lets_go_of_everything_kept() -> None:
    ctx = setup(Case(pod=make_pod("x").obj(), claims=[claim(0, 1), claim(1, 1)], classes=[CLASS],
                     slices=[slice_of(n.metadata.name, 2) for n in NODES]))
    decide(ctx.plugin, 0)
    assert len(ctx.plugin.outcomes) == len(NODES)
    ctx.plugin.dra.slices.add_slice(slice_of("node-new", 1))
    decide(ctx.plugin, 1)
    assert len(ctx.plugin.outcomes) == len(NODES)  # only what the second attempt found
