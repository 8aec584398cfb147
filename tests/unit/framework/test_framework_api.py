"""kubesched.framework is the plugin API: its exported names are pinned here, and a plugin written
against the first protocols (a name, filter, score, a factory of the args) keeps working."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import kubesched.framework as api
from kubesched.config import loads
from kubesched.framework import FitError, NodeCursor, PodInfo, ScheduleResult, build_profile, schedule_pod
from kubesched.framework.runtime.outoftree import to_spec
from kubesched.plugins.registry import in_tree_registry
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

EXPORTED = [
    "MAX_NODE_SCORE", "ActionType", "ArgsParser", "BindPlugin", "ClusterEvent", "Code", "CycleState",
    "Diagnosis", "EventResource", "FilterPlugin", "FitError", "Handle", "NodeCursor", "NodeInfo",
    "PermitPlugin", "PluginFactory", "PluginSpec", "PodInfo", "PostBindPlugin", "PostFilterPlugin",
    "PreBindPlugin", "PreBindPreFlightResult", "PreEnqueuePlugin", "PreFilterPlugin", "PreFilterResult",
    "PreScorePlugin", "Profile", "ProfileError", "QueueSortPlugin", "Registry", "ReservePlugin", "ScheduleResult",
    "SchedulingError", "ScorePlugin", "Snapshot", "Status", "build_profile", "num_feasible_nodes_to_find",
    "schedule_pod",
]


def test_exported_names_are_exactly_these() -> None:
    assert sorted(api.__all__) == sorted(EXPORTED)
    assert all(hasattr(api, name) for name in EXPORTED)


class OldStyle:
    """Only what the first protocols asked for: no events, no batch methods, no handle."""

    name = "OldStyle"

    def __init__(self, avoid: str) -> None:
        self.avoid = avoid

    def filter(self, state: api.CycleState, pod: api.PodInfo, node: api.NodeInfo) -> api.Status | None:
        return api.Status(api.Code.UNSCHEDULABLE, "node(s) were avoided") if node.name == self.avoid else None

    def score(self, state: api.CycleState, pod: api.PodInfo, node: api.NodeInfo, snapshot: api.Snapshot) -> int:
        return api.MAX_NODE_SCORE if node.name.endswith("2") else 0


def new(args: Mapping[str, Any]):  # type: ignore[no-untyped-def]  # unannotated on purpose: probed
    return OldStyle(args.get("avoid", ""))


def test_a_plugin_with_only_the_first_protocols_still_schedules() -> None:
    spec = to_spec("--plugin OldStyle=x:new", "OldStyle", new, "new")
    assert spec.extension_points == {"filter", "score"}
    registry = in_tree_registry().merged([spec])
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
            "  - plugins:\n      multiPoint:\n        enabled:\n          - name: OldStyle\n            weight: 50\n"
            "    pluginConfig:\n      - name: OldStyle\n        args: {avoid: n1}\n")
    config = loads(text, registry=registry).profiles[0]
    profile = build_profile(config, registry)
    nodes = [make_node(f"n{i}").capacity() for i in range(1, 4)]
    result = schedule_pod(profile, snapshot_with(list(nodes)), PodInfo(make_pod("p").obj()),
                          rng=random.Random(0), cursor=NodeCursor())
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "n2"
    failed = schedule_pod(profile, snapshot_with([make_node("n1").capacity()]), PodInfo(make_pod("p").obj()),
                          rng=random.Random(0), cursor=NodeCursor())
    assert isinstance(failed, FitError)
    assert "1 node(s) were avoided" in failed.message()
