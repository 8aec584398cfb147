"""Prometheus metrics under kube-scheduler v1.37's names, types, labels and buckets (served by
kubesched.serving). Nothing is exported under a scheduler_ name kube-scheduler lacks.

Label children are resolved once per profile, so the per-pod cost is an increment or an observe;
gauges that mirror state (pending pods, unschedulable pods by plugin, cache size) are computed at
scrape time, so they cost nothing per pod.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

# kube-scheduler exports no *_created series.
disable_created_metrics()  # type: ignore[no-untyped-call]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """component-base's ExponentialBuckets, multiplied step by step as Go does (same floats)."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


ATTEMPT_BUCKETS = exponential_buckets(0.001, 2, 15)
EXTENSION_POINT_BUCKETS = exponential_buckets(0.0001, 2, 12)
PLUGIN_BUCKETS = exponential_buckets(0.00001, 1.5, 20)
SLI_BUCKETS = exponential_buckets(0.01, 2, 20)
ATTEMPTS_BUCKETS = exponential_buckets(1, 2, 5)
VICTIMS_BUCKETS = exponential_buckets(1, 2, 7)

# fwk.Code.String(), for the status label, by kubesched's Code value.
STATUS_LABELS = ("Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending")

# The extension points the framework runtime times (framework/runtime/framework.py).
POST_FILTER, RESERVE, PERMIT, PRE_BIND_PRE_FLIGHT, PRE_BIND, BIND, POST_BIND = (
    "PostFilter", "Reserve", "Permit", "PreBindPreFlight", "PreBind", "Bind", "PostBind")
EXTENSION_POINTS = (POST_FILTER, RESERVE, PERMIT, PRE_BIND_PRE_FLIGHT, PRE_BIND, BIND, POST_BIND)
MAX_ATTEMPTS_LABEL = 15


def _gauge(name: str, help_: str, label: list[str], values: Callable[[], dict[Any, int]]) -> Collector:
    """A GaugeVec read from `values` at each scrape. A series once shown stays, at 0 when its key is
    gone, as a component-base GaugeVec child does once created (kube-scheduler never deletes them)."""
    seen: dict[Any, None] = {}

    class _Scraped(Collector):
        def collect(self) -> Iterator[GaugeMetricFamily]:
            family = GaugeMetricFamily(name, help_, labels=label)
            now = values()
            for key in now:
                seen.setdefault(key)
            for key in seen:
                family.add_metric(list(key) if isinstance(key, tuple) else [key], now.get(key, 0))
            yield family

    return _Scraped()


class _VolumeStageErrors(Collector):
    """scheduler_volume_scheduling_stage_error_total{operation}: a family shown only once an operation
    failed, as a component-base CounterVec without children is not shown at all."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def collect(self) -> Iterator[CounterMetricFamily]:
        if not self.counts:
            return
        family = CounterMetricFamily("scheduler_volume_scheduling_stage_error",
                                     "[ALPHA] Volume scheduling stage error count", labels=["operation"])
        for operation, n in sorted(self.counts.items()):
            family.add_metric([operation], n)
        yield family


class HistogramChild:
    """One series: a bucket count per bound (the last is +Inf) and the sum. The scheduler observes from
    one thread (the event loop), so no lock: an observe is a bisect and two additions, several times
    cheaper than prometheus_client's locked Histogram on the per-pod path."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def observe_n(self, value: float, n: int) -> None:
        """`n` observations of `value` at once."""
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.sum += value * n


class Histogram(Collector):
    """A histogram family exported at scrape time with cumulative buckets, as prometheus_client's."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (), *,
                 buckets: tuple[float, ...], registry: CollectorRegistry) -> None:
        self._name = name
        self._doc = documentation
        self._labelnames = list(labelnames)
        self._bounds = tuple(float(b) for b in buckets)
        self._children: dict[tuple[str, ...], HistogramChild] = {}
        if not self._labelnames:
            self._children[()] = HistogramChild(self._bounds)
        registry.register(self)

    def labels(self, *values: str) -> HistogramChild:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = HistogramChild(self._bounds)
        return child

    def observe(self, value: float) -> None:
        self._children[()].observe(value)

    def collect(self) -> Iterator[HistogramMetricFamily]:
        if not self._children:
            return  # a vector without series is not exported at all, as in component-base
        family = HistogramMetricFamily(self._name, self._doc, labels=self._labelnames)
        les = [floatToGoString(b) for b in (*self._bounds, math.inf)]  # type: ignore[no-untyped-call]
        for values, child in list(self._children.items()):
            total = 0
            cumulative = []
            for le, n in zip(les, child.counts, strict=True):
                total += n
                cumulative.append((le, float(total)))
            family.add_metric(list(values), cumulative, sum_value=child.sum)
        yield family


class ProfileMetrics:
    """One profile's pre-bound children."""

    __slots__ = (
        "_point_family",
        "_profile",
        "error",
        "error_seconds",
        "points",
        "scheduled",
        "scheduled_seconds",
        "unschedulable",
        "unschedulable_seconds",
    )

    def __init__(self, profile: str, attempts: Counter, latency: Histogram, points: Histogram) -> None:
        self._profile = profile
        self._point_family = points
        self.scheduled = attempts.labels("scheduled", profile)
        self.unschedulable = attempts.labels("unschedulable", profile)
        self.error = attempts.labels("error", profile)
        self.scheduled_seconds = latency.labels("scheduled", profile)
        self.unschedulable_seconds = latency.labels("unschedulable", profile)
        self.error_seconds = latency.labels("error", profile)
        # (extension point, Code value) -> child; Success pre-bound, the rest on first use.
        self.points: dict[tuple[str, int], Any] = {
            (point, 0): points.labels(point, STATUS_LABELS[0], profile) for point in EXTENSION_POINTS}

    def point(self, extension_point: str, code: int, seconds: float) -> None:
        child = self.points.get((extension_point, code))
        if child is None:
            child = self.points[(extension_point, code)] = self._point_family.labels(
                extension_point, STATUS_LABELS[code], self._profile)
        child.observe(seconds)


class PluginDurations:
    """The framework's PluginRecorder (framework/plugin_metrics.py) over
    scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}; only sampled
    cycles call it."""

    __slots__ = ("_children", "_family")

    def __init__(self, family: Histogram) -> None:
        self._family = family
        self._children: dict[tuple[str, str, int], HistogramChild] = {}

    now = staticmethod(time.perf_counter)

    def observe(self, plugin: str, extension_point: str, code: int, seconds: float, count: int = 1) -> None:
        child = self._children.get((plugin, extension_point, code))
        if child is None:
            child = self._children[(plugin, extension_point, code)] = self._family.labels(
                plugin, extension_point, STATUS_LABELS[code])
        child.observe_n(seconds, count)


class Metrics:
    def __init__(self, profiles: list[str], pending: Callable[[], dict[str, int]], *,
                 unschedulable_pods: Callable[[], dict[tuple[str, str], int]] | None = None,
                 cache_size: Callable[[], dict[str, int]] | None = None, process: bool = True) -> None:
        self.registry = r = CollectorRegistry()
        attempts = Counter("scheduler_schedule_attempts",
                           "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a "
                           "pod could not be scheduled, while 'error' means an internal scheduler problem.",
                           ["result", "profile"], registry=r)
        latency = Histogram("scheduler_scheduling_attempt_duration_seconds",
                            "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                            ["result", "profile"], buckets=ATTEMPT_BUCKETS, registry=r)
        self.algorithm = Histogram("scheduler_scheduling_algorithm_duration_seconds",
                                   "[BETA] Scheduling algorithm latency in seconds", buckets=ATTEMPT_BUCKETS,
                                   registry=r)
        points = Histogram("scheduler_framework_extension_point_duration_seconds",
                           "[STABLE] Latency for running all plugins of a specific extension point.",
                           ["extension_point", "status", "profile"], buckets=EXTENSION_POINT_BUCKETS, registry=r)
        self.plugins = PluginDurations(Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "[BETA] Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], buckets=PLUGIN_BUCKETS, registry=r))
        sli = Histogram("scheduler_pod_scheduling_sli_duration_seconds",
                        "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
                        "queue and might involve multiple scheduling attempts.",
                        ["attempts"], buckets=SLI_BUCKETS, registry=r)
        # Children by attempts, capped at 15 ("15+") as kube-scheduler's getAttemptsLabel; each made on
        # first use, so only the attempt counts seen get series, as in kube-scheduler.
        self._sli_family = sli
        self._sli: list[Any] = [None] * (MAX_ATTEMPTS_LABEL + 1)
        self.pod_attempts = Histogram("scheduler_pod_scheduling_attempts",
                                      "[STABLE] Number of attempts to successfully schedule a pod.",
                                      buckets=ATTEMPTS_BUCKETS, registry=r)
        self._incoming_family = Counter("scheduler_queue_incoming_pods",
                                        "[STABLE] Number of pods added to scheduling queues by event and queue type.",
                                        ["queue", "event"], registry=r)
        self._incoming: dict[tuple[str, str], Any] = {}
        # DefaultPreemption moves them through the framework Handle (attempts: each PostFilter run;
        # victims: the number chosen, at each preemption carried out).
        self.preemption_attempts = Counter("scheduler_preemption_attempts",
                                           "[STABLE] Total preemption attempts in the cluster till now", registry=r)
        self.preemption_victims = Histogram("scheduler_preemption_victims",
                                            "[STABLE] Number of selected preemption victims for preemption initiated "
                                            "by a single pod", buckets=VICTIMS_BUCKETS, registry=r)
        # VolumeBinding moves it through the framework Handle. Its sibling
        # scheduler_volume_binder_cache_requests_total is registered by kube-scheduler but never
        # incremented, so it has no series there either.
        self._volume_stage_errors = _VolumeStageErrors()
        r.register(self._volume_stage_errors)
        self.profiles = {p: ProfileMetrics(p, attempts, latency, points) for p in profiles}
        r.register(_gauge("scheduler_pending_pods",
                          "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in "
                          "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of "
                          "pods in unschedulableEntities that the scheduler attempted to schedule and failed; "
                          "'gated' is the number of unschedulable pods that the scheduler never attempted to "
                          "schedule because they are gated.", ["queue"], pending))
        if unschedulable_pods is not None:
            r.register(_gauge("scheduler_unschedulable_pods",
                              "[BETA] The number of unschedulable pods broken down by plugin name. A pod will "
                              "increment the gauge for all plugins that caused it to not schedule and so this "
                              "metric have meaning only when broken down by plugin.",
                              ["plugin", "profile"], unschedulable_pods))
        if cache_size is not None:
            r.register(_gauge("scheduler_cache_size",
                              "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                              ["type"], cache_size))
        if process:
            ProcessCollector(registry=r)
        # client-go's leader-election gauge; its series exists only when leader election is on.
        self._leader = Gauge("leader_election_master_status",
                             "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                             "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                             ["name"], registry=r)

    def volume_stage_failed(self, operation: str) -> None:
        """scheduler_volume_scheduling_stage_error_total{operation} += 1 (predicate, assume, bind)."""
        counts = self._volume_stage_errors.counts
        counts[operation] = counts.get(operation, 0) + 1

    def incoming(self, queue: str, event: str) -> None:
        """scheduler_queue_incoming_pods_total{queue,event} += 1; the queue calls it on every move."""
        child = self._incoming.get((queue, event))
        if child is None:
            child = self._incoming[(queue, event)] = self._incoming_family.labels(queue, event)
        child.inc()

    def pod_scheduled(self, profile: ProfileMetrics, attempt_seconds: float, attempts: int,
                      sli_seconds: float | None) -> None:
        profile.scheduled.inc()
        profile.scheduled_seconds.observe(attempt_seconds)
        self.pod_attempts.observe(attempts)
        if sli_seconds is not None:
            i = min(attempts, MAX_ATTEMPTS_LABEL)
            child = self._sli[i]
            if child is None:
                child = self._sli[i] = self._sli_family.labels(
                    f"{MAX_ATTEMPTS_LABEL}+" if i == MAX_ATTEMPTS_LABEL else str(i))
            child.observe(sli_seconds)

    def leader_status(self, name: str) -> Callable[[bool], None]:
        """Start exporting leader_election_master_status{name=...} (at 0); the setter it returns takes
        whether this process leads."""
        child = self._leader.labels(name)
        child.set(0)
        return lambda leading: child.set(1 if leading else 0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


SHADOW_VERDICTS = ("same", "tie", "different", "unschedulable", "error")


class ShadowMetrics:
    """`kubesched shadow`'s own series (no scheduler_ name: it schedules nothing): each bind by the
    watched scheduler, by what kubesched would have done."""

    def __init__(self, process: bool = True) -> None:
        self.registry = r = CollectorRegistry()
        decisions = Counter("kubesched_shadow_decisions",
                            "Pods bound by the watched scheduler, by kubesched's verdict on the same state: same "
                            "node, a node of equal best score (tie), a different node, unschedulable, or error.",
                            ["verdict", "scheduler"], registry=r)
        self._decisions = decisions
        self.score_gap = Histogram("kubesched_shadow_score_gap",
                                   "For 'different' verdicts: kubesched's best total minus its total for the node "
                                   "the watched scheduler chose (absent when kubesched finds that node infeasible).",
                                   buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000), registry=r)
        self.seconds = Histogram("kubesched_shadow_evaluation_duration_seconds",
                                 "Time to evaluate one bound pod on every node.",
                                 buckets=ATTEMPT_BUCKETS, registry=r)
        if process:
            ProcessCollector(registry=r)

    def decided(self, verdict: str, scheduler: str) -> None:
        self._decisions.labels(verdict, scheduler).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
