"""The Kubernetes CEL libraries a device selector can call (k8s.io/apiserver v0.37.2, pkg/cel/library):
Quantity, Semver v1, Lists v1 (isSorted, sum, min, max, includes; not indexOf and lastIndexOf on lists) and Regex
(find, findAll).

Each function is declared to the type checker with upstream's overloads. The runtime binds one
Python callable per function and argument kinds, and every message type is one kind, so overloads
that differ only in a message type (compareTo on a quantity and on a semver) share one callable that
looks at its receiver. An error is raised as an exception whose text is upstream's.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.plugins.dynamic_resources.cel import quantity as q
from kubesched.plugins.dynamic_resources.cel import semver as sv
from kubesched.plugins.dynamic_resources.cel import values as v

Q, S = v.QUANTITY_TYPE, v.SEMVER_TYPE


class CelFunctionError(Exception):
    """An error value of a library function; its text is upstream's."""


def _no_such_overload() -> CelFunctionError:
    return CelFunctionError("no such overload")


@dataclass(frozen=True, slots=True)
class Overload:
    function: str
    id: str
    target: str | None  # the receiver's type for a member overload
    args: tuple[str, ...]
    result: str
    impl: Callable[..., Any] | None = None


# --- quantity ------------------------------------------------------------------------------------

def _quantity(s: str) -> Any:
    try:
        return v.quantity_message(q.parse(s))
    except q.QuantityParseError as e:
        raise CelFunctionError(str(e)) from None


def _is_quantity(s: str) -> bool:
    try:
        q.parse(s)
    except q.QuantityParseError:
        return False
    return True


def _ordered(a: Any, b: Any) -> int:
    if v.is_quantity(a) and v.is_quantity(b):
        return v.quantity_of(a).cmp(v.quantity_of(b))
    if v.is_semver(a) and v.is_semver(b):
        return v.semver_of(a).compare(v.semver_of(b))
    raise _no_such_overload()


def _q(a: Any) -> q.Quantity:
    if not v.is_quantity(a):
        raise _no_such_overload()
    return v.quantity_of(a)


def _add(a: Any, b: Any) -> Any:
    other = q.from_int(b) if isinstance(b, int) else _q(b)
    return v.quantity_message(_q(a).add(other))


def _sub(a: Any, b: Any) -> Any:
    other = q.from_int(b) if isinstance(b, int) else _q(b)
    return v.quantity_message(_q(a).sub(other))


def _as_integer(a: Any) -> int:
    i = _q(a).as_int64()
    if i is None:
        raise CelFunctionError("cannot convert value to integer")
    return i


QUANTITY = [
    Overload("quantity", "string_to_quantity", None, ("string",), Q, _quantity),
    Overload("isQuantity", "is_quantity_string", None, ("string",), "bool", _is_quantity),
    Overload("sign", "quantity_sign", None, (Q,), "int", lambda a: _q(a).sign()),
    Overload("isGreaterThan", "quantity_is_greater_than", Q, (Q,), "bool", lambda a, b: _ordered(a, b) == 1),
    Overload("isLessThan", "quantity_is_less_than", Q, (Q,), "bool", lambda a, b: _ordered(a, b) == -1),
    Overload("compareTo", "quantity_compare_to", Q, (Q,), "int", _ordered),
    Overload("asApproximateFloat", "quantity_get_float", Q, (), "double", lambda a: _q(a).as_approximate_float()),
    Overload("asInteger", "quantity_get_int", Q, (), "int", _as_integer),
    Overload("isInteger", "quantity_is_integer", Q, (), "bool", lambda a: _q(a).as_int64() is not None),
    Overload("add", "quantity_add", Q, (Q,), Q, _add),
    Overload("add", "quantity_add_int", Q, ("int",), Q, _add),
    Overload("sub", "quantity_sub", Q, (Q,), Q, _sub),
    Overload("sub", "quantity_sub_int", Q, ("int",), Q, _sub),
]


# --- semver --------------------------------------------------------------------------------------

def _semver(s: str, normalize: bool = False) -> Any:
    try:
        return v.semver_message(sv.normalize_and_parse(s) if normalize else sv.parse(s))
    except sv.SemverError as e:
        raise CelFunctionError(str(e)) from None


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        sv.normalize_and_parse(s) if normalize else sv.parse(s)
    except sv.SemverError:
        return False
    return True


def _s(a: Any) -> sv.Version:
    if not v.is_semver(a):
        raise _no_such_overload()
    return v.semver_of(a)


SEMVER = [
    Overload("semver", "string_to_semver", None, ("string",), S, _semver),
    Overload("semver", "string_bool_to_semver", None, ("string", "bool"), S, _semver),
    Overload("isSemver", "is_semver_string", None, ("string",), "bool", _is_semver),
    Overload("isSemver", "is_semver_string_bool", None, ("string", "bool"), "bool", _is_semver),
    # isGreaterThan, isLessThan and compareTo share the quantity overloads' callables.
    Overload("isGreaterThan", "semver_is_greater_than", S, (S,), "bool"),
    Overload("isLessThan", "semver_is_less_than", S, (S,), "bool"),
    Overload("compareTo", "semver_compare_to", S, (S,), "int"),
    Overload("major", "semver_major", S, (), "int", lambda a: _s(a).major),
    Overload("minor", "semver_minor", S, (), "int", lambda a: _s(a).minor),
    Overload("patch", "semver_patch", S, (), "int", lambda a: _s(a).patch),
]


# --- lists ---------------------------------------------------------------------------------------

_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_SUMMABLE = ("int", "uint", "double", "duration")


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(not _greater(a, b) for a, b in itertools.pairwise(items))


def _greater(a: Any, b: Any) -> bool:
    try:
        return bool(a > b)
    except TypeError:
        raise _no_such_overload() from None


def _sum(items: Sequence[Any]) -> Any:
    if not items:
        return 0
    acc = items[0]
    for x in items[1:]:
        if isinstance(acc, bool) or isinstance(x, bool):
            raise _no_such_overload()
        acc = acc + x
    return acc


def _pick(name: str, prefer_later: Callable[[Any, Any], bool]) -> Callable[[Sequence[Any]], Any]:
    def pick(items: Sequence[Any]) -> Any:
        if not items:
            raise CelFunctionError(f"{name} called on empty list")
        result = items[0]
        for x in items[1:]:
            if prefer_later(result, x):
                result = x
        return result
    return pick


def _equal(a: Any, b: Any) -> bool:
    # CEL's heterogeneous equality: a bool is not a number, numbers compare by value.
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _includes(target: Any, arg: Any) -> bool:
    if isinstance(target, list):
        return any(_equal(x, arg) for x in target)
    return _equal(target, arg)


def _first_of_each(overloads: list[Overload], impl: Callable[..., Any]) -> list[Overload]:
    return [Overload(o.function, o.id, o.target, o.args, o.result, impl if i == 0 else None)
            for i, o in enumerate(overloads)]


_SCALARS = ("int", "uint", "double", "bool", "string", "bytes", "duration", "timestamp", "null_type")


def _includes_overloads() -> list[Overload]:
    """Upstream's includes(dyn, dyn): this runtime binds no callable to a dyn parameter, so one
    overload per receiver and argument kind, the two message types sharing one callable."""
    out: list[Overload] = []
    for target in (*_SCALARS, "list(dyn)", Q, S):
        for arg in (*_SCALARS, "list(dyn)", Q, S):
            with_impl = target != S and arg != S
            out.append(Overload("includes", f"includes_{_id(target)}_{_id(arg)}", target, (arg,), "bool",
                                _includes if with_impl else None))
    return out


def _id(t: str) -> str:
    return t.replace(".", "_").replace("(", "_").replace(")", "").lower()


LISTS = [
    *_first_of_each([Overload("isSorted", f"list_{t}_is_sorted_bool", f"list({t})", (), "bool")
                     for t in _COMPARABLE], _is_sorted),
    # The one callable converts its result by its overload's declared type, so these return dyn where
    # upstream returns the element type: the result is right, only its static type is looser.
    *_first_of_each([Overload("sum", f"list_{t}_sum_{t}", f"list({t})", (), "dyn") for t in _SUMMABLE], _sum),
    *_first_of_each([Overload("max", f"list_{t}_max_{t}", f"list({t})", (), "dyn") for t in _COMPARABLE],
                    _pick("max", lambda r, x: _greater(x, r))),
    *_first_of_each([Overload("min", f"list_{t}_min_{t}", f"list({t})", (), "dyn") for t in _COMPARABLE],
                    _pick("min", lambda r, x: _greater(r, x))),
    # indexOf and lastIndexOf on lists are not declared: the runtime's strings extension owns those
    # names, and a function cannot be declared twice in this runtime.
    *_includes_overloads(),
]


# --- regex and strings ---------------------------------------------------------------------------

def _compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return _regex_cache(pattern)
    except re.error as e:
        raise CelFunctionError(f"Illegal regex: {e}") from None


_regexes: dict[str, re.Pattern[str]] = {}


def _regex_cache(pattern: str) -> re.Pattern[str]:
    found = _regexes.get(pattern)
    if found is None:
        if len(_regexes) > 256:
            _regexes.clear()
        found = _regexes[pattern] = re.compile(pattern)
    return found


def _find(s: str, pattern: str) -> str:
    m = _compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    out = [m.group(0) for m in _compile_regex(pattern).finditer(s)]
    return out if n < 0 else out[:n]


REGEX = [
    Overload("find", "string_find_string", "string", ("string",), "string", _find),
    Overload("findAll", "string_find_all_string", "string", ("string",), "list(string)", _find_all),
    Overload("findAll", "string_find_all_string_int", "string", ("string", "int"), "list(string)", _find_all),
]

ALL = [*QUANTITY, *SEMVER, *LISTS, *REGEX]
