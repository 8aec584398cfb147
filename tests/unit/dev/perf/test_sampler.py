"""The throughput sampler against upstream's throughputCollector, on recorded ticks, and the
histogram quantiles against component-base's testutil."""

from __future__ import annotations

import math

import pytest

from kubesched_dev.bench.perf import sampler
from kubesched_dev.bench.perf.sampler import Histogram, ThroughputSampler


def _run(ticks: list[tuple[float, int]]) -> ThroughputSampler:
    s = ThroughputSampler()
    for now, scheduled in ticks:
        s.tick(now, scheduled)
    return s


@pytest.mark.parametrize(("ticks", "want"), [
    pytest.param([(1.0, 0), (2.0, 0)], [], id="nothing-scheduled-no-sample"),
    pytest.param([(1.0, 5)], [], id="first-tick-only-starts-the-clock"),
    pytest.param([(1.0, 5), (2.0, 105), (3.0, 305)], [100.0, 200.0], id="one-sample-a-second"),
    # No progress in (2, 3]: nothing recorded then; the next interval's rate counts for both.
    pytest.param([(1.0, 10), (2.0, 110), (3.0, 110), (4.0, 310)], [100.0, 100.0, 100.0], id="stalled-interval-merged"),
    # The rate is over the real time since the last sample, not the nominal second.
    pytest.param([(1.0, 10), (2.5, 160)], [100.0], id="late-tick-uses-real-duration"),
    pytest.param([(1.0, 0), (2.0, 0), (3.0, 7), (4.0, 17)], [10.0], id="starts-at-the-first-scheduled-pod"),
])
def test_samples(ticks: list[tuple[float, int]], want: list[float]) -> None:
    assert _run(ticks).samples == pytest.approx(want)


def test_recorded_run_summary() -> None:
    # A recorded run: cumulative scheduled pods at each 1 s tick, a stall at t=6.
    counts = [0, 12, 210, 420, 600, 790, 790, 1180, 1370, 1500]
    s = _run([(float(t), c) for t, c in enumerate(counts)])
    assert s.samples == pytest.approx([198, 210, 180, 190, 195, 195, 190, 130])
    got = s.summary()
    assert got is not None
    ordered = sorted(s.samples)
    n = len(ordered)
    assert got["Average"] == pytest.approx(sum(ordered) / n)
    # upstream: sorted[int(math.Ceil(float64(length*P)/100))-1]
    assert got["Perc50"] == ordered[math.ceil(n * 50 / 100) - 1] == 190
    assert got["Perc90"] == ordered[math.ceil(n * 90 / 100) - 1] == 210
    assert got["Perc99"] == ordered[math.ceil(n * 99 / 100) - 1] == 210
    assert got["Perc95"] == 210


@pytest.mark.parametrize(("samples", "want"), [
    pytest.param([], None, id="no-samples-none"),
    pytest.param([7.0], {"Average": 7.0, "Perc50": 7.0, "Perc90": 7.0, "Perc95": 7.0, "Perc99": 7.0}, id="one"),
    pytest.param([float(i) for i in range(1, 101)],
                 {"Average": 50.5, "Perc50": 50.0, "Perc90": 90.0, "Perc95": 95.0, "Perc99": 99.0}, id="hundred"),
])
def test_summarize(samples: list[float], want: dict[str, float] | None) -> None:
    assert sampler.summarize(samples) == want


METRICS = """# HELP scheduler_scheduling_attempt_duration_seconds [STABLE] Scheduling attempt latency
# TYPE scheduler_scheduling_attempt_duration_seconds histogram
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="0.001"} 10
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="0.002"} 30
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="0.004"} 40
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="+Inf"} 40
scheduler_scheduling_attempt_duration_seconds_sum{profile="default-scheduler",result="scheduled"} 0.06
scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="scheduled"} 40
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="unschedulable",le="0.001"} 0
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="unschedulable",le="0.002"} 0
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="unschedulable",le="0.004"} 1
scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="unschedulable",le="+Inf"} 2
scheduler_scheduling_attempt_duration_seconds_sum{profile="default-scheduler",result="unschedulable"} 0.5
scheduler_scheduling_attempt_duration_seconds_count{profile="default-scheduler",result="unschedulable"} 2
"""


def test_parse_histogram_filters_by_label() -> None:
    h = sampler.parse_histogram(METRICS, "scheduler_scheduling_attempt_duration_seconds", {"result": "scheduled"})
    assert h.buckets == {0.001: 10, 0.002: 30, 0.004: 40, math.inf: 40}
    assert h.count == 40
    assert h.sum == pytest.approx(0.06)


@pytest.mark.parametrize(("q", "want"), [
    pytest.param(0.25, 0.001, id="first-bucket-scaled"),  # rank 10 of 10 in [0, 0.001]
    pytest.param(0.5, 0.0015, id="interpolated"),  # rank 20: halfway through (0.001, 0.002]
    pytest.param(0.99, 0.00392, id="last-finite-bucket"),  # rank 39.6: 0.002 + 0.002 * (39.6-30)/10
])
def test_histogram_quantile(q: float, want: float) -> None:
    h = sampler.parse_histogram(METRICS, "scheduler_scheduling_attempt_duration_seconds", {"result": "scheduled"})
    assert sampler.histogram_quantile(q, h) == pytest.approx(want)


def test_quantile_in_the_inf_bucket_is_the_last_finite_bound() -> None:
    h = sampler.parse_histogram(METRICS, "scheduler_scheduling_attempt_duration_seconds", {"result": "unschedulable"})
    assert sampler.histogram_quantile(0.99, h) == 0.004


def test_delta_and_latency_ms() -> None:
    start = Histogram({0.001: 10, 0.002: 10, 0.004: 10, math.inf: 10}, 10, 0.005)
    end = Histogram({0.001: 10, 0.002: 30, 0.004: 40, math.inf: 40}, 40, 0.065)
    d = sampler.delta(end, start)
    assert d.buckets == {0.001: 0, 0.002: 20, 0.004: 30, math.inf: 30}
    lat = sampler.latency_ms(d)
    assert lat is not None
    assert lat["Average"] == pytest.approx(2.0)
    assert lat["Perc50"] == pytest.approx(1.75)  # rank 15 of 20 in (0.001, 0.002]
    assert sampler.latency_ms(Histogram()) is None
