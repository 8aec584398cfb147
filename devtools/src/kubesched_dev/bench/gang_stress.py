"""Gangs competing for too little room, on a real plane (issue 22's stress check): `gangs` PodGroups
(scheduling.k8s.io/v1beta1, gang policy, minCount = size) and their pods created together, round
robin across the gangs so every gang is partly queued at once; a gang "runs" `hold` seconds once
all its pods are bound, then the harness deletes its pods, freeing the room for the next.

A watch on the namespace's pods checks the invariants at every event, independent of what the
scheduler believes:

- no partial gang: a gang (not yet finishing) with between 1 and minCount-1 pods bound for longer
  than `settle` seconds. Binding is one POST per pod, so a gang passes through 1..minCount-1 bound
  for the few milliseconds its binds take; those are counted apart (`max_mid_bind`, the most gangs
  seen mid-bind at one event, and `max_bind_spread`, the longest first-to-last bind of a gang);
- no deadlock: with gangs left, some gang completes within `stall` seconds of the last one (or of
  the start);
- every gang completes.

Used by `kubesched chaos gangs` (bench/chaos_gangs.py) and by tests/integration/test_gang_stress.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import msgspec

from kubesched.api import ApiClient, ApiConnectionError, ApiError

PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
GANG_LABEL = "kubesched.io/gang"  # the harness's own label: which gang a pod belongs to
TICK = 0.1


@dataclass(frozen=True)
class GangPlan:
    gangs: int = 50
    size: int = 8  # pods of a gang, and its minCount
    cpu: str = "1"  # each pod's request
    hold: float = 3.0  # seconds a whole gang runs before the harness deletes its pods
    settle: float = 5.0  # a gang partly bound this long is a partial gang
    stall: float = 120.0  # no gang completing this long, with gangs left: a deadlock
    timeout: float = 1200.0
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[dict[str, str], ...] = ()

    def gang(self, g: int) -> str:
        return f"gang-{g:03d}"

    def pod_group(self, g: int) -> dict[str, Any]:
        return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": self.gang(g)},
                "spec": {"schedulingPolicy": {"gang": {"minCount": self.size}}}}

    def pod(self, g: int, i: int, scheduler_name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "schedulerName": scheduler_name, "terminationGracePeriodSeconds": 0,
            "schedulingGroup": {"podGroupName": self.gang(g)},
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": self.cpu, "memory": "16Mi"}}}]}
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        if self.tolerations:
            spec["tolerations"] = [dict(t) for t in self.tolerations]
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"{self.gang(g)}-{i}", "labels": {GANG_LABEL: self.gang(g)}}, "spec": spec}


@dataclass
class GangRun:
    """One contender's run of a plan: the figures and what broke."""

    scheduler: str
    gangs: int
    size: int
    completed: int = 0
    seconds: float = 0.0  # first create to the last gang whole
    partial: list[str] = field(default_factory=list)  # "gang: n/size bound for s" (must stay empty)
    max_partial: int = 0  # gangs partial past `settle` at once (must be 0)
    max_mid_bind: int = 0  # gangs seen with 1..size-1 bound at one event, within `settle`
    max_bind_spread: float = 0.0  # seconds from a gang's first bind to its last
    max_bound_pods: int = 0  # most pods bound at once
    max_gangs_at_once: int = 0  # most whole gangs running at once
    longest_wait: float = 0.0  # longest time with no gang completing while gangs were left
    deadlock: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return (not self.error and not self.deadlock and not self.partial and self.max_partial == 0
                and self.completed == self.gangs)

    def summary(self) -> str:
        return (f"{self.scheduler}: {'PASS' if self.ok else 'FAIL'}: {self.completed}/{self.gangs} gangs of "
                f"{self.size} complete in {self.seconds:.1f} s; partial gangs (past settle) max {self.max_partial}"
                f"{' ' + str(self.partial[:5]) if self.partial else ''}; mid-bind max {self.max_mid_bind} gang(s), "
                f"bind spread max {self.max_bind_spread * 1000:.0f} ms; at once max {self.max_gangs_at_once} "
                f"gang(s) / {self.max_bound_pods} pod(s); longest wait for a gang {self.longest_wait:.1f} s; "
                f"deadlock: {self.deadlock or 'none'}{'; error: ' + self.error if self.error else ''}")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


class _Meta(msgspec.Struct):
    name: str = ""
    resourceVersion: str = ""
    labels: dict[str, str] = {}


class _Spec(msgspec.Struct):
    nodeName: str = ""


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)


class _ListMeta(msgspec.Struct):
    resourceVersion: str = ""


class _PodList(msgspec.Struct):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[_Pod] = []


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


@dataclass
class _Gang:
    name: str
    bound: dict[str, float] = field(default_factory=dict)  # pod -> when the watch saw it bound
    partial_since: float | None = None
    whole_at: float | None = None
    finishing: bool = False


class Tracker:
    """The invariants, fed by the watch: pure bookkeeping, so the unit tests drive it directly."""

    def __init__(self, plan: GangPlan, run: GangRun, now: Callable[[], float] = time.monotonic) -> None:
        self.plan, self.run, self.now = plan, run, now
        self.gangs = {plan.gang(g): _Gang(plan.gang(g)) for g in range(plan.gangs)}
        self.started = now()
        self.last_whole = self.started
        self.to_finish: asyncio.Queue[str] = asyncio.Queue()
        self.partial: dict[str, str] = {}

    def saw(self, kind: str, pod: _Pod) -> None:
        gang = self.gangs.get(pod.metadata.labels.get(GANG_LABEL, ""))
        if gang is None:
            return
        now, name = self.now(), pod.metadata.name
        if kind == "DELETED" or not pod.spec.nodeName:
            gang.bound.pop(name, None)
        elif name not in gang.bound:
            gang.bound[name] = now
        self._check(gang, now)
        self.run.max_bound_pods = max(self.run.max_bound_pods, sum(len(g.bound) for g in self.gangs.values()))
        self.run.max_mid_bind = max(self.run.max_mid_bind, sum(
            1 for g in self.gangs.values() if not g.finishing and 0 < len(g.bound) < self.plan.size))

    def _check(self, gang: _Gang, now: float) -> None:
        n = len(gang.bound)
        if gang.finishing:
            return
        if n >= self.plan.size and gang.whole_at is None:
            gang.whole_at, gang.partial_since = now, None
            self.run.completed += 1
            self.run.seconds = now - self.started
            self.run.longest_wait = max(self.run.longest_wait, now - self.last_whole)
            self.last_whole = now
            spread = max(gang.bound.values()) - min(gang.bound.values())
            self.run.max_bind_spread = max(self.run.max_bind_spread, spread)
            self.run.max_gangs_at_once = max(self.run.max_gangs_at_once, sum(
                1 for g in self.gangs.values() if g.whole_at is not None and g.bound))
            self.to_finish.put_nowait(gang.name)
        elif 0 < n < self.plan.size:
            if gang.partial_since is None:
                gang.partial_since = now
        else:
            gang.partial_since = None

    def tick(self) -> bool:
        """The timed checks; True once the run is over (all gangs whole, or a deadlock)."""
        now = self.now()
        stuck = [g for g in self.gangs.values()
                 if g.partial_since is not None and not g.finishing and now - g.partial_since > self.plan.settle]
        for g in stuck:
            # One note a gang: the count it was last seen stuck at.
            self.partial[g.name] = f"{g.name}: {len(g.bound)}/{self.plan.size} bound for more than " \
                                   f"{self.plan.settle:.0f} s"
        if stuck:
            self.run.partial = list(self.partial.values())
        self.run.max_partial = max(self.run.max_partial, len(stuck))
        if self.run.completed >= self.plan.gangs:
            return True
        if now - self.last_whole > self.plan.stall:
            waiting = self.plan.gangs - self.run.completed
            bound = sum(len(g.bound) for g in self.gangs.values())
            self.run.deadlock = (f"no gang completed for {self.plan.stall:.0f} s with {waiting} gang(s) left "
                                 f"({bound} pod(s) bound)")
            self.run.longest_wait = max(self.run.longest_wait, now - self.last_whole)
            return True
        return False


async def _ok(call: Any, what: str, allowed: tuple[int, ...] = ()) -> None:
    resp = await call
    if not resp.ok and resp.status not in allowed:
        raise ApiError.from_response(resp.status, resp.body, method=what, path="")


async def run_plan(client: ApiClient, namespace: str, scheduler_name: str, plan: GangPlan,
                   progress: Callable[[str], None] = lambda m: None) -> GangRun:
    """The plan in `namespace` (created if missing) for the scheduler already running under
    `scheduler_name`; the namespace's pods are deleted at the end, whatever happened."""
    run = GangRun(scheduler_name, plan.gangs, plan.size)
    await _ok(client.request("POST", "/api/v1/namespaces", body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}), "create namespace", (409,))
    for g in range(plan.gangs):
        await _ok(client.request("POST", PODGROUPS.format(ns=namespace), body=plan.pod_group(g)),
                  "create PodGroup", (409,))
    pods_path = f"/api/v1/namespaces/{namespace}/pods"
    listed = msgspec.json.decode(await client.get(pods_path), type=_PodList)
    if listed.items:
        raise RuntimeError(f"namespace {namespace} has {len(listed.items)} pod(s) already")
    tracker = Tracker(plan, run)
    watching = asyncio.Event()
    tasks: list[asyncio.Task[Any]] = []
    try:
        tasks.append(asyncio.create_task(_watch(client, pods_path, listed.metadata.resourceVersion, tracker,
                                                watching)))
        await asyncio.wait_for(watching.wait(), 30)
        tracker.started = tracker.last_whole = tracker.now()
        tasks.append(asyncio.create_task(_create_all(client, pods_path, plan, scheduler_name)))
        tasks.append(asyncio.create_task(_finisher(client, pods_path, plan, tracker)))
        deadline = time.monotonic() + plan.timeout
        shown = 0
        while not tracker.tick():
            for t in tasks:
                if t.done() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{run.completed}/{plan.gangs} gangs complete after {plan.timeout:.0f} s")
            if run.completed >= shown + max(plan.gangs // 10, 1):
                shown = run.completed
                progress(f"{scheduler_name}: {run.completed}/{plan.gangs} gangs complete, {run.seconds:.1f} s")
            await asyncio.sleep(TICK)
    except Exception as e:
        run.error = f"{type(e).__name__}: {e}"
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        await _delete_all(client, pods_path)
    return run


async def _watch(client: ApiClient, path: str, rv: str, tracker: Tracker, watching: asyncio.Event) -> None:
    decode = msgspec.json.Decoder(_Event).decode
    pod = msgspec.json.Decoder(_Pod).decode
    while True:
        params: dict[str, str | int] = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": 1800}
        try:
            async with client.stream(path, params) as lines:
                watching.set()
                async for line in lines:
                    ev = decode(line)
                    if ev.type == "ERROR":
                        raise RuntimeError(f"the pods' watch ended: {bytes(ev.object)[:300]!r}")
                    p = pod(ev.object)
                    rv = p.metadata.resourceVersion or rv
                    tracker.saw(ev.type, p)
        except ApiConnectionError:
            await asyncio.sleep(0.2)  # the watch resumes from the last event seen


async def _create_all(client: ApiClient, path: str, plan: GangPlan, scheduler_name: str) -> None:
    """Pod i of every gang, then pod i+1 of every gang: all gangs partly queued at once."""
    slots = asyncio.Semaphore(32)

    async def one(body: dict[str, Any]) -> None:
        async with slots:
            await _ok(client.request("POST", path, body=body), f"create pod {body['metadata']['name']}")

    async with asyncio.TaskGroup() as tg:
        for i in range(plan.size):
            for g in range(plan.gangs):
                tg.create_task(one(plan.pod(g, i, scheduler_name)))


async def _finisher(client: ApiClient, path: str, plan: GangPlan, tracker: Tracker) -> None:
    """Each whole gang's pods deleted `hold` seconds after it became whole."""
    async def finish(name: str) -> None:
        await asyncio.sleep(plan.hold)
        tracker.gangs[name].finishing = True
        await asyncio.gather(*(_ok(client.request("DELETE", f"{path}/{name}-{i}", params={"gracePeriodSeconds": 0}),
                                   f"delete pod {name}-{i}", (404,)) for i in range(plan.size)))

    async with asyncio.TaskGroup() as tg:
        while True:
            tg.create_task(finish(await tracker.to_finish.get()))


async def _delete_all(client: ApiClient, path: str) -> None:
    with contextlib.suppress(ApiError, ApiConnectionError):
        await client.request("DELETE", path, params={"gracePeriodSeconds": 0})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not msgspec.json.decode(await client.get(path), type=_PodList).items:
                return
            await asyncio.sleep(0.5)
