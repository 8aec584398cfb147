"""One local control plane per test session, shared by every integration test.

If the plane cannot be built or started, the fixture raises and every test that needs it errors:
a missing control plane must never look like a pass or a skip.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from kubesched_dev.localcluster import build
from kubesched_dev.localcluster import plane as planes
from kubesched_dev.localcluster.topology import seed_kind
from tests.integration.kube import Kube


def _progress(message: str) -> None:
    print(f"[plane] {message}", file=sys.stderr, flush=True)


def _remove_stale_test_clusters() -> None:
    for c in planes.list_clusters():
        if c.name.startswith("kubesched-test-") and c.owner_pid and not os.path.exists(f"/proc/{c.owner_pid}"):
            _progress(f"removing stale test cluster {c.name}")
            planes.down(c.name, _progress)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build the plane's binaries (~14 min cold) before the first test, outside its timeout (pytest-timeout
    counts fixture set-up); `./dev test` has built them already. A failed build is left to `plane`,
    which raises it for every test that needs the plane."""
    here = Path(__file__).parent
    if build.is_built() or not any(item.path.is_relative_to(here) for item in session.items):
        return
    try:
        build.ensure_built(_progress)
    except Exception as exc:
        _progress(f"building the control plane failed: {exc}")


@pytest.fixture(scope="session")
def plane() -> Iterator[Kube]:
    _remove_stale_test_clusters()
    name = f"kubesched-test-{os.getpid()}"
    cluster = planes.up(name, seed_kind(), progress=_progress)
    try:
        yield Kube(cluster)
    finally:
        planes.down(name, _progress)


class KubeschedProcess:
    """`kubesched run` as a real subprocess against a plane, its log kept in a file for assertions.

    Leader election is off unless the test passes a --leader-elect flag: the many kubesched a session
    runs side by side, each under its own scheduler name, must not contend for one lease; the secure
    port is off unless the test passes --secure-port, for they cannot all have 10259. `ready` is the
    log line to wait for (every replica, standby or not, logs "caches synced")."""

    def __init__(self, plane: Kube, args: list[str], log_path: Path, env: Mapping[str, str] | None = None,
                 ready: str = "caches synced") -> None:
        self.plane = plane
        if not any(a.startswith("--leader-elect") for a in args):
            args = ["--leader-elect=false", *args]
        if not any(a.startswith("--secure-port") for a in args):
            # kube-scheduler's default port 10259 is one per machine; tests that serve pass their own
            args = ["--secure-port=0", *args]
        self.args = args
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", "run", f"--kubeconfig={plane.kubeconfig}", "--logging-format=json",
             *args], stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **env} if env else None)
        deadline = time.monotonic() + 60
        while ready not in self.log():
            if self.proc.poll() is not None:
                raise RuntimeError(f"kubesched {' '.join(args)} exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"kubesched {' '.join(args)} did not log {ready!r} within 60 s:\n{self.log()}")
            time.sleep(0.1)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


@pytest.fixture(scope="session")
def start_kubesched(plane: Kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        Callable[..., KubeschedProcess]]:
    """Start `kubesched run <args>` against the session plane; every instance is stopped at the end."""
    started: list[KubeschedProcess] = []
    counter = iter(range(10**6))

    def start(*args: str, on: Kube | None = None, env: Mapping[str, str] | None = None,
              ready: str = "caches synced") -> KubeschedProcess:
        """`env` is added to this process's environment (e.g. PYTHONPATH for out-of-tree plugins)."""
        log_path = tmp_path_factory.mktemp("kubesched") / f"kubesched-{next(counter)}.log"
        proc = KubeschedProcess(on or plane, list(args), log_path, env, ready)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture(scope="session")
def kubesched(start_kubesched: Callable[..., KubeschedProcess]) -> KubeschedProcess:
    """One kubesched with the default config (scheduler name `kubesched`) for the whole session."""
    return start_kubesched()
