"""kubesched's secure port under a connection flood: 2,000 TCP connections that never start TLS and
500 that finish the handshake and then send half a request header, held open from this process
while kubesched binds a burst of pods at its full client rate. Every pod must be bound within a
bound of the same burst without the flood, /healthz on the secure port must keep answering within
a few seconds, and the server must close every flood connection itself after its read-header
timeout (32 s, as k8s.io/apiserver's ReadHeaderTimeout; Go's TLS handshake gets the same), not
before: kubesched's connection cap (half the raised open-file limit, at most 4,096) is above the
flood here, so nothing is evicted early. The idle timeout after a request (90 s) is the unit tests'
(tests/unit/serving/test_serving_limits.py): waiting for it here would add a minute and a half."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import resource
import ssl
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kubesched.serving.server import READ_HEADER_TIMEOUT
from kubesched_dev.localcluster.http import create_all, tls_context
from kubesched_dev.localcluster.procs import free_port
from kubesched_dev.localcluster.topology import NodeSpec
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import create_nodes, delete_nodes, node_manifest, pod_manifest

pytestmark = pytest.mark.timeout(240)

SCHEDULER = "flood-sched"
POOL = {"flood-pool": "1"}
IDLE, HALF_OPEN, PODS = 2000, 500, 300
# this process's own descriptors: the flood, the pod creations' pool, the plane's clients, pytest
NEEDED_FILES = IDLE + HALF_OPEN + 500
CLOSE_SLACK = 5.0  # after the timeout: the accept's lag, the watch's period, a busy 2-core box
HEALTHZ_WITHIN = 3.0


@dataclass
class Held:
    """One flood connection: when it was opened (for a half-open one: its half header sent) and
    when this process saw the server close it."""

    kind: str
    opened: float
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    closed_at: float | None = None

    def closed(self) -> bool:
        return self.reader.at_eof() or self.reader.exception() is not None


@dataclass
class Flooded:
    bind_seconds: float
    held: list[Held]
    open_after_burst: int
    healthz: list[tuple[int, float]] = field(default_factory=list)


@pytest.fixture
def open_files() -> Iterator[None]:
    """The soft open-file limit raised for the flood (and restored), within the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < NEEDED_FILES:
        pytest.fail(f"the hard open-file limit is {hard}; the flood needs {NEEDED_FILES} descriptors here")
    if soft != resource.RLIM_INFINITY and soft < NEEDED_FILES:
        resource.setrlimit(resource.RLIMIT_NOFILE, (NEEDED_FILES, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _healthz(port: int) -> tuple[int, float]:
    """GET /healthz on the secure port, anonymous (an always-allowed path): (status, seconds)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # self-signed; checked in the unit tests
    started = time.monotonic()
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    try:
        conn.request("GET", "/healthz")
        resp = conn.getresponse()
        resp.read()
        return resp.status, time.monotonic() - started
    except OSError:
        return 0, time.monotonic() - started
    finally:
        conn.close()


def _burst(plane: Kube, ns: str, tag: str) -> float:
    """Creates PODS pods for kubesched; the seconds from the first creation to the last bound."""
    pki = Path(plane.cluster.dir) / "pki"
    ctx = tls_context(pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
    pods = [pod_manifest(f"{tag}-{i:03d}", SCHEDULER, {"nodeSelector": POOL}, labels={"burst": tag})
            for i in range(PODS)]
    started = time.monotonic()
    asyncio.run(create_all(plane.server, ctx, f"/api/v1/namespaces/{ns}/pods", pods, lambda _: None))

    def all_bound() -> bool:
        return sum(1 for p in plane.pods(ns, f"burst={tag}") if p["spec"].get("nodeName")) == PODS
    wait_for(f"the {PODS} pods of burst {tag!r} bound", all_bound, timeout=120, interval=0.2)
    return time.monotonic() - started


async def _open_idle(port: int) -> list[Held]:
    slots = asyncio.Semaphore(250)

    async def one() -> Held:
        async with slots:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            return Held("idle", time.monotonic(), reader, writer)

    return list(await asyncio.gather(*(one() for _ in range(IDLE))))


async def _open_half(port: int) -> list[Held]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    slots = asyncio.Semaphore(50)

    async def one(i: int) -> Held:
        async with slots:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
            writer.write(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: flood-{i}\r\n".encode())
            await writer.drain()
            return Held("half-open", time.monotonic(), reader, writer)

    return list(await asyncio.gather(*(one(i) for i in range(HALF_OPEN))))


async def _watch(held: list[Held], all_closed: asyncio.Event) -> None:
    while not all_closed.is_set():
        now = time.monotonic()
        for h in held:
            if h.closed_at is None and h.closed():
                h.closed_at = now
        if all(h.closed_at is not None for h in held):
            all_closed.set()
        await asyncio.sleep(0.25)


def _probe(port: int, stop: threading.Event, answers: list[tuple[int, float]]) -> None:
    while not stop.is_set():
        answers.append(_healthz(port))
        stop.wait(0.5)


async def _flood(plane: Kube, ns: str, port: int) -> Flooded:
    held = await _open_idle(port) + await _open_half(port)
    all_closed = asyncio.Event()
    watcher = asyncio.create_task(_watch(held, all_closed))
    stop = threading.Event()
    answers: list[tuple[int, float]] = []
    prober = asyncio.create_task(asyncio.to_thread(_probe, port, stop, answers))
    try:
        seconds = await asyncio.to_thread(_burst, plane, ns, "flood")
        open_after = sum(1 for h in held if h.closed_at is None)
        stop.set()
        await prober
        deadline = max(h.opened for h in held) + READ_HEADER_TIMEOUT + CLOSE_SLACK
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(all_closed.wait(), max(0.0, deadline - time.monotonic()))
        return Flooded(seconds, held, open_after, answers)
    finally:
        stop.set()
        watcher.cancel()
        for h in held:
            h.writer.transport.abort()


def _spread(values: list[float]) -> str:
    return f"min {min(values):.1f} s, median {statistics.median(values):.1f} s, max {max(values):.1f} s"


def test_a_flood_of_idle_and_half_open_connections_does_not_starve_binding(
        plane: Kube, start_kubesched: Callable[..., KubeschedProcess], open_files: None) -> None:
    port = free_port()
    proc = start_kubesched(f"--scheduler-name={SCHEDULER}", f"--secure-port={port}", "--bind-address=127.0.0.1",
                           "--kube-api-qps=200", "--kube-api-burst=400")
    ns = plane.namespace("secure-port-flood")
    nodes = [NodeSpec(f"flood-{i}", labels=POOL, capacity={"cpu": "64", "memory": "256Gi", "pods": "400"})
             for i in range(2)]
    create_nodes(plane, [node_manifest(n) for n in nodes])
    try:
        assert _healthz(port)[0] == 200
        baseline = _burst(plane, ns, "base")
        flooded = asyncio.run(_flood(plane, ns, port))
    finally:
        plane.delete(f"/api/v1/namespaces/{ns}")
        delete_nodes(plane, [n.name for n in nodes])
    idle = [h for h in flooded.held if h.kind == "idle"]
    half = [h for h in flooded.held if h.kind == "half-open"]
    latencies = [s for _, s in flooded.healthz]
    print(f"\n{PODS} pods bound in {baseline:.1f} s without the flood, {flooded.bind_seconds:.1f} s with "
          f"{len(idle)} idle and {len(half)} half-open connections held ({flooded.open_after_burst} still open "
          f"when the last was bound); /healthz during the flood: {len(latencies)} answers, {_spread(latencies)}")
    for kind, group in (("idle", idle), ("half-open", half)):
        after = [h.closed_at - h.opened for h in group if h.closed_at is not None]
        print(f"{kind}: {len(after)} of {len(group)} closed by the server, {_spread(after) if after else '-'} "
              "after opening")

    assert flooded.bind_seconds <= 2 * baseline + 5, (flooded.bind_seconds, baseline)
    assert flooded.healthz, "no /healthz answer during the flood"
    assert {status for status, _ in flooded.healthz} == {200}, flooded.healthz
    assert max(latencies) <= HEALTHZ_WITHIN, latencies
    for kind, group in (("idle", idle), ("half-open", half)):
        still = [h for h in group if h.closed_at is None]
        assert not still, f"{len(still)} {kind} connections still open {READ_HEADER_TIMEOUT + CLOSE_SLACK} s on"
        after = [h.closed_at - h.opened for h in group if h.closed_at is not None]
        # closed by the read-header timeout, not at once: nothing is evicted, the cap is above the
        # flood. The opening time is this process's, taken when its loop got round to it (on a
        # loaded machine up to seconds after the server's accept), so the bound is a loose one.
        assert min(after) >= READ_HEADER_TIMEOUT / 2, (kind, _spread(after))
        assert max(after) <= READ_HEADER_TIMEOUT + CLOSE_SLACK, (kind, _spread(after))
    log = proc.log()
    assert "Too many open files" not in log
    assert "accept failed" not in log
