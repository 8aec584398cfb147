"""`--label` lists a workload as not run when it is larger than this machine holds (runner.plan's
check_fit): every node count of upstream's configs fits, up to SchedulingDaemonset's 15,001."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched_dev.bench.perf import config, runner

CONFIG = """
- name: Daemonset
  workloadTemplate:
  - {opcode: createNodes, count: 1}
  - {opcode: createNodes, countParam: $initNodes}
  - {opcode: createPods, countParam: $measurePods, collectMetrics: true}
  workloads:
  - {name: upstream, labels: [performance], params: {initNodes: 15000, measurePods: 30000}}
  - {name: one-node-more, labels: [performance], params: {initNodes: 15001, measurePods: 30000}}
  - {name: one-pod-more, labels: [performance], params: {initNodes: 10, measurePods: 60001}}
"""


@pytest.mark.parametrize(("workload", "refused"), [
    pytest.param("upstream", "", id="15001-nodes-30000-pods-fit"),
    pytest.param("one-node-more", "Daemonset/one-node-more: 15002 nodes, 30000 pods do not fit this machine "
                 "(at most 15001 nodes, 60000 pods)", id="15002-nodes"),
    pytest.param("one-pod-more", "Daemonset/one-pod-more: 11 nodes, 60001 pods do not fit this machine "
                 "(at most 15001 nodes, 60000 pods)", id="60001-pods"),
])
def test_check_fit(tmp_path: Path, workload: str, refused: str) -> None:
    cfg = tmp_path / "performance-config.yaml"
    cfg.write_text(CONFIG)
    tc, w = config.find(config.load(cfg), f"Daemonset/{workload}")
    assert runner.plan(tc, w, check_fit=True).refused == refused
    assert runner.plan(tc, w).refused == ""
