"""PodTopologySpread (kube-scheduler podtopologyspread/plugin.go): PreFilter, Filter (with AddPod /
RemovePod for preemption), PreScore, Score, NormalizeScore, and the events that can make a pod it
rejected schedulable."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.field_errors import FieldError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Bools, PreFilterResult, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Node, Pod
from kubesched.model.objects import TopologySpreadConstraint as SpreadSpec
from kubesched.plugins.helper.label_selector import SelectorError
from kubesched.plugins.pod_topology_spread import filtering, scoring
from kubesched.plugins.pod_topology_spread.args import LIST_DEFAULTING, parse_args
from kubesched.plugins.pod_topology_spread.common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    NoSelectors,
    SelectorLister,
    default_selector,
    filter_constraints,
    labels_match_any,
    node_has_keys,
)
from kubesched.plugins.pod_topology_spread.filtering import PRE_FILTER_KEY, PreFilterState
from kubesched.plugins.pod_topology_spread.scoring import PRE_SCORE_KEY, PreScoreState

NAME = "PodTopologySpread"
MAX_PARSED = 1 << 12
_encode = msgspec.json.Encoder().encode


def _state_error(key: str) -> Status:
    return Status(Code.ERROR, f'reading "{key}" from cycleState: not found')


class PodTopologySpread:
    name = NAME

    def __init__(self, default_constraints: Sequence[SpreadSpec] = SYSTEM_DEFAULT_CONSTRAINTS,
                 system_defaulted: bool = True, selectors: SelectorLister | None = None) -> None:
        self.default_constraints = tuple(default_constraints)
        self.system_defaulted = system_defaulted
        self.selectors: SelectorLister = selectors if selectors is not None else NoSelectors()
        self._parsed: dict[tuple[bytes, str], list[Constraint]] = {}
        self._last_specs: tuple[list[SpreadSpec], bytes] | None = None

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """kube-scheduler's three registrations, each with its queueing hint."""
        return (
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD,
                                              ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                                 self.after_assigned_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD,
                                              ActionType.UPDATE_POD_TOLERATION | ActionType.UPDATE_POD_LABEL),
                                 self.after_target_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.DELETE
                                              | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
                                 self.after_node_change),
        )

    def after_target_pod_change(self, pod: Pod, old: Pod, new: Pod) -> QueueingHint:
        """isSchedulableAfterTargetPodChange: a toleration added counts when a constraint honours
        taints; a label change when it makes the pod match one of its constraints, or not."""
        try:
            constraints = self.pod_constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QueueingHint.QUEUE  # kube-scheduler: a hint's error means Queue
        if old.spec.tolerations != new.spec.tolerations and any(c.node_taints_policy == HONOR for c in constraints):
            return QueueingHint.QUEUE
        return _after_label_change(old, new, constraints)

    def after_assigned_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """isSchedulableAfterAssignedPodChange: a pod of the pod's namespace, bound or nominated
        before and after, added or deleted with labels a hard constraint's selector matches, or
        relabelled so that one matches it or stops matching it."""
        if not isinstance(old, Pod | None) or not isinstance(new, Pod | None):
            return QueueingHint.QUEUE  # not a pod: upstream's As() error, which queues
        if ((new is not None and not _involved_in_spreading(new, pod))
                or (old is not None and not _involved_in_spreading(old, pod))):
            return QueueingHint.QUEUE_SKIP
        try:
            constraints = self.pod_constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QueueingHint.QUEUE
        if old is not None and new is not None:
            return _after_label_change(old, new, constraints)
        changed = new if new is not None else old
        if changed is not None and labels_match_any(constraints, changed.metadata.labels):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """isSchedulableAfterNodeChange: a node added or deleted with every topology key of the
        pod's hard constraints; one updated to have them all or not, or, having them all, with a
        topology value or its taints changed. The node inclusion policies are not read: a taint
        change counts whatever nodeTaintsPolicy says, as in kube-scheduler."""
        if not isinstance(old, Node | None) or not isinstance(new, Node | None):
            return QueueingHint.QUEUE  # not a node: upstream's As() error, which queues
        try:
            constraints = self.pod_constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QueueingHint.QUEUE
        old_matching = old is not None and node_has_keys(old.metadata.labels, constraints)
        new_matching = new is not None and node_has_keys(new.metadata.labels, constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return QueueingHint.QUEUE
            if new_matching and (_topology_values_changed(old.metadata.labels, new.metadata.labels, constraints)
                                 or old.spec.taints != new.spec.taints):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_matching else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_matching else QueueingHint.QUEUE_SKIP

    # --- constraints ------------------------------------------------------------------------------

    def _default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """buildDefaultConstraints."""
        constraints = filter_constraints(self.default_constraints, pod.metadata.labels, action)
        if not constraints:
            return []
        selector = default_selector(self.selectors, pod)
        if selector.empty():
            return []
        return [Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.node_affinity_policy,
                           c.node_taints_policy) for c in constraints]

    def _own_constraints(self, specs: list[SpreadSpec], pod: Pod, action: str) -> list[Constraint]:
        """filter_constraints, shared by the pods with the same constraints (a workload's pods)
        unless matchLabelKeys makes them read the pod's own labels."""
        if any(c.match_label_keys for c in specs):
            return filter_constraints(specs, pod.metadata.labels, action)
        # PreFilter and PreScore ask for the same pod's specs in turn: encoded once for both.
        last = self._last_specs
        if last is not None and last[0] is specs:
            encoded = last[1]
        else:
            encoded = _encode(specs)
            self._last_specs = (specs, encoded)
        key = (encoded, action)
        found = self._parsed.get(key)
        if found is None:
            found = filter_constraints(specs, pod.metadata.labels, action)
            if len(self._parsed) >= MAX_PARSED:
                self._parsed.clear()
            self._parsed[key] = found
        return list(found)

    def constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        """The pod's constraints with this whenUnsatisfiable, or the defaults when it has none.
        Raises SelectorError, worded as kube-scheduler's error."""
        return self.pod_constraints(pod.pod, action)

    def pod_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """constraints() of a bare Pod (getConstraints), for the hints: no PodInfo to build per
        waiting pod and event."""
        specs = pod.spec.topology_spread_constraints
        hard = action == DO_NOT_SCHEDULE
        kind = "hard" if hard else "soft"
        try:
            if specs:
                return self._own_constraints(specs, pod, action)
            return self._default_constraints(pod, action)
        except SelectorError as err:
            what = (f"obtaining pod's {kind} topology spread constraints" if specs
                    else f"setting default {kind} topology spread constraints")
            raise SelectorError(f"{what}: {err}") from None

    # --- PreFilter / Filter -----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        try:
            constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError as err:
            return None, Status(Code.ERROR, f"get constraints from pod: {err}")
        if not constraints:
            return None, SKIP
        state.write(PRE_FILTER_KEY, filtering.compute_state(snapshot, pod, constraints))
        return None, None

    def _pre_filter_state(self, state: CycleState) -> PreFilterState | None:
        found = state.get(PRE_FILTER_KEY)
        return found if isinstance(found, PreFilterState) else None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if s is None:
            return _state_error(PRE_FILTER_KEY)
        return filtering.filter_node(s, pod, node)

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        s = self._pre_filter_state(state)
        if s is None:
            return None  # the scalar path reports the missing state
        return filtering.filter_mask(s, pod, snapshot, rows)

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> list[Status]:
        out = []
        for r in rows.tolist():
            s = self.filter(state, pod, snapshot.node_infos[r])
            out.append(s if s is not None else filtering.CONSTRAINTS_NOT_MATCH)
        return out

    # PreFilterExtensions, for preemption: the state as if pod_to_add / pod_to_remove were (not) there.

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if s is None:
            return _state_error(PRE_FILTER_KEY)
        filtering.update_with_pod(s, pod_to_add.pod, pod_to_schedule, node_info, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        s = self._pre_filter_state(state)
        if s is None:
            return _state_error(PRE_FILTER_KEY)
        filtering.update_with_pod(s, pod_to_remove.pod, pod_to_schedule, node_info, -1)
        return None

    # --- PreScore / Score -------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        if snapshot.n == 0:
            return SKIP
        try:
            constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError as err:
            return Status(Code.ERROR, f"calculating preScoreState: {err}")
        if not constraints:
            return SKIP
        # Nodes must have every topology key unless the constraints are the system defaults, so
        # nodes without a zone label still get hostname spreading.
        require_all = bool(pod.pod.spec.topology_spread_constraints) or not self.system_defaulted
        state.write(PRE_SCORE_KEY, scoring.compute_state(snapshot, rows, pod, constraints, require_all))
        return None

    def _pre_score_state(self, state: CycleState) -> PreScoreState:
        found = state.get(PRE_SCORE_KEY)
        if not isinstance(found, PreScoreState):
            raise KeyError(f'reading "{PRE_SCORE_KEY}" from cycleState: not found')
        return found

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        return scoring.score_node(self._pre_score_state(state), pod, node)

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        return scoring.score_rows(self._pre_score_state(state), pod, snapshot, rows)

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
        return scoring.normalize(self._pre_score_state(state), scores)


def _involved_in_spreading(incoming: Pod, pod: Pod) -> bool:
    """involvedInTopologySpreading: incoming is bound or nominated, in the namespace of the pod with
    the constraints."""
    if not incoming.spec.node_name and not incoming.status.nominated_node_name:
        return False
    return incoming.metadata.namespace == pod.metadata.namespace


def _after_label_change(old: Pod, new: Pod, constraints: Sequence[Constraint]) -> QueueingHint:
    """isSchedulableAfterPodLabelChange: Queue when a constraint's selector matches one of the
    two label sets and not the other."""
    old_labels, new_labels = old.metadata.labels, new.metadata.labels
    if old_labels == new_labels:
        return QueueingHint.QUEUE_SKIP
    if any(c.selector.matches(old_labels) != c.selector.matches(new_labels) for c in constraints):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def _topology_values_changed(old: Mapping[str, str], new: Mapping[str, str],
                             constraints: Sequence[Constraint]) -> bool:
    """checkTopologyKeyLabelsChanged (a missing label reads as "", as a Go map does)."""
    return any(old.get(c.topology_key, "") != new.get(c.topology_key, "") for c in constraints)


class ArgsError(ValueError):
    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors = tuple(errors)
        super().__init__("PodTopologySpread args: " + "; ".join(str(x) for x in errors))


def new(args: Mapping[str, Any], handle: Handle | None = None, *,
        selectors: SelectorLister | None = None) -> PodTopologySpread:
    """The factory: args as parse_args returns them (or raw: they are parsed again, idempotently);
    `selectors` is the Service / controller selector port the default constraints need."""
    errs: list[FieldError] = []
    parsed = parse_args(args, "", errs)
    if errs:
        raise ArgsError(errs)
    if parsed["defaultingType"] == LIST_DEFAULTING:
        defaults = tuple(msgspec.convert(c, SpreadSpec) for c in parsed["defaultConstraints"])
        return PodTopologySpread(defaults, system_defaulted=False, selectors=selectors)
    return PodTopologySpread(SYSTEM_DEFAULT_CONSTRAINTS, system_defaulted=True, selectors=selectors)
