"""Each extension point's semantics, on a framework built from only the plugins under test (as
kube-scheduler's tf.NewFramework): Reserve/Unreserve order, Permit wait/allow/reject/timeout, the
Bind chain, PreBind, the score range check, and factories that take the handle."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework import CycleState, PodInfo, SchedulingError, Status
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import PreBindPreFlightResult, Rows, Scores
from kubesched.framework.runtime.framework import (
    _pre_bind_groups,
    run_bind,
    run_permit,
    run_post_bind,
    run_post_filter,
    run_pre_bind,
    run_pre_bind_pre_flights,
    run_reserve,
    run_unreserve,
    wait_on_permit,
)
from kubesched.framework.runtime.profile import Profile, build_profile
from kubesched.framework.runtime.schedule import NodeCursor, schedule_pod
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code
from kubesched.framework.waiting import WaitingPods
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

SUCCESS, UNSCHED, ERROR, SKIP, WAIT = (Status(Code.SUCCESS), Status(Code.UNSCHEDULABLE, "no room"),
                                       Status(Code.ERROR, "boom"), Status(Code.SKIP), Status(Code.WAIT))


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []


class Fake:
    """A plugin at every binding-cycle point, answering from `answers` and recording its calls."""

    def __init__(self, name: str, log: Recorder, answers: Mapping[str, Any]) -> None:
        self.name = name
        self.log = log
        self.answers = answers

    def _answer(self, point: str) -> Any:
        self.log.calls.append(f"{self.name}.{point}")
        return self.answers.get(point)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._answer("reserve")  # type: ignore[no-any-return]

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._answer("unreserve")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self._answer("permit") or (None, 0.0)

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._answer("pre_bind")  # type: ignore[no-any-return]

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self._answer("bind")  # type: ignore[no-any-return]

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self._answer("post_bind")


POINTS = ("reserve", "permit", "preBind", "bind", "postBind")


def framework(plugins: dict[str, dict[str, Any]], log: Recorder, points: tuple[str, ...] = POINTS) -> Profile:
    """A profile of only these fake plugins, each enabled at every point given, in order."""
    registry = {name: (lambda args, n=name, a=answers: Fake(n, log, a)) for name, answers in plugins.items()}
    config = ProfileConfig("test", {p: tuple(PluginRef(n) for n in plugins) for p in points})
    return build_profile(config, registry)


POD = PodInfo(make_pod("p").obj())


@pytest.mark.parametrize(("answers", "want", "calls"), [
    ({"a": {}, "b": {}}, None, ["a.reserve", "b.reserve"]),
    ({"a": {}, "b": {"reserve": UNSCHED}, "c": {}}, "Unschedulable", ["a.reserve", "b.reserve"]),
    ({"a": {"reserve": ERROR}, "b": {}}, "Error", ["a.reserve"]),
], ids=["all-reserve", "rejected-stops", "error-stops"])
def test_reserve_stops_at_the_first_failure(answers: dict[str, dict[str, Any]], want: str | None,
                                            calls: list[str]) -> None:
    log = Recorder()
    status = run_reserve(framework(answers, log, ("reserve",)), CycleState(), POD, "n1")
    assert (status.code.name.title().replace("_", "") if status else None) == (
        want if want != "Unschedulable" else "Unschedulable")
    assert log.calls == calls
    if status is not None:
        assert status.plugin in answers


def test_unreserve_runs_every_reserve_plugin_last_first() -> None:
    log = Recorder()
    run_unreserve(framework({"a": {}, "b": {"reserve": UNSCHED}, "c": {}}, log, ("reserve",)),
                  CycleState(), POD, "n1")
    assert log.calls == ["c.unreserve", "b.unreserve", "a.unreserve"]


async def permit_outcome(answers: dict[str, dict[str, Any]], act: Any = None) -> tuple[Status | None, Status | None]:
    waiting = WaitingPods()
    profile = framework(answers, Recorder(), ("permit",))
    first = run_permit(profile, CycleState(), POD, "n1", waiting)
    if first is None or first.code != Code.WAIT:
        return first, None
    if act is not None:
        asyncio.get_running_loop().call_later(0.01, act, waiting.get(POD.pod.metadata.uid))
    return first, await asyncio.wait_for(wait_on_permit(waiting, POD), 5)


async def test_permit_without_wait_goes_on() -> None:
    assert await permit_outcome({"a": {}, "b": {"permit": (SUCCESS, 0)}}) == (None, None)


async def test_permit_rejection_stops() -> None:
    first, _ = await permit_outcome({"a": {"permit": (UNSCHED, 0)}})
    assert first is not None
    assert (first.code, first.plugin, first.message()) == (Code.UNSCHEDULABLE, "a", "no room")


async def test_permit_wait_then_allow_by_every_waiting_plugin() -> None:
    def allow_both(pod: Any) -> None:
        pod.allow("a")
        pod.allow("b")

    first, final = await permit_outcome({"a": {"permit": (WAIT, 10)}, "b": {"permit": (WAIT, 10)}}, allow_both)
    assert first is not None
    assert first.code == Code.WAIT
    assert final is None


async def test_permit_wait_then_reject_from_another_task() -> None:
    _, final = await permit_outcome({"a": {"permit": (WAIT, 10)}}, lambda pod: pod.reject("a", "gang incomplete"))
    assert final == Status(Code.UNSCHEDULABLE, "gang incomplete", plugin="a")


async def test_permit_wait_times_out() -> None:
    _, final = await permit_outcome({"slow": {"permit": (WAIT, 0.05)}})
    assert final == Status(Code.UNSCHEDULABLE, "rejected due to timeout after waiting 0.05s at plugin slow",
                           plugin="slow")


@pytest.mark.parametrize(("answers", "want", "calls"), [
    ({"a": {"bind": SKIP}, "b": {"bind": None}, "c": {}}, None, ["a.bind", "b.bind"]),
    ({"a": {"bind": None}, "b": {}}, None, ["a.bind"]),
    ({"a": {"bind": SKIP}, "b": {"bind": SKIP}}, Status(Code.SKIP, "no bind plugin bound the pod"),
     ["a.bind", "b.bind"]),
    ({"a": {"bind": ERROR}, "b": {}}, Status(Code.ERROR, 'running Bind plugin "a": boom', plugin="a"), ["a.bind"]),
    ({"a": {"bind": UNSCHED}}, Status(Code.UNSCHEDULABLE, "no room", plugin="a"), ["a.bind"]),
], ids=["skip-then-bound", "first-binds", "all-skip-fails", "error", "rejected"])
async def test_bind_chain_first_non_skip_wins(answers: dict[str, dict[str, Any]], want: Status | None,
                                              calls: list[str]) -> None:
    log = Recorder()
    assert await run_bind(framework(answers, log, ("bind",)), CycleState(), POD, "n1") == want
    assert log.calls == calls


async def test_pre_bind_error_stops_and_post_bind_runs_all() -> None:
    log = Recorder()
    profile = framework({"a": {"pre_bind": ERROR}, "b": {}}, log, ("preBind", "postBind"))
    status = await run_pre_bind(profile, CycleState(), POD, "n1")
    assert status == Status(Code.ERROR, 'running PreBind plugin "a": boom', plugin="a")
    run_post_bind(profile, CycleState(), POD, "n1")
    assert log.calls == ["a.pre_bind", "a.post_bind", "b.post_bind"]


class PreFlight(Fake):
    """A Fake whose PreBind has a pre-flight answering `answers["pre_flight"]` (Success when absent),
    in parallel when `answers["parallel"]`."""

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo,
                            node_name: str) -> tuple[PreBindPreFlightResult | None, Status | None]:
        return PreBindPreFlightResult(bool(self.answers.get("parallel"))), self._answer("pre_flight")


def pre_flights(plugins: dict[str, dict[str, Any]], log: Recorder) -> Profile:
    """A profile of PreBind plugins: with a pre-flight, unless their answers say "no_pre_flight"."""
    registry = {name: (lambda args, n=name, a=answers: (Fake if a.get("no_pre_flight") else PreFlight)(n, log, a))
                for name, answers in plugins.items()}
    return build_profile(ProfileConfig("test", {"preBind": tuple(PluginRef(n) for n in plugins)}), registry)


@pytest.mark.parametrize(("answers", "want", "skipped"), [
    pytest.param({"a": {"pre_flight": SKIP}, "b": {"pre_flight": SKIP}}, SKIP, {"a", "b"}, id="all-skip"),
    pytest.param({"a": {"pre_flight": SKIP}, "b": {}}, None, {"a"}, id="one-has-work"),
    pytest.param({"a": {"pre_flight": SKIP}, "b": {"no_pre_flight": True}}, None, {"a"},
                 id="no-pre-flight-has-work"),
    pytest.param({}, SKIP, set(), id="no-pre-bind-plugins"),
    pytest.param({"a": {"pre_flight": ERROR}, "b": {}},
                 Status(Code.ERROR, 'running PreBindPreFlight "a": boom', plugin="a"), set(), id="error"),
    pytest.param({"a": {"pre_flight": UNSCHED}},
                 Status(Code.ERROR, 'PreBindPreFlight a returned "Unschedulable", which is unsupported. It is '
                                    "supposed to return Success, Skip, or Error status"), set(), id="unsupported"),
])
def test_pre_bind_pre_flights(answers: dict[str, dict[str, Any]], want: Status | None, skipped: set[str]) -> None:
    state = CycleState()
    assert run_pre_bind_pre_flights(pre_flights(answers, Recorder()), state, POD, "n1") == want
    assert state.skip_pre_bind_plugins == skipped


async def test_pre_bind_runs_only_the_plugins_their_pre_flight_did_not_skip() -> None:
    log = Recorder()
    profile = pre_flights({"a": {"pre_flight": SKIP}, "b": {}, "c": {"no_pre_flight": True}}, log)
    state = CycleState()
    assert run_pre_bind_pre_flights(profile, state, POD, "n1") is None
    assert await run_pre_bind(profile, state, POD, "n1") is None
    assert log.calls == ["a.pre_flight", "b.pre_flight", "b.pre_bind", "c.pre_bind"]


class Handoff(PreFlight):
    """PreBind plugins that finish only together: run one after the other, they would never end."""

    def __init__(self, name: str, log: Recorder, answers: Mapping[str, Any], events: dict[str, asyncio.Event]) -> None:
        super().__init__(name, log, answers)
        self.events = events

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.events[self.name].set()
        for other in self.events.values():
            await other.wait()
        if self.answers.get("fail"):
            return ERROR
        await asyncio.sleep(10)  # cancelled when the other fails
        self.log.calls.append(f"{self.name}.finished")
        return None


async def test_parallel_pre_bind_plugins_run_together_and_the_first_failure_cancels_the_rest() -> None:
    log = Recorder()
    events = {"a": asyncio.Event(), "b": asyncio.Event()}
    answers = {"a": {"parallel": True}, "b": {"parallel": True, "fail": True}}
    registry = {n: (lambda args, n=n: Handoff(n, log, answers[n], events)) for n in answers}
    profile = build_profile(ProfileConfig("test", {"preBind": (PluginRef("a"), PluginRef("b"))}), registry)
    state = CycleState()
    assert run_pre_bind_pre_flights(profile, state, POD, "n1") is None
    assert state.parallel_pre_bind_plugins == {"a", "b"}
    status = await asyncio.wait_for(run_pre_bind(profile, state, POD, "n1"), 5)
    assert status == Status(Code.ERROR, 'running PreBind plugin "b": boom', plugin="b")
    assert "a.finished" not in log.calls


@pytest.mark.parametrize(("parallel", "skip", "groups"), [
    pytest.param({"a", "b", "d"}, set(), [["a", "b"], ["c"], ["d"]], id="a-serial-plugin-ends-a-group"),
    pytest.param({"a", "b", "c"}, {"b"}, [["a", "c"], ["d"]], id="a-skipped-parallel-plugin-keeps-it"),
    pytest.param({"a", "c"}, {"b"}, [["a"], ["c"], ["d"]], id="a-skipped-serial-plugin-still-ends-it"),
])
def test_pre_bind_groups(parallel: set[str], skip: set[str], groups: list[list[str]]) -> None:
    profile = pre_flights({n: {} for n in "abcd"}, Recorder())
    state = CycleState()
    state.parallel_pre_bind_plugins, state.skip_pre_bind_plugins = parallel, skip
    assert [[pl.name for pl in g] for g in _pre_bind_groups(profile, state)] == groups


class OutOfRange:
    name = "OutOfRange"

    def score(self, state: CycleState, pod: PodInfo, node: Any, snapshot: Snapshot) -> int:
        return 0

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        return np.full(len(rows), 101, dtype=np.int64)


def test_a_score_outside_0_100_after_normalizing_is_an_error() -> None:
    config = ProfileConfig("test", {"score": (PluginRef("OutOfRange", 1),)})
    profile = build_profile(config, {"OutOfRange": lambda args: OutOfRange()})
    snap = snapshot_with([make_node("a"), make_node("b")], [])
    with pytest.raises(SchedulingError) as err:
        schedule_pod(profile, snap, POD, rng=random.Random(0), cursor=NodeCursor())
    assert str(err.value) == ('applying score defaultWeights on Score plugins: plugin "OutOfRange" returns an '
                              "invalid score 101, it should in the range of [0, 100] after normalizing")


def test_factories_get_the_handle_when_they_take_it() -> None:
    got: list[Any] = []
    handle = Handle()

    def two(args: Mapping[str, Any], h: Handle) -> Fake:
        got.append(h)
        return Fake("two", Recorder(), {})

    def one(args: Mapping[str, Any]) -> Fake:
        got.append(args)
        return Fake("one", Recorder(), {})

    config = ProfileConfig("test", {"bind": (PluginRef("two"), PluginRef("one"))}, plugin_args={"one": {"x": 1}})
    profile = build_profile(config, {"two": two, "one": one}, handle)
    assert got == [handle, {"x": 1}]
    assert profile.handle is handle


class Preempt:
    """A PostFilter that answers a fixed status, as DefaultPreemption would."""

    def __init__(self, name: str, status: Status | None) -> None:
        self.name = name
        self.status = status

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        return self.status


@pytest.mark.parametrize(("answers", "want", "message"), [
    ([], None, "0/1 nodes are available: 1 Insufficient cpu."),
    ([Status(Code.UNSCHEDULABLE, "preemption: 0/1 nodes are available: 1 No preemption victims found for "
             "incoming pod.")], Code.UNSCHEDULABLE,
     "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
     "victims found for incoming pod."),
    ([None, Status(Code.UNSCHEDULABLE, "never asked")], None, "0/1 nodes are available: 1 Insufficient cpu."),
    # kube-scheduler keeps an erring PostFilter's message as it is (DynamicResources' "not found").
    ([Status(Code.ERROR, "boom"), Status(Code.UNSCHEDULABLE, "never asked")], Code.ERROR,
     "0/1 nodes are available: 1 Insufficient cpu. boom"),
], ids=["none", "rejected-message-appended", "first-success-ends", "error"])
def test_post_filter(answers: list[Status | None], want: Code | None, message: str) -> None:
    plugins = {f"p{i}": Preempt(f"p{i}", s) for i, s in enumerate(answers)}
    config = ProfileConfig("test", {"postFilter": tuple(PluginRef(n) for n in plugins)})
    profile = build_profile(config, {n: (lambda args, pl=pl: pl) for n, pl in plugins.items()})
    fit = FitError(POD, 1, Diagnosis(node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu")}))
    status = run_post_filter(profile, CycleState(), POD, fit)
    assert (status.code if status else None) == want
    assert fit.message() == message
