"""`kubesched bench`: kubesched, kube-scheduler and a logic-free binder, each on a fresh plane."""

from __future__ import annotations

import signal
import time
from dataclasses import asdict
from pathlib import Path
from types import FrameType

import click

from kubesched_dev.bench import plot, workloads
from kubesched_dev.bench.contenders import NAMES, STARTERS
from kubesched_dev.bench.perf import presets
from kubesched_dev.bench.report import RunResult, table, write_json
from kubesched_dev.bench.run import Options, run_all
from kubesched_dev.localcluster.plane import ClusterError

QUICK = {"nodes": 50, "pods": 500, "rounds": 1}


def _contenders(_: click.Context, __: click.Parameter, value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in STARTERS]
    if bad or not names:
        raise click.BadParameter(f"{', '.join(bad) or '(none)'}: choose from {', '.join(STARTERS)}, comma-separated")
    return names


def _workloads(value: str) -> list[str]:
    try:
        return workloads.parse_kinds(value)
    except workloads.WorkloadError as e:
        raise click.BadParameter(str(e), param_hint="'--workload'") from None


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


@click.command()
@click.option("--workload", "workload_arg", default=None,
              help="Comma-separated, run one after another: " + "; ".join(
                  f"{k.name} ({k.summary}; {k.default_size[0]} nodes, {k.default_size[1]} pods)"
                  for k in workloads.KINDS.values()) + "; " + "; ".join(
                  f"{p.name} ({p.summary}: {', '.join(p.workloads)})" for p in presets.PRESETS.values())
              + " [default: basic]. With --scheduler-perf: "
                  "TESTCASE/WORKLOAD of that file, e.g. SchedulingBasic/500Nodes (comma-separated).")
@click.option("--scheduler-perf", "perf_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Run upstream scheduler_perf workloads from this performance-config.yaml "
              "(read unchanged; templates relative to it), chosen by --workload or --label; see "
              "docs/benchmarks.md.")
@click.option("--label", "label", default=None,
              help="With --scheduler-perf: every workload whose labels match (scheduler_perf's filter: "
              "comma-separated, -LABEL excludes), e.g. performance; those too big for this machine, or "
              "needing an operation not implemented, are listed as not run.")
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="With --scheduler-perf: json prints {\"runs\": [...]} on stdout.")
@click.option("--nodes", type=click.IntRange(1), default=None,
              help="kwok nodes (4 CPU, 32Gi, 110 pods) [default: the workload's, 1000].")
@click.option("--pods", type=click.IntRange(1), default=None,
              help="Measured pods (basic: pause pods of 10m CPU, 16Mi) [default: the workload's].")
@click.option("--group-size", type=click.IntRange(1), default=None,
              help="spread, anti-affinity: pods a group [default: min(1000, nodes)].")
@click.option("--rounds", type=click.IntRange(1), default=2, show_default=True,
              help="Rounds; each runs every contender once, interleaved.")
@click.option("--contenders", default=None, callback=_contenders,
              help="Which to run, in this order each round; also kubesched-asyncio (kubesched on "
                   "asyncio's own event loop instead of uvloop) and kubesched-json (kubesched writing its "
                   f"bindings and events as JSON, not protobuf)  [default: {','.join(NAMES)}; without limit "
                   "for preemption and pv].")
@click.option("--mode", type=click.Choice(["batch", "steady"]), default="batch", show_default=True,
              help="batch: all pods exist before the contender starts. steady: pods arrive at --rate "
                   "once it is ready, and creation-to-bound latency is measured.")
@click.option("--rate", type=click.FloatRange(min=0.1), default=100.0, show_default=True,
              help="Pods created a second in steady mode.")
@click.option("--quick", is_flag=True, help=f"A small correctness run: {QUICK['nodes']} nodes, {QUICK['pods']} "
              "pods (preemption 50, pv 200), one round (overrides --nodes, --pods, --rounds); with "
              "--scheduler-perf: one round of the workloads as given.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the JSON, the PNG, logs and profiles (default: bench-results/<time>).")
@click.option("--profile", is_flag=True, help="Profile kubesched (py-spy if on PATH, else cProfile); the profile "
              "is written next to the JSON.")
@click.option("--restart-check", is_flag=True, help="After each run, stop the contender, create 20 pending pods "
              "and start it again: seconds from its start to ready (caches synced), to the first and last "
              "new bind, with every measured pod already bound; and its peak RSS then.")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds a run may take after its contender starts (default: from the pod count).")
def bench(workload_arg: str | None, perf_file: Path | None, label: str | None, output: str, nodes: int | None,
          pods: int | None, group_size: int | None, rounds: int,
          contenders: list[str] | None, mode: str, rate: float, quick: bool, out: Path | None, profile: bool,
          timeout: float | None, restart_check: bool) -> None:
    """Measure kubesched against kube-scheduler and the apiserver's own bind rate, on this machine.

    For each round and each contender in turn: a fresh local control plane with NODES kwok nodes,
    PODS pause pods created for the contender's scheduler name, the watcher's initial list done,
    then the contender started and measured until every pod is bound. Contenders: `limit` (a
    logic-free binder: binding + Scheduled event per pod, round-robin, 64 HTTP/1.1 connections),
    `kube-scheduler` (the reference binary, default profile, QPS/burst 5000) and `kubesched`
    (its default profile, same QPS).

    \b
    Reported per run: pods/s from the first bind (preemption: from the contender's readiness, as
    its binds wait for a pass of preemptions; and scheduler_perf's per-second average, p50, p90,
    p99), seconds from start to first bind, CPU seconds and ms a pod, peak RSS, a check that
    no node is over capacity, and in steady mode creation-to-bound latency p50/p99. Then the spread
    per contender and the ratios kubesched/kube-scheduler and kubesched/limit.

    \b
    Workloads (scheduler_perf's shapes) check their placements and fail a run that breaks them:
    spread: zone skew <= 1 per group; anti-affinity: never two pods of a group on one node;
    preemption: every preemptor bound, on a node that lost low-priority pods (victims counted);
    pv: each pod on its PV's node. They fail a run that binds nothing for 30 s (60 s before the
    first bind; preemption: while no low-priority pod goes either), naming why the pending pods wait.

    \b
    Examples:
      kubesched bench                          # 1000 nodes, 10000 pods, 2 rounds
      kubesched bench --quick                  # 50 nodes, 500 pods, 1 round: correctness only
      kubesched bench --mode steady --rate 100 --pods 3000
      kubesched bench --contenders kubesched --rounds 1 --profile
      kubesched bench --workload spread,anti-affinity,preemption --rounds 2
      kubesched bench --workload pv --quick --contenders kube-scheduler
      kubesched bench --workload dra --rounds 2  # scheduler_perf's DRA workloads, 500 nodes
      kubesched bench --workload gang --rounds 2 # scheduler_perf's GangScheduling, 1000 nodes
      kubesched bench --nodes 5000 --pods 50000 --rounds 1 --contenders kube-scheduler,kubesched --restart-check
    """
    # A TERM (kill, a CI timeout) ends the run as Ctrl-C does, through every `finally`: the
    # contender stopped and the plane taken down. Its default action left both running.
    signal.signal(signal.SIGTERM, _interrupted)
    if quick:
        nodes, pods, rounds = None, None, QUICK["rounds"]
    out = out or Path("bench-results") / time.strftime("%Y%m%d-%H%M%S")
    began = time.monotonic()

    def progress(msg: str) -> None:
        click.echo(f"[bench {time.monotonic() - began:6.1f}s] {msg}", err=True)

    if perf_file is not None:
        from kubesched_dev.cmd.bench_perf import run_scheduler_perf

        run_scheduler_perf(perf_file, workload_arg, label, contenders, rounds, out, output, progress)
        return
    if label is not None:
        raise click.UsageError("--label needs --scheduler-perf")
    asked = [v.strip() for v in (workload_arg or "").split(",") if v.strip()]
    upstream = [k for k in asked if k in presets.PRESETS]
    if upstream:
        if len(upstream) != len(asked):
            raise click.UsageError(f"--workload: {', '.join(upstream)} run upstream's scheduler_perf workloads; "
                                   "give them apart from the others")
        from kubesched_dev.cmd.bench_perf import run_presets

        run_presets(list(dict.fromkeys(upstream)), quick, contenders, rounds, out, output, progress)
        return
    kinds = _workloads(workload_arg or "basic")

    plans: list[Options] = []
    try:
        for kind in kinds:
            n, p = workloads.sizes(kind, nodes, pods, quick)
            opts = Options(nodes=n, pods=p, rounds=rounds, contenders=workloads.contenders_for(kind, contenders, NAMES),
                           mode=mode, rate=rate, out=out, profile=profile, timeout=timeout, workload=kind,
                           group_size=group_size, restart_check=restart_check)
            opts.plan()  # sizes checked before any plane starts
            plans.append(opts)
    except workloads.WorkloadError as e:
        raise click.UsageError(str(e)) from None
    out.mkdir(parents=True, exist_ok=True)
    results: list[RunResult] = []
    for opts in plans:
        try:
            results += run_all(opts, progress)
        except ClusterError as e:
            # The plane could not start (nodes not Ready in time, a component down): say so, with
            # the log it names, rather than a traceback.
            raise click.ClickException(
                f"the local control plane for the {opts.workload} workload did not start: {e}") from None
    click.echo(table(results))
    options = _options(plans, kinds)
    json_path = out / "bench.json"
    write_json(json_path, results, options)
    click.echo(f"JSON: {json_path}")
    for opts in plans:
        if not any(r.curve for r in results if r.workload == opts.workload):
            continue
        if not plot.available():
            click.echo(f"PNG skipped: {plot.MISSING}")
            break
        png = out / ("bound-over-time.png" if opts.workload == "basic" else f"bound-over-time-{opts.workload}.png")
        what = "" if opts.workload == "basic" else f"{opts.workload}, "
        plot.bound_over_time([r for r in results if r.workload == opts.workload], png,
                             f"pods bound over time: {what}{opts.nodes} nodes, {opts.pods} pods, {mode} "
                             f"({', '.join(opts.contenders)})", steady=mode == "steady")
        click.echo(f"PNG: {png}")
    for r in results:
        if r.profile:
            click.echo(f"profile ({r.contender} round {r.round}): {r.profile}")
    if not all(r.correct for r in results):
        raise click.ClickException("some runs failed their checks (see the table)")


def _options(plans: list[Options], kinds: list[str]) -> dict[str, object]:
    """The JSON's options: the first workload's (a basic-only run's are as before), each workload's
    command line, and every workload's sizes when there are several."""
    def command(o: Options) -> str:
        return ((f"kubesched bench --workload {o.workload} " if o.workload != "basic" else "kubesched bench ")
                + f"--nodes {o.nodes} --pods {o.pods} --rounds {o.rounds} --contenders {','.join(o.contenders)} "
                f"--mode {o.mode}" + (f" --rate {o.rate:g}" if o.mode == "steady" else "")
                + (f" --group-size {o.group_size}" if o.group_size else "")
                + (" --restart-check" if o.restart_check else ""))

    options: dict[str, object] = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(plans[0]).items()}
    options["command"] = command(plans[0])
    if len(plans) > 1:
        options["workloads"] = [{"workload": o.workload, "nodes": o.nodes, "pods": o.pods, "command": command(o)}
                                for o in plans]
    return options
