"""The three contenders, each started as a process against a plane once its pods exist.

All of them use the plane's admin kubeconfig, so the apiserver does the same authentication and
authorization work for each; kube-scheduler and kubesched get the same
KubeSchedulerConfiguration (one profile with the bench's scheduler name, QPS/burst 5000, no
leader election).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kubesched_dev.bench.procstat import Meter, descendants
from kubesched_dev.localcluster import build, procs
from kubesched_dev.localcluster.http import get, tls_context
from kubesched_dev.localcluster.paths import cache_root
from kubesched_dev.localcluster.plane import Cluster

NAMES = ("limit", "kube-scheduler", "kubesched")
QPS = 5000


@dataclass
class RunContext:
    cluster: Cluster
    scheduler_name: str
    workdir: Path  # this run's own directory for logs and configs
    profile_to: Path | None = None  # profile kubesched into this file (suffix chosen by the profiler)
    feature_gates: dict[str, bool] = field(default_factory=dict)  # --feature-gates for either scheduler
    # Serve /metrics where the bench can scrape it without credentials (Running.metrics_url).
    metrics: bool = False


def _gates(ctx: RunContext) -> list[str]:
    if not ctx.feature_gates:
        return []
    return ["--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(ctx.feature_gates.items()))]


def python_env() -> dict[str, str]:
    """The environment for Python contenders: bytecode cached (outside the tree).

    This machine sets PYTHONDONTWRITEBYTECODE, so every start would compile kubesched and its
    dependencies from source (~1.6 s of CPU, seen in a profile) before the first bind; an
    installed scheduler never pays that."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache_root() / "pycache")
    return env


def warm_bytecode() -> None:
    """Compile once before the first run, so round 1 starts like the others."""
    imports = "import kubesched.cmd.main, kubesched.cmd.run, kubesched.scheduler.scheduler, kubesched_dev.bench.limit"
    subprocess.run([sys.executable, "-c", imports], env=python_env(), check=True)


class Running:
    """A started contender: its process, log, a readiness check and a meter of its resources."""

    def __init__(self, name: str, args: list[str], log: Path, ready: Callable[[Running], bool],
                 wrapper: bool = False, profile_path: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.args = args
        self.log_path = log
        self._log = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True, env=env)
        self.meter = Meter(self.proc.pid, include_children=wrapper)
        self._ready = ready
        self._wrapper = wrapper
        self.profile_path = profile_path
        self.metrics_url = ""  # set by starters that serve /metrics (RunContext.metrics)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def ready(self) -> bool:
        return self._ready(self)

    def check_alive(self) -> None:
        code = self.proc.poll()
        if code is not None:
            raise RuntimeError(f"{self.name} exited with {code}; last lines of {self.log_path}:\n"
                               f"{procs.tail(self.log_path)}")

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM to the scheduler itself (under a profiler: the profiled child, so the profiler
        writes its output when the child is gone), then SIGKILL if it lingers."""
        self.meter.sample()
        if self.proc.poll() is None:
            target = self.proc.pid
            if self._wrapper:
                kids = [p for p in descendants(self.proc.pid) if p != self.proc.pid]
                target = kids[0] if kids else self.proc.pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(target, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGKILL)
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def scheduler_config(ctx: RunContext, content_type: str | None = None) -> Path:
    """The contenders' configuration; `content_type` sets clientConnection.contentType (unset: the
    default, protobuf for both schedulers)."""
    path = ctx.workdir / "scheduler-config.yaml"
    connection: dict[str, object] = {"kubeconfig": ctx.cluster.kubeconfig, "qps": QPS, "burst": QPS}
    if content_type is not None:
        connection["contentType"] = content_type
    path.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": connection,
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": ctx.scheduler_name}],
    }, sort_keys=False))
    return path


def start_limit(ctx: RunContext) -> Running:
    return Running("limit", [sys.executable, "-m", "kubesched_dev.bench.limit",
                             f"--kubeconfig={ctx.cluster.kubeconfig}", f"--scheduler-name={ctx.scheduler_name}"],
                   ctx.workdir / "limit.log", lambda r: "ready:" in r.log(), env=python_env())


def start_kube_scheduler(ctx: RunContext) -> Running:
    port = procs.free_port()
    d = ctx.cluster.path
    args = [str(build.bin_dir() / "kube-scheduler"), f"--config={scheduler_config(ctx)}",
            "--bind-address=127.0.0.1", f"--secure-port={port}", f"--cert-dir={ctx.workdir / 'kube-scheduler-certs'}",
            f"--authentication-kubeconfig={d / 'scheduler.kubeconfig'}",
            f"--authorization-kubeconfig={d / 'scheduler.kubeconfig'}", "--v=1", *_gates(ctx)]
    if ctx.metrics:
        # Anonymous requests pass delegated authentication; this lets them past authorization too.
        args.append("--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics")
    insecure = tls_context(None)

    def ready(_: Running) -> bool:
        try:
            return get(f"https://127.0.0.1:{port}/readyz", insecure, timeout=1.0)[0] == 200
        except OSError:
            return False

    running = Running("kube-scheduler", args, ctx.workdir / "kube-scheduler.log", ready)
    if ctx.metrics:
        running.metrics_url = f"https://127.0.0.1:{port}/metrics"
    return running


def start_kubesched(ctx: RunContext, name: str = "kubesched", extra: tuple[str, ...] = (),
                    content_type: str | None = None) -> Running:
    run_args = ["run", f"--kubeconfig={ctx.cluster.kubeconfig}", f"--config={scheduler_config(ctx, content_type)}",
                "--logging-format=json", "--secure-port=0", *_gates(ctx), *extra]
    serve_port = procs.free_port() if ctx.metrics else 0
    if serve_port:
        run_args.append(f"--serve-address=127.0.0.1:{serve_port}")
    profile_path: Path | None = None
    wrapper = False
    if ctx.profile_to is None:
        args = [sys.executable, "-m", "kubesched", *run_args]
    elif (py_spy := shutil.which("py-spy")) is not None:
        profile_path = ctx.profile_to.with_suffix(".speedscope.json")
        args = [py_spy, "record", "--format=speedscope", f"--output={profile_path}", "--rate=200", "--",
                sys.executable, "-m", "kubesched", *run_args]
        wrapper = True
    else:
        profile_path = ctx.profile_to.with_suffix(".prof")
        args = [sys.executable, "-m", "cProfile", "-o", str(profile_path), "-m", "kubesched", *run_args]
    running = Running(name, args, ctx.workdir / f"{name}.log", lambda r: "caches synced" in r.log(),
                      wrapper=wrapper, profile_path=profile_path, env=python_env())
    if serve_port:
        running.metrics_url = f"http://127.0.0.1:{serve_port}/metrics"
    return running


STARTERS: dict[str, Callable[[RunContext], Running]] = {
    "limit": start_limit,
    "kube-scheduler": start_kube_scheduler,
    "kubesched": start_kubesched,
    # The same scheduler on asyncio's own event loop: the before/after of moving to uvloop.
    "kubesched-asyncio": functools.partial(start_kubesched, name="kubesched-asyncio",
                                           extra=("--event-loop=asyncio",)),
    # The same scheduler writing its bindings and events as JSON: the before/after of protobuf writes.
    "kubesched-json": functools.partial(start_kubesched, name="kubesched-json", content_type="application/json"),
}
