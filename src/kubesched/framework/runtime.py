"""The binding cycle's extension points on a profile, with kube-scheduler's semantics
(framework/runtime/framework.go): Reserve, Unreserve in reverse order, Permit with Wait, PreBind,
the Bind chain (the first plugin that does not Skip decides), PostBind. The scheduling cycle's
points (PreFilter to Score) are in schedule.py."""

from __future__ import annotations

import logging

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.profile import Profile
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.framework.waiting import WaitingPod, WaitingPods

log = logging.getLogger(__name__)


def _failed(status: Status | None) -> bool:
    return status is not None and status.code != Code.SUCCESS


def _as_error(point: str, plugin: str, status: Status) -> Status:
    if status.is_rejected():
        return status.with_plugin(plugin)
    return Status(Code.ERROR, f'running {point} plugin "{plugin}": {status.message()}', plugin=plugin)


# kube-scheduler v1.37's profiles run DynamicResources (GA, not in kubesched) first at PostFilter.
# Its PostFilter fails with this error when a PreFilter rejected the pod as unresolvable before
# DynamicResources' own PreFilter wrote its state, and that error ends the PostFilter run: the
# message then ends in " not found" (seen on the plane for a missing claim), no preemption is tried.
# Only kube-scheduler's own PreFilters (those before DynamicResources in its default profile) are
# taken to do so; a rejection by kubesched's or an out-of-tree plugin keeps preemption's message.
DRA_STATE_NOT_FOUND = "not found"
_BEFORE_DYNAMIC_RESOURCES = frozenset({
    "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"})


def _dra_post_filter_fails(fit_error: FitError) -> bool:
    d = fit_error.diagnosis
    return (bool(d.pre_filter_msg) and d.absent_nodes_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            and bool(d.unschedulable_plugins) and d.unschedulable_plugins <= _BEFORE_DYNAMIC_RESOURCES)


def run_post_filter(profile: Profile, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
    """kube-scheduler's RunPostFilterPlugins: the first success (a nomination) or unresolvable
    verdict ends the run; the plugins' messages go into the FitError's message."""
    if _dra_post_filter_fails(fit_error):
        fit_error.diagnosis.post_filter_msg = DRA_STATE_NOT_FOUND
        return Status(Code.ERROR, DRA_STATE_NOT_FOUND, plugin="DynamicResources")
    reasons: list[str] = []
    for pl in profile.post_filter:
        s = pl.post_filter(state, pod, fit_error)
        if s is None or s.code == Code.SUCCESS:
            # kube-scheduler keeps a success's message too ("preemption: found a potential placement ...").
            if s is not None and s.message():
                fit_error.diagnosis.post_filter_msg = s.message()
            return None
        if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            fit_error.diagnosis.post_filter_msg = s.message()
            return s.with_plugin(pl.name)
        if not s.is_rejected():
            return _as_error("PostFilter", pl.name, s)
        reasons.extend(s.reasons)
    if reasons:
        fit_error.diagnosis.post_filter_msg = " ".join(reasons)
    return Status(Code.UNSCHEDULABLE, *reasons) if profile.post_filter else None


def run_reserve(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    """The first failing Reserve plugin's status; the caller then runs `run_unreserve`."""
    for pl in profile.reserve:
        s = pl.reserve(state, pod, node)
        if _failed(s):
            assert s is not None
            return _as_error("Reserve", pl.name, s)
    return None


def run_unreserve(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> None:
    """Every Reserve plugin's Unreserve, last first; one that raises does not stop the others."""
    for pl in reversed(profile.reserve):
        try:
            pl.unreserve(state, pod, node)
        except Exception:
            log.exception("Unreserve of plugin %s failed for pod %s", pl.name, pod.key)


def run_permit(profile: Profile, state: CycleState, pod: PodInfo, node: str,
               waiting: WaitingPods) -> Status | None:
    """None to go on, a rejection or error to stop, or Wait: the pod is then in `waiting` until
    `wait_on_permit` says how it ended."""
    timeouts: dict[str, float] = {}
    for pl in profile.permit:
        s, timeout = pl.permit(state, pod, node)
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


async def run_pre_bind(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    for pl in profile.pre_bind:
        s = await pl.pre_bind(state, pod, node)
        if _failed(s) and not (s is not None and s.code == Code.SKIP):
            assert s is not None
            return _as_error("PreBind", pl.name, s)
    return None


async def run_bind(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> Status | None:
    """None when bound. Skip from every bind plugin (or none configured) is a failure: nobody bound it."""
    for pl in profile.bind:
        s = await pl.bind(state, pod, node)
        if s is not None and s.code == Code.SKIP:
            continue
        if _failed(s):
            assert s is not None
            return _as_error("Bind", pl.name, s)
        return None
    return Status(Code.SKIP, "no bind plugin bound the pod")


def run_post_bind(profile: Profile, state: CycleState, pod: PodInfo, node: str) -> None:
    for pl in profile.post_bind:
        try:
            pl.post_bind(state, pod, node)
        except Exception:
            log.exception("PostBind of plugin %s failed for pod %s", pl.name, pod.key)
