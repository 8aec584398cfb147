"""The harness of upstream's TestPlugin (dynamicresources_test.go testPlugin, setup, verify): one
pod through PreEnqueue, PreFilter, Filter per node, Score and NormalizeScore when several nodes
fit, Reserve, then PreBindPreFlight and PreBind (or Unreserve), or PostFilter when no node fits;
after each step the claims in a fake apiserver, the claims the tracker holds as assumed and those
in flight are compared with what the case expects.

Compared as upstream compares them: statuses by code and message, claims without uid and
resourceVersion, allocation timestamps as set or not, results without their device and shareID.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle, WriteFailure
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Node, Pod, PodExtendedResourceClaimStatus
from kubesched.model.resource import DeviceClass, ResourceClaim, ResourceClaimStatus, ResourceSlice
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.dynamic_resources.plugin import DynamicResources
from kubesched.plugins.dynamic_resources.state import Features
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker
from tests.unit.plugins.dynamic_resources.dra_builders import WORKER_NODE, copy
from tests.unit.scheduling_helpers import snapshot_with

ClaimChange = Callable[[ResourceClaim], ResourceClaim]
BASE_TIME = dt.datetime(2026, 6, 1, 12, 0, 0, tzinfo=dt.UTC)


@dataclass
class Result:
    status: Status | None = None
    # Applied to every claim (it checks the name) before comparing with the apiserver's.
    changes: ClaimChange | None = None
    assumed_claim: ResourceClaim | None = None
    in_flight_claims: list[ResourceClaim] = field(default_factory=list)
    # Claims the step created in, or deleted from, the apiserver.
    added: list[ResourceClaim] = field(default_factory=list)
    removed: list[ResourceClaim] = field(default_factory=list)


@dataclass
class Want:
    pre_enqueue: Result = field(default_factory=Result)
    pre_filter: Result = field(default_factory=Result)
    filter: dict[str, Result] = field(default_factory=dict)
    score_result: dict[str, int] = field(default_factory=dict)
    normalize_score_result: list[tuple[str, int]] | None = None
    reserve: Result = field(default_factory=Result)
    unreserve: Result = field(default_factory=Result)
    pre_bind_pre_flight_status: Status | None = None
    pre_bind: Result = field(default_factory=Result)
    post_filter: Result = field(default_factory=Result)
    unreserve_after_bind_failure: Result | None = None
    unreserve_before_pre_bind: Result | None = None
    # What PreBind wrote into the pod's status.extendedResourceClaimStatus, if anything.
    pod_extended_status: PodExtendedResourceClaimStatus | None = None


@dataclass
class Prepare:
    """Changes made in the apiserver before a step (a driver or another scheduler at work)."""

    pre_bind: ClaimChange | None = None


@dataclass
class Case:
    pod: Pod
    claims: Sequence[ResourceClaim] = ()
    classes: Sequence[DeviceClass] = ()
    slices: Sequence[ResourceSlice] = ()
    nodes: Sequence[Node] = (WORKER_NODE,)
    in_flight_claims: Sequence[ResourceClaim] = ()
    want: Want = field(default_factory=Want)
    prepare: Prepare = field(default_factory=Prepare)
    features: Features = field(default_factory=Features)
    filter_timeout: float = 10.0
    binding_timeout: float = 600.0
    # verb -> the message a write of that verb fails with (upstream's reactors).
    fail: dict[str, str] = field(default_factory=dict)
    # Every read of the monotonic clock moves it on by this much (a filter timeout that expires).
    tick: float = 0.0


class FakeApi:
    """The apiserver's claims, with resourceVersions that a write must match; a created claim gets
    its name from generateName and a counter, as upstream's fake clientset names it, and reaches
    `informer` (the tracker) at once. Pod status patches are kept in `pod_statuses`."""

    def __init__(self, claims: Sequence[ResourceClaim], fail: dict[str, str],
                 informer: Callable[[ResourceClaim], None] = lambda c: None,
                 informer_delete: Callable[[ResourceClaim], None] = lambda c: None) -> None:
        self.objects = {_key(c): copy(c) for c in claims}
        self.fail = fail
        self._rv = 100
        self._generated = 0
        self.informer = informer
        self.informer_delete = informer_delete
        self.pod_statuses: dict[str, PodExtendedResourceClaimStatus] = {}

    def _bump(self, claim: ResourceClaim) -> ResourceClaim:
        self._rv += 1
        claim.metadata.resource_version = str(self._rv)
        self.objects[_key(claim)] = claim
        return copy(claim)

    def _current(self, claim: ResourceClaim, verb: str) -> ResourceClaim | WriteFailure:
        if verb in self.fail:
            return WriteFailure(400, self.fail[verb])
        stored = self.objects.get(_key(claim))
        if stored is None:
            return WriteFailure(404, f'resourceclaims.resource.k8s.io "{claim.metadata.name}" not found')
        return stored

    def change(self, fn: ClaimChange) -> None:
        for claim in list(self.objects.values()):
            changed = fn(copy(claim))
            if _comparable(changed) != _comparable(claim):
                self._bump(changed)

    async def get(self, namespace: str, name: str) -> ResourceClaim | WriteFailure:
        stored = self.objects.get(f"{namespace}/{name}")
        return copy(stored) if stored is not None else WriteFailure(404, "not found")

    async def update(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        stored = self._current(claim, "update")
        if isinstance(stored, WriteFailure):
            return stored
        if stored.metadata.resource_version != claim.metadata.resource_version:
            return _conflict(claim)
        new = copy(stored)
        new.metadata.finalizers = list(claim.metadata.finalizers)
        return self._bump(new)

    async def update_status(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        stored = self._current(claim, "update_status")
        if isinstance(stored, WriteFailure):
            return stored
        if stored.metadata.resource_version != claim.metadata.resource_version:
            return _conflict(claim)
        new = copy(stored)
        new.status.allocation = copy(claim.status.allocation) if claim.status.allocation is not None else None
        new.status.reserved_for = list(claim.status.reserved_for)
        if not claim.status.devices:
            new.status.devices = []
        return self._bump(new)

    async def unreserve(self, claim: ResourceClaim, uid: str) -> ResourceClaim | WriteFailure:
        stored = self._current(claim, "unreserve")
        if isinstance(stored, WriteFailure):
            return stored
        new = copy(stored)
        new.status.reserved_for = [r for r in new.status.reserved_for if r.uid != uid]
        return self._bump(new)


    async def create(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        if "create" in self.fail:
            return WriteFailure(400, self.fail["create"])
        new = copy(claim)
        new.metadata.name = f"{claim.metadata.generate_name}{self._generated}"
        new.metadata.uid = f"uid-{new.metadata.name}"
        new.status = ResourceClaimStatus()
        self._generated += 1
        made = self._bump(new)
        self.informer(copy(made))
        return made

    async def delete(self, namespace: str, name: str) -> WriteFailure | None:
        if "delete" in self.fail:
            return WriteFailure(400, self.fail["delete"])
        gone = self.objects.pop(f"{namespace}/{name}", None)
        if gone is not None:
            self.informer_delete(copy(gone))
        return None

    async def set_extended_resource_claim_status(self, pod: Pod,
                                                 status: PodExtendedResourceClaimStatus) -> WriteFailure | None:
        if "patch" in self.fail:
            return WriteFailure(400, self.fail["patch"])
        self.pod_statuses[f"{pod.metadata.namespace}/{pod.metadata.name}"] = copy(status)
        return None


def _conflict(claim: ResourceClaim) -> WriteFailure:
    return WriteFailure(409, f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io '
                             f'"{claim.metadata.name}": the object has been modified; please apply your changes to '
                             "the latest version and try again")


def _key(claim: ResourceClaim) -> str:
    return f"{claim.metadata.namespace}/{claim.metadata.name}"


def _comparable(claim: ResourceClaim) -> Any:
    """The claim as upstream's cmp options see it."""
    d = msgspec.to_builtins(msgspec.json.decode(msgspec.json.encode(claim)))
    meta = d.get("metadata", {})
    meta.pop("uid", None)
    meta.pop("resourceVersion", None)
    allocation = d.get("status", {}).get("allocation")
    if allocation is not None:
        if "allocationTimestamp" in allocation:
            allocation["allocationTimestamp"] = "set"
        for r in allocation.get("devices", {}).get("results", []):
            r.pop("device", None)
            r.pop("shareID", None)
    return d


def comparable_claims(claims: Sequence[ResourceClaim]) -> list[Any]:
    return [_comparable(c) for c in sorted(claims, key=_key)]


class FakeClock:
    def __init__(self, tick: float) -> None:
        self.t = 0.0
        self.tick = tick

    def monotonic(self) -> float:
        self.t += self.tick
        return self.t

    def now(self) -> dt.datetime:
        return BASE_TIME + dt.timedelta(seconds=self.t)

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


@dataclass
class Context:
    case: Case
    api: FakeApi
    tracker: ClaimTracker
    plugin: DynamicResources
    spawned: list[Coroutine[Any, Any, Any]]

    def run_spawned(self) -> None:
        while self.spawned:
            asyncio.run(self.spawned.pop(0))

    def verify(self, step: str, want: Result, initial: list[ResourceClaim], status: Status | None) -> None:
        assert status == want.status, f"{step}: status {status!r}, want {want.status!r}"
        expected = [want.changes(copy(c)) if want.changes is not None else c for c in initial]
        gone = {_key(c) for c in want.removed}
        expected = [c for c in expected if _key(c) not in gone] + list(want.added)
        assert comparable_claims(list(self.api.objects.values())) == comparable_claims(expected), \
            f"{step}: the apiserver's claims differ"
        assumed = [e.latest for e in self.tracker._entries.values() if e.latest is not e.api]
        if want.assumed_claim is None and assumed:
            # Upstream waits for the informer to catch up with the apiserver.
            for claim in self.api.objects.values():
                self.tracker.add(copy(claim))
            assumed = [e.latest for e in self.tracker._entries.values() if e.latest is not e.api]
        if want.assumed_claim is None:
            assert assumed == [], f"{step}: assumed claims {assumed}"
        else:
            everything = [e.latest for e in self.tracker._entries.values()]
            assert _comparable(want.assumed_claim) in comparable_claims(everything), \
                f"{step}: {want.assumed_claim.metadata.name} is not assumed"
        assert comparable_claims(self.tracker.in_flight()) == comparable_claims(want.in_flight_claims), \
            f"{step}: in-flight claims differ"


def setup(case: Case) -> Context:
    tracker = ClaimTracker(case.claims, consumable_capacity=case.features.consumable_capacity)
    dra = DraManager.of(slices=case.slices, classes=case.classes)
    dra.claims = tracker
    api = FakeApi(case.claims, case.fail, tracker.add, tracker.delete)
    clock = FakeClock(case.tick)
    spawned: list[Coroutine[Any, Any, Any]] = []

    def spawn(coro: Coroutine[Any, Any, Any], name: str) -> object:
        spawned.append(coro)
        return None

    handle = Handle(clock=clock.monotonic, sleep=clock.sleep, resource_claims=api, spawn=spawn)
    plugin = DynamicResources(dra, handle, case.filter_timeout, case.binding_timeout, case.features, now=clock.now,
                              new_uid=lambda: "uid-in-memory")
    for claim in case.in_flight_claims:
        tracker.signal_pending_allocation(claim.metadata.uid, claim)
    return Context(case, api, tracker, plugin, spawned)


def run(case: Case) -> None:
    """testPlugin's steps for one case."""
    ctx = setup(case)
    pl, want, api = ctx.plugin, case.want, ctx.api
    pod = PodInfo(case.pod)

    def objects() -> list[ResourceClaim]:
        return [copy(c) for c in api.objects.values()]

    status = pl.pre_enqueue(case.pod)
    ctx.verify("PreEnqueue", want.pre_enqueue, objects(), status)
    if status is not None:
        return
    state = CycleState()
    nodes = [NodeInfo(n) for n in case.nodes]
    result, status = pl.pre_filter(state, pod, snapshot_with(list(case.nodes)))
    assert result is None
    ctx.verify("PreFilter", want.pre_filter, objects(), status)
    unschedulable = status is not None and status.is_rejected()
    potential: list[NodeInfo] = []
    if not unschedulable:
        for ni in nodes:
            initial = objects()
            status = pl.filter(state, pod, ni)
            ctx.verify(f"Filter/{ni.name}", want.filter.get(ni.name, Result()), initial, status)
            if status is None:
                potential.append(ni)
            elif status.code == Code.ERROR:
                return
        unschedulable = not potential
    scores: list[tuple[str, int]] = []
    if not unschedulable and len(potential) > 1:
        snapshot = snapshot_with(list(case.nodes))
        for ni in potential:
            score = pl.score(state, pod, ni, snapshot)
            assert score == want.score_result.get(ni.name, 0), f"Score/{ni.name}: {score}"
            scores.append((ni.name, score))
        normalized = pl.normalize_scores(state, pod, np.array([s for _, s in scores], dtype=np.int64))
        scores = [(n, int(v)) for (n, _), v in zip(scores, normalized, strict=True)]
        if want.normalize_score_result is not None:
            assert scores == want.normalize_score_result
    selected = ""
    if not unschedulable and potential:
        selected = max(scores, key=lambda s: s[1])[0] if scores else potential[0].name
        initial = objects()
        status = pl.reserve(state, pod, selected)
        ctx.verify("Reserve", want.reserve, initial, status)
        unschedulable = status is not None
    if selected:
        if unschedulable:
            initial = objects()
            pl.unreserve(state, pod, selected)
            ctx.run_spawned()
            ctx.verify("Unreserve", want.unreserve, initial, None)
            return
        if want.unreserve_before_pre_bind is not None:
            initial = objects()
            pl.unreserve(state, pod, selected)
            ctx.run_spawned()
            ctx.verify("Unreserve before PreBind", want.unreserve_before_pre_bind, initial, None)
            return
        if case.prepare.pre_bind is not None:
            api.change(case.prepare.pre_bind)
        initial = objects()
        flight, status = pl.pre_bind_pre_flight(state, pod, selected)
        assert flight is not None
        assert flight.allow_parallel
        assert status == want.pre_bind_pre_flight_status
        status = asyncio.run(pl.pre_bind(state, pod, selected))
        ctx.verify("PreBind", want.pre_bind, initial, status)
        written = api.pod_statuses.get(f"{case.pod.metadata.namespace}/{case.pod.metadata.name}")
        assert written == want.pod_extended_status, f"PreBind: the pod's extendedResourceClaimStatus {written}"
        if want.unreserve_after_bind_failure is not None:
            initial = objects()
            pl.unreserve(state, pod, selected)
            ctx.run_spawned()
            ctx.verify("Unreserve after bind failure", want.unreserve_after_bind_failure, initial, None)
    elif not potential:
        initial = objects()
        status = pl.post_filter(state, pod, None)  # type: ignore[arg-type]
        ctx.run_spawned()
        ctx.verify("PostFilter", want.post_filter, initial, status)
