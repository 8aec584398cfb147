"""Prometheus metrics under kube-scheduler's names, and the HTTP endpoints that serve them.

Label children are resolved once per profile, so the per-pod cost is an increment or an observe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

# kube-scheduler's buckets for scheduler_scheduling_algorithm_duration_seconds (1 ms doubling).
_BUCKETS = tuple(0.001 * 2**i for i in range(15))


class _PendingPods(Collector):
    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("scheduler_pending_pods", "Number of pending pods, by the queue type.",
                                   labels=["queue"])
        for queue, n in self._counts().items():
            family.add_metric([queue], n)
        yield family


class Metrics:
    def __init__(self, profiles: list[str], pending: Callable[[], dict[str, int]]) -> None:
        self.registry = CollectorRegistry()
        attempts = Counter("scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result.",
                           ["result", "profile"], registry=self.registry)
        algorithm = Histogram("scheduler_scheduling_algorithm_duration_seconds",
                              "Scheduling algorithm latency in seconds", buckets=_BUCKETS, registry=self.registry)
        binding = Histogram("scheduler_binding_duration_seconds", "Binding latency in seconds",
                            buckets=_BUCKETS, registry=self.registry)
        self.scheduled = {p: attempts.labels("scheduled", p) for p in profiles}
        self.unschedulable = {p: attempts.labels("unschedulable", p) for p in profiles}
        self.error = {p: attempts.labels("error", p) for p in profiles}
        self.algorithm = algorithm
        self.binding = binding
        self.registry.register(_PendingPods(pending))
        # client-go's leader-election gauge; its series exists only when leader election is on.
        self._leader = Gauge("leader_election_master_status",
                             "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                             "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                             ["name"], registry=self.registry)

    def leader_status(self, name: str) -> Callable[[bool], None]:
        """Start exporting leader_election_master_status{name=...} (at 0); the setter it returns takes
        whether this process leads."""
        child = self._leader.labels(name)
        child.set(0)
        return lambda leading: child.set(1 if leading else 0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


async def serve(address: str, metrics: Metrics, ready: Callable[[], bool],
                health: Callable[[], str | None] = lambda: None) -> web.AppRunner:
    """/healthz, /livez (failing with the reason when `health` gives one), /readyz (ready once the
    caches are synced, and healthy) and /metrics over plain HTTP."""
    host, _, port = address.rpartition(":")

    async def healthz(_: web.Request) -> web.Response:
        reason = health()
        return web.Response(text="ok") if reason is None else web.Response(status=500, text=reason)

    async def readyz(_: web.Request) -> web.Response:
        reason = health()
        if reason is not None:
            return web.Response(status=503, text=reason)
        return web.Response(text="ok") if ready() else web.Response(status=503, text="caches not synced")

    async def metrics_page(_: web.Request) -> web.Response:
        return web.Response(body=metrics.exposition(), content_type="text/plain", charset="utf-8")

    app = web.Application()
    app.add_routes([web.get("/healthz", healthz), web.get("/livez", healthz), web.get("/readyz", readyz),
                    web.get("/metrics", metrics_page)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host or "127.0.0.1", int(port)).start()
    return runner
