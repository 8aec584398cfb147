"""scheduler_perf's performance-config.yaml, read unchanged: test cases, workloads, operations.

As upstream: a workload's parameters resolve `countParam: $initNodes` (and `$name|default` in
templateParams), the test case's feature gates are merged with the workload's, template paths
are relative to the config file, createPodSets unrolls into one createPods a namespace, and a
workload may not define a parameter that no operation uses. An opcode this runner does not
implement is refused by its name, so a workload never runs with a step silently missing.
"""

from __future__ import annotations

import contextlib
import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# Every opcode scheduler_perf knows; IMPLEMENTED are those this runner executes.
KNOWN_OPCODES = ("allocResourceClaims", "createAny", "createNodes", "createNamespaces", "createPods",
                 "createPodSets", "deletePods", "createResourceClaims", "churn", "updateAny", "barrier", "sleep",
                 "startCollectingMetrics", "stopCollectingMetrics", "createPodGroups", "startCollectingProfile",
                 "stopCollectingProfile")
IMPLEMENTED = frozenset({"allocResourceClaims", "createAny", "createNodes", "createNamespaces", "createPods",
                         "createPodSets", "createPodGroups", "createResourceClaims", "deletePods", "churn", "updateAny",
                         "barrier", "sleep", "startCollectingMetrics", "stopCollectingMetrics"})
# Options of implemented operations this runner does not implement: refused by name with the workload.
UNSUPPORTED_OPTIONS: dict[str, tuple[str, ...]] = {}
PATH_FIELDS = ("templatePath", "nodeTemplatePath", "podTemplatePath", "namespaceTemplatePath",
               "persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath")


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration, in seconds."""
    s = text.strip()
    if s in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if pos != len(s):
        raise ValueError(f"time: invalid duration {text!r}")
    return total


class ConfigError(ValueError):
    pass


class UnsupportedOperation(ConfigError):
    """The workload needs an operation this runner does not implement."""


@dataclass
class Workload:
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    threshold: float = 0.0
    threshold_metric: str = "SchedulingThroughput"
    threshold_bucket: str = "Average"
    threshold_lower: bool = False
    feature_gates: dict[str, bool] = field(default_factory=dict)


@dataclass
class TestCase:
    name: str
    ops: list[dict[str, Any]]
    workloads: list[Workload]
    feature_gates: dict[str, bool] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)
    default_pod_template: str | None = None
    scheduler_config: str | None = None
    metrics_config: bool = False

    def workload(self, name: str) -> Workload:
        for w in self.workloads:
            if w.name == name:
                return w
        raise ConfigError(f"{self.name}: no workload {name!r}; workloads: {', '.join(w.name for w in self.workloads)}")


_TOPIC = re.compile(r'RunBenchmarkPerfScheduling\(\s*b\s*,\s*"performance-config\.yaml"\s*,\s*"([^"]+)"')


def benchmark_topic(directory: Path) -> str:
    """The topic the file's benchmark runs under (the first RunBenchmarkPerfScheduling call of the
    directory's Go tests): the key of a threshold given per topic, e.g. `threshold: {dra: 56}`."""
    for test in sorted(directory.glob("*_test.go")):
        with contextlib.suppress(OSError):
            if m := _TOPIC.search(test.read_text()):
                return m.group(1)
    return ""


def _threshold(value: Any, topic: str) -> float:
    if isinstance(value, dict):
        value = value.get(topic, 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _resolve(base: Path, p: str | None) -> str | None:
    return None if p is None else str((base / p).resolve())


def load(path: Path) -> list[TestCase]:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: {e}") from None
    if not isinstance(doc, list) or not doc:
        raise ConfigError(f"{path}: no test cases defined")
    base = path.parent
    topic = benchmark_topic(base)
    cases: list[TestCase] = []
    for raw in doc:
        name = raw.get("name", "")
        sel = raw.get("defaultThresholdMetricSelector") or {}
        workloads = []
        for w in raw.get("workloads") or []:
            wsel = w.get("thresholdMetricSelector") or sel
            threshold = w.get("threshold", 0)
            workloads.append(Workload(
                name=w["name"], params=dict(w.get("params") or {}), labels=list(w.get("labels") or []),
                threshold=_threshold(threshold, topic),
                threshold_metric=wsel.get("name", "SchedulingThroughput"),
                threshold_bucket=wsel.get("dataBucket", "Average"), threshold_lower=bool(wsel.get("expectLower")),
                feature_gates=dict(w.get("featureGates") or {})))
        ops = [_absolute(dict(op), base) for op in raw.get("workloadTemplate") or []]
        if not ops:
            raise ConfigError(f"{name}: no ops defined")
        if not workloads:
            raise ConfigError(f"{name}: no workloads defined")
        for op in ops:
            if op.get("opcode") not in KNOWN_OPCODES:
                raise ConfigError(f"{name}: unknown opcode {op.get('opcode')!r}")
        cases.append(TestCase(
            name=name, ops=ops, workloads=workloads, feature_gates=dict(raw.get("featureGates") or {}),
            labels=list(raw.get("labels") or []),
            default_pod_template=_resolve(base, raw.get("defaultPodTemplatePath")),
            scheduler_config=_resolve(base, raw.get("schedulerConfigPath")),
            metrics_config=raw.get("metricsCollectorConfig") is not None))
    return cases


def _absolute(op: dict[str, Any], base: Path) -> dict[str, Any]:
    for key in PATH_FIELDS:
        if isinstance(op.get(key), str):
            op[key] = _resolve(base, op[key])
    if isinstance(op.get("templatePaths"), list):
        op["templatePaths"] = [_resolve(base, p) for p in op["templatePaths"]]
    if isinstance(op.get("createPodsOp"), dict):
        op["createPodsOp"] = _absolute(dict(op["createPodsOp"]), base)
    return op


def find(cases: list[TestCase], spec: str) -> tuple[TestCase, Workload]:
    """`NAME/SIZE`: a test case and one of its workloads."""
    tc_name, sep, w_name = spec.partition("/")
    if not sep:
        raise ConfigError(f"--workload {spec!r}: give TESTCASE/WORKLOAD, e.g. SchedulingBasic/500Nodes")
    for tc in cases:
        if tc.name == tc_name:
            return tc, tc.workload(w_name)
    raise ConfigError(f"no test case {tc_name!r}; test cases: {', '.join(tc.name for tc in cases)}")


def enabled(selectors: list[str], labels: list[str]) -> bool:
    """scheduler_perf's label filter: each selector must be present (`x`, `+x`) or absent (`-x`)."""
    for s in selectors:
        if not s:
            continue
        if s.startswith("-"):
            if s[1:] in labels:
                return False
        elif s.lstrip("+") not in labels:
            return False
    return True


def with_label(cases: list[TestCase], selector: str) -> list[tuple[TestCase, Workload]]:
    sels = selector.split(",")
    return [(tc, w) for tc in cases for w in tc.workloads if enabled(sels, tc.labels + w.labels)]


class _Params:
    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self.used: set[str] = set()

    def get(self, ref: str, kind: type = float) -> Any:
        if not ref.startswith("$"):
            raise ConfigError(f"parameter reference {ref!r} must start with $")
        key = ref[1:]
        self.used.add(key)
        if key not in self.params:
            raise ConfigError(f"parameter {key} is undefined")
        v = self.params[key]
        if kind is float:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"parameter {key} has the wrong type {type(v).__name__}")
            return int(v)
        if not isinstance(v, kind):
            raise ConfigError(f"parameter {key} has the wrong type {type(v).__name__}")
        return v

    def template(self, tp: dict[str, Any]) -> dict[str, Any]:
        out = dict(tp)
        for k, v in tp.items():
            if isinstance(v, str) and v.startswith("$"):
                key, sep, default = v[1:].partition("|")
                if key in self.params:
                    self.used.add(key)
                    out[k] = self.params[key]
                elif sep:
                    out[k] = yaml.safe_load(default)
                else:
                    raise ConfigError(f"parameter {key!r} not found")
        return out


def _patch(op: dict[str, Any], p: _Params) -> dict[str, Any]:
    op = copy.deepcopy(op)
    code = op["opcode"]
    if "countParam" in op:
        op["count"] = p.get(op.pop("countParam"))
    if code == "createPods":
        if "countMultiplierParam" in op:
            op["count"] = op.get("count", 0) * p.get(op.pop("countMultiplierParam"))
        if "signatureBatchSizeParam" in op:
            op["signatureBatchSize"] = p.get(op.pop("signatureBatchSizeParam"))
        op.setdefault("signatureBatchSize", 1)
        op["signatureBatchSize"] = op["signatureBatchSize"] or 1
        if "steadyStateParam" in op:
            op["steadyState"] = p.get(op.pop("steadyStateParam"), bool)
        if "durationParam" in op:
            op["duration"] = p.get(op.pop("durationParam"), str)
    if code in ("createPodGroups", "createResourceClaims"):
        for key in ("namespace", "templatePath"):
            if not op.get(key):
                raise ConfigError(f"{code}: {key} must be set")
        if code == "createPodGroups" and int(op.get("count", 0)) < 1:
            raise ConfigError(f"createPodGroups: count must be greater than 0, got {op.get('count', 0)}")
    if code == "sleep" and "durationParam" in op:
        op["duration"] = p.get(op.pop("durationParam"), str)
    if isinstance(op.get("templateParams"), dict):
        op["templateParams"] = p.template(op["templateParams"])
    if code == "createPods":
        _check_steady_state(op)
        _check_volumes(op)
    for key in UNSUPPORTED_OPTIONS.get(code, ()):
        if op.get(key):
            raise UnsupportedOperation(f"{code} with {key} is not implemented by this runner")
    if code == "barrier":
        op.setdefault("stageRequirement", "Scheduled")
    return op


def _check_volumes(op: dict[str, Any]) -> None:
    if not op.get("persistentVolumeClaimTemplatePath"):
        return  # getPodStrategy: a volume template without a claim template is not read
    if not op.get("persistentVolumeTemplatePath"):
        raise ConfigError("createPods: persistentVolumeTemplatePath must be set with persistentVolumeClaimTemplatePath")
    if op.get("steadyState"):
        # Upstream's steady state would create claim pvc-0 for every replacement pod.
        raise UnsupportedOperation("createPods with steadyState and persistentVolumeClaimTemplatePath "
                                   "is not implemented by this runner")


def _check_steady_state(op: dict[str, Any]) -> None:
    """createPodsOp.isValid's steadyState rules."""
    if not op.get("steadyState"):
        return
    if op.get("skipWaitToCompletion"):
        raise ConfigError("skipWaitToCompletion and steadyState cannot be true at the same time")
    d = op.get("duration") or "0"
    try:
        seconds = parse_duration(d) if isinstance(d, str) else float(d)
    except ValueError as e:
        raise ConfigError(f"createPods: duration: {e}") from None
    if seconds <= 0:
        raise ConfigError("when creating pods in a steady state, the test duration must be > 0")


def unroll(tc: TestCase, w: Workload) -> list[dict[str, Any]]:
    """The workload's operations with its parameters in place, createPodSets expanded, each
    unsupported opcode refused by name before anything runs."""
    missing = sorted({op["opcode"] for op in tc.ops if op["opcode"] not in IMPLEMENTED})
    if missing:
        raise UnsupportedOperation(f"{tc.name}/{w.name}: operation(s) not implemented by this runner: "
                                   f"{', '.join(missing)}")
    p = _Params(w.params)
    out: list[dict[str, Any]] = []
    for raw in tc.ops:
        op = _patch(raw, p)
        if op["opcode"] == "createPodSets":
            inner = op["createPodsOp"]
            for k in range(op.get("count", 0)):
                sub = _patch(inner, p)
                sub["namespace"] = f"{op['namespacePrefix']}-{k}"
                sub["index"] = len(out)
                out.append(sub)
            continue
        # Upstream numbers the unrolled list: namespace-<index>, node-<index>- follow from it.
        op["index"] = len(out)
        out.append(op)
    unused = sorted(set(w.params) - p.used)
    if unused:
        raise ConfigError(f"the parameters {unused} are defined on workload {w.name}, but unused")
    if not any(op["opcode"] == "stopCollectingMetrics" or op.get("collectMetrics") for op in out):
        raise ConfigError(f"{tc.name}: no op in the workload template collects metrics")
    return out


def feature_gates(tc: TestCase, w: Workload) -> dict[str, bool]:
    return {**tc.feature_gates, **w.feature_gates}


def node_count(ops: list[dict[str, Any]]) -> int:
    return sum(int(op.get("count", 0)) for op in ops if op["opcode"] == "createNodes")


def pod_count(ops: list[dict[str, Any]]) -> int:
    return sum(int(op.get("count", 0)) for op in ops if op["opcode"] == "createPods")
