"""`--workload dra` and `--workload gang`: which upstream workloads they run, at which sizes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kubesched_dev.bench.perf import config, presets
from kubesched_dev.cmd.bench import bench
from tests.unit.dev.perf.test_config import _upstream


@pytest.mark.parametrize(("name", "quick", "want"), [
    pytest.param("dra", False, [("SchedulingWithResourceClaimTemplate/5000pods_500nodes", 500, 2500, 56.0),
                                ("SchedulingWithResourceClaimTemplate/empty_500nodes", 500, 10, 64.0)], id="dra"),
    pytest.param("dra", True, [("SchedulingWithResourceClaimTemplate/fast", 2, 10, 0.0)], id="dra-quick"),
    pytest.param("gang", False, [("GangScheduling/1000Nodes_300Gangs_3000Pods_10PerGroup", 1000, 3000, 0.0),
                                 ("GangScheduling/1000Nodes_30Gangs_3000Pods_100PerGroup", 1000, 3000, 0.0)],
                 id="gang"),
    pytest.param("gang", True, [("GangScheduling/10Nodes_3Gangs", 10, 9, 0.0)], id="gang-quick"),
])
def test_preset_plans(name: str, quick: bool, want: list[tuple[str, int, int, float]]) -> None:
    path, plans = presets.plans(presets.PRESETS[name], _upstream(), quick)
    assert path == _upstream() / presets.PRESETS[name].file
    assert [(p.name, p.nodes, p.pods, p.workload.threshold) for p in plans] == want
    assert all(not p.refused for p in plans)


def test_gang_groups_are_the_pod_template_params() -> None:
    _, (ten, hundred) = presets.plans(presets.PRESETS["gang"], _upstream(), False)
    groups = [next(op for op in p.ops if op["opcode"] == "createPodGroups") for p in (ten, hundred)]
    assert [(g["count"], g["templateParams"]) for g in groups] == [(300, {"podsPerGroup": 10}),
                                                                   (30, {"podsPerGroup": 100})]
    assert config.feature_gates(ten.case, ten.workload) == {"GenericWorkload": True}


def test_mixed_with_the_bench_workloads_is_refused() -> None:
    result = CliRunner().invoke(bench, ["--workload", "dra,basic"])
    assert result.exit_code == 2
    assert "dra run upstream's scheduler_perf workloads; give them apart from the others" in result.output
