"""`kubesched bench --quick`: three fresh planes, one per contender; correctness only, no timing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched_dev.bench.run import PLANE_PREFIX
from kubesched_dev.cmd.bench import QUICK, bench
from kubesched_dev.localcluster import plane as planes

# Three planes started and three runs of up to 145 s each (bench.run.Options.run_timeout); ~2 min here.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]


def test_quick_bench_binds_every_pod_within_capacity(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = CliRunner().invoke(bench, ["--quick", f"--out={out}"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "bench.json").read_text())
    runs = doc["runs"]
    assert [r["contender"] for r in runs] == ["limit", "kube-scheduler", "kubesched"]
    for r in runs:
        where = f"{r['contender']}: {r['error']} (log {r['log']})"
        assert r["error"] == "", where
        assert r["bound"] == QUICK["pods"], where
        assert r["all_bound"], where
        assert r["overcommitted"] == {}, where
        assert r["max_pods_on_a_node"] <= 110, where
        assert r["bound_before_watch"] == 0, where
        assert r["curve"][-1][1] == QUICK["pods"], where
    assert "kubesched/kube-scheduler throughput" in doc["ratios"]
    assert "kubesched/limit throughput" in doc["ratios"]
    left = [c.name for c in planes.list_clusters() if c.name.startswith(f"{PLANE_PREFIX}{os.getpid()}-")]
    assert left == [], "bench planes left running"


def test_restart_check_measures_both_contenders_with_their_pods_bound(tmp_path: Path) -> None:
    """Each contender stopped after its run, 20 pods created, started again: it lists the bound
    pods and binds the new ones; the figures count from its second start."""
    out = tmp_path / "bench"
    result = CliRunner().invoke(bench, ["--nodes=10", "--pods=100", "--rounds=1", "--restart-check",
                                        "--contenders=kube-scheduler,kubesched", f"--out={out}"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "restart with the pods bound" in result.output
    doc = json.loads((out / "bench.json").read_text())
    assert doc["options"]["restart_check"] is True
    for r in doc["runs"]:
        where = f"{r['contender']}: {r['error']} {r['restart']} (log {r['log']})"
        restart = r["restart"]
        assert r["error"] == "", where
        assert r["bound"] == 100, where
        assert restart["error"] == "", where
        assert (restart["pods"], restart["already_bound"]) == (20, 100), where
        assert restart["ready_s"] is not None, where
        assert restart["ready_s"] > 0, where
        assert 0 < restart["first_bind_s"] <= restart["all_bound_s"], where
        assert restart["peak_rss_mb"] > 0, where
    assert "kubesched/kube-scheduler restart first bind" in doc["ratios"]
