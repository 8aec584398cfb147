"""The registry of PluginSpecs: extension points read from plugin classes, factories with and without
the handle, declared events, and what the config loader reads from a registry."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched.config import ConfigError, loads
from kubesched.framework import (
    CycleState,
    Handle,
    NodeInfo,
    PluginSpec,
    PodInfo,
    ProfileError,
    Registry,
    Status,
    build_profile,
)
from kubesched.framework.events import NODE_ADD
from kubesched.framework.extension_points import POINT_METHODS, POINT_PROTOCOLS, implemented_points
from kubesched.framework.profile_config import EXTENSION_POINTS, PluginRef, ProfileConfig
from kubesched.plugins.registry import in_tree_registry

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

# What kubesched's plugins implement, as the config loader's table said before points were read from
# the classes: a plugin that loses or gains a method changes this on purpose.
IN_TREE_POINTS = {
    "PrioritySort": {"queueSort"},
    "DefaultPreemption": {"preEnqueue", "postFilter"},
    "SchedulingGates": {"preEnqueue"},
    "NodeName": {"preFilter", "filter"},
    "NodeUnschedulable": {"preFilter", "filter"},
    "TaintToleration": {"preFilter", "filter", "preScore", "score"},
    "NodeAffinity": {"preFilter", "filter", "preScore", "score"},
    "NodePorts": {"preFilter", "filter"},
    "NodeResourcesFit": {"preFilter", "filter", "preScore", "score"},
    "NodeResourcesBalancedAllocation": {"preScore", "score"},
    "PodTopologySpread": {"preFilter", "filter", "preScore", "score"},
    "InterPodAffinity": {"preFilter", "filter", "preScore", "score"},
    "ImageLocality": {"score"},
    "DefaultBinder": {"bind"},
    "CronJobPool": {"preFilter", "filter"},
    "UnsupportedPodFields": {"preFilter"},
    "VolumeBinding": {"preFilter", "filter", "preScore", "score", "reserve", "preBind"},
    "VolumeRestrictions": {"preFilter", "filter"},
    "NodeVolumeLimits": {"preFilter", "filter"},
    "VolumeZone": {"preFilter", "filter"},
    "DynamicResources": {"preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"},
    "NodeDeclaredFeatures": {"preFilter", "filter"},
    "GangScheduling": {"preEnqueue", "permit"},
    "Coscheduling": {"queueSort", "preFilter", "postFilter", "reserve", "permit"},
}


def test_in_tree_points_are_read_from_the_plugin_classes() -> None:
    assert {n: set(p) for n, p in in_tree_registry().extension_points().items()} == IN_TREE_POINTS


def test_in_tree_args_parsers() -> None:
    assert sorted(in_tree_registry().args_parsers()) == [
        "Coscheduling", "CronJobPool", "DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
        "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread", "UnsupportedPodFields",
        "VolumeBinding"]


@pytest.mark.parametrize("point", EXTENSION_POINTS)
def test_point_methods_agree_with_the_protocols(point: str) -> None:
    methods = POINT_METHODS[point]
    with_all = type("P", (), {"name": "P", **{m: lambda self, *a: None for m in methods}})()
    assert isinstance(with_all, POINT_PROTOCOLS[point])
    assert point in implemented_points(with_all)
    for left_out in methods:
        partial = type("Q", (), {"name": "Q", **{m: lambda self, *a: None for m in methods if m != left_out}})()
        assert not isinstance(partial, POINT_PROTOCOLS[point])


class Gate:
    name = "Gate"

    def __init__(self, args: Mapping[str, Any], handle: Handle | None = None) -> None:
        self.args, self.handle = args, handle

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


def new_gate(args: Mapping[str, Any]) -> Gate:
    return Gate(args)


def new_gate_with_handle(args: Mapping[str, Any], handle: Handle) -> Gate:
    return Gate(args, handle)


@pytest.mark.parametrize(("factory", "gets_handle"), [
    pytest.param(new_gate, False, id="args-only-annotated-factory"),
    pytest.param(new_gate_with_handle, True, id="args-and-handle-factory"),
    pytest.param(Gate, True, id="the-class-itself"),
])
def test_spec_points_and_handle(factory: Any, gets_handle: bool) -> None:
    spec = PluginSpec("Gate", factory)
    assert spec.extension_points == {"filter"}
    handle = Handle()
    pl = spec.new({"a": 1}, handle)
    assert isinstance(pl, Gate)
    assert pl.args == {"a": 1}
    assert (pl.handle is handle) is gets_handle


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({"factory": lambda args: Gate(args)}, "cannot tell which extension points", id="unannotated"),
    pytest.param({"factory": new_gate, "extension_points": {"filters"}}, "unknown extension points ['filters']",
                 id="unknown-point"),
    pytest.param({"factory": dict, "extension_points": None}, "implements no extension point", id="no-point"),
    pytest.param({"factory": "new_gate"}, "is not callable", id="not-callable"),
])
def test_spec_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        PluginSpec("Gate", **kwargs)


def test_registry_is_built_once_and_merged_not_changed() -> None:
    base = in_tree_registry()
    merged = base.merged([PluginSpec("Gate", new_gate)])
    assert "Gate" in merged
    assert "Gate" not in base
    with pytest.raises(ValueError, match=r"plugin\(s\) \['NodeName'\] are already registered"):
        base.merged([PluginSpec("NodeName", new_gate, {"filter"})])
    with pytest.raises(ValueError, match="registered twice"):
        Registry([PluginSpec("Gate", new_gate), PluginSpec("Gate", new_gate)])


def _profile(registry: Mapping[str, Any], args: dict[str, Any] | None = None) -> Any:
    config = ProfileConfig("p", {"filter": (PluginRef("Gate"),)}, plugin_args={"Gate": args or {}})
    return build_profile(config, registry)


def test_declared_events_win_over_the_instance() -> None:
    profile = _profile({"Gate": PluginSpec("Gate", new_gate, events=[NODE_ADD])})
    assert profile.plugin_events() == {"Gate": (NODE_ADD,)}
    assert len(_profile({"Gate": PluginSpec("Gate", new_gate)}).plugin_events()["Gate"]) == 1  # the wildcard


def test_a_factory_rejecting_its_args_is_a_profile_error() -> None:
    def strict(args: Mapping[str, Any]) -> Gate:
        if "label" not in args:
            raise ValueError("args.label is required")
        return Gate(args)

    with pytest.raises(ProfileError, match=r"profile 'p': plugin Gate rejected its args: args\.label is required"):
        _profile({"Gate": PluginSpec("Gate", strict)})


def test_the_instance_must_carry_its_registered_name() -> None:
    config = ProfileConfig("p", {"filter": (PluginRef("Other"),)})
    with pytest.raises(ProfileError, match="plugin Other is registered under that name, but its instance's `name` "
                                           "is 'Gate'"):
        build_profile(config, {"Other": PluginSpec("Other", new_gate)})


def test_the_loader_reads_points_and_parsers_from_the_registry() -> None:
    def parse(raw: Mapping[str, Any], path: str, errs: list[Any]) -> dict[str, Any]:
        if not isinstance(raw.get("label", ""), str):
            raise TypeError("label must be a string")
        return {"label": raw.get("label", "team")}

    registry = in_tree_registry().merged([PluginSpec("Gate", new_gate, args_parser=parse)])
    text = HEAD + "profiles:\n  - plugins:\n      multiPoint:\n        enabled:\n          - name: Gate\n"
    profile = loads(text, registry=registry).profiles[0]
    assert [r.name for r in profile.plugins["filter"]][-1] == "Gate"
    assert profile.plugins["score"][-1].name != "Gate"  # multiPoint puts it only where it has methods
    assert profile.plugin_args["Gate"] == {"label": "team"}
    bad = text + "    pluginConfig:\n      - name: Gate\n        args: {label: 3}\n"
    with pytest.raises(ConfigError, match=r"profiles\[0\]\.pluginConfig\[0\]\.args: label must be a string"):
        loads(bad, registry=registry)
    with pytest.raises(ConfigError, match=r"Unsupported value: \"Gate\""):
        loads(text)  # the in-tree registry knows no Gate
