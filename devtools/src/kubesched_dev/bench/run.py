"""One run = one fresh plane, one contender, measured until every pod is bound; then the plane goes.

Rounds interleave the contenders (round 1: limit, kube-scheduler, kubesched; round 2: the same),
so a slow patch of the machine hits all of them rather than one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from kubesched.api import ApiClient, load_config
from kubesched_dev.bench import apimetrics, capacity, restart, setup, stats, validity, workload, workloads
from kubesched_dev.bench.contenders import STARTERS, RunContext, Running, warm_bytecode
from kubesched_dev.bench.gates import plane_flags
from kubesched_dev.bench.pending import pending_summary, pods_left
from kubesched_dev.bench.procstat import Window
from kubesched_dev.bench.report import RunResult
from kubesched_dev.bench.watcher import Watcher
from kubesched_dev.bench.workloads import Plan
from kubesched_dev.localcluster import plane

Progress = Callable[[str], None]
PLANE_PREFIX = "kubesched-bench-"
READY_TIMEOUT = 120.0
TICK = 0.5
# Workloads other than basic fail a run that makes no progress for this long (first bind, then any
# bind), naming why a pending pod waits, rather than waiting out the whole timeout.
STALL_FIRST_S = 60.0
STALL_S = 30.0
PLANE_METERED = ("kube-apiserver", "etcd")
# The apiserver's CPU with nothing scheduling (node leases, kwok, the controller manager) is measured
# this long before the contender starts, for a figure with it taken off (apiserver_net_ms_per_pod):
# a slower run's window holds more of it. On a loaded machine that rate is too noisy to trust alone.
IDLE_S = 3.0
SETTLE_S = 30.0


@dataclass
class Options:
    nodes: int
    pods: int
    rounds: int
    contenders: list[str]
    mode: str  # "batch" or "steady"
    rate: float
    out: Path
    profile: bool = False
    timeout: float | None = None
    workload: str = "basic"
    group_size: int | None = None  # grouped workloads: pods a group (default min(1000, nodes))
    restart_check: bool = False  # after the run, start the contender again with its pods bound (bench.restart)

    def plan(self) -> Plan:
        return workloads.build(self.workload, self.nodes, self.pods, self.group_size)

    def run_timeout(self) -> float:
        if self.timeout is not None:
            return self.timeout
        # Generous: a tenth of the slowest rate seen here, plus start-up. Preemption is slower
        # (kube-scheduler ~10 pods/s at 10-20 nodes: each preemptor waits for its victims to go).
        slowest = 5 if self.workload == "preemption" else 20
        per_pod = 1 / slowest if self.mode == "batch" else 1 / self.rate + 1 / slowest
        return 120 + self.pods * per_pod


def remove_stale_planes(progress: Progress) -> None:
    for c in plane.list_clusters():
        if c.name.startswith(PLANE_PREFIX) and c.owner_pid and not os.path.exists(f"/proc/{c.owner_pid}"):
            progress(f"removing stale bench plane {c.name}")
            plane.down(c.name, progress)


def run_all(opts: Options, progress: Progress) -> list[RunResult]:
    remove_stale_planes(progress)
    if {"limit", "kubesched", "kubesched-asyncio", "kubesched-json"} & set(opts.contenders):
        warm_bytecode()
    results: list[RunResult] = []
    plan = opts.plan()
    what = "" if plan.workload == "basic" else f"{plan.workload}, "
    for rnd in range(1, opts.rounds + 1):
        for name in opts.contenders:
            progress(f"round {rnd}/{opts.rounds}: {name} ({what}{opts.nodes} nodes, {opts.pods} pods, {opts.mode})")
            result = run_one(name, rnd, opts, progress, plan)
            results.append(result)
            progress(f"round {rnd}/{opts.rounds}: {name}: {summary_line(result)}")
    return results


def summary_line(result: RunResult) -> str:
    writes = ", ".join(f"{k} {v:.2f}" for k, v in result.apiserver_writes_per_pod.items() if v >= 0.01)
    return (f"{result.bound}/{result.pods} bound, {result.pods_per_s:.1f} pods/s, {result.cpu_ms_per_pod:.2f} ms CPU a "
            f"pod, peak RSS {result.peak_rss_mb:.0f} MB; apiserver {result.apiserver_ms_per_pod:.2f} ms CPU a pod "
            f"({result.apiserver_net_ms_per_pod:.2f} over its idle {result.apiserver_idle_cpu_per_s * 1000:.0f} ms/s "
            f"in {result.plane_window_s:.0f} s), etcd {result.etcd_ms_per_pod:.2f}; "
            f"writes a pod: {writes or '-'}"
            + (f"; ERROR: {result.error}" if result.error else "")
            + (f"; INVALID: {result.invalid}" if result.invalid else ""))


def run_one(contender: str, rnd: int, opts: Options, progress: Progress, plan: Plan | None = None) -> RunResult:
    plan = plan or opts.plan()
    name = f"{PLANE_PREFIX}{os.getpid()}-{contender}-{rnd}"
    workdir = opts.out / (f"{contender}-{rnd}" if plan.workload == "basic" else f"{plan.workload}-{contender}-{rnd}")
    workdir.mkdir(parents=True, exist_ok=True)
    result = RunResult(contender=contender, round=rnd, mode=opts.mode, nodes=opts.nodes, pods=opts.pods,
                       workload=plan.workload)
    started = time.monotonic()

    def plane_progress(msg: str) -> None:
        if "ready in" in msg or "failed" in msg or "stale" in msg:
            progress(f"  plane: {msg}")

    gates = dict(workloads.KINDS[plan.workload].feature_gates)
    fg, rc = plane_flags(gates)
    cluster = plane.up(name, plan.topology, default_scheduler=False, progress=plane_progress,
                       feature_gates=fg, runtime_config=rc)
    try:
        profile_to = opts.out / f"kubesched-{rnd}-profile" if opts.profile and contender == "kubesched" else None
        ctx = RunContext(cluster, f"bench-{contender}", workdir, profile_to, feature_gates=gates)
        asyncio.run(_measure(contender, ctx, opts, result, progress, plan))
    except Exception as e:
        while isinstance(e, ExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]  # a TaskGroup's one failure: say what it was
        result.error = f"{type(e).__name__}: {e}"
    finally:
        plane.down(name, plane_progress)
    progress(f"  run took {time.monotonic() - started:.0f} s in all")
    return result


async def _measure(contender: str, ctx: RunContext, opts: Options, result: RunResult, progress: Progress,
                   plan: Plan) -> None:
    created: dict[str, float] = {}

    def on_created(pod: str, t: float) -> None:
        created[pod] = t
        if opts.mode == "batch" and (len(created) % 2000 == 0 or len(created) == opts.pods):
            progress(f"  {len(created)}/{opts.pods} pods created")

    names = plan.names
    first_pass = workloads.KINDS[plan.workload].first_pass
    ready: asyncio.Task[float] | None = None
    # What the contender's requests (and kwok's answers to its binds) cost the plane's apiserver and etcd.
    plane_cpu = Window({c: ctx.cluster.pids[c] for c in PLANE_METERED if c in ctx.cluster.pids})
    async with ApiClient(load_config(ctx.cluster.kubeconfig), qps=-1, burst=0, max_connections=40,
                         user_agent="kubesched-bench") as client:
        await workload.create_namespace(client)
        await setup.create(client, plan, progress)
        watcher = Watcher(client)
        if opts.mode == "batch":
            await workload.create_all(client, names, ctx.scheduler_name, on_created, manifest=plan.manifest)
            await watcher.start()
            result.bound_before_watch = watcher.bound_before_start
            writes_before = await _plane_idle(plane_cpu, client, result)
            running = STARTERS[contender](ctx)
            if first_pass:
                ready = asyncio.create_task(_ready_at(running), name="bench/ready")
        else:
            await watcher.start()
            writes_before = await _plane_idle(plane_cpu, client, result)
            running = STARTERS[contender](ctx)
            await _wait_ready(running)
            result.ready_s = time.monotonic() - running.started
        creator: asyncio.Task[None] | None = None
        writes_after: dict[str, float] | None = None
        harness_cpu = time.process_time()
        try:
            if opts.mode == "steady":
                progress(f"  {contender} ready after {time.monotonic() - running.started:.1f} s; "
                         f"creating {opts.pods} pods at {opts.rate:g}/s")
                creator = asyncio.create_task(
                    workload.create_steadily(client, names, ctx.scheduler_name, opts.rate, on_created,
                                             manifest=plan.manifest))
            victims = (lambda: pods_left(client, workloads.FILL_NAMESPACE)) if first_pass else None
            await _wait_bound(running, watcher, opts, progress, client if plan.workload != "basic" else None,
                              victims)
            writes_after = await _settle(client, writes_before, len(watcher.bound_at))
        finally:
            plane_cpu.stop()
            if writes_after is None:
                writes_after = await apimetrics.scrape(client)
            result.harness_cpu_s = time.process_time() - harness_cpu
            if ready is not None:
                if ready.done() and not ready.cancelled() and ready.exception() is None:
                    result.ready_s = ready.result() - running.started
                ready.cancel()
            if creator is not None and not creator.done():
                creator.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await creator
            result.exit_code = await asyncio.to_thread(running.stop)
            await watcher.stop()
            _fill(result, running, watcher, created, first_pass)
            _fill_plane(result, plane_cpu)
            if writes_before is not None and writes_after is not None:
                result.apiserver_writes_per_pod = apimetrics.per_pod(writes_before, writes_after, result.bound)
        report = await capacity.check(client, workload.NAMESPACE)
        result.overcommitted = report.overcommitted
        result.max_pods_on_a_node = report.max_pods_on_a_node
        result.server_pods_per_s = stats.server_rate(report.scheduled_at)
        verdict = validity.check(plan, report.placed.get(workload.NAMESPACE, {}),
                                 report.placed.get(workloads.FILL_NAMESPACE, {}))
        if verdict is not None:
            result.validity = verdict.summary
            result.invalid = "" if verdict.ok else verdict.message()
            result.victims = verdict.victims
        if opts.restart_check and result.all_bound and not result.error:
            progress(f"  restart check: {contender} started again with {result.bound} pods bound, "
                     f"{restart.RESTART_PODS} new pending")
            result.restart = r = await restart.measure(contender, ctx, client)
            after = await capacity.check(client, workload.NAMESPACE)
            if after.overcommitted and not r.error:
                r.error = f"{len(after.overcommitted)} node(s) overcommitted after the restart"
            progress(f"  restart check: ready {_s(r.ready_s)}, first bind {_s(r.first_bind_s)}, all "
                     f"{r.pods} bound {_s(r.all_bound_s)} after its start; peak RSS {r.peak_rss_mb:.0f} MB"
                     + (f"; ERROR: {r.error}" if r.error else ""))


async def _plane_idle(window: Window, client: ApiClient, result: RunResult) -> dict[str, float] | None:
    """The apiserver's and etcd's CPU a second with nothing scheduling, into `result`; then starts
    `window` and returns the apiserver's write counters at that moment."""
    idle = Window(window.pids)
    idle.start()
    await asyncio.sleep(IDLE_S)
    idle.stop()
    result.apiserver_idle_cpu_per_s = idle.seconds("kube-apiserver") / idle.elapsed
    result.etcd_idle_cpu_per_s = idle.seconds("etcd") / idle.elapsed
    before = await apimetrics.scrape(client)
    window.start()
    return before


async def _settle(client: ApiClient, before: dict[str, float] | None, bound: int) -> dict[str, float] | None:
    """Once every pod is bound, wait for the contender's events (sent in the background, after the
    binds) to reach the apiserver: an event a pod, or none more for two seconds, or SETTLE_S. The
    plane's window ends then, so a contender whose events lag is not credited with their cost."""
    if before is None:
        return None
    deadline = time.monotonic() + SETTLE_S
    last, quiet = apimetrics.events_written(before), 0
    while True:
        now = await apimetrics.scrape(client)
        if now is None:
            return None
        written = apimetrics.events_written(now)
        quiet = quiet + 1 if written == last else 0
        last = written
        if written - apimetrics.events_written(before) >= bound or quiet >= 4 or time.monotonic() > deadline:
            return now
        await asyncio.sleep(TICK)


def _fill_plane(result: RunResult, window: Window) -> None:
    result.plane_window_s = window.elapsed
    result.apiserver_cpu_s = window.seconds("kube-apiserver")
    result.etcd_cpu_s = window.seconds("etcd")
    if result.bound:
        result.apiserver_ms_per_pod = result.apiserver_cpu_s * 1000 / result.bound
        result.etcd_ms_per_pod = result.etcd_cpu_s * 1000 / result.bound
        idle = result.apiserver_idle_cpu_per_s * window.elapsed
        result.apiserver_net_ms_per_pod = max(0.0, result.apiserver_cpu_s - idle) * 1000 / result.bound


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f} s"


async def _wait_ready(running: Running) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while not await asyncio.to_thread(running.ready):
        running.check_alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{running.name} not ready within {READY_TIMEOUT:.0f} s (log {running.log_path})")
        await asyncio.sleep(0.1)


async def _ready_at(running: Running) -> float:
    await _wait_ready(running)
    return time.monotonic()


async def _wait_bound(running: Running, watcher: Watcher, opts: Options, progress: Progress,
                      stall_client: ApiClient | None = None,
                      victims_left: Callable[[], Awaitable[int]] | None = None) -> None:
    """Until every pod is bound; with `stall_client`, a run without a bind for STALL_FIRST_S (then
    STALL_S) fails there, saying what the pending pods wait for. With `victims_left` (how many
    low-priority pods are left), one going counts as progress too: binds may wait for a whole
    pass of preemptions."""
    deadline = running.started + opts.run_timeout()
    last_report = running.started
    last_count = 0
    last_bind, bound = running.started, 0
    last_progress = running.started
    left = await victims_left() if victims_left is not None else 0
    while len(watcher.bound_at) < opts.pods:
        await asyncio.sleep(TICK)
        running.meter.sample()
        running.check_alive()
        now = time.monotonic()
        if len(watcher.bound_at) != bound:
            last_bind, bound = now, len(watcher.bound_at)
            last_progress = now
        elif stall_client is not None and now - last_progress > (STALL_S if bound else STALL_FIRST_S):
            if victims_left is not None and (n := await victims_left()) < left:
                left, last_progress = n, now
                continue
            gone = (f", no low-priority pod gone for {now - last_progress:.0f} s ({left} left)"
                    if victims_left is not None else "")
            why = await pending_summary(stall_client, workload.NAMESPACE)
            raise TimeoutError(f"stalled: {bound}/{opts.pods} pods bound, none for {now - last_bind:.0f} s{gone}; "
                               f"{why} (log {running.log_path})")
        if now - last_report >= 5:
            count = len(watcher.bound_at)
            progress(f"  {running.name}: {count}/{opts.pods} bound "
                     f"(+{(count - last_count) / (now - last_report):.0f}/s)")
            last_report, last_count = now, count
        if now > deadline:
            raise TimeoutError(f"only {len(watcher.bound_at)}/{opts.pods} pods bound after "
                               f"{now - running.started:.0f} s (log {running.log_path})")


def _fill(result: RunResult, running: Running, watcher: Watcher, created: dict[str, float],
          from_ready: bool = False) -> None:
    times = list(watcher.bound_at.values())
    result.bound = len(times)
    result.all_bound = result.bound >= result.pods
    start = running.started + result.ready_s if from_ready and result.ready_s is not None else None
    tp = stats.throughput(times, start)
    result.pods_per_s, result.avg, result.p50, result.p90, result.p99 = tp.pods_per_s, tp.avg, tp.p50, tp.p90, tp.p99
    result.samples = tp.samples
    if times:
        result.first_bind_s = min(times) - running.started
        result.elapsed_s = max(times) - running.started
    origin = min(created.values()) if result.mode == "steady" and created else running.started
    result.curve = stats.bound_curve(times, origin)
    result.cpu_s = running.meter.cpu_seconds
    result.cpu_ms_per_pod = result.cpu_s * 1000 / result.bound if result.bound else 0.0
    result.peak_rss_mb = running.meter.peak_rss_bytes / 2**20
    result.log = str(running.log_path)
    if running.profile_path is not None:
        result.profile = str(running.profile_path)
    if result.mode == "steady":
        lat = stats.latency([t - created[n] for n, t in watcher.bound_at.items() if n in created])
        result.latency_p50_ms, result.latency_p99_ms, result.latency_max_ms = lat.p50_ms, lat.p99_ms, lat.max_ms
