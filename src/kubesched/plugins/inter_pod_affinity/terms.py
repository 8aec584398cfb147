"""Pod affinity terms as kube-scheduler processes them (framework.AffinityTerm, NewPodInfo), and the
namespace port they read namespace labels from.

A term matches a pod when the pod's namespace is one of the term's namespaces (the owning pod's own
namespace when neither `namespaces` nor `namespaceSelector` is given) or the namespace's labels match
`namespaceSelector`, and the pod's labels match `labelSelector` (nil: nothing, {}: everything).

`matchLabelKeys`/`mismatchLabelKeys` are not read: the apiserver merges them into `labelSelector`
once, from the labels the pod is created with, and kube-scheduler reads the stored selector only. A
pod relabelled later keeps the requirement on its old value; a pod created without the merge (before
the feature, or not through an apiserver) has none.

Parsed terms are cached per Pod object (pods are replaced, not mutated, on update), so a cycle
never re-parses an existing pod's terms, and a pod without pod affinity costs one attribute read.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import msgspec

from kubesched.model.objects import (
    Affinity,
    Namespace,
    Pod,
    PodAffinityTerm,
    WeightedPodAffinityTerm,
)
from kubesched.plugins.helper.label_selector import NOTHING, Selector, SelectorError, parse

HOSTNAME = "kubernetes.io/hostname"
_encode = msgspec.json.Encoder().encode

Labels = Mapping[str, str]


@runtime_checkable
class NamespaceLister(Protocol):
    """The labels of a namespace; None when the namespace is not known (kube-scheduler's
    NamespaceLister Get failing: no labels)."""

    def labels_of(self, namespace: str) -> Mapping[str, str] | None: ...

    def names_matching(self, selector: Selector) -> frozenset[str]:
        """The known namespaces whose labels the selector matches (kube-scheduler's lister List)."""
        ...


class NoNamespaces:
    """No namespace is known: a namespaceSelector other than {} selects none."""

    def labels_of(self, namespace: str) -> Mapping[str, str] | None:
        return None

    def names_matching(self, selector: Selector) -> frozenset[str]:
        return frozenset()


class NamespaceStore(Protocol):
    """What a Namespace informer offers: namespaces by key (a namespace's key is its name)."""

    def get(self, key: str) -> Namespace | None: ...

    def list(self) -> Sequence[Namespace]: ...


class InformerNamespaces:
    """A NamespaceLister over a Namespace informer (`kubesched.api.informer.namespace_informer`),
    read at each call, as kube-scheduler reads its namespace lister's cache."""

    __slots__ = ("_store",)

    def __init__(self, store: NamespaceStore) -> None:
        self._store = store

    def labels_of(self, namespace: str) -> Mapping[str, str] | None:
        ns = self._store.get(namespace)
        return None if ns is None else ns.metadata.labels

    def names_matching(self, selector: Selector) -> frozenset[str]:
        return frozenset(ns.metadata.name for ns in self._store.list() if selector.matches(ns.metadata.labels))


class StaticNamespaces:
    """In-memory namespaces: name -> labels."""

    def __init__(self, namespaces: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.namespaces = dict(namespaces or {})

    def labels_of(self, namespace: str) -> Mapping[str, str] | None:
        return self.namespaces.get(namespace)

    def names_matching(self, selector: Selector) -> frozenset[str]:
        return frozenset(name for name, labels in self.namespaces.items() if selector.matches(labels))


# --- affinity terms ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AffinityTerm:
    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.namespaces, self.selector, self.topology_key,
                                                self.namespace_selector)))

    def __hash__(self) -> int:
        return self._hash

    def matches(self, pod: Pod, ns_labels: Labels | None) -> bool:
        """framework.AffinityTerm.Matches: ns_labels are the labels of the pod's namespace."""
        if pod.metadata.namespace in self.namespaces or (
                not self.namespace_selector.nothing and self.namespace_selector.matches(ns_labels or {})):
            return self.selector.matches(pod.metadata.labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


def parse_term(owner: Pod, t: PodAffinityTerm) -> AffinityTerm:
    selector = parse(t.label_selector)
    ns_selector = parse(t.namespace_selector)
    if not t.namespaces and t.namespace_selector is None:
        namespaces = frozenset((owner.metadata.namespace,))
    else:
        namespaces = frozenset(t.namespaces)
    return AffinityTerm(namespaces, selector, t.topology_key, ns_selector)


@dataclass(frozen=True, slots=True)
class PodTerms:
    """A pod's processed terms (PodInfo's Required/Preferred(Anti)AffinityTerms); `error` is the
    parse error kube-scheduler's NewPodInfo reports (a group that fails to parse is left empty)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    error: str | None = None


NO_TERMS = PodTerms()


def _parse_pod_terms(pod: Pod) -> PodTerms:
    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return NO_TERMS
    errors: list[str] = []

    def required(terms: Sequence[PodAffinityTerm], what: str) -> tuple[AffinityTerm, ...]:
        try:
            return tuple(parse_term(pod, t) for t in terms)
        except SelectorError as err:
            errors.append(f"{what}: {err}")
            return ()

    def preferred(terms: Sequence[WeightedPodAffinityTerm], what: str) -> tuple[WeightedTerm, ...]:
        try:
            return tuple(WeightedTerm(parse_term(pod, w.pod_affinity_term), w.weight) for w in terms)
        except SelectorError as err:
            errors.append(f"{what}: {err}")
            return ()

    pa, paa = aff.pod_affinity, aff.pod_anti_affinity
    out = PodTerms(
        required(pa.required if pa else (), "requiredAffinityTerms"),
        required(paa.required if paa else (), "requiredAntiAffinityTerms"),
        preferred(pa.preferred if pa else (), "preferredAffinityTerms"),
        preferred(paa.preferred if paa else (), "preferredAntiAffinityTerms"),
    )
    if errors:
        # utilerrors.NewAggregate: one error as itself, several as [a, b]
        msg = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        out = PodTerms(out.required_affinity, out.required_anti_affinity, out.preferred_affinity,
                       out.preferred_anti_affinity, msg)
    return out


def _content_key(pod: Pod, aff: Affinity) -> tuple[str, bytes]:
    """What a pod's parsed terms depend on: its namespace and its pod (anti-)affinity, never its
    labels. The pods of one workload share their terms, so their parse, and equal terms are one
    object."""
    return pod.metadata.namespace, _encode((aff.pod_affinity, aff.pod_anti_affinity))


class TermCache:
    """Parsed terms per Pod object (id, with the pod kept alive so the id cannot be reused), and per
    content (namespace and terms), which the pods of a workload share."""

    MAX_ENTRIES = 1 << 16
    MAX_CONTENTS = 1 << 12

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Pod, PodTerms]] = {}
        self._by_content: dict[tuple[str, bytes], PodTerms] = {}
        self._last: tuple[Affinity, str, PodTerms] | None = None
        self._incoming: dict[tuple[AffinityTerm, NamespaceLister], IncomingTerm] = {}
        self._matched: dict[tuple[AffinityTerm, str, frozenset[tuple[str, str]]], bool] = {}
        # What the Matching counts of InterPodAffinity keep per group of incoming terms.
        self.counters: dict[Hashable, object] = {}

    def incoming(self, term: AffinityTerm, namespaces: NamespaceLister) -> IncomingTerm:
        """The term as the incoming pod's, its namespaceSelector unrolled into the namespaces it
        selects now (mergeAffinityTermNamespacesIfNotEmpty); one object per resulting term, so the
        per-node memos it keys and its namespace answers are shared across cycles. A namespace
        relabelled gives another set of names, so another term and memo, never a stale count."""
        sel = term.namespace_selector
        if not (sel.nothing or sel.empty()):
            term = AffinityTerm(term.namespaces | namespaces.names_matching(sel), term.selector,
                                term.topology_key, NOTHING)
        key = (term, namespaces)
        found = self._incoming.get(key)
        if found is None:
            if len(self._incoming) >= self.MAX_CONTENTS:
                self._incoming.clear()
                self.counters.clear()
            found = self._incoming[key] = IncomingTerm(term, namespaces)
        return found

    def matches(self, term: AffinityTerm, pod: Pod, ns_labels: Labels | None,
                labels: frozenset[tuple[str, str]]) -> bool:
        """term.matches(pod, ns_labels), remembered per pod namespace and labels (`labels`: the pod's,
        as a frozenset) for the terms that read no namespace labels."""
        sel = term.namespace_selector
        if not (sel.nothing or sel.empty()):
            return term.matches(pod, ns_labels)
        key = (term, pod.metadata.namespace, labels)
        found = self._matched.get(key)
        if found is None:
            if len(self._matched) >= self.MAX_ENTRIES:
                self._matched.clear()
            found = self._matched[key] = term.matches(pod, ns_labels)
        return found

    def of(self, pod: Pod) -> PodTerms:
        aff = pod.spec.affinity
        if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
            return NO_TERMS
        found = self._by_id.get(id(pod))
        if found is not None and found[0] is pod:
            return found[1]
        # The informer shares one affinity object among a workload's pods (model.intern): the pod
        # before this one's, in the same namespace, has the same terms.
        last = self._last
        if last is not None and last[0] is aff and last[1] == pod.metadata.namespace:
            self._remember(pod, last[2])
            return last[2]
        key = _content_key(pod, aff)
        terms = self._by_content.get(key)
        if terms is None:
            terms = _parse_pod_terms(pod)
            if len(self._by_content) >= self.MAX_CONTENTS:
                self._by_content.clear()
            self._by_content[key] = terms
        self._last = (aff, pod.metadata.namespace, terms)
        self._remember(pod, terms)
        return terms

    def _remember(self, pod: Pod, terms: PodTerms) -> None:
        if len(self._by_id) >= self.MAX_ENTRIES:
            self._by_id.clear()
        self._by_id[id(pod)] = (pod, terms)


class IncomingTerm:
    """A term of the pod being scheduled, with its namespaceSelector resolved through the namespace
    port (what kube-scheduler's mergeAffinityTermNamespacesIfNotEmpty unrolls into names), memoised
    per namespace for the cycle."""

    __slots__ = ("_ns_ok", "_ns_selector", "namespaces", "namespaces_port", "selector", "topology_key")

    def __init__(self, term: AffinityTerm, namespaces_port: NamespaceLister) -> None:
        self.namespaces = term.namespaces
        self.selector = term.selector
        self.topology_key = term.topology_key
        self._ns_selector = term.namespace_selector
        self.namespaces_port = namespaces_port
        self._ns_ok: dict[str, bool] = {}

    def selects_every_namespace(self) -> bool:
        return self._ns_selector.empty()

    def selects_listed_namespaces_only(self) -> bool:
        return self._ns_selector.nothing

    def _namespace_ok(self, namespace: str) -> bool:
        ok = self._ns_ok.get(namespace)
        if ok is None:
            sel = self._ns_selector
            if namespace in self.namespaces or sel.empty():
                ok = True
            elif sel.nothing:
                ok = False
            else:
                labels = self.namespaces_port.labels_of(namespace)
                ok = labels is not None and sel.matches(labels)
            self._ns_ok[namespace] = ok
        return ok

    def matches(self, pod: Pod) -> bool:
        return self._namespace_ok(pod.metadata.namespace) and self.selector.matches(pod.metadata.labels)


def matches_all(terms: Sequence[IncomingTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms: false for no terms."""
    if not terms:
        return False
    return all(t.matches(pod) for t in terms)
