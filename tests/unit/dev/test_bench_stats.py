"""The bench's arithmetic: throughput samples, percentiles, latencies, the plotted curve."""

from __future__ import annotations

import os
import time

import pytest

from kubesched_dev.bench import procstat, stats


@pytest.mark.parametrize(("values", "p", "want"), [
    pytest.param([], 50, 0.0, id="empty"),
    pytest.param([5], 99, 5.0, id="one"),
    pytest.param([1, 2, 3, 4], 50, 2.0, id="nearest-rank-median"),
    pytest.param(list(range(1, 101)), 99, 99.0, id="p99-of-100"),
    pytest.param(list(range(1, 101)), 90, 90.0, id="p90-of-100"),
])
def test_percentile_nearest_rank(values: list[float], p: float, want: float) -> None:
    assert stats.percentile(values, p) == want


def test_throughput_counts_from_the_first_bind_and_drops_the_partial_last_second() -> None:
    # 10 binds in the first second, 20 in the second, 5 in a last partial second
    times = ([100.0 + i / 10 for i in range(10)] + [101.0 + i / 20 for i in range(20)]
             + [102.0 + i / 10 for i in range(5)])
    tp = stats.throughput(times)
    assert tp.samples == [10, 20]
    assert tp.avg == 15
    assert tp.p50 == 10
    assert tp.p99 == 20
    assert tp.pods_per_s == pytest.approx(35 / 2.4)


def test_throughput_of_a_short_run_uses_the_span_rate() -> None:
    tp = stats.throughput([1.0, 1.5])
    assert tp.samples == []
    assert tp.avg == tp.p50 == tp.p99 == tp.pods_per_s == 4.0
    assert stats.throughput([]).pods_per_s == 0.0


def test_latency_in_milliseconds() -> None:
    lat = stats.latency([0.010, 0.020, 0.030, 1.0])
    assert lat.p50_ms == pytest.approx(20)
    assert lat.p99_ms == pytest.approx(1000)
    assert lat.max_ms == pytest.approx(1000)


def test_bound_curve_is_cumulative_and_ends_with_every_pod() -> None:
    curve = stats.bound_curve([10.1, 10.2, 10.6, 11.0], start=10.0, step=0.5)
    assert curve == [(0.0, 0), (0.5, 2), (1.0, 4)]


def test_meter_reads_this_process() -> None:
    meter = procstat.Meter(os.getpid())
    sum(i * i for i in range(200_000))
    meter.sample()
    assert meter.cpu_seconds > 0
    assert meter.peak_rss_bytes > 10 * 2**20
    assert os.getpid() in procstat.descendants(os.getpid())


def test_window_counts_only_the_cpu_spent_inside_it() -> None:
    window = procstat.Window({"self": os.getpid(), "gone": 2**22 + 1})
    sum(i * i for i in range(200_000))  # before the window: not counted
    window.start()
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    window.stop()
    # /proc counts in ticks of 10 ms
    assert 0.03 <= window.seconds("self") <= 0.2
    assert window.seconds("gone") == 0.0
