"""Results: one record per run, the table printed at the end, and the JSON file."""

from __future__ import annotations

import json
import os
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Restart:
    """--restart-check's figures (bench.restart): seconds from the restarted process's start."""

    pods: int = 0  # new pending pods created while the contender was stopped
    already_bound: int = 0  # pods bound when it started again (the ones it must list)
    ready_s: float | None = None
    first_bind_s: float | None = None
    all_bound_s: float | None = None
    peak_rss_mb: float = 0.0
    error: str = ""


@dataclass
class RunResult:
    contender: str
    round: int
    mode: str
    nodes: int
    pods: int
    bound: int = 0
    all_bound: bool = False
    # contender start -> ready: steady mode (when pods begin to arrive) and preemption (throughput's start)
    ready_s: float | None = None
    first_bind_s: float = 0.0  # contender start -> first pod seen bound
    elapsed_s: float = 0.0  # contender start -> last pod seen bound
    pods_per_s: float = 0.0  # bound pods / (last bind - first bind; preemption: - ready)
    server_pods_per_s: float = 0.0  # from the apiserver's PodScheduled times (1 s resolution)
    avg: float = 0.0  # mean of the per-second samples (scheduler_perf's Average)
    p50: float = 0.0
    p90: float = 0.0
    p99: float = 0.0
    latency_p50_ms: float | None = None  # steady mode: client create -> watcher sees nodeName
    latency_p99_ms: float | None = None
    latency_max_ms: float | None = None
    cpu_s: float = 0.0
    cpu_ms_per_pod: float = 0.0
    peak_rss_mb: float = 0.0
    harness_cpu_s: float = 0.0  # the bench's own CPU (watcher, creator) while the contender ran
    # The plane's kube-apiserver and etcd, from the contender's start until its last pod was seen bound
    # (kwok's status updates of the bound pods and the bench's watch included, alike for every contender).
    plane_window_s: float = 0.0
    apiserver_cpu_s: float = 0.0
    etcd_cpu_s: float = 0.0
    # Their CPU a second with nothing scheduling, measured just before the contender started
    apiserver_idle_cpu_per_s: float = 0.0
    etcd_idle_cpu_per_s: float = 0.0
    # CPU in the window a bound pod, and the apiserver's over that idle rate
    apiserver_ms_per_pod: float = 0.0
    etcd_ms_per_pod: float = 0.0
    apiserver_net_ms_per_pod: float = 0.0
    # Writes the apiserver counted in the window, a pod, by "VERB resource[/subresource]"
    apiserver_writes_per_pod: dict[str, float] = field(default_factory=dict)
    overcommitted: dict[str, list[str]] = field(default_factory=dict)
    max_pods_on_a_node: int = 0
    bound_before_watch: int = 0  # pods already bound when the watcher listed: must be 0
    exit_code: int | None = None
    error: str = ""
    profile: str = ""
    log: str = ""
    samples: list[int] = field(default_factory=list)
    # (seconds, pods bound so far), from the contender's start (batch) or the first pod's creation (steady)
    curve: list[tuple[float, int]] = field(default_factory=list)
    workload: str = "basic"
    validity: str = ""  # what the workload's placement check checked (and its worst figure); "" for basic
    invalid: str = ""  # the violations, when the placements broke the workload's constraints
    victims: int | None = None  # preemption: low-priority pods preempted
    restart: Restart | None = None  # --restart-check: the contender started again with its pods bound

    @property
    def restart_failed(self) -> bool:
        return self.restart is not None and bool(self.restart.error)

    @property
    def correct(self) -> bool:
        return (self.all_bound and not self.overcommitted and not self.error and self.bound_before_watch == 0
                and not self.invalid and not self.restart_failed)


@dataclass
class ContenderSummary:
    contender: str
    runs: int
    pods_per_s_mean: float
    pods_per_s_min: float
    pods_per_s_max: float
    spread_pct: float  # (max - min) / mean
    first_bind_s_mean: float
    cpu_ms_per_pod_mean: float
    peak_rss_mb_mean: float
    latency_p99_ms_mean: float | None
    workload: str = "basic"
    apiserver_ms_per_pod_mean: float = 0.0
    restart_first_bind_s_mean: float | None = None  # --restart-check
    restart_peak_rss_mb_mean: float | None = None


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _mean_or_none(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def summarize(results: list[RunResult]) -> list[ContenderSummary]:
    out: list[ContenderSummary] = []
    for wl, name in dict.fromkeys((r.workload, r.contender) for r in results):
        runs = [r for r in results if r.contender == name and r.workload == wl and r.bound > 0]
        if not runs:
            continue
        rates = [r.pods_per_s for r in runs]
        mean = _mean(rates)
        lat = [r.latency_p99_ms for r in runs if r.latency_p99_ms is not None]
        out.append(ContenderSummary(
            contender=name, runs=len(runs), pods_per_s_mean=mean, pods_per_s_min=min(rates),
            pods_per_s_max=max(rates), spread_pct=(max(rates) - min(rates)) / mean * 100 if mean else 0.0,
            first_bind_s_mean=_mean([r.first_bind_s for r in runs]),
            cpu_ms_per_pod_mean=_mean([r.cpu_ms_per_pod for r in runs]),
            peak_rss_mb_mean=_mean([r.peak_rss_mb for r in runs]),
            latency_p99_ms_mean=_mean(lat) if lat else None, workload=wl,
            apiserver_ms_per_pod_mean=_mean([r.apiserver_ms_per_pod for r in runs]),
            restart_first_bind_s_mean=_mean_or_none(
                [r.restart.first_bind_s for r in runs if r.restart and r.restart.first_bind_s is not None]),
            restart_peak_rss_mb_mean=_mean_or_none(
                [r.restart.peak_rss_mb for r in runs if r.restart and r.restart.first_bind_s is not None])))
    return out


def ratios(summary: list[ContenderSummary]) -> dict[str, float]:
    """kubesched against the others, per workload; keys of workloads but basic start `<workload>: `."""
    out: dict[str, float] = {}
    for wl in dict.fromkeys(s.workload for s in summary):
        prefix = "" if wl == "basic" else f"{wl}: "
        out.update({prefix + k: v for k, v in _ratios([s for s in summary if s.workload == wl]).items()})
    return out


def _ratios(summary: list[ContenderSummary]) -> dict[str, float]:
    by = {s.contender: s for s in summary}
    out: dict[str, float] = {}
    ks = by.get("kubesched")
    if ks is None:
        return out
    js = by.get("kubesched-json")
    if js is not None and js.apiserver_ms_per_pod_mean > 0:
        out["kubesched/kubesched-json apiserver cpu per pod"] = (ks.apiserver_ms_per_pod_mean
                                                                 / js.apiserver_ms_per_pod_mean)
    for other in ("kube-scheduler", "limit"):
        o = by.get(other)
        if o is not None and o.pods_per_s_mean > 0:
            out[f"kubesched/{other} throughput"] = ks.pods_per_s_mean / o.pods_per_s_mean
    o = by.get("kube-scheduler")
    if o is not None:
        if o.cpu_ms_per_pod_mean > 0:
            out["kubesched/kube-scheduler cpu per pod"] = ks.cpu_ms_per_pod_mean / o.cpu_ms_per_pod_mean
        if o.apiserver_ms_per_pod_mean > 0 and ks.apiserver_ms_per_pod_mean > 0:
            out["kubesched/kube-scheduler apiserver cpu per pod"] = (ks.apiserver_ms_per_pod_mean
                                                                     / o.apiserver_ms_per_pod_mean)
        if o.peak_rss_mb_mean > 0:
            out["kubesched/kube-scheduler peak rss"] = ks.peak_rss_mb_mean / o.peak_rss_mb_mean
        if ks.latency_p99_ms_mean and o.latency_p99_ms_mean:
            out["kubesched/kube-scheduler p99 latency"] = ks.latency_p99_ms_mean / o.latency_p99_ms_mean
        if ks.restart_first_bind_s_mean and o.restart_first_bind_s_mean:
            out["kubesched/kube-scheduler restart first bind"] = (ks.restart_first_bind_s_mean
                                                                  / o.restart_first_bind_s_mean)
        if ks.restart_peak_rss_mb_mean and o.restart_peak_rss_mb_mean:
            out["kubesched/kube-scheduler restart peak rss"] = ks.restart_peak_rss_mb_mean / o.restart_peak_rss_mb_mean
    return out


def verdict(r: RunResult) -> str:
    if r.correct:
        return f"ok: {r.validity}" if r.validity else "ok"
    if r.error:
        return f"FAIL: {r.error}"
    if r.invalid:
        return f"FAIL: invalid placements: {r.invalid}"
    if r.overcommitted:
        return f"FAIL: {len(r.overcommitted)} node(s) overcommitted: {', '.join(sorted(r.overcommitted)[:5])}"
    if r.bound_before_watch:
        return f"FAIL: {r.bound_before_watch} pod(s) bound before the watcher's list"
    if r.restart is not None and r.restart.error:
        return f"FAIL: restart check: {r.restart.error}"
    return f"FAIL: {r.pods - r.bound} pod(s) not bound"


def _fmt_lat(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


def table(results: list[RunResult]) -> str:
    steady = any(r.mode == "steady" for r in results)
    # A workload column only when there is more than the basic one: the basic table stays as it was.
    wide = any(r.workload != "basic" for r in results)

    def wl(name: str) -> str:
        return f"{name:<15}" if wide else ""

    head = (wl("workload") + f"{'contender':<15}{'round':>6}{'bound':>13}{'pods/s':>9}{'srv/s':>7}{'avg':>8}"
            f"{'p50':>7}{'p90':>7}{'p99':>7}"
            f"{'1st bind s':>11}{'cpu s':>8}{'ms/pod':>8}{'rss MB':>8}{'api ms/pod':>11}"
            + (f"{'lat p50':>9}{'lat p99':>9}" if steady else "") + "  check")
    lines = [head, "-" * len(head)]
    for r in results:
        check = verdict(r)
        lines.append(
            wl(r.workload)
            + f"{r.contender:<15}{r.round:>6}{f'{r.bound}/{r.pods}':>13}{r.pods_per_s:>9.1f}{r.server_pods_per_s:>7.0f}"
            f"{r.avg:>8.1f}"
            f"{r.p50:>7.0f}{r.p90:>7.0f}{r.p99:>7.0f}{r.first_bind_s:>11.2f}{r.cpu_s:>8.1f}{r.cpu_ms_per_pod:>8.2f}"
            f"{r.peak_rss_mb:>8.0f}{r.apiserver_ms_per_pod:>11.2f}"
            + (f"{_fmt_lat(r.latency_p50_ms):>9}{_fmt_lat(r.latency_p99_ms):>9}" if steady else "")
            + f"  {check}")
    summary = summarize(results)
    if summary:
        lines += ["", wl("workload")
                  + f"{'contender':<15}{'runs':>5}{'mean pods/s':>13}{'min-max':>15}{'spread':>8}{'1st bind s':>11}"
                  f"{'ms/pod':>8}{'rss MB':>8}{'api ms/pod':>11}" + (f"{'lat p99':>9}" if steady else "")]
        for s in summary:
            lines.append(wl(s.workload) + f"{s.contender:<15}{s.runs:>5}{s.pods_per_s_mean:>13.1f}"
                         f"{f'{s.pods_per_s_min:.0f}-{s.pods_per_s_max:.0f}':>15}{s.spread_pct:>7.0f}%"
                         f"{s.first_bind_s_mean:>11.2f}{s.cpu_ms_per_pod_mean:>8.2f}{s.peak_rss_mb_mean:>8.0f}"
                         f"{s.apiserver_ms_per_pod_mean:>11.2f}"
                         + (f"{_fmt_lat(s.latency_p99_ms_mean):>9}" if steady else ""))
    lines += restart_table(results)
    rs = ratios(summary)
    if rs:
        lines += [""] + [f"{k}: {v:.2f}x" for k, v in rs.items()]
    return "\n".join(lines)


def restart_table(results: list[RunResult]) -> list[str]:
    """--restart-check's figures, one line a run, in seconds from the restarted process's start;
    nothing without the option."""
    runs = [r for r in results if r.restart is not None]
    if not runs:
        return []
    head = (f"{'contender':<15}{'round':>6}{'already bound':>15}{'new':>5}{'ready s':>9}{'1st bind s':>11}"
            f"{'all bound s':>12}{'rss MB':>8}")
    lines = ["", "restart with the pods bound (new pending pods created while stopped):", head, "-" * len(head)]
    for r in runs:
        x = r.restart
        assert x is not None
        lines.append(f"{r.contender:<15}{r.round:>6}{x.already_bound:>15}{x.pods:>5}{_fmt_s(x.ready_s):>9}"
                     f"{_fmt_s(x.first_bind_s):>11}{_fmt_s(x.all_bound_s):>12}{x.peak_rss_mb:>8.0f}"
                     + (f"  FAIL: {x.error}" if x.error else ""))
    return lines


def _fmt_s(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def write_json(path: Path, results: list[RunResult], options: dict[str, Any]) -> None:
    summary = summarize(results)
    doc = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "loadavg_at_end": list(os.getloadavg())},
        "options": options,
        "summary": [asdict(s) for s in summary],
        "ratios": ratios(summary),
        "runs": [asdict(r) for r in results],
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)
