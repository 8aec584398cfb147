"""The example plugin package (examples/plugins, on pytest's pythonpath) loaded as a user would:
--plugin flags, a profile enabling its plugins, scheduling decided by them, and its binder binding."""

from __future__ import annotations

import asyncio
import random

import pytest
from kubesched_example_plugins.recording_binder import RecordingBinder

from kubesched.config import loads
from kubesched.framework import (
    CycleState,
    FitError,
    Handle,
    NodeCursor,
    PodInfo,
    Profile,
    ScheduleResult,
    Status,
    build_profile,
    schedule_pod,
)
from kubesched.framework.runtime.outoftree import out_of_tree_plugins
from kubesched.model.objects import Pod
from kubesched.plugins.registry import in_tree_registry
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

FLAGS = ["NodeLabelAllowlist=kubesched_example_plugins.allowlist:SPEC",
         "PreferNodeLabel=kubesched_example_plugins.prefer_label:new",
         "RecordingBinder=kubesched_example_plugins.recording_binder:new"]
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: example
    plugins:
      multiPoint:
        enabled: [{name: NodeLabelAllowlist}, {name: PreferNodeLabel, weight: 10}]
      bind:
        disabled: [{name: DefaultBinder}]
        enabled: [{name: RecordingBinder}]
    pluginConfig:
      - name: NodeLabelAllowlist
        args: {key: tier, values: [VALUES]}
      - name: PreferNodeLabel
        args: {key: disk, value: ssd}
"""
NODES = [make_node("control").label("tier", "control").capacity(),
         make_node("hdd").label("tier", "normal").capacity(),
         make_node("ssd").label("tier", "normal").label("disk", "ssd").capacity(),
         make_node("pool-ssd").label("tier", "cronjob").label("disk", "ssd").capacity()]


def profile(values: str, handle: Handle | None = None) -> Profile:
    registry = in_tree_registry().merged(out_of_tree_plugins(FLAGS, in_tree_registry()))
    config = loads(CONFIG.replace("VALUES", values), registry=registry).profiles[0]
    return build_profile(config, registry, handle)


def schedule(p: Profile) -> ScheduleResult | FitError:
    return schedule_pod(p, snapshot_with(list(NODES)), PodInfo(make_pod("p").obj()), rng=random.Random(0),
                        cursor=NodeCursor())


def test_the_allowlist_and_the_score_decide() -> None:
    result = schedule(profile("normal"))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "ssd"  # allowed, and preferred over hdd


def test_the_allowlist_reason_is_in_the_fit_error() -> None:
    result = schedule(profile("gpu"))
    assert isinstance(result, FitError)
    assert "4 node(s) lacked an allowed tier label (gpu)" in result.message()


def test_bad_allowlist_args_are_refused_at_load() -> None:
    registry = in_tree_registry().merged(out_of_tree_plugins(FLAGS, in_tree_registry()))
    with pytest.raises(ValueError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args: values must be a non-empty list"):
        loads(CONFIG.replace("[VALUES]", "[]"), registry=registry)


def test_the_recording_binder_is_the_one_that_binds() -> None:
    calls: list[str] = []

    async def bind_pod(pod: Pod, node_name: str) -> Status | None:
        calls.append(node_name)
        return None

    p = profile("normal", Handle(bind_pod=bind_pod))
    [binder] = p.bind
    assert isinstance(binder, RecordingBinder)
    assert asyncio.run(binder.bind(CycleState(), PodInfo(make_pod("p").obj()), "ssd")) is None
    assert calls == ["ssd"]
    assert binder.bound == [("default/p", "ssd")]
