"""`kubesched bench --scheduler-perf`: two of upstream's own misc workloads, unchanged, at their
smallest sizes, one round each, kubesched on its own fresh plane (two planes, ~1 minute in all).

SchedulingBasic/5Nodes runs createNodes and two createPods (the second measured);
SchedulingWithMixedChurn/10Nodes adds a churn op recreating a node, a high-priority pod that
fits nowhere, and a service every second while 100 pods are measured; `--workload dra --quick`
runs dra's smallest SchedulingWithResourceClaimTemplate workload (a third plane). The JSON must carry each
run with its throughput (or none, when the window is under two samples, as upstream warns), the
attempt latencies scraped from kubesched's /metrics, CPU and RSS.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched_dev.bench.perf.upstream import scheduler_perf_dir
from kubesched_dev.bench.run import PLANE_PREFIX
from kubesched_dev.cmd.bench import bench
from kubesched_dev.localcluster import plane as planes

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WORKLOADS = ("SchedulingBasic/5Nodes", "SchedulingWithMixedChurn/10Nodes")


def test_quick_run_of_two_upstream_workloads(tmp_path: Path) -> None:
    misc = scheduler_perf_dir() / "misc" / "performance-config.yaml"
    out = tmp_path / "perf"
    result = CliRunner().invoke(bench, ["--scheduler-perf", str(misc), "--workload", ",".join(WORKLOADS), "--quick",
                                        "--contenders", "kubesched", "--out", str(out), "-o", "json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    runs = doc["runs"]
    assert [(r["workload"], r["contender"], r["round"]) for r in runs] == [(w, "kubesched", 1) for w in WORKLOADS]
    for r in runs:
        where = f"{r['workload']}: {r['error']} (log {r['log']})"
        assert r["error"] == "", where
        tp = r["SchedulingThroughput"]
        assert tp is None or set(tp) >= {"Average", "Perc50", "Perc90", "Perc99"}, where
        assert r["scheduled_in_window"] == (10 if r["workload"] == WORKLOADS[0] else 100), where
        assert r["attempt_latency_ms"]["scheduled"]["Perc99"] > 0, where
        assert r["peak_rss_mb"] > 0, where
        assert r["cpu_s_total"] > 0, where
    assert json.loads((out / "scheduler-perf.json").read_text())["runs"] == runs
    left = [c.name for c in planes.list_clusters() if c.name.startswith(f"{PLANE_PREFIX}{os.getpid()}-")]
    assert left == [], f"bench planes left running: {left}"


def test_quick_dra_workload(tmp_path: Path) -> None:
    """`--workload dra --quick`: dra's SchedulingWithResourceClaimTemplate/fast (a node with a
    ResourceSlice of 10 devices, one without, 10 pods with a claim from a template each), through
    createAny, allocResourceClaims and a claim template, on a plane with DRA's gates and APIs."""
    out = tmp_path / "dra"
    result = CliRunner().invoke(bench, ["--workload", "dra", "--quick", "--contenders", "kubesched", "--out", str(out),
                                        "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.stdout)["runs"]
    assert (run["workload"], run["contender"], run["error"]) == ("SchedulingWithResourceClaimTemplate/fast",
                                                                 "kubesched", ""), run["log"]
    assert run["scheduled_in_window"] == 10, run["log"]
    assert run["feature_gates"] == {"DynamicResourceAllocation": True}
