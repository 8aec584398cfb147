"""What filtering and scoring share (kube-scheduler podtopologyspread/common.go): a pod's constraints
with their selectors parsed, the default constraints, which nodes a constraint counts, and the
count of matching pods on a node.

The default constraints select pods with the selectors of the pod's Services and owning
ReplicationController / ReplicaSet / StatefulSet (helper.DefaultSelector). The plugin reads those
through a SelectorLister port, so it stays free of informers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from kubesched.framework.interface import Bools
from kubesched.framework.snapshot import I64, Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import LabelSelector, Pod
from kubesched.model.objects import TopologySpreadConstraint as SpreadSpec
from kubesched.plugins.helper import label_selector as sel
from kubesched.plugins.helper.node_selector import RequiredNodeAffinity, required_node_affinity
from kubesched.plugins.helper.tolerations import first_untolerated

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"

SYSTEM_DEFAULT_CONSTRAINTS = (
    SpreadSpec(topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY, max_skew=3),
    SpreadSpec(topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY, max_skew=5),
)


# --- the selector port ------------------------------------------------------------------------------

class SelectorLister(Protocol):
    """The selectors of the Services that select the pod (their spec.selector as matchLabels) and of
    its controller if that is a v1 ReplicationController or an apps/v1 ReplicaSet / StatefulSet.
    The plugin ANDs them into one selector, as helper.DefaultSelector merges them."""

    def selectors_for(self, pod: Pod) -> Sequence[LabelSelector]: ...


class NoSelectors:
    """No Services nor controllers known: default constraints never apply."""

    def selectors_for(self, pod: Pod) -> Sequence[LabelSelector]:
        return ()


_CONTROLLER_KINDS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}


@dataclass
class InMemorySelectors:
    """helper.DefaultSelector over objects held in memory (tests; a model for the informer-backed one).

    services: (namespace, spec.selector) — None selects no pod, as a nil Service selector does.
    controllers: (namespace, kind, name) -> the controller's selector (an RC's map as matchLabels).
    """

    services: Sequence[tuple[str, Mapping[str, str] | None]] = ()
    controllers: Mapping[tuple[str, str, str], LabelSelector] = field(default_factory=dict)

    def selectors_for(self, pod: Pod) -> Sequence[LabelSelector]:
        meta = pod.metadata
        out: list[LabelSelector] = []
        for namespace, selector in self.services:
            if namespace != meta.namespace or selector is None:
                continue
            if all(meta.labels.get(k) == v for k, v in selector.items()):
                out.append(LabelSelector(match_labels=dict(selector)))
        owner = next((o for o in meta.owner_references if o.controller), None)
        if owner is None or (owner.api_version, owner.kind) not in _CONTROLLER_KINDS:
            return out
        found = self.controllers.get((meta.namespace, owner.kind, owner.name))
        if found is not None:
            out.append(found)
        return out


def default_selector(lister: SelectorLister, pod: Pod) -> sel.Selector:
    merged = sel.EVERYTHING
    for s in lister.selectors_for(pod):
        parsed = sel.parse_lenient(s)
        if parsed is not None and not parsed.nothing:
            merged = merged.and_(parsed)
    return merged


# --- constraints -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Constraint:
    """kube-scheduler's internal topologySpreadConstraint: the selector parsed, the pointers defaulted."""

    max_skew: int
    topology_key: str
    selector: sel.Selector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def filter_constraints(specs: Iterable[SpreadSpec], pod_labels: Mapping[str, str], action: str) -> list[Constraint]:
    """filterTopologySpreadConstraints: the constraints with this whenUnsatisfiable, matchLabelKeys
    merged into their selectors. Raises SelectorError for a selector that does not parse."""
    out: list[Constraint] = []
    for c in specs:
        if c.when_unsatisfiable != action:
            continue
        selector = sel.parse(c.label_selector)
        if c.match_label_keys:
            pairs = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
            selector = selector.with_labels(pairs)
        out.append(Constraint(
            max_skew=c.max_skew, topology_key=c.topology_key, selector=selector,
            min_domains=1 if c.min_domains is None else c.min_domains,
            node_affinity_policy=c.node_affinity_policy or HONOR,
            node_taints_policy=c.node_taints_policy or IGNORE))
    return out


@dataclass(frozen=True, slots=True)
class Inclusion:
    """What a constraint's node inclusion policies test on a node, computed once per pod."""

    affinity: RequiredNodeAffinity
    pod: PodInfo

    def affinity_ok(self, node: NodeInfo) -> bool:
        return self.affinity.matches(node.labels, node.name)

    def taints_ok(self, node: NodeInfo) -> bool:
        return first_untolerated(node.no_schedule_taints, self.pod.tolerations) is None

    def matches(self, c: Constraint, node: NodeInfo) -> bool:
        """matchNodeInclusionPolicies."""
        if c.node_affinity_policy == HONOR and not self.affinity_ok(node):
            return False
        return not (c.node_taints_policy == HONOR and not self.taints_ok(node))


def node_has_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    return all(c.topology_key in labels for c in constraints)


def pod_matches(pi: PodInfo, selector: sel.Selector, namespace: str) -> bool:
    """What countPodsMatchSelector counts: a pod of the namespace, not terminating, that the
    selector matches; the select-everything selector counts none (the rule is _counters')."""
    return _counters(selector, namespace)[1](pi) == 1


def count_matching(node: NodeInfo, selector: sel.Selector, namespace: str) -> int:
    """countPodsMatchSelector over the node's pods."""
    return _counters(selector, namespace)[0](node)


class InclusionMasks:
    """matchNodeInclusionPolicies over every snapshot row, each policy's column computed once."""

    def __init__(self, snapshot: Snapshot, pod: PodInfo) -> None:
        self.snapshot = snapshot
        self.pod = pod
        self._affinity: Bools | None = None
        self._taints: Bools | None = None

    def restricts(self, c: Constraint) -> Bools | None:
        """of(c), or None when it passes every node: the policy it honours asks nothing of this
        pod (no nodeSelector, no required node affinity; Ignore for taints)."""
        if c.node_taints_policy == HONOR:
            return self.of(c)
        if c.node_affinity_policy == HONOR:
            spec = self.pod.pod.spec
            aff = spec.affinity
            if spec.node_selector or (aff is not None and aff.node_affinity is not None
                                      and aff.node_affinity.required is not None):
                return self.of(c)
        return None

    def of(self, c: Constraint) -> Bools:
        snapshot, pod = self.snapshot, self.pod
        mask = np.ones(snapshot.n, dtype=np.bool_)
        if c.node_affinity_policy == HONOR:
            if self._affinity is None:
                self._affinity = required_node_affinity(pod).mask(snapshot, snapshot.all_rows)
            mask &= self._affinity
        if c.node_taints_policy == HONOR:
            if self._taints is None:
                ok = [first_untolerated(t, pod.tolerations) is None for t in snapshot.no_schedule.taints]
                self._taints = np.array(ok, dtype=np.bool_)[snapshot.no_schedule_group]
            mask &= self._taints
        return mask


def nodes_with_keys(snapshot: Snapshot, constraints: Sequence[Constraint]) -> Bools:
    """nodeLabelsMatchSpreadConstraints over every snapshot row."""
    has_keys = np.ones(snapshot.n, dtype=np.bool_)
    for c in constraints:
        col = snapshot.label_codes.get(c.topology_key)
        if col is None:
            return np.zeros(snapshot.n, dtype=np.bool_)
        has_keys &= col >= 0
    return has_keys


@functools.lru_cache(maxsize=4096)
def _counters(selector: sel.Selector, namespace: str) -> tuple[Callable[[NodeInfo], int], Callable[[PodInfo], int]]:
    """count_matching per node and pod_matches per pod, with what they read of the selector bound."""
    if selector.empty() or selector.nothing:
        return _none_on_node, _not_counted
    matches = selector.matches

    def count_pod(pi: PodInfo) -> int:
        meta = pi.pod.metadata
        return 1 if meta.namespace == namespace and meta.deletion_timestamp is None and matches(meta.labels) else 0

    def count(node: NodeInfo) -> int:
        return sum(map(count_pod, node.pods.values())) if node.pods else 0
    return count, count_pod


def _none_on_node(node: NodeInfo) -> int:
    return 0


def _not_counted(pi: PodInfo) -> int:
    return 0


@functools.lru_cache(maxsize=4096)
def _in_pairs(selector: sel.Selector) -> tuple[tuple[str, frozenset[str]], ...]:
    return selector.set_pairs()


def matching_per_node(snapshot: Snapshot, selector: sel.Selector, namespace: str) -> I64:
    """count_matching for every snapshot row, kept by the snapshot between cycles."""
    count, count_pod = _counters(selector, namespace)
    return snapshot.per_row(("PodTopologySpread", namespace, selector), count, count_pod,
                            snapshot.zeros_unless_labelled((namespace,), _in_pairs(selector)))


def matching_sums(snapshot: Snapshot, selector: sel.Selector, namespace: str, key: str) -> I64 | None:
    """matching_per_node summed per code of label key (None: no node has it), kept likewise."""
    count, count_pod = _counters(selector, namespace)
    return snapshot.sums_by_label(("PodTopologySpread", namespace, selector), count, key, count_pod,
                                  snapshot.zeros_unless_labelled((namespace,), _in_pairs(selector)))


def labels_match_any(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    """podLabelsMatchSpreadConstraints."""
    return any(c.selector.matches(labels) for c in constraints)
