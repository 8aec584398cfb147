"""The binding cycle's extension points on a profile, with kube-scheduler's semantics
(framework/runtime/framework.go): Reserve, Unreserve in reverse order, Permit with Wait, the
PreBind plugins' pre-flights, PreBind (in parallel groups), the Bind chain (the first plugin that
does not Skip decides), PostBind. The scheduling cycle's points (PreFilter to Score) are in
schedule.py.

In a cycle sampled for scheduler_plugin_execution_duration_seconds (state.plugin_recorder set, see
plugin_metrics.py), each plugin call is timed, with kube-scheduler's extension point labels;
unsampled cycles take the untimed branch."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, ParamSpec

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.interface import PreBindPlugin
from kubesched.framework.plugin_metrics import timed, timed_async
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import CODE_NAMES, SKIP, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.framework.waiting import WaitingPod, WaitingPods

log = logging.getLogger(__name__)


P = ParamSpec("P")
Point = Callable[Concatenate[Profile, CycleState, P], Status | None]
AsyncPoint = Callable[Concatenate[Profile, CycleState, P], Awaitable[Status | None]]


def _timed_point(name: str) -> Callable[[Point[P]], Point[P]]:
    """The extension point's run timed into the cycle's point recorder, when it has one
    (kube-scheduler's framework observes FrameworkExtensionPointDuration the same way)."""
    def wrap(run: Point[P]) -> Point[P]:
        @functools.wraps(run)
        def timed_run(profile: Profile, state: CycleState, /, *args: P.args, **kwargs: P.kwargs) -> Status | None:
            rec = state.point_recorder
            if rec is None:
                return run(profile, state, *args, **kwargs)
            t = time.perf_counter()
            status = run(profile, state, *args, **kwargs)
            rec.point(name, Code.SUCCESS if status is None else status.code, time.perf_counter() - t)
            return status
        return timed_run
    return wrap


def _timed_async_point(name: str) -> Callable[[AsyncPoint[P]], AsyncPoint[P]]:
    def wrap(run: AsyncPoint[P]) -> AsyncPoint[P]:
        @functools.wraps(run)
        async def timed_run(profile: Profile, state: CycleState, /, *args: P.args, **kwargs: P.kwargs) -> Status | None:
            rec = state.point_recorder
            if rec is None:
                return await run(profile, state, *args, **kwargs)
            t = time.perf_counter()
            status = await run(profile, state, *args, **kwargs)
            rec.point(name, Code.SUCCESS if status is None else status.code, time.perf_counter() - t)
            return status
        return timed_run
    return wrap


def _failed(status: Status | None) -> bool:
    return status is not None and status.code != Code.SUCCESS


def _as_error(point: str, plugin: str, status: Status) -> Status:
    if status.is_rejected():
        return status.with_plugin(plugin)
    return Status(Code.ERROR, f'running {point} plugin "{plugin}": {status.message()}', plugin=plugin)


class _PostFilterRun:
    """RunPostFilterPlugins' bookkeeping over the plugins' answers, in order: the first success (a
    nomination) or unresolvable verdict ends the run; the plugins' messages go into the FitError's
    message."""

    def __init__(self, fit_error: FitError) -> None:
        self.fit_error = fit_error
        self.reasons: list[str] = []
        self.rejector = ""

    def step(self, plugin: str, s: Status | None) -> tuple[bool, Status | None]:
        """(whether the run ends here, and with what status)."""
        diagnosis = self.fit_error.diagnosis
        if s is None or s.code == Code.SUCCESS:
            # kube-scheduler keeps a success's message too ("preemption: found a potential placement ...").
            if s is not None and s.message():
                diagnosis.post_filter_msg = s.message()
            return True, None
        if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            diagnosis.post_filter_msg = s.message()
            return True, s.with_plugin(plugin)
        if not s.is_rejected():
            # kube-scheduler keeps an error's own message, unwrapped, as the PostFilter message.
            diagnosis.post_filter_msg = s.message()
            return True, Status(Code.ERROR, *s.reasons, plugin=plugin)
        self.reasons.extend(s.reasons)
        self.rejector = self.rejector or plugin
        return False, None

    def end(self, profile: Profile) -> Status | None:
        # One Unschedulable status of every plugin's reasons, naming the first that rejected; its
        # message joins them with ", " (kube-scheduler's Status.Message).
        status = Status(Code.UNSCHEDULABLE, *self.reasons, plugin=self.rejector)
        if self.reasons:
            self.fit_error.diagnosis.post_filter_msg = status.message()
        return status if profile.post_filter else None


@_timed_point("PostFilter")
def run_post_filter(profile: Profile, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
    """kube-scheduler's RunPostFilterPlugins (see _PostFilterRun)."""
    run = _PostFilterRun(fit_error)
    rec = state.plugin_recorder
    for pl in profile.post_filter:
        s = pl.post_filter(state, pod, fit_error) if rec is None else timed(
            rec, pl.name, "PostFilter", pl.post_filter, state, pod, fit_error)
        done, status = run.step(pl.name, s)
        if done:
            return status
    return run.end(profile)


@_timed_async_point("PostFilter")
async def run_post_filter_async(profile: Profile, state: CycleState, pod: PodInfo,
                                fit_error: FitError) -> Status | None:
    """run_post_filter for a scheduler with extenders: a plugin with a `post_filter_async` coroutine
    (DefaultPreemption, which asks the extenders about its candidates) is awaited, the others called."""
    run = _PostFilterRun(fit_error)
    rec = state.plugin_recorder
    for pl in profile.post_filter:
        call = getattr(pl, "post_filter_async", None)
        if callable(call):
            s = await (call(state, pod, fit_error) if rec is None else timed_async(
                rec, pl.name, "PostFilter", call, state, pod, fit_error))
        else:
            s = pl.post_filter(state, pod, fit_error) if rec is None else timed(
                rec, pl.name, "PostFilter", pl.post_filter, state, pod, fit_error)
        done, status = run.step(pl.name, s)
        if done:
            return status
    return run.end(profile)


def can_dry_run_post_filter(profile: Profile) -> bool:
    """Whether every PostFilter plugin can say what it would do without doing it (a
    `dry_run_post_filter(state, pod, fit_error, snapshot=...)` method, as DefaultPreemption has)."""
    return bool(profile.post_filter) and all(callable(getattr(pl, "dry_run_post_filter", None))
                                             for pl in profile.post_filter)


def dry_run_post_filter(profile: Profile, state: CycleState, pod: PodInfo, fit_error: FitError,
                        snapshot: Snapshot) -> Status | None:
    """run_post_filter with each plugin's dry run on `snapshot`: the FitError's message becomes the
    whole one kubesched writes, and nothing is written (explain, simulate, shadow). The caller
    checks can_dry_run_post_filter first."""
    dry = tuple(_DryRun(pl.name, functools.partial(pl.dry_run_post_filter, snapshot=snapshot))  # type: ignore[attr-defined]
                for pl in profile.post_filter)
    return run_post_filter(dataclasses.replace(profile, post_filter=dry), state, pod, fit_error)


@dataclasses.dataclass
class _DryRun:
    """A PostFilter plugin's dry run in the PostFilter plugin's shape, for run_post_filter."""

    name: str
    post_filter: Callable[[CycleState, PodInfo, FitError], Status | None]


@_timed_point("Reserve")
def run_reserve(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    """The first failing Reserve plugin's status; the caller then runs `run_unreserve`."""
    rec = state.plugin_recorder
    for pl in profile.reserve:
        s = pl.reserve(state, pod, node) if rec is None else timed(
            rec, pl.name, "Reserve", pl.reserve, state, pod, node)
        if _failed(s):
            assert s is not None
            return _as_error("Reserve", pl.name, s)
    return None


def run_unreserve(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> None:
    """Every Reserve plugin's Unreserve, last first; one that raises does not stop the others."""
    rec = state.plugin_recorder
    for pl in reversed(profile.reserve):
        try:
            if rec is None:
                pl.unreserve(state, pod, node)
            else:
                timed(rec, pl.name, "Unreserve", pl.unreserve, state, pod, node)
        except Exception:
            log.exception("Unreserve of plugin %s failed for pod %s", pl.name, pod.key)


@_timed_point("Permit")
def run_permit(profile: Profile, state: CycleState, pod: PodInfo, node: str,
               waiting: WaitingPods) -> Status | None:
    """None to go on, a rejection or error to stop, or Wait: the pod is then in `waiting` until
    `wait_on_permit` says how it ended."""
    timeouts: dict[str, float] = {}
    rec = state.plugin_recorder
    for pl in profile.permit:
        s, timeout = pl.permit(state, pod, node) if rec is None else timed(
            rec, pl.name, "Permit", pl.permit, state, pod, node)
        if s is None or s.code == Code.SUCCESS:
            continue
        if s.code == Code.WAIT:
            timeouts[pl.name] = timeout
            continue
        return _as_error("Permit", pl.name, s)
    if not timeouts:
        return None
    waiting.add(WaitingPod(pod.pod.metadata.uid, pod.key, timeouts))
    return Status(Code.WAIT, f"one or more plugins asked to wait: {sorted(timeouts)}")


async def wait_on_permit(waiting: WaitingPods, pod: PodInfo) -> Status | None:
    held = waiting.get(pod.pod.metadata.uid)
    if held is None:
        return None
    try:
        return await held.wait()
    finally:
        waiting.remove(pod.pod.metadata.uid)


def will_wait_on_permit(waiting: WaitingPods, pod: PodInfo) -> bool:
    """kube-scheduler's WillWaitOnPermit: a Permit plugin made the pod wait."""
    return waiting.get(pod.pod.metadata.uid) is not None


@_timed_point("PreBindPreFlight")
def run_pre_bind_pre_flights(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    """kube-scheduler's RunPreBindPreFlights: None (Success) when some PreBind plugin has work for
    the pod, Skip when none has, or an error. Records in the state which PreBind plugins to skip
    and which may run in parallel."""
    skip: set[str] = set()
    parallel: set[str] = set()
    answer: Status | None = SKIP
    rec = state.plugin_recorder
    for pl in profile.pre_bind:
        flight = getattr(pl, "pre_bind_pre_flight", None)
        if not callable(flight):
            answer = None
            continue
        result, s = flight(state, pod, node) if rec is None else timed(
            rec, pl.name, "PreBindPreFlight", flight, state, pod, node)
        if result is not None and result.allow_parallel:
            parallel.add(pl.name)
        if s is None or s.code == Code.SUCCESS:
            answer = None
        elif s.code == Code.SKIP:
            skip.add(pl.name)
        elif s.code == Code.ERROR:
            return Status(Code.ERROR, f'running PreBindPreFlight "{pl.name}": {s.message()}', plugin=pl.name)
        else:
            return Status(Code.ERROR, f'PreBindPreFlight {pl.name} returned "{CODE_NAMES[s.code]}", which is '
                                      "unsupported. It is supposed to return Success, Skip, or Error status")
    state.skip_pre_bind_plugins = skip
    state.parallel_pre_bind_plugins = parallel
    return answer


def _pre_bind_groups(profile: Profile, state: CycleState) -> list[list[PreBindPlugin]]:
    """getPreBindPluginGroups: the PreBind plugins not skipped, in order, neighbours that may run in
    parallel grouped; a plugin that may not (skipped or not) ends a group."""
    groups: list[list[PreBindPlugin]] = []
    group: list[PreBindPlugin] = []
    for pl in profile.pre_bind:
        skipped = pl.name in state.skip_pre_bind_plugins
        if pl.name in state.parallel_pre_bind_plugins:
            if not skipped:
                group.append(pl)
            continue
        if group:
            groups.append(group)
            group = []
        if not skipped:
            groups.append([pl])
    if group:
        groups.append(group)
    return groups


@_timed_async_point("PreBind")
async def run_pre_bind(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    """The PreBind plugins the pre-flights did not skip, group by group; within a group of several
    they run at once, and the first failure cancels the others."""
    rec = state.plugin_recorder

    async def run(pl: PreBindPlugin) -> Status | None:
        s = await (pl.pre_bind(state, pod, node) if rec is None else timed_async(
            rec, pl.name, "PreBind", pl.pre_bind, state, pod, node))
        if _failed(s) and not (s is not None and s.code == Code.SKIP):
            assert s is not None
            return _as_error("PreBind", pl.name, s)
        return None

    for group in _pre_bind_groups(profile, state):
        s = await run(group[0]) if len(group) == 1 else await _first_failure([run(pl) for pl in group])
        if s is not None:
            return s
    return None


async def _first_failure(runs: list[Coroutine[Any, Any, Status | None]]) -> Status | None:
    tasks = [asyncio.ensure_future(r) for r in runs]
    try:
        for done in asyncio.as_completed(tasks):
            s = await done
            if s is not None:
                return s
        return None
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@_timed_async_point("Bind")
async def run_bind(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    """None when bound. Skip from every bind plugin (or none configured) is a failure: nobody bound it."""
    rec = state.plugin_recorder
    for pl in profile.bind:
        s = await (pl.bind(state, pod, node) if rec is None else timed_async(
            rec, pl.name, "Bind", pl.bind, state, pod, node))
        if s is not None and s.code == Code.SKIP:
            continue
        if _failed(s):
            assert s is not None
            return _as_error("Bind", pl.name, s)
        return None
    return Status(Code.SKIP, "no bind plugin bound the pod")


@_timed_point("PostBind")
def run_post_bind(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> None:
    rec = state.plugin_recorder
    for pl in profile.post_bind:
        try:
            if rec is None:
                pl.post_bind(state, pod, node)
            else:
                timed(rec, pl.name, "PostBind", pl.post_bind, state, pod, node)
        except Exception:
            log.exception("PostBind of plugin %s failed for pod %s", pl.name, pod.key)
