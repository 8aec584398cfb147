"""`kubesched chaos gangs`: the gang stress of issue 22 on a fresh plane with the GenericWorkload
gate on, for kube-scheduler and kubesched one after the other on the same nodes and the same
workload (bench/gang_stress.py), `rounds` times, interleaved.

The nodes: `nodes` kwok nodes, of which `room` have one CPU (a pod of the plan fits) and the others
500m (none fits), so `room` pods run at once wherever they land, and every node is still filtered.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.api import ApiClient, load_config
from kubesched_dev.bench.contenders import STARTERS, RunContext, warm_bytecode
from kubesched_dev.bench.gang_stress import GangPlan, GangRun, run_plan
from kubesched_dev.localcluster import plane
from kubesched_dev.localcluster.topology import NodeSpec, Topology

Progress = Callable[[str], None]
CONTENDERS = ("kube-scheduler", "kubesched")
FEATURE_GATES = "GenericWorkload=true"
RUNTIME_CONFIG = "scheduling.k8s.io/v1beta1=true"
PLANE_PREFIX = "kubesched-chaos-"
SCHEDULER_NAME = "gangs"


@dataclass
class GangChaosOptions:
    out: Path
    nodes: int = 100
    room: int = 20
    plan: GangPlan = field(default_factory=GangPlan)
    rounds: int = 1
    contenders: tuple[str, ...] = CONTENDERS


@dataclass
class GangChaosResult:
    nodes: int
    room: int
    runs: list[GangRun] = field(default_factory=list)
    load: list[tuple[float, float, float]] = field(default_factory=list)  # load average after each run
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.runs) and all(r.ok for r in self.runs)

    def summary(self) -> str:
        lines = [f"gangs: {'PASS' if self.ok else 'FAIL'} on {self.nodes} nodes with room for {self.room} pods"]
        for run, load in zip(self.runs, self.load, strict=False):
            lines.append(f"  {run.summary()} (load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
        if self.error:
            lines.append(f"  error: {self.error}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "room": self.room, "runs": [r.as_dict() for r in self.runs],
                "load": self.load, "error": self.error, "ok": self.ok}


def topology(nodes: int, room: int) -> Topology:
    if not 0 < room <= nodes:
        raise ValueError(f"--room {room}: must be between 1 and --nodes ({nodes})")
    specs = [NodeSpec(f"node-{i:04d}", capacity={"cpu": "1" if i < room else "500m", "memory": "32Gi",
                                                 "pods": "110"}) for i in range(nodes)]
    return Topology(f"gangs-{nodes}-room-{room}", tuple(specs))


def run(opts: GangChaosOptions, progress: Progress = print) -> GangChaosResult:
    opts.out.mkdir(parents=True, exist_ok=True)
    result = GangChaosResult(opts.nodes, opts.room)
    for c in plane.list_clusters():
        if c.name.startswith(PLANE_PREFIX) and c.owner_pid and not os.path.exists(f"/proc/{c.owner_pid}"):
            plane.down(c.name, progress)
    warm_bytecode()
    name = f"{PLANE_PREFIX}{os.getpid()}-gangs"
    cluster = plane.up(name, topology(opts.nodes, opts.room), default_scheduler=False,
                       feature_gates=FEATURE_GATES, runtime_config=RUNTIME_CONFIG,
                       progress=lambda m: progress(f"  plane: {m}") if "ready in" in m else None)
    try:
        for k in range(opts.rounds):
            for contender in opts.contenders:
                workdir = opts.out / f"{contender}-{k + 1}"
                workdir.mkdir(parents=True, exist_ok=True)
                ctx = RunContext(cluster, SCHEDULER_NAME, workdir, feature_gates={"GenericWorkload": True})
                running = STARTERS[contender](ctx)
                try:
                    deadline = time.monotonic() + 120
                    while not running.ready():
                        running.check_alive()
                        if time.monotonic() > deadline:
                            raise TimeoutError(f"{contender} not ready within 120 s; log {running.log_path}")
                        time.sleep(0.1)
                    progress(f"round {k + 1}: {contender} ready")
                    gang_run = asyncio.run(_one(cluster, f"gangs-{contender}-{k + 1}", opts.plan, progress))
                    gang_run.scheduler = contender
                    running.check_alive()
                finally:
                    running.stop(timeout=20)
                result.runs.append(gang_run)
                result.load.append(os.getloadavg())
                progress(f"  {gang_run.summary()}")
    except Exception as e:
        result.error = f"{type(e).__name__}: {e}"
    finally:
        plane.down(name, lambda m: None)
    return result


async def _one(cluster: plane.Cluster, namespace: str, plan: GangPlan, progress: Progress) -> GangRun:
    async with ApiClient(load_config(cluster.kubeconfig), qps=-1, burst=0, max_connections=40,
                         user_agent="kubesched-chaos-gangs") as client:
        return await run_plan(client, namespace, SCHEDULER_NAME, plan, lambda m: progress(f"  {m}"))
