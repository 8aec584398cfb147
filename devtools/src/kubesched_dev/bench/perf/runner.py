"""`kubesched bench --scheduler-perf`: each workload, each round, each contender on a fresh plane.

The plane starts with no node and with the workload's feature gates (and the API versions they
need, as scheduler_perf's apiserver serves them); the contender starts (profile
`default-scheduler`, the same feature gates, /metrics served for the bench) and is ready before the first
operation, as scheduler_perf's scheduler runs from the start. Then the operations run in order
against it. Each metrics window reports what scheduler_perf reports: SchedulingThroughput from
the per-second sampler, scheduler_scheduling_attempt_duration_seconds per result from the
contender's /metrics (the end scrape minus the start scrape), the threshold beside them, and the
contender's CPU seconds in the window and peak RSS.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.api import ApiClient, load_config
from kubesched_dev.bench.contenders import STARTERS, RunContext, Running, warm_bytecode
from kubesched_dev.bench.gates import plane_flags
from kubesched_dev.bench.perf import config, sampler
from kubesched_dev.bench.perf.executor import Collection, Executor
from kubesched_dev.bench.perf.informer import PodInformer
from kubesched_dev.bench.run import PLANE_PREFIX, _wait_ready, remove_stale_planes
from kubesched_dev.localcluster import plane
from kubesched_dev.localcluster.http import get
from kubesched_dev.localcluster.topology import Topology

Progress = Callable[[str], None]
SCHEDULER_NAME = "default-scheduler"  # the templates' pods name no scheduler
# mustSetupCluster's apiserver runs without the Priority plugin: the templates set spec.priority
# and name no PriorityClass, which that plugin refuses (util.go --disable-admission-plugins).
ADMISSION_OFF = ("Priority",)
# mustSetupCluster's controllers (util.go): the PV binding its fake PV controller does, garbage
# collection, namespaces and ResourceClaims. No node lifecycle controller runs there, so nodes
# need no heartbeat: kwok does not manage them (objects.named_node), and the plane is spared the
# lease and status writes of 5,000 nodes (1.3 of the 2 cores here with kwok managing them idle).
CONTROLLERS = ("persistentvolume-binder-controller", "garbage-collector-controller",
               "namespace-controller", "resourceclaim-controller")
ATTEMPT_METRIC = "scheduler_scheduling_attempt_duration_seconds"
RESULTS = ("scheduled", "unschedulable", "error")
# What this machine holds (23 GB, 2 cores), as measured: SchedulingDaemonset/15000Nodes (15,001
# nodes, 30,000 pods) peaked at 3.1 GB used on the whole machine with either contender, so every
# node count upstream's configs use fits. The pod bound is scheduler_perf's largest measured count.
MAX_NODES = 15001
MAX_PODS = 60000


@dataclass
class Plan:
    case: config.TestCase
    workload: config.Workload
    ops: list[dict[str, Any]] = field(default_factory=list)
    refused: str = ""  # why it does not run: an unsupported operation, or too big for this machine

    @property
    def name(self) -> str:
        return f"{self.case.name}/{self.workload.name}"

    @property
    def nodes(self) -> int:
        return config.node_count(self.ops)

    @property
    def pods(self) -> int:
        return config.pod_count(self.ops)


def plan(case: config.TestCase, w: config.Workload, check_fit: bool = False) -> Plan:
    p = Plan(case, w)
    try:
        p.ops = config.unroll(case, w)
    except config.ConfigError as e:
        p.refused = str(e)
        return p
    if check_fit and (p.nodes > MAX_NODES or p.pods > MAX_PODS):
        p.refused = (f"{p.name}: {p.nodes} nodes, {p.pods} pods do not fit this machine "
                     f"(at most {MAX_NODES} nodes, {MAX_PODS} pods)")
    return p


@dataclass
class PerfRun:
    contender: str
    workload: str
    round: int
    nodes: int = 0
    pods: int = 0
    metric_window: str = ""  # the collection's name, as upstream's DataItem label Name
    SchedulingThroughput: dict[str, float] | None = None  # upstream's metric name, for scripts
    threshold: float = 0.0
    threshold_bucket: str = "Average"
    meets_threshold: bool | None = None  # upstream's check: Average above the threshold
    attempt_latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # result -> Perc50.. in ms
    samples: list[float] = field(default_factory=list)
    scheduled_in_window: int = 0
    window_s: float = 0.0
    # The pods created in the window by createPods: seconds until the last was created, and the share
    # bound by then (near 1: the harness's creation set the pace, for whichever contender).
    created_s: float | None = None
    bound_when_created: float | None = None
    cpu_s: float = 0.0  # the contender's CPU seconds within the window
    cpu_s_total: float = 0.0
    peak_rss_mb: float = 0.0
    feature_gates: dict[str, bool] = field(default_factory=dict)
    error: str = ""
    log: str = ""
    loadavg: list[float] = field(default_factory=list)  # the machine's 1/5/15-minute load at the run's end


def _scrape(url: str) -> str:
    if not url:
        return ""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        status, body = get(url, ctx if url.startswith("https") else None, timeout=10.0)
    except OSError:
        return ""
    return body.decode(errors="replace") if status == 200 else ""


def run_all(plans: list[Plan], contenders: list[str], rounds: int, out: Path, progress: Progress,
            on_run: Callable[[list[PerfRun]], None] = lambda _: None) -> list[PerfRun]:
    """Every plan, round and contender; `on_run` sees the runs so far after each one (the JSON is
    rewritten then, so an interrupted bench keeps what it measured)."""
    remove_stale_planes(progress)
    if any(c.startswith("kubesched") for c in contenders):
        warm_bytecode()
    runs: list[PerfRun] = []
    for p in plans:
        for rnd in range(1, rounds + 1):
            for c in contenders:
                if p.refused:
                    runs.append(PerfRun(c, p.name, rnd, error=f"not run: {p.refused}"))
                    continue
                progress(f"round {rnd}/{rounds}: {c}: {p.name} ({p.nodes} nodes, {p.pods} pods)")
                r = run_one(p, c, rnd, out, progress)
                runs.append(r)
                on_run(runs)
                tp = r.SchedulingThroughput
                progress(f"round {rnd}/{rounds}: {c}: {p.name}: "
                         + (f"SchedulingThroughput Average {tp['Average']:.1f} Perc50 {tp['Perc50']:.1f} "
                            f"Perc90 {tp['Perc90']:.1f} Perc99 {tp['Perc99']:.1f} pods/s" if tp else "no sample")
                         + f"; CPU {r.cpu_s:.1f} s, peak RSS {r.peak_rss_mb:.0f} MB"
                         + (f"; ERROR: {r.error}" if r.error else ""))
    return runs


def run_one(p: Plan, contender: str, rnd: int, out: Path, progress: Progress) -> PerfRun:
    safe = p.name.replace("/", "_")
    workdir = out / f"{safe}-{contender}-{rnd}"
    workdir.mkdir(parents=True, exist_ok=True)
    gates = config.feature_gates(p.case, p.workload)
    r = PerfRun(contender, p.name, rnd, nodes=p.nodes, pods=p.pods, threshold=p.workload.threshold,
                threshold_bucket=p.workload.threshold_bucket, feature_gates=gates)
    name = f"{PLANE_PREFIX}{os.getpid()}-perf-{contender}-{rnd}"
    started = time.monotonic()

    def plane_progress(msg: str) -> None:
        if "ready in" in msg or "failed" in msg or "stale" in msg:
            progress(f"  plane: {msg}")

    fg, rc = plane_flags(gates)
    cluster = plane.up(name, Topology("scheduler-perf", ()), default_scheduler=False, progress=plane_progress,
                       feature_gates=fg, runtime_config=rc, admission_off=ADMISSION_OFF,
                       controllers=CONTROLLERS)
    try:
        ctx = RunContext(cluster, SCHEDULER_NAME, workdir, feature_gates=gates, metrics=True)
        asyncio.run(_measure(p, contender, ctx, r, progress))
    except Exception as e:
        while isinstance(e, ExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        r.error = f"{type(e).__name__}: {e}"
    finally:
        r.loadavg = [round(x, 2) for x in os.getloadavg()]
        plane.down(name, plane_progress)
    progress(f"  run took {time.monotonic() - started:.0f} s in all; load average {r.loadavg}")
    return r


async def _meter(running: Running) -> None:
    while True:
        running.meter.sample()
        await asyncio.sleep(0.5)


async def _measure(p: Plan, contender: str, ctx: RunContext, r: PerfRun, progress: Progress) -> None:
    async with ApiClient(load_config(ctx.cluster.kubeconfig), qps=-1, burst=0, max_connections=40,
                         user_agent="kubesched-bench") as client:
        informer = PodInformer(client)
        await informer.start()
        running = STARTERS[contender](ctx)
        r.log = str(running.log_path)
        meter = asyncio.create_task(_meter(running), name="perf/meter")
        starts: dict[int, tuple[str, float]] = {}

        async def on_start(c: Collection) -> None:
            running.meter.sample()
            starts[id(c)] = (await asyncio.to_thread(_scrape, running.metrics_url), running.meter.cpu_seconds)

        async def on_stop(c: Collection) -> None:
            running.meter.sample()
            text0, cpu0 = starts.pop(id(c))
            text1 = await asyncio.to_thread(_scrape, running.metrics_url)
            c.extra["cpu_s"] = running.meter.cpu_seconds - cpu0
            lat: dict[str, dict[str, float]] = {}
            if text1:
                for result in RESULTS:
                    h = sampler.delta(sampler.parse_histogram(text1, ATTEMPT_METRIC, {"result": result}),
                                      sampler.parse_histogram(text0, ATTEMPT_METRIC, {"result": result}))
                    if (item := sampler.latency_ms(h)) is not None:
                        lat[result] = item
            c.extra["latency"] = lat

        try:
            await _wait_ready(running)
            progress(f"  {contender} ready after {time.monotonic() - running.started:.1f} s")
            ex = Executor(client, informer, p.case.default_pod_template, p.name, progress, on_start, on_stop)
            results = await ex.run(p.ops)
            _fill(r, p.workload, results)
            running.check_alive()
        finally:
            meter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await meter
            running.meter.sample()
            r.cpu_s_total = running.meter.cpu_seconds
            r.peak_rss_mb = running.meter.peak_rss_bytes / 2**20
            await asyncio.to_thread(running.stop)
            await informer.stop()


def _fill(r: PerfRun, w: config.Workload, results: list[Collection]) -> None:
    if not results:
        return
    c = results[0]  # the performance workloads have one window; more are reported by name in the log
    r.metric_window = c.name
    r.SchedulingThroughput = c.sampler.summary()
    r.samples = [round(s, 3) for s in c.sampler.samples]
    r.scheduled_in_window = c.scheduled
    r.window_s = c.stopped - c.started
    if c.created:
        r.created_s = c.created_s
        r.bound_when_created = c.bound_when_created / c.created
    r.cpu_s = float(c.extra.get("cpu_s", 0.0))
    r.attempt_latency_ms = dict(c.extra.get("latency", {}))
    if r.SchedulingThroughput is not None and w.threshold and w.threshold_metric == "SchedulingThroughput":
        value = r.SchedulingThroughput.get(w.threshold_bucket, 0.0)
        r.meets_threshold = value < w.threshold if w.threshold_lower else value > w.threshold
