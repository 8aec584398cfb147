"""Reading performance-config.yaml: parameters, paths, feature gates, unrolling, refusals, labels."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kubesched_dev.bench.gates import plane_flags
from kubesched_dev.bench.perf import config

CONFIG = """
- name: Basic
  defaultPodTemplatePath: ../templates/pod-default.yaml
  featureGates: {A: true, B: false}
  workloadTemplate:
  - opcode: createNodes
    countParam: $initNodes
    nodeTemplatePath: ../templates/node-default.yaml
  - opcode: createPodSets
    countParam: $sets
    namespacePrefix: init-ns
    createPodsOp:
      opcode: createPods
      countParam: $initPods
  - opcode: createPods
    countParam: $measurePods
    templateParams: {size: $size|7, name: $who}
    collectMetrics: true
  workloads:
  - name: small
    labels: [integration-test, short]
    featureGates: {B: true}
    params: {initNodes: 5, sets: 2, initPods: 3, measurePods: 10, who: x}
  - name: big
    labels: [performance]
    threshold: 680
    params: {initNodes: 5000, sets: 1, initPods: 3, measurePods: 10, who: y, size: 9}
  - name: typo
    params: {initNodes: 5, sets: 1, initPods: 3, measurePods: 10, who: y, unused: 1}
- name: Gang
  workloadTemplate:
  - opcode: createNodes
    count: 1
  - opcode: createPodGroups
    namespace: ns
    templatePath: pg.yaml
    count: 1
  - opcode: createPods
    count: 1
    collectMetrics: true
  workloads:
  - name: one
    labels: [performance]
"""


@pytest.fixture
def cases(tmp_path: Path) -> list[config.TestCase]:
    d = tmp_path / "misc"
    d.mkdir()
    (d / "performance-config.yaml").write_text(CONFIG)
    return config.load(d / "performance-config.yaml")


def test_paths_are_relative_to_the_file(cases: list[config.TestCase], tmp_path: Path) -> None:
    basic = cases[0]
    assert basic.default_pod_template == str(tmp_path / "templates" / "pod-default.yaml")
    assert basic.ops[0]["nodeTemplatePath"] == str(tmp_path / "templates" / "node-default.yaml")


def test_unroll_resolves_params_and_expands_pod_sets(cases: list[config.TestCase]) -> None:
    tc, w = config.find(cases, "Basic/small")
    ops = config.unroll(tc, w)
    assert [(o["opcode"], o.get("count"), o.get("namespace"), o["index"]) for o in ops] == [
        ("createNodes", 5, None, 0), ("createPods", 3, "init-ns-0", 1), ("createPods", 3, "init-ns-1", 2),
        ("createPods", 10, None, 3)]
    assert ops[-1]["templateParams"] == {"size": 7, "name": "x"}  # `$size|7`: the default, decoded as YAML
    assert ops[-1]["signatureBatchSize"] == 1
    assert config.node_count(ops) == 5
    assert config.pod_count(ops) == 16


def test_param_beats_default_and_threshold(cases: list[config.TestCase]) -> None:
    tc, w = config.find(cases, "Basic/big")
    assert config.unroll(tc, w)[-1]["templateParams"]["size"] == 9
    assert (w.threshold, w.threshold_metric, w.threshold_bucket) == (680.0, "SchedulingThroughput", "Average")


def test_feature_gates_merge_workload_over_test_case(cases: list[config.TestCase]) -> None:
    tc, w = config.find(cases, "Basic/small")
    assert config.feature_gates(tc, w) == {"A": True, "B": True}


def test_unused_parameter_is_an_error(cases: list[config.TestCase]) -> None:
    tc, w = config.find(cases, "Basic/typo")
    with pytest.raises(config.ConfigError, match=r"the parameters \['unused'\] are defined on workload typo"):
        config.unroll(tc, w)


def test_create_pod_groups_unrolls(cases: list[config.TestCase], tmp_path: Path) -> None:
    tc, w = config.find(cases, "Gang/one")
    op = config.unroll(tc, w)[1]
    assert (op["opcode"], op["namespace"], op["count"], op["templatePath"]) == (
        "createPodGroups", "ns", 1, str(tmp_path / "misc" / "pg.yaml"))


def _one_op(tmp_path: Path, op: str) -> list[dict[str, object]]:
    (tmp_path / "c.yaml").write_text(f"- name: X\n  workloadTemplate:\n  - {op}\n"
                                     "  - {opcode: createPods, count: 1, collectMetrics: true}\n"
                                     "  workloads: [{name: a}]\n")
    (tc, w), = config.with_label(config.load(tmp_path / "c.yaml"), "")
    return config.unroll(tc, w)


def test_unimplemented_operation_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(config.UnsupportedOperation, match="not implemented by this runner: startCollectingProfile"):
        _one_op(tmp_path, "{opcode: startCollectingProfile}")


@pytest.mark.parametrize(("op", "match"), [
    pytest.param("{opcode: createPodGroups, namespace: ns, templatePath: pg.yaml, count: 0}",
                 "createPodGroups: count must be greater than 0, got 0", id="podgroups-count"),
    pytest.param("{opcode: createPodGroups, templatePath: pg.yaml, count: 1}", "createPodGroups: namespace must be set",
                 id="podgroups-namespace"),
    pytest.param("{opcode: createResourceClaims, namespace: ns, count: 1}",
                 "createResourceClaims: templatePath must be set", id="claims-template"),
    pytest.param("{opcode: createPods, count: 1, steadyState: true}",
                 "in a steady state, the test duration must be > 0", id="steady-no-duration"),
    pytest.param("{opcode: createPods, count: 1, steadyState: true, duration: 1s, skipWaitToCompletion: true}",
                 "skipWaitToCompletion and steadyState cannot be true at the same time", id="steady-skip-wait"),
    pytest.param("{opcode: createPods, count: 1, steadyState: true, duration: 5 s}", "invalid duration",
                 id="steady-bad-duration"),
    pytest.param("{opcode: createPods, count: 1, persistentVolumeClaimTemplatePath: pvc.yaml}",
                 "createPods: persistentVolumeTemplatePath must be set with persistentVolumeClaimTemplatePath",
                 id="claim-template-without-volume-template"),
    pytest.param("{opcode: createPods, count: 1, steadyState: true, duration: 1s, "
                 "persistentVolumeClaimTemplatePath: pvc.yaml, persistentVolumeTemplatePath: pv.yaml}",
                 "createPods with steadyState and persistentVolumeClaimTemplatePath is not implemented",
                 id="steady-state-with-volumes"),
])
def test_operation_checks(tmp_path: Path, op: str, match: str) -> None:
    with pytest.raises(config.ConfigError, match=match):
        _one_op(tmp_path, op)


def test_steady_state_with_duration_unrolls(tmp_path: Path) -> None:
    op = _one_op(tmp_path, "{opcode: createPods, count: 10, steadyState: true, duration: 10s, collectMetrics: true}")[0]
    assert (op["steadyState"], op["duration"]) == (True, "10s")


@pytest.mark.parametrize(("gates", "want"), [
    pytest.param({}, ("", ""), id="none"),
    pytest.param({"DynamicResourceAllocation": True}, (
        "DynamicResourceAllocation=true", "resource.k8s.io/v1=true,resource.k8s.io/v1beta2=true,"
        "resource.k8s.io/v1beta1=true,resource.k8s.io/v1alpha3=true"), id="dra"),
    pytest.param({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}, (
        "GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "scheduling.k8s.io/v1beta1=true"), id="gang"),
    pytest.param({"GenericWorkload": False}, ("GenericWorkload=false", ""), id="off"),
])
def test_plane_flags(gates: dict[str, bool], want: tuple[str, str]) -> None:
    assert plane_flags(gates) == want


@pytest.mark.parametrize(("selector", "want"), [
    pytest.param("performance", ["Basic/big", "Gang/one"], id="performance"),
    pytest.param("integration-test,+short", ["Basic/small"], id="and"),
    pytest.param("performance,-performance", [], id="excluded"),
])
def test_label_filter(cases: list[config.TestCase], selector: str, want: list[str]) -> None:
    assert [f"{tc.name}/{w.name}" for tc, w in config.with_label(cases, selector)] == want


@pytest.mark.parametrize(("spec", "match"), [
    pytest.param("Basic", "give TESTCASE/WORKLOAD", id="no-slash"),
    pytest.param("Nope/small", "no test case 'Nope'", id="no-case"),
    pytest.param("Basic/huge", "no workload 'huge'", id="no-workload"),
])
def test_find_errors(cases: list[config.TestCase], spec: str, match: str) -> None:
    with pytest.raises(config.ConfigError, match=match):
        config.find(cases, spec)


def test_unknown_opcode_is_refused_at_load(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("- name: X\n  workloadTemplate: [{opcode: frobnicate}]\n"
                                     "  workloads: [{name: a}]\n")
    with pytest.raises(config.ConfigError, match="unknown opcode 'frobnicate'"):
        config.load(tmp_path / "c.yaml")


def _upstream() -> Path:
    """scheduler_perf's workloads in the Go module cache, where the control-plane build (run by
    `./dev test` before the tests) puts the kubernetes module."""
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    path = Path(cache) / "k8s.io" / "kubernetes@v1.37.2" / "test" / "integration" / "scheduler_perf"
    assert path.is_dir(), f"{path} is missing: build the control plane first (kubesched cluster build)"
    return path


def test_upstream_misc_loads_unchanged() -> None:
    cases = config.load(_upstream() / "misc" / "performance-config.yaml")
    tc, w = config.find(cases, "SchedulingBasic/5000Nodes_10000Pods")
    ops = config.unroll(tc, w)
    assert (config.node_count(ops), config.pod_count(ops), w.threshold) == (5000, 11000, 680.0)


@pytest.mark.parametrize(("path", "spec", "nodes", "pods", "threshold"), [
    pytest.param("dra", "SchedulingWithResourceClaimTemplate/5000pods_500nodes", 500, 2500, 56.0, id="dra-burst"),
    pytest.param("dra", "SchedulingWithResourceClaimTemplate/empty_500nodes", 500, 10, 64.0, id="dra-steady"),
    pytest.param("podgroup/gangscheduling", "GangScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 3000,
                 0.0, id="gang"),
])
def test_upstream_dra_and_podgroup_load_unchanged(path: str, spec: str, nodes: int, pods: int,
                                                  threshold: float) -> None:
    tc, w = config.find(config.load(_upstream() / path / "performance-config.yaml"), spec)
    ops = config.unroll(tc, w)
    assert (config.node_count(ops), config.pod_count(ops), w.threshold) == (nodes, pods, threshold)


@pytest.mark.parametrize(("test_go", "threshold", "want"), [
    pytest.param('perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "dra", nil)', "{dra: 56, x: 1}",
                 56.0, id="topic"),
    pytest.param('perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "other", nil)', "{dra: 56}", 0.0,
                 id="other-topic"),
    pytest.param("", "{dra: 56}", 0.0, id="no-test-file"),
    pytest.param("", "70", 70.0, id="plain"),
])
def test_threshold_by_topic(tmp_path: Path, test_go: str, threshold: str, want: float) -> None:
    if test_go:
        (tmp_path / "x_test.go").write_text(f"func BenchmarkPerfScheduling(b *testing.B) {{\n\t{test_go}\n}}\n")
    (tmp_path / "c.yaml").write_text("- name: X\n  workloadTemplate: [{opcode: createPods, count: 1, "
                                     f"collectMetrics: true}}]\n  workloads: [{{name: a, threshold: {threshold}}}]\n")
    assert config.load(tmp_path / "c.yaml")[0].workloads[0].threshold == want
