"""The pod-group scheduling algorithm (kube-scheduler's podGroupSchedulingDefaultAlgorithm and
runRootSchedulingAlgorithm): the group's queued pods placed one by one against the cache's
snapshot, each assumed and reserved for the next, GangScheduling's placement check after each;
every assumption undone before it returns, whatever the outcome. Synchronous: nothing changes the
cache meanwhile."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubesched.backend.cache.cache import Cache
from kubesched.backend.queue import QueuedPodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.pod_groups import PodGroupManager
from kubesched.framework.runtime.framework import run_reserve, run_unreserve
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import NodeCursor, ScheduleResult, schedule_pod
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import PodInfo
from kubesched.model.workload import PodGroup
from kubesched.plugins.gang_scheduling import NAME as GANG_SCHEDULING
from kubesched.plugins.gang_scheduling import placement_feasible

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
# A group's placement check, given the pods left to place and those scheduled: GangScheduling's
# PlacementFeasible (Unschedulable once minCount is out of reach, Wait until it is met, else None).
Feasibility = Callable[[int, int], Status | None]


@dataclass
class PodResult:
    info: QueuedPodInfo
    pod_info: PodInfo
    state: CycleState
    started: float
    result: ScheduleResult | FitError | None = None  # None: not evaluated
    status: Status | None = None  # the pod's own failure (Reserve's rejection or an error)
    elapsed: float = 0.0
    nominated_node: str | None = None  # set by pod-group preemption

    @property
    def placed(self) -> bool:
        return isinstance(self.result, ScheduleResult) and self.status is None

    @property
    def node(self) -> str | None:
        return self.result.suggested_host if isinstance(self.result, ScheduleResult) else None

    def fresh(self) -> PodResult:
        """The same pod with a new cycle state, for another run of the algorithm (preemption's)."""
        return PodResult(self.info, self.pod_info, CycleState(), self.started)


@dataclass
class GroupOutcome:
    """How the algorithm ended: `status` None is success; `unprocessed` the status of the pods it
    never reached (kube-scheduler's completePodGroupAlgorithmResult); `waiting_on_preemption` when
    pod-group preemption found room."""

    status: Status | None
    unprocessed: Status | None = None
    results: list[PodResult] = field(default_factory=list)
    waiting_on_preemption: bool = False


def unschedulable(reasons: Sequence[str], *, with_error: bool) -> Status:
    # A status WithError(errPodGroupUnschedulable): the error's text comes first in its message.
    return Status(Code.UNSCHEDULABLE, ", ".join([POD_GROUP_UNSCHEDULABLE, *reasons] if with_error else reasons))


@dataclass
class Placer:
    cache: Cache
    pod_groups: PodGroupManager
    rng: random.Random
    cursor: NodeCursor
    percentage_of_nodes_to_score: int = 0

    def place(self, profile: Profile, group: PodGroup, pods: list[PodResult]) -> GroupOutcome:
        meta = group.metadata
        scheduled = self.pod_groups.state(meta.namespace, meta.name).scheduled_pods_count()
        gang = profile.plugin(GANG_SCHEDULING) is not None
        check = functools.partial(placement_feasible, group) if gang else None
        return self.place_with(profile, pods, scheduled, check)

    def place_with(self, profile: Profile, pods: list[PodResult], scheduled: int,
                   check: Feasibility | None) -> GroupOutcome:
        """The algorithm with the group's placement check `check(remaining, scheduled)` (None:
        every pod is placed on its own merits), `scheduled` of its pods assumed or bound already."""
        remaining = len(pods)
        outcome = GroupOutcome(None, results=pods)
        feasible = check(remaining, scheduled) if check else None
        if feasible is not None and feasible.code == Code.UNSCHEDULABLE:
            outcome.status = outcome.unprocessed = unschedulable(feasible.reasons, with_error=True)
            return outcome
        assumed: list[tuple[PodResult, str]] = []
        any_scheduled = False
        try:
            for r in pods:
                if not self._place_one(profile, r, outcome, assumed):
                    break
                remaining -= 1
                scheduled += r.placed
                feasible = check(remaining, scheduled) if check else None
                outcome.status = feasible
                if feasible is not None and feasible.code == Code.UNSCHEDULABLE:
                    break
                any_scheduled = any_scheduled or r.placed
        finally:
            for r, node in reversed(assumed):
                run_unreserve(profile, r.state, r.pod_info, node)
                self.cache.forget_pod(r.pod_info)
        status = outcome.status
        if status is not None and status.code == Code.WAIT:
            outcome.status = unschedulable(status.reasons, with_error=True)
        elif status is None and not any_scheduled:
            outcome.status = unschedulable([], with_error=True)
        outcome.unprocessed = outcome.status
        return outcome

    def _place_one(self, profile: Profile, r: PodResult, outcome: GroupOutcome,
                   assumed: list[tuple[PodResult, str]]) -> bool:
        """One pod through the scheduling algorithm, assumed and reserved when it fits; False when
        the group's attempt must end on an error."""
        try:
            r.result = schedule_pod(profile, self.cache.snapshot(), r.pod_info, rng=self.rng, cursor=self.cursor,
                                    percentage_of_nodes_to_score=self.percentage_of_nodes_to_score, state=r.state)
        except SchedulingError as exc:
            r.status = Status(Code.ERROR, str(exc))
            outcome.status = Status(Code.ERROR, f"failed to schedule other pod from a pod group: {exc}")
            return False
        finally:
            r.elapsed = time.perf_counter() - r.started
        if not isinstance(r.result, ScheduleResult):
            return True
        node = r.result.suggested_host
        self.cache.assume_pod(r.pod_info, node)
        reserved = run_reserve(profile, r.state, r.pod_info, node)
        if reserved is None:
            assumed.append((r, node))
            return True
        run_unreserve(profile, r.state, r.pod_info, node)
        self.cache.forget_pod(r.pod_info)
        r.status = reserved
        if reserved.is_rejected():
            return True
        outcome.status = Status(Code.ERROR, "failed to schedule other pod from a pod group: " + reserved.message())
        return False
