"""`kubesched bench`: kubesched, kube-scheduler and a logic-free binder, each on a fresh plane."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

import click

from .bench import plot
from .bench.contenders import NAMES, STARTERS
from .bench.report import table, write_json
from .bench.run import Options, run_all

QUICK = {"nodes": 50, "pods": 500, "rounds": 1}


def _contenders(_: click.Context, __: click.Parameter, value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in STARTERS]
    if bad or not names:
        raise click.BadParameter(f"{', '.join(bad) or '(none)'}: choose from {', '.join(STARTERS)}, comma-separated")
    return names


@click.command()
@click.option("--nodes", type=click.IntRange(1), default=1000, show_default=True,
              help="kwok nodes (4 CPU, 32Gi, 110 pods).")
@click.option("--pods", type=click.IntRange(1), default=10000, show_default=True, help="Pause pods (10m CPU, 16Mi).")
@click.option("--rounds", type=click.IntRange(1), default=2, show_default=True,
              help="Rounds; each runs every contender once, interleaved.")
@click.option("--contenders", default=",".join(NAMES), show_default=True, callback=_contenders,
              help="Which to run, in this order each round; also kubesched-asyncio (kubesched on "
                   "asyncio's own event loop instead of uvloop).")
@click.option("--mode", type=click.Choice(["batch", "steady"]), default="batch", show_default=True,
              help="batch: all pods exist before the contender starts. steady: pods arrive at --rate "
                   "once it is ready, and creation-to-bound latency is measured.")
@click.option("--rate", type=click.FloatRange(min=0.1), default=100.0, show_default=True,
              help="Pods created a second in steady mode.")
@click.option("--quick", is_flag=True, help=f"A small correctness run: {QUICK['nodes']} nodes, {QUICK['pods']} "
              "pods, one round (overrides --nodes, --pods, --rounds).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the JSON, the PNG, logs and profiles (default: bench-results/<time>).")
@click.option("--profile", is_flag=True, help="Profile kubesched (py-spy if on PATH, else cProfile); the profile "
              "is written next to the JSON.")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds a run may take after its contender starts (default: from the pod count).")
def bench(nodes: int, pods: int, rounds: int, contenders: list[str], mode: str, rate: float, quick: bool,
          out: Path | None, profile: bool, timeout: float | None) -> None:
    """Measure kubesched against kube-scheduler and the apiserver's own bind rate, on this machine.

    For each round and each contender in turn: a fresh local control plane with NODES kwok nodes,
    PODS pause pods created for the contender's scheduler name, the watcher's initial list done,
    then the contender started and measured until every pod is bound. Contenders: `limit` (a
    logic-free binder: binding + Scheduled event per pod, round-robin, 64 HTTP/1.1 connections),
    `kube-scheduler` (the reference binary, default profile, QPS/burst 5000) and `kubesched`
    (its default profile, same QPS).

    \b
    Reported per run: pods/s from the first bind (and scheduler_perf's per-second average, p50,
    p90, p99), seconds from start to first bind, CPU seconds and ms a pod, peak RSS, a check that
    no node is over capacity, and in steady mode creation-to-bound latency p50/p99. Then the spread
    per contender and the ratios kubesched/kube-scheduler and kubesched/limit.

    \b
    Examples:
      kubesched bench                          # 1000 nodes, 10000 pods, 2 rounds
      kubesched bench --quick                  # 50 nodes, 500 pods, 1 round: correctness only
      kubesched bench --mode steady --rate 100 --pods 3000
      kubesched bench --contenders kubesched --rounds 1 --profile
    """
    if quick:
        nodes, pods, rounds = QUICK["nodes"], QUICK["pods"], QUICK["rounds"]
    out = out or Path("bench-results") / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    opts = Options(nodes=nodes, pods=pods, rounds=rounds, contenders=contenders, mode=mode, rate=rate,
                   out=out, profile=profile, timeout=timeout)
    began = time.monotonic()

    def progress(msg: str) -> None:
        click.echo(f"[bench {time.monotonic() - began:6.1f}s] {msg}", err=True)

    results = run_all(opts, progress)
    click.echo(table(results))
    options = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(opts).items()}
    options["command"] = (f"kubesched bench --nodes {nodes} --pods {pods} --rounds {rounds} "
                          f"--contenders {','.join(contenders)} --mode {mode}"
                          + (f" --rate {rate:g}" if mode == "steady" else ""))
    json_path = out / "bench.json"
    write_json(json_path, results, options)
    click.echo(f"JSON: {json_path}")
    if plot.available():
        png = out / "bound-over-time.png"
        plot.bound_over_time(results, png, f"pods bound over time: {nodes} nodes, {pods} pods, {mode} "
                             f"({', '.join(contenders)})", steady=mode == "steady")
        click.echo(f"PNG: {png}")
    else:
        click.echo(f"PNG skipped: {plot.MISSING}")
    for r in results:
        if r.profile:
            click.echo(f"profile ({r.contender} round {r.round}): {r.profile}")
    if not all(r.correct for r in results):
        raise click.ClickException("some runs failed their checks (see the table)")
