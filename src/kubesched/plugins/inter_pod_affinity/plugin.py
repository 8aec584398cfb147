"""InterPodAffinity: required pod affinity and anti-affinity (both ways) filter nodes; preferred
terms, and existing pods' required affinity, score them (kube-scheduler interpodaffinity/plugin.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Bools, PreFilterResult, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity import filtering, hints, scoring
from kubesched.plugins.inter_pod_affinity.args import InterPodAffinityArgs, typed
from kubesched.plugins.inter_pod_affinity.filtering import NO_STATE, PRE_FILTER_KEY, PreFilterState
from kubesched.plugins.inter_pod_affinity.scoring import PRE_SCORE_KEY, PreScoreState
from kubesched.plugins.inter_pod_affinity.terms import NamespaceLister, NoNamespaces, TermCache

NAME = "InterPodAffinity"


class InterPodAffinity:
    name = NAME

    def __init__(self, args: InterPodAffinityArgs | None = None,
                 namespaces: NamespaceLister | None = None) -> None:
        self.args = args or InterPodAffinityArgs()
        self.namespaces: NamespaceLister = namespaces if namespaces is not None else NoNamespaces()
        self.terms = TermCache()

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """Each with kube-scheduler's queueing hint (hints.py): a bound pod added (affinity),
        relabelled or deleted (anti-affinity, both ways); the pod's own labels; a node added or
        relabelled (topology keys)."""
        return (
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD,
                                              ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                                 self.after_assigned_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
                                 hints.after_target_pod_update_label),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                                 self.after_node_change),
        )

    def after_assigned_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """isSchedulableAfterAssignedPodChange (hints.after_assigned_pod_change)."""
        return hints.after_assigned_pod_change(self.terms, pod, old, new)

    def after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """isSchedulableAfterNodeChange (hints.after_node_change)."""
        return hints.after_node_change(self.terms, pod, old, new)

    # --- PreFilter and its extensions ---------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        s, status = filtering.compute_pre_filter(pod, snapshot, self.terms, self.namespaces)
        if s is not None:
            state.write(PRE_FILTER_KEY, s)
        return None, status

    def _update(self, state: CycleState, pod: PodInfo, node: NodeInfo, multiplier: int) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_KEY)
        if s is None:
            return NO_STATE
        s.update_with_pod(pod, node, multiplier)
        return None

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        """PreFilterExtensions.AddPod: count pod_to_add as if it ran on node_info."""
        return self._update(state, pod_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        """PreFilterExtensions.RemovePod: stop counting pod_to_remove on node_info."""
        return self._update(state, pod_to_remove, node_info, -1)

    # --- Filter -------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_KEY)
        if s is None:
            return NO_STATE
        return filtering.filter_node(s, node)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        s: PreFilterState | None = state.get(PRE_FILTER_KEY)
        if s is None:
            return None  # the scalar path reports the missing state
        return filtering.filter_mask(s, snapshot, rows)

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        rows: Rows) -> list[Status]:
        s: PreFilterState | None = state.get(PRE_FILTER_KEY)
        if s is None:
            return [NO_STATE] * len(rows)
        infos = snapshot.node_infos
        return [filtering.filter_node(s, infos[r]) or NO_STATE for r in rows.tolist()]

    # --- PreScore, Score, NormalizeScore --------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        s, status = scoring.compute_pre_score(pod, snapshot, self.terms, self.namespaces,
                                              self.args.hard_pod_affinity_weight,
                                              self.args.ignore_preferred_terms_of_existing_pods)
        if s is not None:
            state.write(PRE_SCORE_KEY, s)
        return status

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        s: PreScoreState | None = state.get(PRE_SCORE_KEY)
        return scoring.score_node(s, node)

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        s: PreScoreState | None = state.get(PRE_SCORE_KEY)
        return scoring.score_rows(s, snapshot, rows)

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        s: PreScoreState | None = state.get(PRE_SCORE_KEY)
        return scoring.normalize(s, scores)


def new(args: Mapping[str, Any], handle: Handle | None = None, *,
        namespaces: NamespaceLister | None = None) -> InterPodAffinity:
    """The plugin from its args ({} for the defaults); namespace labels come from `namespaces`
    (default: no namespace known). The handle is not needed: the cycle passes the snapshot."""
    return InterPodAffinity(typed(args), namespaces)
