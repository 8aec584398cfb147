"""A plugin's error in kube-scheduler v1.37.2's words (framework/runtime/framework.go), which the
FailedScheduling event and the PodScheduled condition carry: the error Status's message is
err.Error() of the wrapping fmt.Errorf, and schedule_one.go passes it on unwrapped."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework import CycleState, NodeCursor, PodInfo, SchedulingError, Status, schedule_pod
from kubesched.framework.interface import PreFilterResult, Rows
from kubesched.framework.runtime.framework import run_permit, run_reserve
from kubesched.framework.runtime.profile import build_profile
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.waiting import WaitingPods
from kubesched.plugins.volume_binding.plugin import raise_error
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

BOOM = Status(Code.ERROR, "boom")


class Boom:
    """Errs at the one point it is built for, passes elsewhere."""

    name = "Boom"

    def __init__(self, point: str) -> None:
        self.point = point

    def _at(self, point: str) -> Status | None:
        return BOOM if point == self.point else None

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        return None, self._at("preFilter")

    def filter(self, state: CycleState, pod: PodInfo, node: Any) -> Status | None:
        return self._at("filter")

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        return self._at("preScore")

    def score(self, state: CycleState, pod: PodInfo, node: Any, snapshot: Snapshot) -> int:
        return 101 if self.point == "score" else 0

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._at("reserve")

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self._at("permit"), 0.0


def profile_erring_at(point: str) -> Any:
    points = ("preFilter", "filter", "preScore", "score", "reserve", "permit")
    config = ProfileConfig("test", {p: (PluginRef("Boom", 1),) for p in points})
    return build_profile(config, {"Boom": lambda args: Boom(point)})


POD = PodInfo(make_pod("p").obj())


@pytest.mark.parametrize(("point", "want"), [
    # framework.go:978 RunPreFilterPlugins
    pytest.param("preFilter", 'running PreFilter plugin "Boom": boom', id="PreFilter"),
    # framework.go:1130 RunFilterPlugins
    pytest.param("filter", 'running "Boom" filter plugin: boom', id="Filter"),
    # framework.go:1383 RunPreScorePlugins
    pytest.param("preScore", 'running PreScore plugin "Boom": boom', id="PreScore"),
    # framework.go:1565 and 1578 normalizeScores' range check
    pytest.param("score", 'applying score defaultWeights on Score plugins: plugin "Boom" returns an invalid score '
                 "101, it should in the range of [0, 100] after normalizing", id="Score-out-of-range"),
])
def test_scheduling_cycle_error_message(point: str, want: str) -> None:
    snap = snapshot_with([make_node("a"), make_node("b")])
    with pytest.raises(SchedulingError) as err:
        schedule_pod(profile_erring_at(point), snap, POD, rng=random.Random(0), cursor=NodeCursor())
    assert str(err.value) == want
    assert err.value.status.code == Code.ERROR
    assert err.value.status.plugin == "Boom"


def test_batch_filter_error_message() -> None:
    """A batch Filter's error reads as the one-node Filter's (VolumeBinding raises it from its batch)."""
    with pytest.raises(SchedulingError) as err:
        raise_error(Status(Code.ERROR, 'reading "VolumeBinding" from cycleState: not found'))
    assert str(err.value) == 'running "VolumeBinding" filter plugin: reading "VolumeBinding" from cycleState: not found'


def test_reserve_error_message() -> None:
    # framework.go:2040 RunReservePluginsReserve
    s = run_reserve(profile_erring_at("reserve"), CycleState(), POD, "a")
    assert s == Status(Code.ERROR, 'running Reserve plugin "Boom": boom', plugin="Boom")


def test_permit_error_message() -> None:
    # framework.go:2132 RunPermitPlugins
    s = run_permit(profile_erring_at("permit"), CycleState(), POD, "a", WaitingPods())
    assert s == Status(Code.ERROR, 'running Permit plugin "Boom": boom', plugin="Boom")


