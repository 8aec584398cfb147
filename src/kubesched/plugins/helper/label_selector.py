"""metav1.LabelSelector as apimachinery's labels.Selector: one parse, one Requirement, one Selector.

`parse` is metav1.LabelSelectorAsSelector: a nil selector selects nothing, an empty one ({})
everything; matchLabels become Equals requirements (they match as In with one value), and each
requirement is checked as labels.NewRequirement checks it, with its messages: the key as
IsQualifiedName, each value as IsValidLabelValue, the value count for the operator, errors reported
as field.ErrorList.ToAggregate does (one as itself, several as "[a, b]"). An operator metav1 does
not know is `"X" is not a valid label selector operator`. The requirements are sorted by key, as
Selector.Add sorts them (stably: matchLabels first, as they are added first).

Go ranges over matchLabels in random order and stops at the first invalid pair; here the pairs are
read sorted by key, so the first invalid key's error is the one reported.

Selectors key per-node memos and are matched per pod per cycle: frozen, slotted, hashed once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.model.objects import LabelSelector, LabelSelectorRequirement

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
EQUALS = "Equals"  # what a matchLabels pair becomes (selection.Equals)
SET_OPERATORS = (EQUALS, "In")  # the requirements a label must have one of the values of


class SelectorError(ValueError):
    """A selector apimachinery rejects: the text of metav1.LabelSelectorAsSelector's error."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # Equals (a matchLabels pair), In, NotIn, Exists, DoesNotExist
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.op
        if op == "Equals" or op == "In":  # constants, not EQUALS: no global read per call
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        return value is None

    def query(self) -> str:
        """labels.Requirement.String: `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`."""
        op = self.op
        if op == "Exists":
            return self.key
        if op == "DoesNotExist":
            return "!" + self.key
        values = ",".join(sorted(self.values))
        if op == EQUALS:
            return f"{self.key}={values}"
        return f"{self.key} {op.lower()} ({values})"


@dataclass(frozen=True, slots=True)
class Selector:
    """A parsed LabelSelector; `nothing` for a nil one. No requirements and not nothing: everything."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    # Selectors key the per-node memos, hashed several times a cycle: hashed once.
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.requirements, self.nothing)))

    def __hash__(self) -> int:
        return self._hash

    def empty(self) -> bool:
        """labels.Selector.Empty: true for the select-everything selector only (Nothing is not empty)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for r in self.requirements:  # noqa: SIM110  # a loop, not all(): no generator to make per call
            if not r.matches(labels):
                return False
        return True

    def with_labels(self, pairs: Mapping[str, str]) -> Selector:
        """PodTopologySpread's mergeLabelSetWithSelector: the pairs ANDed in as Equals requirements
        (labels.SelectorFromSet, unchecked); the select-nothing selector stays as it is."""
        if self.nothing or not pairs:
            return self
        extra = [Requirement(k, EQUALS, frozenset((v,))) for k, v in sorted(pairs.items())]
        return Selector(_sorted([*extra, *self.requirements]))

    def and_(self, other: Selector) -> Selector:
        """Both selectors' requirements (Selector.Add); nothing when either selects nothing."""
        if self.nothing or other.nothing:
            return NOTHING
        return Selector(_sorted([*self.requirements, *other.requirements]))

    def set_pairs(self) -> tuple[tuple[str, frozenset[str]], ...]:
        """(key, values) of the requirements a matching label must take one of the values of."""
        return tuple((r.key, r.values) for r in self.requirements if r.op in SET_OPERATORS)

    def query(self) -> str:
        """labels.Selector.String, the apiserver's `labelSelector` syntax ("" for everything)."""
        return ",".join(r.query() for r in self.requirements)


NOTHING = Selector(nothing=True)
EVERYTHING = Selector()


def _sorted(reqs: list[Requirement]) -> tuple[Requirement, ...]:
    reqs.sort(key=_by_key)
    return tuple(reqs)


def _by_key(r: Requirement) -> str:
    return r.key


# --- validation (apimachinery pkg/api/validate/content, pkg/util/validation/field) -----------------

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """content.RegexError."""
    return msg + " (e.g. " + " or ".join(f"'{x}', " for x in examples) + f"regex used for validation is '{fmt}')"


_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_KEY_REGEX_ERROR = _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
_LABEL_VALUE_REGEX_ERROR = _regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character", _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
_SUBDOMAIN_REGEX_ERROR = _regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character", _DNS1123_SUBDOMAIN_FMT, "example.com")

_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def label_key_problems(key: str) -> list[str]:
    """content.IsLabelKey (IsQualifiedName): why `key` is not a label key; [] when it is one."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > 253:
                errs.append("prefix part " + _max_len_error(253))
            if not _SUBDOMAIN_RE.fullmatch(prefix):
                errs.append("prefix part " + _SUBDOMAIN_REGEX_ERROR)
    else:
        return ["a valid label key " + _LABEL_KEY_REGEX_ERROR
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + _LABEL_KEY_REGEX_ERROR)
    return errs


def label_value_problems(value: str) -> list[str]:
    """content.IsLabelValue (IsValidLabelValue): why `value` is not a label value; [] when it is one."""
    errs: list[str] = []
    if len(value.encode()) > 63:
        errs.append(_max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_LABEL_VALUE_REGEX_ERROR)
    return errs


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """Go's %q of a string (strconv.Quote): what field.Invalid shows for a string value."""
    out = ['"']
    for ch in text:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_json_strings(values: Sequence[str]) -> str:
    """encoding/json of a []string (what field.Invalid shows for one): `null` when it is empty, as
    LabelSelectorAsSelector passes `append([]string(nil), values...)`."""
    if not values:
        return "null"
    text = json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def aggregate(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error() over field.ErrorList.ToAggregate: duplicates dropped, one
    error as itself, several as `[a, b]`."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def requirement_errors(key: str, op: str, values: Sequence[str]) -> list[str]:
    """labels.NewRequirement's field errors, in its order (`op` one of OPERATORS or EQUALS)."""
    errors: list[str] = []
    problems = label_key_problems(key)
    if problems:
        errors.append(f"key: Invalid value: {go_quote(key)}: {'; '.join(problems)}")
    if op in ("In", "NotIn") and not values:
        errors.append(f"values: Invalid value: {go_json_strings(values)}: "
                      "for 'in', 'notin' operators, values set can't be empty")
    elif op == EQUALS and len(values) != 1:
        errors.append(f"values: Invalid value: {go_json_strings(values)}: "
                      "exact-match compatibility requires one single value")
    elif op in ("Exists", "DoesNotExist") and values:
        errors.append(f"values: Invalid value: {go_json_strings(values)}: "
                      "values set must be empty for exists and does not exist")
    for i, v in enumerate(values):
        problems = label_value_problems(v)
        if problems:
            errors.append(f"values[{i}][{key}]: Invalid value: {go_quote(v)}: {'; '.join(problems)}")
    return errors


def new_requirement(key: str, op: str, values: Sequence[str]) -> Requirement:
    """labels.NewRequirement; raises SelectorError with its aggregated message."""
    errors = requirement_errors(key, op, values)
    if errors:
        raise SelectorError(aggregate(errors))
    return Requirement(key, op, frozenset(values))


# --- parsing ----------------------------------------------------------------------------------------

def parse(selector: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector. Raises SelectorError for a selector apimachinery rejects."""
    if selector is None:
        return NOTHING
    match_labels = selector.match_labels
    exprs = selector.match_expressions
    if not match_labels and not exprs:
        return EVERYTHING
    reqs: list[Requirement] = [new_requirement(k, EQUALS, (v,)) for k, v in sorted(match_labels.items())]
    for expr in exprs:
        op = expr.operator
        if op not in OPERATORS:
            raise SelectorError(f"{go_quote(op)} is not a valid label selector operator")
        reqs.append(new_requirement(expr.key, op, expr.values))
    return Selector(_sorted(reqs))


def parse_lenient(selector: LabelSelector | None) -> Selector | None:
    """A selector from an owner object, None when it does not parse (DefaultSelector skips it)."""
    try:
        return parse(selector)
    except SelectorError:
        return None


def parse_dict(raw: Mapping[str, Any]) -> Selector:
    """`parse` of a LabelSelector written as a mapping (matchLabels, matchExpressions of key,
    operator, values), such as a plugin's args."""
    exprs = raw.get("matchExpressions") or ()
    return parse(LabelSelector(
        match_labels=dict(raw.get("matchLabels") or {}),
        match_expressions=[LabelSelectorRequirement(key=x["key"], operator=x["operator"],
                                                    values=list(x.get("values") or ())) for x in exprs]))
