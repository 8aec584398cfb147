"""The reliability runs of issue 15, each on a fresh plane of its own, each printing its figures:

- kill (R1): kubesched SIGKILLed every few seconds and started again, through a run on a nearly
  full cluster with a CronJob pool;
- apiserver (R2): the kube-apiserver restarted mid-run (twice by default), kubesched never restarted;
- failover (R4): two replicas with leader election, the leader SIGKILLed (10 times by default) and a
  new standby started each time; how long until the standby leads and binds;
- soak (R6): a steady run with churn (pods deleted as new ones come): kubesched's RSS and internal
  map sizes (its /debug/kubesched/state) sampled over time.

Every run ends with the same invariants, read from the apiserver: every pod bound, no node over its
allocatable cpu, memory or pod count, and the pool kept (its pods only on its nodes, no other pod there).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api import ApiClient, load_config
from kubesched_dev.bench import chaos_workload as wl
from kubesched_dev.bench.contenders import Running, python_env, warm_bytecode
from kubesched_dev.localcluster import plane, procs

Progress = Callable[[str], None]
SCENARIOS = ("kill", "apiserver", "failover", "soak")
SCHEDULER_NAME = "chaos"
PLANE_PREFIX = "kubesched-chaos-"
TICK = 0.2


@dataclass
class ChaosOptions:
    scenario: str
    out: Path
    nodes: int = 20
    pool_nodes: int = 2
    slots: int = 110  # pods a node takes
    fill: float = 0.95  # of every node's slots
    rate: float = 300.0  # pods created a second (0: as fast as the apiserver takes them)
    kill_every: float = 5.0  # kill
    restarts: int = 2  # apiserver
    kills: int = 10  # failover
    duration: float = 1800.0  # soak, seconds
    sample_every: float = 10.0  # soak
    timeout: float = 900.0  # the run, after the plane is up


@dataclass
class ChaosResult:
    scenario: str
    nodes: int
    pool_nodes: int
    pods: int = 0
    bound: int = 0
    overcommitted: dict[str, list[str]] = field(default_factory=dict)
    pool_violations: list[str] = field(default_factory=list)
    seconds: float = 0.0
    kills: int = 0
    restarts: int = 0
    processes: int = 0  # kubesched processes started
    figures: dict[str, Any] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return (not self.error and self.pods > 0 and self.bound == self.pods and not self.overcommitted
                and not self.pool_violations and not self.tracebacks)

    def summary(self) -> str:
        lines = [f"{self.scenario}: {'PASS' if self.ok else 'FAIL'} in {self.seconds:.0f} s: "
                 f"{self.bound}/{self.pods} bound on {self.nodes}+{self.pool_nodes} nodes (general+pool), "
                 f"{len(self.overcommitted)} overcommitted node(s), {len(self.pool_violations)} pool violation(s); "
                 f"{self.kills} kill(s), {self.restarts} apiserver restart(s), "
                 f"{self.processes} kubesched process(es)"]
        lines += [f"  {k}: {v}" for k, v in self.figures.items()]
        if self.error:
            lines.append(f"  error: {self.error}")
        lines += [f"  pool violation: {v}" for v in self.pool_violations[:5]]
        lines += [f"  overcommitted: {n} {r}" for n, r in list(self.overcommitted.items())[:5]]
        lines += [f"  traceback in {t}" for t in self.tracebacks[:5]]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


class _Fleet:
    """The kubesched processes of a run: each with its own log and debug port."""

    def __init__(self, cluster: plane.Cluster, opts: ChaosOptions, leader_elect: bool) -> None:
        self.cluster = cluster
        self.out = opts.out
        self.config = opts.out / "kubesched-config.yaml"
        self.config.write_text(yaml.safe_dump({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": cluster.kubeconfig, "qps": 5000, "burst": 5000},
            "leaderElection": {"leaderElect": leader_elect},
            "profiles": [{"schedulerName": SCHEDULER_NAME}],
        }, sort_keys=False))
        self.started: list[tuple[Running, int]] = []

    def start(self) -> tuple[Running, int]:
        port = procs.free_port()
        n = len(self.started)
        args = [sys.executable, "-m", "kubesched", "run", f"--kubeconfig={self.cluster.kubeconfig}",
                f"--config={self.config}", "--logging-format=json", f"--serve-address=127.0.0.1:{port}"]
        running = Running(f"kubesched-{n}", args, self.out / f"kubesched-{n}.log",
                          lambda r: "caches synced" in r.log(), env=python_env())
        self.started.append((running, port))
        return running, port

    def kill(self, running: Running) -> None:
        if running.proc.poll() is None:
            running.proc.send_signal(signal.SIGKILL)
            running.proc.wait()

    def stop_all(self) -> None:
        for running, _ in self.started:
            running.stop(timeout=20)

    def tracebacks(self) -> list[str]:
        return [str(r.log_path) for r, _ in self.started if "Traceback" in r.log()]


async def _wait(what: str, check: Callable[[], Awaitable[bool]], deadline: float) -> None:
    while not await check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(TICK)


async def _all_bound(client: ApiClient, total: int, deadline: float, fleet: _Fleet) -> None:
    async def done() -> bool:
        for running, _ in fleet.started[-2:]:
            if running.proc.poll() is not None and running.proc.returncode not in (-signal.SIGKILL,):
                raise RuntimeError(f"{running.name} exited with {running.proc.returncode}; log {running.log_path}")
        return (await wl.bound_count(client) or 0) >= total
    await _wait(f"all {total} pods bound", done, deadline)


# --- the scenarios --------------------------------------------------------------------------------

async def _kill(client: ApiClient, fleet: _Fleet, opts: ChaosOptions, result: ChaosResult, deadline: float,
                progress: Progress) -> None:
    pods = wl.plan(opts.nodes, opts.pool_nodes, opts.slots, opts.fill)
    created: list[str] = []
    creator = asyncio.create_task(wl.create_at_rate(client, pods, SCHEDULER_NAME, opts.rate, deadline, created))
    running, _ = fleet.start()
    at_kill: list[int] = []
    try:
        while True:
            # Each process gets kill_every seconds once synced: its start-up (Python's imports, the
            # list) takes seconds on a loaded machine, and a process killed before it schedules tests nothing.
            await _wait("kubesched synced", functools.partial(asyncio.to_thread, running.ready), deadline)
            await asyncio.sleep(opts.kill_every)
            bound = await wl.bound_count(client) or 0
            if creator.done() and bound >= len(pods):
                break
            fleet.kill(running)
            result.kills += 1
            at_kill.append(bound)
            progress(f"  SIGKILL {result.kills}: {len(created)}/{len(pods)} created, {bound} bound")
            running, _ = fleet.start()
        await creator
    finally:
        if not creator.done():
            creator.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await creator
    result.figures["bound at each kill"] = at_kill


async def _apiserver(client: ApiClient, fleet: _Fleet, opts: ChaosOptions, result: ChaosResult, deadline: float,
                     progress: Progress) -> None:
    pods = wl.plan(opts.nodes, opts.pool_nodes, opts.slots, opts.fill)
    created: list[str] = []
    running, _ = fleet.start()
    await _wait("kubesched ready", functools.partial(asyncio.to_thread, running.ready), deadline)
    pid = running.proc.pid
    creator = asyncio.create_task(wl.create_at_rate(client, pods, SCHEDULER_NAME, opts.rate, deadline, created))
    downtime: list[float] = []
    resumed_after: list[float] = []
    watchers: list[asyncio.Task[None]] = []

    async def resumed(before: int, back: float) -> None:
        if before < len(pods):  # else nothing was left to bind
            await _wait("a bind after the restart", functools.partial(_more_bound, client, before), deadline)
        resumed_after.append(round(time.monotonic() - back, 2))

    for k in range(1, opts.restarts + 1):
        await _wait(f"{k}/{opts.restarts + 1} of the pods created",
                    functools.partial(_at_least, created, k * len(pods) // (opts.restarts + 1)), deadline)
        before = await wl.bound_count(client) or 0
        progress(f"  restarting kube-apiserver ({len(created)} created, {before} bound)")
        downtime.append(round(await asyncio.to_thread(plane.restart, fleet.cluster.name, "kube-apiserver",
                                                      lambda m: None), 2))
        result.restarts += 1
        watchers.append(asyncio.create_task(resumed(before, time.monotonic())))
    await creator
    await asyncio.gather(*watchers)
    await _all_bound(client, len(pods), deadline, fleet)
    if running.proc.poll() is not None or running.proc.pid != pid:
        raise RuntimeError(f"kubesched exited ({running.proc.returncode}); it must ride the restarts out")
    result.figures["restart until /readyz ok (s)"] = downtime
    result.figures["first new bind after the apiserver was back (s)"] = resumed_after
    result.figures["kubesched restarted"] = "never (one process, pid unchanged)"


async def _failover(client: ApiClient, fleet: _Fleet, opts: ChaosOptions, result: ChaosResult, deadline: float,
                    progress: Progress) -> None:
    pods = wl.plan(opts.nodes, opts.pool_nodes, opts.slots, opts.fill)
    batches = [pods[i::opts.kills + 1] for i in range(opts.kills + 1)]
    replicas = [fleet.start()[0], fleet.start()[0]]
    created: list[str] = []
    to_leader: list[float] = []
    to_bind: list[float] = []
    done = 0
    for k, batch in enumerate(batches):
        before = await wl.bound_count(client) or 0
        killed_at = time.monotonic()
        if k > 0:
            leader = await _leader(replicas, deadline)
            fleet.kill(leader)
            result.kills += 1
            killed_at = time.monotonic()
            replicas = [r for r in replicas if r is not leader] + [fleet.start()[0]]
        await wl.create_at_rate(client, batch, SCHEDULER_NAME, opts.rate, deadline, created)
        if k > 0:
            await _leader(replicas, deadline)
            to_leader.append(round(time.monotonic() - killed_at, 2))
            await _wait("a bind by the new leader", functools.partial(_more_bound, client, before), deadline)
            to_bind.append(round(time.monotonic() - killed_at, 2))
            progress(f"  kill {k}: new leader after {to_leader[-1]:.1f} s, first bind after {to_bind[-1]:.1f} s")
        done += len(batch)
        await _all_bound(client, done, deadline, fleet)
    result.figures["kill to new leader (s)"] = to_leader
    result.figures["kill to first bind (s)"] = to_bind
    if to_bind:
        result.figures["failover mean / max (s)"] = (round(sum(to_bind) / len(to_bind), 2), max(to_bind))


async def _leader(replicas: list[Running], deadline: float) -> Running:
    """The replica that leads: alive, and the last to log "became leader"."""
    while True:
        for r in replicas:
            if r.proc.poll() is None and "became leader" in r.log():
                return r
        if time.monotonic() > deadline:
            raise TimeoutError("no replica became leader")
        await asyncio.sleep(0.05)


async def _soak(client: ApiClient, fleet: _Fleet, opts: ChaosOptions, result: ChaosResult, deadline: float,
                progress: Progress) -> None:
    target = len(wl.plan(opts.nodes, opts.pool_nodes, opts.slots, opts.fill))
    share = opts.pool_nodes / max(opts.nodes + opts.pool_nodes, 1)
    running, port = fleet.start()
    await _wait("kubesched ready", functools.partial(asyncio.to_thread, running.ready), deadline)
    live: list[str] = []
    created = deleted = 0
    began = time.monotonic()
    next_sample = began
    rate = opts.rate or 50.0
    tasks: set[asyncio.Task[None]] = set()
    limit = asyncio.Semaphore(64)

    async def guarded(coro: Any) -> None:
        async with limit:
            await coro

    def spawn(coro: Any) -> None:
        task = asyncio.create_task(guarded(coro))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    i = 0
    while (now := time.monotonic()) - began < opts.duration:
        due = int((now - began) * rate)
        while i < due:
            name = f"s-{i:08d}"
            pool = int((i + 1) * share) > int(i * share)
            spawn(wl.create(client, wl.PodPlan(name, pool), SCHEDULER_NAME, deadline + opts.duration))
            live.append(name)
            created += 1
            i += 1
            if len(live) > target:
                spawn(wl.delete(client, live.pop(0), deadline + opts.duration))
                deleted += 1
        if now >= next_sample:
            next_sample += opts.sample_every
            state = await asyncio.to_thread(wl.debug_state, port)
            sample = {"t": round(now - began, 1), "created": created, "deleted": deleted,
                      "rss_mb": round((wl.rss_bytes(running.proc.pid) or 0) / 2**20, 1),
                      "sizes": (state or {}).get("sizes", {}),
                      "cache_ok": (state or {}).get("comparison", {}).get("ok")}
            result.samples.append(sample)
            progress(f"  t={sample['t']:.0f}s created {created} deleted {deleted} rss {sample['rss_mb']} MB "
                     f"sizes {_brief(sample['sizes'])}")
        if running.proc.poll() is not None:
            raise RuntimeError(f"kubesched exited with {running.proc.returncode}; log {running.log_path}")
        await asyncio.sleep(0.05)
    await asyncio.gather(*tasks)
    await _all_bound(client, len(live), deadline + opts.duration, fleet)
    result.figures.update(_flatness(result.samples))
    result.figures["pods created / deleted"] = (created, deleted)


def _brief(sizes: dict[str, int]) -> str:
    keys = ("cache_pods", "cache_assumed_pods", "queue_unschedulable", "queue_backoff", "event_series",
            "informer/pods", "python_blocks", "malloc_in_use_kb", "malloc_free_kb", "malloc_mmapped_kb")
    return " ".join(f"{k}={sizes.get(k)}" for k in keys)


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) points, a minute: a sawtooth (the event map's
    6-minute teeth) averages out over a long run, where first-against-last would not."""
    n = len(points)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return 60.0 * sum((t - mean_t) * (v - mean_v) for t, v in points) / var


def _flatness(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """RSS and every size at the end of the first third (warm-up) against the most seen after it."""
    if len(samples) < 3:
        return {"flatness": "too few samples"}
    warm = samples[len(samples) // 3]
    later = samples[len(samples) // 3:]
    out: dict[str, Any] = {"rss MB after warm-up -> max later": (warm["rss_mb"], max(s["rss_mb"] for s in later)),
                           "rss slope MB/min after warm-up": round(slope_per_minute(
                               [(s["t"], s["rss_mb"]) for s in later]), 3)}
    grown = {}
    for key, value in warm["sizes"].items():
        top = max(s["sizes"].get(key, 0) for s in later)
        if top > max(value * 1.2, value + 50):
            grown[key] = (value, top)
    out["maps grown >20% after warm-up"] = grown or "none"
    out["cache comparer ok in every sample"] = all(s["cache_ok"] for s in samples)
    return out


async def _at_least(items: list[str], count: int) -> bool:
    return len(items) >= count


async def _more_bound(client: ApiClient, before: int) -> bool:
    return (await wl.bound_count(client) or 0) > before


RUNNERS = {"kill": _kill, "apiserver": _apiserver, "failover": _failover, "soak": _soak}


def run(opts: ChaosOptions, progress: Progress = print) -> ChaosResult:
    """One scenario on a fresh plane (no default scheduler), torn down at the end."""
    opts.out.mkdir(parents=True, exist_ok=True)
    result = ChaosResult(opts.scenario, opts.nodes, opts.pool_nodes)
    for c in plane.list_clusters():
        if c.name.startswith(PLANE_PREFIX) and c.owner_pid and not os.path.exists(f"/proc/{c.owner_pid}"):
            plane.down(c.name, progress)
    warm_bytecode()
    name = f"{PLANE_PREFIX}{os.getpid()}-{opts.scenario}"
    cluster = plane.up(name, wl.topology(opts.nodes, opts.pool_nodes, opts.slots), default_scheduler=False,
                       progress=lambda m: progress(f"  plane: {m}") if "ready in" in m else None)
    fleet = _Fleet(cluster, opts, leader_elect=opts.scenario == "failover")
    began = time.monotonic()
    try:
        asyncio.run(_run(cluster, fleet, opts, result, progress))
    except Exception as e:
        result.error = f"{type(e).__name__}: {e}"
    finally:
        result.seconds = time.monotonic() - began
        fleet.stop_all()
        result.processes = len(fleet.started)
        result.tracebacks = fleet.tracebacks()
        plane.down(name, lambda m: None)
    return result


async def _run(cluster: plane.Cluster, fleet: _Fleet, opts: ChaosOptions, result: ChaosResult,
               progress: Progress) -> None:
    deadline = time.monotonic() + opts.timeout
    async with ApiClient(load_config(cluster.kubeconfig), qps=-1, burst=0, max_connections=40,
                         user_agent="kubesched-chaos") as client:
        await wl.create_namespace(client)
        await RUNNERS[opts.scenario](client, fleet, opts, result, deadline, progress)
        inv = await wl.invariants(client)
        result.pods, result.bound = inv.pods, inv.bound
        result.overcommitted, result.pool_violations = inv.overcommitted, inv.pool_violations
