"""NodeAffinity: the pod's nodeSelector and required node affinity must match the node's labels;
preferred terms add their weights to the score. `addedAffinity` applies to every pod."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.interface import MAX_NODE_SCORE, Bools, PreFilterResult, Rows, Scores
from kubesched.framework.normalize import default_normalize_score
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import NodeAffinity as NodeAffinitySpec
from kubesched.plugins.helper.node_selector import (
    NODE_NAME_FIELD,
    PreferredTerms,
    RequiredNodeAffinity,
    Selector,
    required_node_affinity,
)

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REJECTED_POD = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
_REJECTED_ENFORCED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
_PRE_FILTER_KEY = "PreFilter" + NAME
_PRE_SCORE_KEY = "PreScore" + NAME


def _preferred(pod: PodInfo) -> PreferredTerms | bool | None:
    """The pod's preferred terms; None if it has none; False if one is invalid."""
    aff = pod.pod.spec.affinity
    if aff is None or aff.node_affinity is None or not aff.node_affinity.preferred:
        return None
    terms = PreferredTerms.parse(aff.node_affinity.preferred)
    return False if terms is None else terms


class NodeAffinity:
    name = NAME

    _EVENTS = (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),)

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def __init__(self, added_selector: Selector | None = None,
                 added_preferred: PreferredTerms | None = None) -> None:
        self.added_selector = added_selector
        self.added_preferred = added_preferred

    def _required(self, state: CycleState, pod: PodInfo) -> RequiredNodeAffinity:
        found: RequiredNodeAffinity | None = state.get(_PRE_FILTER_KEY)
        return found if found is not None else required_node_affinity(pod)

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        spec = pod.pod.spec
        aff = spec.affinity
        required = aff.node_affinity.required if aff is not None and aff.node_affinity is not None else None
        if required is None and self.added_selector is None and not spec.node_selector:
            return None, SKIP
        state.write(_PRE_FILTER_KEY, required_node_affinity(pod))
        if required is None or not required.node_selector_terms:
            return None, None
        # Terms that pin metadata.name narrow the candidates before any filter runs.
        names: set[str] = set()
        for term in required.node_selector_terms:
            term_names: set[str] | None = None
            for r in term.match_fields:
                if r.key == NODE_NAME_FIELD and r.operator == "In":
                    term_names = set(r.values) if term_names is None else term_names & set(r.values)
            if term_names is None:
                return None, None
            names |= term_names
        if not names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        return PreFilterResult(frozenset(names)), None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if self.added_selector is not None and not self.added_selector.matches(node.labels, node.name):
            return _REJECTED_ENFORCED
        if not self._required(state, pod).matches(node.labels, node.name):
            return _REJECTED_POD
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        mask = self._required(state, pod).mask(snapshot, rows)
        if self.added_selector is not None:
            np.logical_and(mask, self.added_selector.mask(snapshot, rows), out=mask)
        return None if np.count_nonzero(mask) == len(mask) else mask

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        if self.added_selector is None:
            return [_REJECTED_POD] * len(rows)
        enforced = self.added_selector.mask(snapshot, rows)
        return [_REJECTED_POD if ok else _REJECTED_ENFORCED for ok in enforced.tolist()]

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        preferred = _preferred(pod)
        if preferred is False:
            return Status(Code.ERROR, "invalid preferredDuringSchedulingIgnoredDuringExecution term")
        if preferred is None and self.added_preferred is None:
            return SKIP
        state.write(_PRE_SCORE_KEY, preferred)
        return None

    def _pod_preferred(self, state: CycleState, pod: PodInfo) -> PreferredTerms | None:
        found = state.get(_PRE_SCORE_KEY)
        if found is None:
            found = _preferred(pod)
        return found if isinstance(found, PreferredTerms) else None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        total = 0
        if self.added_preferred is not None:
            total += self.added_preferred.score(node.labels, node.name)
        preferred = self._pod_preferred(state, pod)
        if preferred is not None:
            total += preferred.score(node.labels, node.name)
        return total

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        total = np.zeros(len(rows), dtype=np.int64)
        if self.added_preferred is not None:
            total += self.added_preferred.score_batch(snapshot, rows)
        preferred = self._pod_preferred(state, pod)
        if preferred is not None:
            total += preferred.score_batch(snapshot, rows)
        return total

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        return default_normalize_score(MAX_NODE_SCORE, False, scores)


def new(args: Mapping[str, Any]) -> NodeAffinity:
    """args: {"addedAffinity": a NodeAffinity object as in a pod spec}."""
    added = args.get("addedAffinity")
    if not added:
        return NodeAffinity()
    spec = msgspec.convert(added, NodeAffinitySpec)
    selector = None
    if spec.required is not None:
        selector = Selector.parse(spec.required)
        if not selector.is_valid():
            raise ValueError("NodeAffinity args: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution "
                             "has an invalid requirement")
    preferred = None
    if spec.preferred:
        preferred = PreferredTerms.parse(spec.preferred)
        if preferred is None:
            raise ValueError("NodeAffinity args: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution "
                             "has an invalid requirement")
    return NodeAffinity(selector, preferred)
