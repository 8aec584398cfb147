"""Label selectors over pod labels, as apimachinery's labels.Selector behaves for PodTopologySpread.

metav1.LabelSelectorAsSelector: a nil selector selects nothing, an empty one ({}) everything; a
requirement the apiserver would reject is an error (the plugin then fails the cycle with it).
`empty()` is labels.Selector.Empty(): true for the select-everything selector only, which
countPodsMatchSelector reads as "count no pod" while Matches still says yes to the incoming pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.framework.fields import label_value_problem, qualified_name_problem
from kubesched.model.objects import LabelSelector

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A selector kube-scheduler cannot parse (metav1.LabelSelectorAsSelector's error)."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # In (also matchLabels' =), NotIn, Exists, DoesNotExist
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.op
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        return value is None


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    # Selectors key the per-node memos, hashed several times a cycle: hashed once.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.requirements, self.nothing)))

    def __hash__(self) -> int:
        return self._hash

    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:  # noqa: SIM110  # a loop, not all(): no generator to make per call
            if not r.matches(labels):
                return False
        return True

    def with_labels(self, pairs: Mapping[str, str]) -> Selector:
        """mergeLabelSetWithSelector: the pairs ANDed in; the select-nothing selector stays as it is."""
        if self.nothing or not pairs:
            return self
        extra = tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(pairs.items()))
        return Selector(extra + self.requirements)

    def and_(self, other: Selector) -> Selector:
        if self.nothing or other.nothing:
            return NOTHING
        return Selector(self.requirements + other.requirements)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def _check_key(key: str) -> None:
    problem = qualified_name_problem(key)
    if problem is not None:
        raise SelectorError(f"key: Invalid value: {key!r}: {problem}")


def _check_values(values: Iterable[str]) -> None:
    for v in values:
        problem = label_value_problem(v)
        if problem is not None:
            raise SelectorError(f"values: Invalid value: {v!r}: {problem}")


def parse(selector: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector; raises SelectorError for an invalid requirement."""
    if selector is None:
        return NOTHING
    if not selector.match_labels and not selector.match_expressions:
        return EVERYTHING
    reqs: list[Requirement] = []
    for k, v in selector.match_labels.items():
        _check_key(k)
        _check_values((v,))
        reqs.append(Requirement(k, "In", frozenset((v,))))
    for expr in selector.match_expressions:
        op = expr.operator
        if op not in OPERATORS:
            raise SelectorError(f"{op!r} is not a valid label selector operator")
        _check_key(expr.key)
        if op in ("In", "NotIn"):
            if not expr.values:
                raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
            _check_values(expr.values)
        elif expr.values:
            raise SelectorError("values set must be empty for exists and does not exist")
        reqs.append(Requirement(expr.key, op, frozenset(expr.values)))
    reqs.sort(key=lambda r: r.key)
    return Selector(tuple(reqs))


def parse_lenient(selector: LabelSelector) -> Selector | None:
    """A selector from an owner object, None when it does not parse (DefaultSelector skips it)."""
    try:
        return parse(selector)
    except SelectorError:
        return None
