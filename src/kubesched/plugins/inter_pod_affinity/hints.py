"""InterPodAffinity's queueing hints (kube-scheduler interpodaffinity/plugin.go
isSchedulableAfterAssignedPodChange, isSchedulableAfterTargetPodUpdateLabel,
isSchedulableAfterNodeChange): whether a bound pod's arrival, relabelling or departure, the waiting
pod's own relabelling, or a node's arrival or relabelling may make a pod the plugin rejected
schedulable.

Only required terms count: preferred ones never reject a pod. The terms are matched as
kube-scheduler's hints match them, with no namespace labels (`AffinityTerm.Matches(pod, nil)`): a
term's namespaceSelector is not resolved through the namespace lister, as Filter's is, but tested
against an empty label set, so `{}` selects every namespace and one that requires a namespace label
selects none (the term's listed namespaces still count). A selector that does not parse is the
hint's error, which queues the pod.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.framework.events import QueueingHint
from kubesched.model.objects import Node, Pod
from kubesched.plugins.helper.label_selector import SelectorError
from kubesched.plugins.inter_pod_affinity.terms import AffinityTerm, TermCache, parse_term

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def _required(terms: TermCache, pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    """fwk.GetAffinityTerms of the pod's required affinity and anti-affinity terms. Raises
    SelectorError when either does not parse; a preferred term that does not parse is no error here."""
    parsed = terms.of(pod)
    if parsed.error is None:
        return parsed.required_affinity, parsed.required_anti_affinity
    # The cache leaves a group that failed empty and keeps one message: parsed again, a required
    # group's failure raises and a preferred one's is ignored, as the hint parses the required only.
    aff = pod.spec.affinity
    pa = aff.pod_affinity if aff is not None else None
    paa = aff.pod_anti_affinity if aff is not None else None
    return (tuple(parse_term(pod, t) for t in (pa.required if pa else ())),
            tuple(parse_term(pod, t) for t in (paa.required if paa else ())))


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms: one pod must satisfy every affinity term; false for none."""
    return bool(terms) and all(t.matches(pod, None) for t in terms)


def _matches_any(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAnyAffinityTerms."""
    return any(t.matches(pod, None) for t in terms)


def _unscheduled(pod: Pod) -> bool:
    return not pod.spec.node_name and not pod.status.nominated_node_name


def after_assigned_pod_change(terms: TermCache, pod: Pod, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterAssignedPodChange: a pod added that matches all the pod's affinity terms;
    a pod updated to match them all, or to match none of its anti-affinity terms; a pod deleted
    that matched an anti-affinity term of the pod's, or whose own anti-affinity the pod matched.
    A pod neither bound nor nominated, before or after, is Skip."""
    if not isinstance(old, Pod | None) or not isinstance(new, Pod | None):
        return QUEUE  # not a pod: upstream's As() error, which queues
    # A change of node or nomination comes as a Delete and an Add, not as this update.
    if (new is not None and _unscheduled(new)) or (old is not None and _unscheduled(old)):
        return SKIP
    try:
        affinity, anti = _required(terms, pod)
    except SelectorError:
        return QUEUE
    if old is not None and new is not None:
        if not _matches_all(affinity, old) and _matches_all(affinity, new):
            return QUEUE
        if _matches_any(anti, old) and not _matches_any(anti, new):
            return QUEUE
        return SKIP
    if new is not None:
        return QUEUE if _matches_all(affinity, new) else SKIP
    if old is None:
        return SKIP  # neither object: upstream dereferences a nil pod here; nothing to judge
    if _matches_any(anti, old):
        return QUEUE
    try:
        _, old_anti = _required(terms, old)
    except SelectorError:
        return QUEUE
    return QUEUE if _matches_any(old_anti, pod) else SKIP


def after_target_pod_update_label(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterTargetPodUpdateLabel: always Queue, as another pod's anti-affinity may
    have selected the old labels and not the new ones."""
    return QUEUE


def after_node_change(terms: TermCache, pod: Pod, old: Any, new: Any) -> QueueingHint:
    """isSchedulableAfterNodeChange (Node Add, UpdateNodeLabel): for an affinity term, a node added
    with its topology key, or updated to have the key or a new value of it; for an anti-affinity
    term, any node added (one without the key accepts the pod, and whether the domain one with the
    key joins is free is not the hint's to check), or one updated to lose the key or change its
    value."""
    if not isinstance(old, Node | None) or not isinstance(new, Node):
        return QUEUE  # not a node (or no new one): upstream's As() error or nil node, which queue
    try:
        affinity, anti = _required(terms, pod)
    except SelectorError:
        return QUEUE
    new_labels = new.metadata.labels
    if old is None:
        if anti or any(t.topology_key in new_labels for t in affinity):
            return QUEUE
        return SKIP
    old_labels = old.metadata.labels
    for t in affinity:
        key = t.topology_key
        if key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
            return QUEUE
    for t in anti:
        key = t.topology_key
        if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
            return QUEUE
    return SKIP
