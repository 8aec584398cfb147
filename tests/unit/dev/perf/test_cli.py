"""`kubesched bench --scheduler-perf`: what is refused before any plane starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched_dev.cmd.bench import bench

CONFIG = """
- name: Gang
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: startCollectingProfile}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads:
  - {name: one, labels: [performance]}
- name: Steady
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: createPods, count: 1, collectMetrics: true}
  workloads:
  - {name: one, labels: [short]}
"""


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--workload", "Gang/one"], "not implemented by this runner: startCollectingProfile",
                 id="unimplemented-op"),
    pytest.param(["--workload", "Gang"], "give TESTCASE/WORKLOAD", id="no-size"),
    pytest.param([], "needs --workload TESTCASE/WORKLOAD or --label LABEL", id="neither"),
    pytest.param(["--label", "nope"], "no workload has the labels 'nope'", id="no-match"),
    pytest.param(["--workload", "Steady/one", "--contenders", "limit"], "limit cannot run scheduler_perf",
                 id="limit"),
])
def test_refused_before_any_plane(tmp_path: Path, args: list[str], message: str) -> None:
    cfg = tmp_path / "performance-config.yaml"
    cfg.write_text(CONFIG)
    result = CliRunner().invoke(bench, ["--scheduler-perf", str(cfg), "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "out").exists()


def test_label_needs_scheduler_perf() -> None:
    result = CliRunner().invoke(bench, ["--label", "performance"])
    assert result.exit_code == 2
    assert "--label needs --scheduler-perf" in result.output
