"""DynamicResources' stand-in at the binding cycle: its PreBindPreFlight answers as kube-scheduler's
does for a pod without claims (Skip), so it never asks for status.nominatedNodeName, and both it
and PreBind fail with the CycleState's "not found" when PreFilter did not run."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from kubesched.framework import CycleState, PodInfo, Status
from kubesched.framework.status import Code
from kubesched.plugins.dynamic_resources.plugin import new
from tests.builders import make_pod
from tests.unit.scheduling_helpers import snapshot_with

POD = PodInfo(make_pod("p").obj())


def _pre_filtered() -> CycleState:
    state = CycleState()
    assert new({}).pre_filter(state, POD, snapshot_with([])) == (None, Status(Code.SKIP))
    return state


@pytest.mark.parametrize(("state", "want"), [
    pytest.param(_pre_filtered, Status(Code.SKIP), id="no-claims"),
    pytest.param(CycleState, Status(Code.ERROR, "not found"), id="no-pre-filter-state"),
])
def test_pre_bind_pre_flight(state: Callable[[], CycleState], want: Status) -> None:
    result, status = new({}).pre_bind_pre_flight(state(), POD, "n1")
    assert result is not None
    assert result.allow_parallel
    assert status == want


@pytest.mark.parametrize(("state", "want"), [
    pytest.param(_pre_filtered, None, id="no-claims"),
    pytest.param(CycleState, Status(Code.ERROR, "not found"), id="no-pre-filter-state"),
])
def test_pre_bind_has_nothing_to_bind(state: Callable[[], CycleState], want: Status | None) -> None:
    assert asyncio.run(new({}).pre_bind(state(), POD, "n1")) == want
