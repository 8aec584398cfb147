"""Throughput and latency figures from the watcher's timestamps, computed after the run.

Throughput follows scheduler_perf: one sample a second of the pods that gained a node in that
second, counted from the first bind; average, p50, p90, p99 of the samples. The headline rate is
pods bound over the span from the first bind to the last (the anchors' figures are that).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest rank, as scheduler_perf takes it."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return float(sorted_values[rank - 1])


@dataclass
class Throughput:
    pods_per_s: float  # bound pods over first-to-last-bind span
    samples: list[int]  # pods bound in each whole second after the first bind
    avg: float
    p50: float
    p90: float
    p99: float


def throughput(bound_times: Sequence[float], start: float | None = None) -> Throughput:
    """Counted from the first bind, or from `start` when given (a workload whose binds all wait for
    work that binds nothing: preemption's first pass)."""
    times = sorted(bound_times)
    if not times:
        return Throughput(0.0, [], 0.0, 0.0, 0.0, 0.0)
    first, last = times[0] if start is None else min(start, times[0]), times[-1]
    span = last - first
    whole = int(span)
    samples = [0] * whole
    for t in times:
        k = int(t - first)
        if k < whole:
            samples[k] += 1
    # A run shorter than two samples has too few for percentiles: use the span rate for all.
    rate = len(times) / span if span > 0 else float(len(times))
    if whole < 2:
        return Throughput(rate, samples, rate, rate, rate, rate)
    ordered = sorted(samples)
    return Throughput(rate, samples, sum(samples) / len(samples), percentile(ordered, 50),
                      percentile(ordered, 90), percentile(ordered, 99))


@dataclass
class Latency:
    p50_ms: float
    p99_ms: float
    max_ms: float


def latency(seconds: Sequence[float]) -> Latency:
    ordered = sorted(seconds)
    if not ordered:
        return Latency(0.0, 0.0, 0.0)
    return Latency(percentile(ordered, 50) * 1000, percentile(ordered, 99) * 1000, ordered[-1] * 1000)


def bound_curve(bound_times: Sequence[float], start: float, step: float = 0.25) -> list[tuple[float, int]]:
    """(seconds since `start`, pods bound so far) every `step` seconds, for the plot."""
    times = sorted(bound_times)
    if not times:
        return []
    out: list[tuple[float, int]] = []
    i = 0
    t = 0.0
    end = times[-1] - start
    while True:
        while i < len(times) and times[i] - start <= t:
            i += 1
        out.append((round(t, 3), i))
        if t >= end:
            return out
        t += step


def server_rate(scheduled_at: Sequence[float]) -> float:
    """Pods over the span of the apiserver's PodScheduled times. Those have whole-second
    resolution, so the span is widened by one second: a lower bound, close for long runs."""
    if not scheduled_at:
        return 0.0
    return len(scheduled_at) / (max(scheduled_at) - min(scheduled_at) + 1)
