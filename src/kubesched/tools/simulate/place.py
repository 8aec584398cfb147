"""Placing pods one after another on a cache, as the scheduler's loop would: each pod goes through
the same scheduling cycle as `kubesched run` (framework.schedule.schedule_pod, with the cursor
carried from pod to pod), and a chosen node is assumed into the cache at once,
so the next pod sees it there. Nothing is bound and nothing is written.

A pod that fits nowhere gets the FailedScheduling message kubesched would write, PostFilter
included: the PostFilter plugins' dry runs (DefaultPreemption's) say whether preemption would find
room and where. Victims are not evicted and the pod is not placed on the nominated node: simulate
reports the nomination, the scheduler would place the pod there only once the victims are gone.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.backend.cache.cache import Cache
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.runtime.framework import (
    can_dry_run_post_filter,
    dry_run_post_filter,
    run_reserve,
    run_unreserve,
)
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import NodeCursor, schedule_pod
from kubesched.framework.status import Code, SchedulingError
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod

SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"
GATED = "Gated"
BOUND = "Bound"

# DefaultPreemption's success, kube-scheduler's own words (preemption.go): the nomination.
_NOMINATION = re.compile(r"preemption: found a potential placement for pod on node (\S+), preempting (\d+) victims")


@dataclass
class Placement:
    pod: str  # namespace/name
    profile: str
    node: str | None
    message: str = ""  # the FailedScheduling message, or why the pod was not tried
    reason: str = SCHEDULED
    nominated_node: str | None = None  # preemption would make room there
    victims: int = 0
    replaces: str | None = None  # the node a drained pod came from
    group: str | None = None  # namespace/name of the pod group it was placed with, all or nothing


@dataclass
class Placer:
    """The scheduler's loop without its I/O: profiles by schedulerName, the cache they read."""

    profiles: Mapping[str, Profile]
    cache: Cache
    percentage_of_nodes_to_score: int = 0
    # Every pod with this profile (--profile); else its schedulerName's, else the first.
    profile_name: str | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    cursor: NodeCursor = field(default_factory=NodeCursor)

    def profile_for(self, pod: Pod) -> Profile:
        if self.profile_name is not None:
            return self.profiles[self.profile_name]
        return self.profiles.get(pod.spec.scheduler_name) or next(iter(self.profiles.values()))

    def place_all(self, pods: Iterable[Pod], replaces: Mapping[str, str] | None = None) -> list[Placement]:
        out = []
        for pod in pods:
            placed = self.place(pod)
            if replaces is not None:
                placed.replaces = replaces.get(pod.metadata.uid)
            out.append(placed)
        return out

    def place(self, pod: Pod) -> Placement:
        profile = self.profile_for(pod)
        key = pod.key
        if pod.spec.node_name:
            # Bound by whoever created it, no scheduler involved.
            if self.cache.node_info(pod.spec.node_name) is None:
                return Placement(key, profile.scheduler_name, None, f'spec.nodeName names no node '
                                 f'"{pod.spec.node_name}"', BOUND)
            self.cache.add_pod(pod)
            return Placement(key, profile.scheduler_name, pod.spec.node_name, "spec.nodeName is set: "
                             "bound without a scheduler", BOUND)
        for pl in profile.pre_enqueue:
            s = pl.pre_enqueue(pod)
            if s is not None and s.code != Code.SUCCESS:
                # The queue never hands it to a cycle.
                return Placement(key, profile.scheduler_name, None, s.message(), GATED)
        info = PodInfo(pod)
        state = CycleState()
        snapshot = self.cache.snapshot()
        try:
            result = schedule_pod(profile, snapshot, info, rng=self.rng, cursor=self.cursor,
                                  percentage_of_nodes_to_score=self.percentage_of_nodes_to_score, state=state)
        except SchedulingError as exc:
            return Placement(key, profile.scheduler_name, None, str(exc), SCHEDULER_ERROR)
        if isinstance(result, FitError):
            return self._unschedulable(profile, state, info, result)
        node = result.suggested_host
        self.cache.assume_pod(info, node)
        status = run_reserve(profile, state, info, node)
        if status is not None:
            run_unreserve(profile, state, info, node)
            self.cache.forget_pod(info)
            return Placement(key, profile.scheduler_name, None, status.message(), SCHEDULER_ERROR)
        return Placement(key, profile.scheduler_name, node)

    def _unschedulable(self, profile: Profile, state: CycleState, info: PodInfo, fit: FitError) -> Placement:
        placed = Placement(info.key, profile.scheduler_name, None, reason=UNSCHEDULABLE)
        if can_dry_run_post_filter(profile):
            dry_run_post_filter(profile, state, info, fit, self.cache.snapshot())
            found = _NOMINATION.search(fit.message())
            if found:
                placed.nominated_node, placed.victims = found.group(1), int(found.group(2))
        placed.message = fit.message()
        return placed
