"""kube-scheduler v1.37's metrics, fed from the cycles and the queue, with a fake clock where time matters."""

from __future__ import annotations

from typing import Any

from kubesched.backend.cache import Cache
from kubesched.backend.queue import QueuedPodInfo, SchedulingQueue
from kubesched.backend.queue.clock import FakeClock
from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework.events import NODE_ADD
from kubesched.framework.runtime.profile import build_profile
from kubesched.metrics import ATTEMPT_BUCKETS, EXTENSION_POINT_BUCKETS, SLI_BUCKETS, Metrics, exponential_buckets
from kubesched.model.objects import Pod
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.scheduler.schedule_one import Cycles
from tests.builders import make_node, make_pod
from tests.unit.scheduler.test_scheduler_binding import FakeConditions, FakeEvents, created, make_scheduler

PROFILE = "kubesched"


class _Recording:
    name = "Recording"

    async def bind(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def _setup() -> tuple[Cycles, SchedulingQueue, FakeClock, Metrics, dict[str, Pod]]:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    cache = Cache()
    cache.add_node(make_node("n1").capacity(cpu="1").obj())
    plugins: dict[str, tuple[PluginRef, ...]] = {"filter": (PluginRef("NodeResourcesFit"),),
                                                 "bind": (PluginRef("Recording"),)}
    profile = build_profile(ProfileConfig(PROFILE, plugins),
                            {"NodeResourcesFit": node_resources_fit.new, "Recording": lambda args: _Recording()})
    metrics = Metrics([PROFILE], queue.pending_counts, unschedulable_pods=queue.unschedulable_reasons,
                      process=False)
    queue.on_incoming = metrics.incoming
    store: dict[str, Pod] = {}
    cycles = Cycles({PROFILE: profile}, cache, queue, FakeConditions(), FakeEvents(), store, metrics)
    return cycles, queue, clock, metrics, store


def _value(metrics: Metrics, name: str, **labels: str) -> float | None:
    """The sample's value; None when the series is not exported at all (a zero is a zero)."""
    return metrics.registry.get_sample_value(name, labels)


def _pop(queue: SchedulingQueue) -> QueuedPodInfo:
    info = queue.pop_nowait()
    assert info is not None
    return info


def test_buckets_are_kube_schedulers() -> None:
    assert (ATTEMPT_BUCKETS[0], ATTEMPT_BUCKETS[-1], len(ATTEMPT_BUCKETS)) == (0.001, 16.384, 15)
    assert (EXTENSION_POINT_BUCKETS[-1], len(EXTENSION_POINT_BUCKETS)) == (0.2048, 12)
    assert len(SLI_BUCKETS) == 20
    assert exponential_buckets(1, 2, 5) == (1, 2, 4, 8, 16)


async def test_a_bound_pod_records_attempt_sli_attempts_and_extension_points() -> None:
    cycles, queue, clock, metrics, store = _setup()
    pod = make_pod("p").scheduler(PROFILE).req(cpu="1").obj()
    store[pod.key] = pod
    queue.add(pod)  # enters activeQ at t=1000
    clock.step(2.5)
    cycles.schedule_one(_pop(queue))
    await cycles.binds.wait()
    sli = "scheduler_pod_scheduling_sli_duration_seconds"
    assert _value(metrics, f"{sli}_count", attempts="1") == 1
    assert _value(metrics, f"{sli}_sum", attempts="1") == 2.5
    assert _value(metrics, f"{sli}_bucket", attempts="1", le="2.56") == 1
    assert _value(metrics, f"{sli}_bucket", attempts="1", le="1.28") == 0
    assert _value(metrics, "scheduler_pod_scheduling_attempts_sum") == 1
    assert _value(metrics, "scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 1
    assert _value(metrics, "scheduler_scheduling_attempt_duration_seconds_count",
                  result="scheduled", profile=PROFILE) == 1
    assert _value(metrics, "scheduler_scheduling_algorithm_duration_seconds_count") == 1
    for point in ("Reserve", "Permit", "PreBind", "Bind", "PostBind"):
        assert _value(metrics, "scheduler_framework_extension_point_duration_seconds_count",
                      extension_point=point, status="Success", profile=PROFILE) == 1, point
    assert _value(metrics, "scheduler_queue_incoming_pods_total", queue="active", event="UnscheduledPodAdd") == 1


async def test_an_unschedulable_pod_is_counted_by_its_rejecting_plugin_until_popped() -> None:
    cycles, queue, _, metrics, store = _setup()
    pod = make_pod("big").scheduler(PROFILE).req(cpu="2").obj()
    store[pod.key] = pod
    queue.add(pod)
    cycles.schedule_one(_pop(queue))
    assert _value(metrics, "scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == 1
    assert _value(metrics, "scheduler_scheduling_attempt_duration_seconds_count",
                  result="unschedulable", profile=PROFILE) == 1
    # kube-scheduler observes the algorithm's latency only when a node was found.
    assert _value(metrics, "scheduler_scheduling_algorithm_duration_seconds_count") == 0
    assert _value(metrics, "scheduler_framework_extension_point_duration_seconds_count",
                  extension_point="PostFilter", status="Success", profile=PROFILE) == 1
    assert _value(metrics, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE) == 1
    assert _value(metrics, "scheduler_queue_incoming_pods_total", queue="unschedulable",
                  event="ScheduleAttemptFailure") == 1
    assert _value(metrics, "scheduler_pending_pods", queue="unschedulable") == 1
    queue.move_all_to_active_or_backoff(NODE_ADD)
    assert _value(metrics, "scheduler_queue_incoming_pods_total", queue="backoff", event=NODE_ADD.label) == 1
    assert _value(metrics, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE) == 1
    _pop(queue)  # popping from backoffQ: the pod is in flight, no longer counted
    assert _value(metrics, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile=PROFILE) == 0


def test_queue_reports_backoff_and_backoff_complete_moves() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock, pop_from_backoff=False)
    seen: list[tuple[str, str]] = []
    queue.on_incoming = lambda q, e: seen.append((q, e))
    queue.add(make_pod("p").obj())
    info = _pop(queue)
    queue.add_unschedulable_if_not_present(info)  # an error: error backoff
    clock.step(5)
    queue.flush_backoff_completed()
    assert seen == [("active", "UnscheduledPodAdd"), ("backoff", "ScheduleAttemptFailure"),
                    ("active", "BackoffComplete")]


def test_scheduler_exports_only_kube_scheduler_names() -> None:
    sched, _ = make_scheduler(created)
    text = sched.metrics.exposition().decode()
    assert "_created" not in text
    assert "scheduler_binding_duration_seconds" not in text
    assert "process_cpu_seconds_total" in text
    assert 'scheduler_cache_size{type="nodes"} 1.0' in text
    assert 'scheduler_cache_size{type="assumed_pods"} 0.0' in text
    assert "scheduler_preemption_attempts_total 0.0" in text
    assert "scheduler_pod_scheduling_sli_duration_seconds_count" not in text  # no series before a pod binds
    assert 'scheduler_preemption_victims_bucket{le="64.0"} 0.0' in text
    assert sched.metrics.registry.get_sample_value("scheduler_scheduling_attempt_duration_seconds_bucket",
                                                   {"result": "error", "profile": "kubesched", "le": "16.384"}) == 0


def test_histogram_buckets_are_cumulative_with_le_inclusive() -> None:
    from prometheus_client import CollectorRegistry

    from kubesched.metrics import Histogram

    registry = CollectorRegistry()
    h = Histogram("h_seconds", "help", ["a"], buckets=(1.0, 2.0), registry=registry)
    child = h.labels("x")
    for v in (0.5, 1.0, 1.5, 3.0):
        child.observe(v)
    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"a": "x", **labels})
    assert [value("h_seconds_bucket", le=le) for le in ("1.0", "2.0", "+Inf")] == [2, 3, 4]
    assert value("h_seconds_count") == 4
    assert value("h_seconds_sum") == 6.0


def test_volume_stage_errors_are_counted_by_operation_with_no_series_before() -> None:
    sched, _ = make_scheduler(created)
    assert sched.handle.volume_stage_failed == sched.metrics.volume_stage_failed
    # No family at all before the first error (a component-base CounterVec without children).
    assert "scheduler_volume_scheduling_stage_error" not in sched.metrics.exposition().decode()
    sched.handle.volume_stage_failed("bind")
    sched.handle.volume_stage_failed("bind")
    sched.handle.volume_stage_failed("predicate")
    text = sched.metrics.exposition().decode()
    assert 'scheduler_volume_scheduling_stage_error_total{operation="bind"} 2.0' in text
    assert 'scheduler_volume_scheduling_stage_error_total{operation="predicate"} 1.0' in text
    assert 'operation="assume"' not in text
    assert "# HELP scheduler_volume_scheduling_stage_error_total [ALPHA] Volume scheduling stage error count" in text
    assert "# TYPE scheduler_volume_scheduling_stage_error_total counter" in text
