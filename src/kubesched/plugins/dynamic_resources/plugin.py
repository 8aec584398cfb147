"""DynamicResources, as far as kube-scheduler v1.37's plugin acts on a pod with no resource claims:
its PreFilter records (empty) state for every pod, and its PostFilter, which runs before
DefaultPreemption, fails with the CycleState's "not found" when that state is missing.

That is what happens whenever a PreFilter plugin ahead of it in the profile rejects the pod as
UnschedulableAndUnresolvable (a missing claim for VolumeRestrictions, say): its PreFilter never runs,
its PostFilter errors, preemption is not tried, and kube-scheduler's message ends in " not found"
(`0/3 nodes are available: persistentvolumeclaim "data" not found. not found`). Standing in the
profile where kube-scheduler has it, this keeps kubesched's messages and decisions the same.
Resource claims themselves are not evaluated: UnsupportedPodFields keeps a pod with claims Pending
(docs/plugins.md), or, told to ignore them, has it placed as if it had none. So the state this
PreFilter writes holds no claims, and PreBindPreFlight answers Skip as kube-scheduler's does for a
pod without claims: nothing to bind, so it never makes the scheduler write status.nominatedNodeName.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEvent
from kubesched.framework.fit_error import FitError
from kubesched.framework.interface import PreBindPreFlightResult, PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import PodInfo

NAME = "DynamicResources"
STATE_KEY = "PreFilter" + NAME
# kube-scheduler's fwk.ErrNotFound, from CycleState.Read.
NOT_FOUND = "not found"


class _State:
    """What PreFilter found for the pod: its claims (never any: they are not evaluated)."""

    __slots__ = ("claims",)

    def __init__(self) -> None:
        self.claims: tuple[str, ...] = ()


def _state(state: CycleState) -> _State | Status:
    s: _State | None = state.get(STATE_KEY)
    return Status(Code.ERROR, NOT_FOUND) if s is None else s


class DynamicResources:
    name = NAME

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return ()  # it rejects no pod

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        state.write(STATE_KEY, _State())
        return None, SKIP

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        s = _state(state)
        if isinstance(s, Status):
            return s
        return Status(Code.UNSCHEDULABLE)  # no claims to deallocate: the next PostFilter decides

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo,
                            node_name: str) -> tuple[PreBindPreFlightResult | None, Status | None]:
        result = PreBindPreFlightResult(allow_parallel=True)
        s = _state(state)
        if isinstance(s, Status):
            return result, s
        return result, SKIP if not s.claims else None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = _state(state)
        if isinstance(s, Status):
            return s
        return None  # no claims to reserve or allocate

    def dry_run_post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError,
                            snapshot: Snapshot | None = None) -> Status | None:
        """The same answer (it writes nothing anyway), for kubesched explain."""
        return self.post_filter(state, pod, fit_error)


def new(args: Mapping[str, Any]) -> DynamicResources:
    return DynamicResources()
