"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; untolerated PreferNoSchedule
taints lower the score."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.interface import MAX_NODE_SCORE, Bools, PreFilterResult, Rows, Scores
from kubesched.framework.normalize import default_normalize_score
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Toleration
from kubesched.plugins.helper.tolerations import first_untolerated, tolerates_taint

NAME = "TaintToleration"
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_REJECTED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)
_PRE_SCORE_KEY = "PreScore" + NAME


def _prefer_no_schedule_tolerations(pod: PodInfo) -> list[Toleration]:
    return [t for t in pod.tolerations if not t.effect or t.effect == "PreferNoSchedule"]


class TaintToleration:
    name = NAME

    # Other pods never change a node's taints: an assigned pod's deletion does not concern it.
    _EVENTS = (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
               ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION))

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if first_untolerated(node.no_schedule_taints, pod.tolerations) is None:
            return None
        return _REJECTED

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        groups = snapshot.no_schedule.taints
        if len(groups) == 1:
            return None
        tolerations = pod.tolerations
        ok = [first_untolerated(taints, tolerations) is None for taints in groups]
        if all(ok):
            return None
        return np.array(ok, dtype=np.bool_)[snapshot.take(snapshot.no_schedule_group, rows)]

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        return [_REJECTED] * len(rows)

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        state.write(_PRE_SCORE_KEY, _prefer_no_schedule_tolerations(pod))
        return None

    def _tolerations(self, state: CycleState, pod: PodInfo) -> list[Toleration]:
        found: list[Toleration] | None = state.get(_PRE_SCORE_KEY)
        return found if found is not None else _prefer_no_schedule_tolerations(pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        tolerations = self._tolerations(state, pod)
        return sum(1 for t in node.prefer_no_schedule_taints if not tolerates_taint(tolerations, t))

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        groups = snapshot.prefer_no_schedule.taints
        if len(groups) == 1:
            return np.zeros(len(rows), dtype=np.int64)
        tolerations = self._tolerations(state, pod)
        counts = [sum(1 for t in taints if not tolerates_taint(tolerations, t)) for taints in groups]
        return np.array(counts, dtype=np.int64)[snapshot.take(snapshot.prefer_group, rows)]

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


def new(args: Mapping[str, Any]) -> TaintToleration:
    return TaintToleration()
