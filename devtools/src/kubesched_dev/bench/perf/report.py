"""The scheduler_perf runs' table and JSON: every round of every contender, the threshold beside."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kubesched_dev.bench.perf.runner import PerfRun


def _f(v: float | None, width: int, digits: int = 1) -> str:
    return f"{'-':>{width}}" if v is None else f"{v:>{width}.{digits}f}"


def _pct(v: float | None, width: int) -> str:
    return f"{'-':>{width}}" if v is None else f"{100 * v:>{width - 1}.0f}%"


def check(r: PerfRun) -> str:
    if r.error:
        return f"FAIL: {r.error}"
    if r.SchedulingThroughput is None:
        return "no sample: the window was shorter than two seconds of binds"
    if r.meets_threshold is False:
        return f"below threshold ({r.threshold_bucket} {r.threshold:g})"
    return "ok"


def table(runs: list[PerfRun]) -> str:
    width = max([len("workload")] + [len(r.workload) for r in runs]) + 2
    head = (f"{'workload':<{width}}{'contender':<16}{'round':>5}{'Average':>9}{'Perc50':>8}{'Perc90':>8}{'Perc99':>8}"
            f"{'thresh':>8}{'att p50':>9}{'att p99':>9}{'cpu s':>8}{'rss MB':>8}{'@made':>7}  check")
    lines = [head, "-" * len(head)]
    for r in runs:
        tp = r.SchedulingThroughput or {}
        lat = r.attempt_latency_ms.get("scheduled", {})
        lines.append(f"{r.workload:<{width}}{r.contender:<16}{r.round:>5}{_f(tp.get('Average'), 9)}"
                     f"{_f(tp.get('Perc50'), 8)}{_f(tp.get('Perc90'), 8)}{_f(tp.get('Perc99'), 8)}"
                     f"{_f(r.threshold or None, 8, 0)}{_f(lat.get('Perc50'), 9, 2)}{_f(lat.get('Perc99'), 9, 2)}"
                     f"{_f(r.cpu_s if not r.error else None, 8)}{_f(r.peak_rss_mb or None, 8, 0)}"
                     f"{_pct(r.bound_when_created, 7)}  {check(r)}")
    lines.append("")
    lines.append("SchedulingThroughput in pods/s (scheduler_perf's per-second samples); att p50/p99: "
                 "scheduler_scheduling_attempt_duration_seconds{result=scheduled} in ms; cpu s: the "
                 "contender's CPU seconds in the metrics window; @made: the share of the window's created pods "
                 "bound when the last was created (near 100 %: the harness's creation set the pace).")
    return "\n".join(lines)


def document(runs: list[PerfRun], options: dict[str, Any]) -> dict[str, Any]:
    return {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": {"cpus": os.cpu_count(), "loadavg_at_end": list(os.getloadavg())},
            "options": options, "runs": [asdict(r) for r in runs]}


def write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)
