"""scheduler_perf's numbers: the throughput collector's per-second samples and the histogram quantiles.

`ThroughputSampler` is upstream's throughputCollector without the clock: `tick(now, scheduled)` is
called once a sampling interval (1 s) with the count of measured pods seen gaining a node so far.
No sample while nothing is scheduled; the first tick with pods scheduled only starts the clock
(it is likely an outlier: sampling and creating pods start independently); an interval with no
new pod is not recorded as 0 but merged into the next one with progress, which then records its
rate once for every interval it spans, so percentiles stay per-second. `summary()` sorts the
samples and takes Average and the nearest-rank Perc50/90/95/99 as upstream does.

`histogram_quantile` is component-base's testutil Quantile (linear within a bucket, the last
finite bound for the +Inf bucket); `delta` subtracts the scrape at the start of collection from
the one at its end, standing in for upstream's reset of the in-process registry.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

SAMPLE_INTERVAL_S = 1.0
BUCKETS = ("Average", "Perc50", "Perc90", "Perc95", "Perc99")


@dataclass
class ThroughputSampler:
    samples: list[float] = field(default_factory=list)
    started_at: float | None = None
    _last_count: int = 0
    _last_time: float = 0.0
    _skipped: int = 0

    def tick(self, now: float, scheduled: int) -> None:
        if scheduled == 0:
            return
        if self.started_at is None:
            self.started_at = now
            self._last_count, self._last_time = scheduled, now
            return
        new = scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        rate = new / (now - self._last_time)
        self.samples.extend([rate] * (self._skipped + 1))
        self._last_count, self._last_time, self._skipped = scheduled, now, 0

    def summary(self) -> dict[str, float] | None:
        """None when the run was too short for one sample ("Failed to measure SchedulingThroughput")."""
        return summarize(self.samples)


def summarize(samples: list[float]) -> dict[str, float] | None:
    n = len(samples)
    if n == 0:
        return None
    s = sorted(samples)

    def perc(p: int) -> float:
        return s[math.ceil(n * p / 100) - 1]

    return {"Average": sum(s) / n, "Perc50": perc(50), "Perc90": perc(90), "Perc95": perc(95), "Perc99": perc(99)}


# --- Prometheus histograms from a /metrics scrape ------------------------------------------------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass
class Histogram:
    """One histogram summed over every series matching a label filter: le -> cumulative count."""

    buckets: dict[float, float] = field(default_factory=dict)
    count: float = 0.0
    sum: float = 0.0


def parse_histogram(text: str, name: str, match: dict[str, str] | None = None) -> Histogram:
    h = Histogram()
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            continue
        metric, raw_labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        labels = dict(_LABEL.findall(raw_labels))
        if match and any(labels.get(k) != v for k, v in match.items()):
            continue
        if metric == f"{name}_bucket":
            le = float(labels["le"])  # "+Inf" parses as inf
            h.buckets[le] = h.buckets.get(le, 0.0) + value
        elif metric == f"{name}_count":
            h.count += value
        elif metric == f"{name}_sum":
            h.sum += value
    return h


def delta(end: Histogram, start: Histogram) -> Histogram:
    return Histogram({le: c - start.buckets.get(le, 0.0) for le, c in end.buckets.items()},
                     end.count - start.count, end.sum - start.sum)


def histogram_quantile(q: float, h: Histogram) -> float:
    buckets = sorted(h.buckets.items())
    if not buckets or not math.isinf(buckets[-1][0]):
        buckets.append((math.inf, h.count))
    if len(buckets) < 2:
        return math.nan
    rank = q * buckets[-1][1]
    b = next((i for i in range(len(buckets) - 1) if buckets[i][1] >= rank), len(buckets) - 1)
    if b == 0:
        return buckets[0][0] * (rank / buckets[0][1]) if buckets[0][1] else 0.0
    if b == len(buckets) - 1 and math.isinf(buckets[b][0]):
        return buckets[-2][0]
    brank = rank - buckets[b - 1][1]
    size = buckets[b][0] - buckets[b - 1][0]
    count = buckets[b][1] - buckets[b - 1][1]
    return buckets[b - 1][0] + size * (brank / count)


def latency_ms(h: Histogram) -> dict[str, float] | None:
    """scheduler_perf's data item for a duration histogram, in milliseconds; None without samples."""
    if h.count <= 0:
        return None
    return {"Average": h.sum / h.count * 1000, "Perc50": histogram_quantile(0.50, h) * 1000,
            "Perc90": histogram_quantile(0.90, h) * 1000, "Perc95": histogram_quantile(0.95, h) * 1000,
            "Perc99": histogram_quantile(0.99, h) * 1000}
