"""`--restart-check`: a contender started again with every measured pod already bound.

After a run (all its pods bound, the contender stopped), a few new pending pods are created and
the contender is started once more: it must list the bound pods (the decode and cache path at
scale) before it can place the new ones. Measured from the new process's start: until it says it
is ready (kubesched: "caches synced"; kube-scheduler: /readyz), until the first new pod is bound,
until all are; and its peak RSS, which now holds every bound pod from the start.
"""

from __future__ import annotations

import asyncio
import time

from kubesched.api import ApiClient
from kubesched_dev.bench import workload
from kubesched_dev.bench.contenders import STARTERS, RunContext, Running
from kubesched_dev.bench.report import Restart
from kubesched_dev.bench.watcher import Watcher

RESTART_PODS = 20
POLL = 0.1


def restart_names(count: int) -> list[str]:
    return [f"restart-{i:0{len(str(max(count - 1, 0)))}d}" for i in range(count)]


def figures(started: float, ready_at: float | None, bound_at: dict[str, float], names: list[str]) -> Restart:
    """The restart's seconds from the process start, from what was seen (pure)."""
    times = [bound_at[n] for n in names if n in bound_at]
    return Restart(pods=len(names), ready_s=None if ready_at is None else ready_at - started,
                   first_bind_s=min(times) - started if times else None,
                   all_bound_s=max(times) - started if len(times) == len(names) and times else None)


def timeout_for(already_bound: int) -> float:
    """Generous: a list of 2,000 pods a second on a loaded machine, plus start-up."""
    return 120 + already_bound / 2000


async def measure(contender: str, ctx: RunContext, client: ApiClient, count: int = RESTART_PODS) -> Restart:
    names = restart_names(count)
    await workload.create_all(client, names, ctx.scheduler_name, lambda _n, _t: None)
    watcher = Watcher(client)
    await watcher.start()
    already = watcher.bound_before_start
    sub = RunContext(ctx.cluster, ctx.scheduler_name, ctx.workdir / "restart")
    sub.workdir.mkdir(parents=True, exist_ok=True)
    running = STARTERS[contender](sub)
    ready_at: float | None = None
    error = ""
    try:
        deadline = running.started + timeout_for(already)
        while not all(n in watcher.bound_at for n in names):
            await asyncio.sleep(POLL)
            running.meter.sample()
            running.check_alive()
            if ready_at is None and await asyncio.to_thread(running.ready):
                ready_at = time.monotonic()
            if time.monotonic() > deadline:
                bound = sum(n in watcher.bound_at for n in names)
                raise TimeoutError(f"restart: {bound}/{count} new pods bound after {timeout_for(already):.0f} s "
                                   f"(log {running.log_path})")
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
    finally:
        await asyncio.to_thread(_stop, running)
        await watcher.stop()
    result = figures(running.started, ready_at, watcher.bound_at, names)
    result.already_bound, result.error = already, error
    result.peak_rss_mb = running.meter.peak_rss_bytes / 2**20
    return result


def _stop(running: Running) -> None:
    running.stop()
