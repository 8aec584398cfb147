"""`kubesched bench --workload ...`: a small run of each scheduler_perf-like workload, side by side.

Each contender gets its own fresh plane (~20 s here) and a few seconds of scheduling; the run must
bind every pod, pass its workload's placement check, and report throughput, CPU a pod and peak RSS.
pv runs against kube-scheduler only: kubesched's VolumeBinding is not there yet (its pods stay
Pending and the run fails as stalled, which the unit tests of the stall message cover).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched_dev.bench.run import PLANE_PREFIX
from kubesched_dev.cmd.bench import bench
from kubesched_dev.localcluster import plane as planes

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

BOTH = "kube-scheduler,kubesched"


def _run(tmp_path: Path, workload: str, nodes: int, pods: int, contenders: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "bench"
    result = CliRunner().invoke(bench, [f"--workload={workload}", f"--nodes={nodes}", f"--pods={pods}", "--rounds=1",
                                        f"--contenders={contenders}", f"--out={out}"], catch_exceptions=False)
    doc = json.loads((out / "bench.json").read_text())
    assert result.exit_code == 0, result.output
    assert [r["contender"] for r in doc["runs"]] == contenders.split(",")
    for r in doc["runs"]:
        where = f"{r['contender']}: {r['error']} {r['invalid']} (log {r['log']})"
        assert r["workload"] == workload, where
        assert r["error"] == "", where
        assert r["invalid"] == "", where
        assert r["bound"] == pods, where
        assert r["overcommitted"] == {}, where
        assert r["bound_before_watch"] == 0, where
        assert r["pods_per_s"] > 0, where
        assert r["cpu_ms_per_pod"] > 0, where
        assert r["peak_rss_mb"] > 0, where
        assert f"ok: {r['validity']}" in result.output, where
    if "kubesched" in contenders and "kube-scheduler" in contenders:
        for what in ("throughput", "cpu per pod", "peak rss"):
            assert f"{workload}: kubesched/kube-scheduler {what}" in doc["ratios"]
    left = [c.name for c in planes.list_clusters() if c.name.startswith(f"{PLANE_PREFIX}{os.getpid()}-")]
    assert left == [], "bench planes left running"
    return doc, result.output


def test_spread_keeps_zone_skew_at_most_one_per_group(tmp_path: Path) -> None:
    doc, output = _run(tmp_path, "spread", 20, 100, BOTH)
    assert any(line.startswith("workload       contender") for line in output.splitlines())
    for r in doc["runs"]:
        assert r["validity"].startswith("zone skew <= 1 in 5 group(s)")


def test_anti_affinity_never_puts_two_pods_of_a_group_on_a_node(tmp_path: Path) -> None:
    doc, _ = _run(tmp_path, "anti-affinity", 20, 100, BOTH)
    for r in doc["runs"]:
        assert r["validity"] == "one pod a node per group in 5 group(s) (max 1)"


def test_preemption_binds_every_preemptor_with_three_victims_each(tmp_path: Path) -> None:
    # Ten preemptors: a correctness run (docs/benchmarks.md has the timed ones at 50 and 200).
    doc, _ = _run(tmp_path, "preemption", 10, 10, BOTH)
    for r in doc["runs"]:
        assert r["victims"] == 30, r["validity"]


def test_pv_puts_each_pod_on_its_volumes_node(tmp_path: Path) -> None:
    doc, _ = _run(tmp_path, "pv", 20, 100, "kube-scheduler")
    assert doc["runs"][0]["validity"] == "each pod on its PV's node (100 pod(s))"
