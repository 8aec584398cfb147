"""Node selector matching as component-helpers' nodeaffinity does it, on one node or on columns.

A requirement labels.NewRequirement rejects (In with no values, Gt with a non-integer, an unknown
operator, a key that is no label key, a value that is no label value, matchFields with other than
one value) makes its term match nothing, as a parse error does in kube-scheduler; other terms
still count.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.framework.interface import Bools, Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm
from kubesched.plugins.helper.label_selector import label_key_problems, label_value_problems

_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
NODE_NAME_FIELD = "metadata.name"


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64), None on error."""
    if not _INT.fullmatch(text):
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    op: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...]
    bound: int = 0  # the integer of Gt/Lt

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        value = labels.get(self.key)
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if value is None:
            return False
        n = parse_int64(value)
        if n is None:
            return False
        return n > self.bound if op == "Gt" else n < self.bound

    def mask(self, snapshot: Snapshot, rows: Rows) -> Bools:
        op = self.op
        column = snapshot.label_codes.get(self.key)
        if column is None:
            return np.full(len(rows), op in ("NotIn", "DoesNotExist"), dtype=np.bool_)
        codes = snapshot.take(column, rows)
        if op in ("In", "NotIn"):
            wanted = [c for c in (snapshot.label_code(self.key, v) for v in self.values) if c >= 0]
            if not wanted:
                hit = np.zeros(len(rows), dtype=np.bool_)
            elif len(wanted) == 1:
                hit = codes == wanted[0]
            else:
                hit = np.isin(codes, wanted)
            return hit if op == "In" else np.logical_not(hit)
        if op == "Exists":
            return codes >= 0
        if op == "DoesNotExist":
            return codes < 0
        # Gt/Lt: decide once per distinct value; the extra last entry answers code -1 (no label).
        lut = [self.matches({self.key: v}) for v in snapshot.label_values[self.key]]
        lut.append(False)
        return np.array(lut, dtype=np.bool_).take(codes)


@dataclass(frozen=True)
class FieldRequirement:
    key: str
    op: str  # In or NotIn
    value: str

    def matches(self, node_name: str) -> bool:
        # Only metadata.name exists as a node field; any other key reads as "".
        field_value = node_name if self.key == NODE_NAME_FIELD else ""
        return (field_value == self.value) == (self.op == "In")

    def mask(self, snapshot: Snapshot, rows: Rows) -> Bools:
        if self.key != NODE_NAME_FIELD:
            return np.full(len(rows), self.matches(""), dtype=np.bool_)
        equal: Bools = np.equal(rows, snapshot.index.get(self.value, -1))
        return equal if self.op == "In" else np.logical_not(equal)


def _label_requirement(r: NodeSelectorRequirement) -> LabelRequirement | None:
    values = tuple(r.values)
    op = r.operator
    # labels.NewRequirement: the key must be a label key and every value a label value, whatever the
    # operator (the apiserver admits other values in preferred terms).
    if label_key_problems(r.key) or any(label_value_problems(v) for v in values):
        return None
    if op in ("In", "NotIn"):
        return LabelRequirement(r.key, op, values) if values else None
    if op in ("Exists", "DoesNotExist"):
        return None if values else LabelRequirement(r.key, op, values)
    if op in ("Gt", "Lt"):
        bound = parse_int64(values[0]) if len(values) == 1 else None
        return None if bound is None else LabelRequirement(r.key, op, values, bound)
    return None


def _field_requirement(r: NodeSelectorRequirement) -> FieldRequirement | None:
    if r.operator not in ("In", "NotIn") or len(r.values) != 1:
        return None
    return FieldRequirement(r.key, r.operator, r.values[0])


@dataclass(frozen=True)
class Term:
    labels: tuple[LabelRequirement, ...]
    fields: tuple[FieldRequirement, ...]
    valid: bool = True

    @classmethod
    def parse(cls, term: NodeSelectorTerm) -> Term:
        labels = [_label_requirement(r) for r in term.match_expressions]
        fields = [_field_requirement(r) for r in term.match_fields]
        valid = all(x is not None for x in labels) and all(x is not None for x in fields)
        return cls(tuple(x for x in labels if x is not None), tuple(x for x in fields if x is not None), valid)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.valid:
            return False
        # A node with no name has no fields, and then matchFields is not checked (as in Go).
        return (all(r.matches(labels) for r in self.labels)
                and (not node_name or all(r.matches(node_name) for r in self.fields)))

    def mask(self, snapshot: Snapshot, rows: Rows) -> Bools:
        if not self.valid:
            return np.zeros(len(rows), dtype=np.bool_)
        result: Bools | None = None
        requirements: list[LabelRequirement | FieldRequirement] = [*self.labels, *self.fields]
        for r in requirements:
            m = r.mask(snapshot, rows)
            result = m if result is None else np.logical_and(result, m, out=result)
        return np.ones(len(rows), dtype=np.bool_) if result is None else result


def _is_empty(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


@dataclass(frozen=True)
class Selector:
    """A NodeSelector: its (non-empty) terms are ORed; with no terms it matches nothing."""

    terms: tuple[Term, ...]

    @classmethod
    def parse(cls, selector: NodeSelector) -> Selector:
        return cls(tuple(Term.parse(t) for t in selector.node_selector_terms if not _is_empty(t)))

    def is_valid(self) -> bool:
        return all(t.valid for t in self.terms)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)

    def mask(self, snapshot: Snapshot, rows: Rows) -> Bools:
        result = np.zeros(len(rows), dtype=np.bool_)
        for t in self.terms:
            if t.valid:
                np.logical_or(result, t.mask(snapshot, rows), out=result)
        return result


@dataclass(frozen=True)
class RequiredNodeAffinity:
    """The pod's nodeSelector map AND its required node affinity."""

    node_selector: tuple[tuple[str, str], ...]
    selector: Selector | None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        return self.selector is None or self.selector.matches(labels, node_name)

    def mask(self, snapshot: Snapshot, rows: Rows) -> Bools:
        result: Bools | None = None
        for key, value in self.node_selector:
            m = LabelRequirement(key, "In", (value,)).mask(snapshot, rows)
            result = m if result is None else np.logical_and(result, m, out=result)
        if self.selector is not None:
            m = self.selector.mask(snapshot, rows)
            result = m if result is None else np.logical_and(result, m, out=result)
        return np.ones(len(rows), dtype=np.bool_) if result is None else result


@dataclass(frozen=True)
class PreferredTerms:
    """Weighted preferences: a node scores the sum of the weights of the terms it matches."""

    terms: tuple[tuple[Term, int], ...]

    @classmethod
    def parse(cls, terms: Sequence[PreferredSchedulingTerm]) -> PreferredTerms | None:
        """None when a term is invalid (kube-scheduler fails PreScore with an error then)."""
        parsed = []
        for t in terms:
            if t.weight == 0 or _is_empty(t.preference):
                continue
            term = Term.parse(t.preference)
            if not term.valid:
                return None
            parsed.append((term, t.weight))
        return cls(tuple(parsed))

    def score(self, labels: Mapping[str, str], node_name: str) -> int:
        return sum(w for t, w in self.terms if t.matches(labels, node_name))

    def score_batch(self, snapshot: Snapshot, rows: Rows) -> Scores:
        total = np.zeros(len(rows), dtype=np.int64)
        for t, w in self.terms:
            total += t.mask(snapshot, rows) * np.int64(w)
        return total


def required_node_affinity(pod: PodInfo) -> RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity (component-helpers' GetRequiredNodeAffinity)."""
    spec = pod.pod.spec
    aff = spec.affinity
    required = aff.node_affinity.required if aff is not None and aff.node_affinity is not None else None
    return RequiredNodeAffinity(tuple(spec.node_selector.items()),
                                Selector.parse(required) if required is not None else None)
