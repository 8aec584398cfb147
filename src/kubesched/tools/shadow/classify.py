"""The verdict on one bind: the state just before it (a snapshot without the pod), the pod as it
was pending, the node the other scheduler chose. kubesched's profile runs its cycle's steps over
every node (no sampling, so the verdict does not depend on where a search starts) and compares:

- same: the chosen node is kubesched's only best node;
- tie: it is one of several nodes sharing kubesched's best total (which one a cycle takes depends
  on where its search starts and, in kube-scheduler, on the order its parallel filters find them,
  which a replay does not know);
- different: kubesched's best total is higher than its total for the chosen node, or kubesched
  finds the chosen node infeasible (its total is then None);
- unschedulable: kubesched fits the pod on no node (its FailedScheduling message is kept);
- error: a plugin errs on the pod (the message is kept).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import msgspec

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import FitError
from kubesched.framework.runtime.framework import can_dry_run_post_filter, dry_run_post_filter
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import NodeCursor, schedule_pod, score_every_node
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SchedulingError
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod

SAME, TIE, DIFFERENT, UNSCHEDULABLE, ERROR = "same", "tie", "different", "unschedulable", "error"


@dataclass(frozen=True)
class Verdict:
    pod: str  # namespace/name
    node: str  # where the other scheduler bound it
    verdict: str
    best: tuple[str, ...] = ()  # kubesched's best nodes
    best_total: int | None = None
    node_total: int | None = None  # kubesched's total for `node`; None if infeasible to kubesched
    message: str = ""

    @property
    def agrees(self) -> bool:
        return self.verdict in (SAME, TIE)


def as_pending(pod: Pod) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=""))


def classify(profile: Profile, snapshot: Snapshot, pod: Pod, node: str, *,
             percentage_of_nodes_to_score: int = 0) -> Verdict:
    """`snapshot` must not hold the pod; `pod` may carry its nodeName (it is taken off)."""
    pending = as_pending(pod)
    info = PodInfo(pending)
    try:
        found = score_every_node(profile, snapshot, info)
        if isinstance(found, FitError):
            return Verdict(info.key, node, UNSCHEDULABLE, message=_message(profile, snapshot, pending,
                                                                           percentage_of_nodes_to_score))
    except SchedulingError as exc:
        return Verdict(info.key, node, ERROR, message=str(exc))
    best = tuple(found.best)
    best_total = found.totals[best[0]]
    node_total = found.totals.get(node)
    verdict = (SAME if len(best) == 1 else TIE) if node in best else DIFFERENT
    return Verdict(info.key, node, verdict, best, best_total, node_total)


def _message(profile: Profile, snapshot: Snapshot, pod: Pod, percentage: int) -> str:
    """The message kubesched's own cycle would write, PostFilter's dry run included."""
    state = CycleState()
    info = PodInfo(pod)
    result = schedule_pod(profile, snapshot, info, rng=random.Random(0), cursor=NodeCursor(),
                          percentage_of_nodes_to_score=percentage, state=state)
    if not isinstance(result, FitError):  # the full search and the cycle disagree only on sampling
        return ""
    if can_dry_run_post_filter(profile):
        dry_run_post_filter(profile, state, info, result, snapshot)
    return result.message()
