"""`kubesched bench --quick`: three fresh planes, one per contender; correctness only, no timing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.bench.run import PLANE_PREFIX
from kubesched.cli_bench import QUICK, bench
from kubesched.localcluster import plane as planes

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
