"""`kubesched bench --workload dra` and `--workload gang`: upstream scheduler_perf workloads, run by
the scheduler_perf runner from the kubernetes module's own files.

- dra: dra/performance-config.yaml's SchedulingWithResourceClaimTemplate at its `performance`
  sizes for 500 nodes: 5000pods_500nodes (500 nodes with a ResourceSlice of 10 devices each,
  2,500 claims allocated up front, then 2,500 pods with a claim from a template each, created at
  once; threshold 56) and empty_500nodes, the steady state (10 pods queued, each one scheduled
  deleted and replaced, for 10 s; threshold 64).
- gang: podgroup/gangscheduling/performance-config.yaml's GangScheduling test case (PodGroups
  with a gang policy of minCount = the group's size, then the pods) with two workloads of its
  shape at 1,000 nodes: 300 gangs of 10 and 30 gangs of 100 (3,000 pods each, as upstream's
  smallest performance sizes). Upstream's own sizes are 5,000 nodes with gangs of 3 or 1,000.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kubesched_dev.bench.perf import config, runner


@dataclass(frozen=True)
class Preset:
    name: str
    summary: str
    file: str  # relative to scheduler_perf's directory
    workloads: tuple[str, ...]  # TESTCASE/WORKLOAD
    quick: tuple[str, ...]
    # Workloads this project adds to an upstream test case: name -> (test case, params).
    own: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("dra", "scheduler_perf's SchedulingWithResourceClaimTemplate: a claim from a template per pod",
           "dra/performance-config.yaml",
           ("SchedulingWithResourceClaimTemplate/5000pods_500nodes",
            "SchedulingWithResourceClaimTemplate/empty_500nodes"),
           ("SchedulingWithResourceClaimTemplate/fast",)),
    Preset("gang", "scheduler_perf's GangScheduling: PodGroups of minCount = their size, 1,000 nodes",
           "podgroup/gangscheduling/performance-config.yaml",
           ("GangScheduling/1000Nodes_300Gangs_3000Pods_10PerGroup",
            "GangScheduling/1000Nodes_30Gangs_3000Pods_100PerGroup"),
           ("GangScheduling/10Nodes_3Gangs",),
           own={"1000Nodes_300Gangs_3000Pods_10PerGroup": (
                    "GangScheduling", {"initNodes": 1000, "initPodGroups": 300, "podsPerGroup": 10}),
                "1000Nodes_30Gangs_3000Pods_100PerGroup": (
                    "GangScheduling", {"initNodes": 1000, "initPodGroups": 30, "podsPerGroup": 100})}),
)}


def plans(preset: Preset, base: Path, quick: bool) -> tuple[Path, list[runner.Plan]]:
    """The config file and the plans of its workloads (this project's added to their test case)."""
    path = base / preset.file
    cases = config.load(path)
    for name, (case_name, params) in preset.own.items():
        case = next(tc for tc in cases if tc.name == case_name)
        case.workloads.append(config.Workload(name=name, params=dict(params), labels=["performance"]))
    picked = [config.find(cases, spec) for spec in (preset.quick if quick else preset.workloads)]
    return path, [runner.plan(tc, w) for tc, w in picked]
