"""The example plugins on their own: each is a small class called with kubesched's types."""

from __future__ import annotations

import asyncio
import re

import pytest
from kubesched_example_plugins import allowlist, prefer_label, recording_binder

from kubesched.framework import Code, CycleState, Handle, NodeInfo, PodInfo, Status
from kubesched.model.objects import Node, ObjectMeta, Pod


def node(name: str, **labels: str) -> NodeInfo:
    return NodeInfo(Node(metadata=ObjectMeta(name=name, labels=labels)))


POD = PodInfo(Pod(metadata=ObjectMeta(name="p", namespace="ns")))


@pytest.mark.parametrize(("labels", "passes"), [
    pytest.param({"tier": "normal"}, True, id="allowed-value"),
    pytest.param({"tier": "cronjob"}, False, id="other-value"),
    pytest.param({}, False, id="no-label"),
])
def test_allowlist_filter(labels: dict[str, str], passes: bool) -> None:
    plugin = allowlist.new(allowlist.parse_args({"key": "tier", "values": ["normal", "gpu"]}, "args", []))
    status = plugin.filter(CycleState(), POD, node("n", **labels))
    if passes:
        assert status is None
    else:
        reason = "node(s) lacked an allowed tier label (gpu, normal)"
        assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


@pytest.mark.parametrize(("args", "message"), [
    pytest.param({"keys": "tier"}, "unknown field(s) ['keys']", id="unknown-field"),
    pytest.param({"values": []}, "values must be a non-empty list", id="no-values"),
    pytest.param({"key": ""}, "key must be a non-empty label key", id="empty-key"),
])
def test_allowlist_args(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        allowlist.parse_args(args, "args", [])


def test_prefer_label_scores() -> None:
    plugin = prefer_label.new({"key": "disk", "value": "ssd"})
    assert plugin.score(CycleState(), POD, node("a", disk="ssd"), None) == 100  # type: ignore[arg-type]
    assert plugin.score(CycleState(), POD, node("b"), None) == 0  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"args\.key"):
        prefer_label.new({})


def test_recording_binder_binds_through_the_handle() -> None:
    calls: list[tuple[str, str]] = []

    async def bind_pod(pod: Pod, node_name: str) -> Status | None:
        calls.append((pod.key, node_name))
        return None

    binder = recording_binder.new({}, Handle(bind_pod=bind_pod))
    assert asyncio.run(binder.bind(CycleState(), POD, "n1")) is None
    assert calls == [("ns/p", "n1")]
    assert binder.bound == [("ns/p", "n1")]
