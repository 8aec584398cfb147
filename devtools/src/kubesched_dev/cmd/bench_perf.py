"""`kubesched bench --scheduler-perf FILE`: upstream's workloads, kube-scheduler and kubesched side by side."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from kubesched_dev.bench.perf import config, presets, report, runner
from kubesched_dev.bench.perf.upstream import scheduler_perf_dir

DEFAULT_CONTENDERS = ["kube-scheduler", "kubesched"]


def select(perf_file: Path, workload_arg: str | None, label: str | None) -> list[runner.Plan]:
    if (workload_arg is None) == (label is None):
        raise click.UsageError("--scheduler-perf needs --workload TESTCASE/WORKLOAD or --label LABEL (one of them)")
    try:
        cases = config.load(perf_file)
        if workload_arg is not None:
            picked = [config.find(cases, spec.strip()) for spec in workload_arg.split(",") if spec.strip()]
            return [runner.plan(tc, w) for tc, w in picked]
        assert label is not None
        return [runner.plan(tc, w, check_fit=True) for tc, w in config.with_label(cases, label)]
    except config.ConfigError as e:
        raise click.UsageError(str(e)) from None


def run_scheduler_perf(perf_file: Path, workload_arg: str | None, label: str | None,
                       contenders: list[str] | None, rounds: int, out: Path, output: str,
                       progress: Callable[[str], None]) -> None:
    plans = select(perf_file, workload_arg, label)
    if not plans:
        raise click.UsageError(f"{perf_file}: no workload has the labels {label!r}")
    command = f"kubesched bench --scheduler-perf {perf_file} " + (
        f"--workload {workload_arg}" if workload_arg else f"--label {label}")
    run_plans(perf_file, plans, workload_arg is not None, command, contenders, rounds, out, output, progress)


def run_presets(names: list[str], quick: bool, contenders: list[str] | None, rounds: int, out: Path,
                output: str, progress: Callable[[str], None]) -> None:
    """`--workload dra` / `gang`: their upstream workloads, one file after another, one report."""
    try:
        base = scheduler_perf_dir()
    except FileNotFoundError as e:
        raise click.ClickException(str(e)) from None
    chosen: list[tuple[Path, list[runner.Plan]]] = []
    try:
        for name in names:
            chosen.append(presets.plans(presets.PRESETS[name], base, quick))
    except config.ConfigError as e:
        raise click.UsageError(str(e)) from None
    command = f"kubesched bench --workload {','.join(names)}" + (" --quick" if quick else "")
    files = ", ".join(str(f) for f, _ in chosen)
    run_plans(Path(files), [p for _, ps in chosen for p in ps], True, command, contenders, rounds, out, output,
              progress)


def run_plans(perf_file: Path, plans: list[runner.Plan], by_name: bool, command: str, contenders: list[str] | None,
              rounds: int, out: Path, output: str, progress: Callable[[str], None]) -> None:
    names = contenders or DEFAULT_CONTENDERS
    if "limit" in names:
        raise click.UsageError("--contenders: limit cannot run scheduler_perf workloads: a logic-free binder "
                               "ignores their constraints; leave it out")
    refused = [p for p in plans if p.refused]
    if by_name and refused:
        # Asked for by name: refuse before any plane starts, naming the operation.
        raise click.UsageError("; ".join(p.refused for p in refused))
    for p in refused:
        progress(f"not run: {p.refused}")
    out.mkdir(parents=True, exist_ok=True)
    command += f" --rounds {rounds} --contenders {','.join(names)}"
    options = {"file": str(perf_file), "command": command, "rounds": rounds, "contenders": names}
    json_path = out / "scheduler-perf.json"
    runs = runner.run_all(plans, names, rounds, out, progress,
                          lambda so_far: report.write_json(json_path, report.document(so_far, options)))
    doc = report.document(runs, options)
    report.write_json(json_path, doc)
    if output == "json":
        click.echo(json.dumps({"runs": doc["runs"]}, indent=1))
    else:
        click.echo(report.table(runs))
    click.echo(f"JSON: {json_path}", err=output == "json")
    ran = [r for r in runs if not r.error.startswith("not run:")]
    if any(r.error for r in ran):
        sys.stderr.flush()
        raise click.ClickException("some runs failed (see the table)")
