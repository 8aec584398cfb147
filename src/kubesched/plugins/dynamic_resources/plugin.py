"""DynamicResources, as far as kube-scheduler v1.37's plugin acts on a pod with no resource claims:
its PreFilter records (empty) state for every pod, and its PostFilter, which runs before
DefaultPreemption, fails with the CycleState's "not found" when that state is missing.

That is what happens whenever a PreFilter plugin ahead of it in the profile rejects the pod as
UnschedulableAndUnresolvable (a missing claim for VolumeRestrictions, say): its PreFilter never runs,
its PostFilter errors, preemption is not tried, and kube-scheduler's message ends in " not found"
(`0/3 nodes are available: persistentvolumeclaim "data" not found. not found`). Standing in the
profile where kube-scheduler has it, this keeps kubesched's messages and decisions the same.
Resource claims themselves are not evaluated: UnsupportedPodFields keeps a pod with claims Pending
(docs/plugins.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEvent
from kubesched.framework.fit_error import FitError
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.dynamic_resources.args import parse_args
from kubesched.plugins.dynamic_resources.manager import DraManager

__all__ = ["NAME", "DynamicResources", "new", "parse_args"]

NAME = "DynamicResources"
STATE_KEY = "PreFilter" + NAME
# kube-scheduler's fwk.ErrNotFound, from CycleState.Read.
NOT_FOUND = "not found"


class DynamicResources:
    name = NAME

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return ()  # it rejects no pod

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        state.write(STATE_KEY, True)
        return None, SKIP

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None:
        if state.get(STATE_KEY) is None:
            return Status(Code.ERROR, NOT_FOUND)
        return Status(Code.UNSCHEDULABLE)  # no claims to deallocate: the next PostFilter decides

    def dry_run_post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError,
                            snapshot: Snapshot | None = None) -> Status | None:
        """The same answer (it writes nothing anyway), for kubesched explain."""
        return self.post_filter(state, pod, fit_error)


def new(args: Mapping[str, Any], dra: DraManager | None = None) -> DynamicResources:
    return DynamicResources()
