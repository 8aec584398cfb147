"""Compiling a device selector once and matching devices with it, as k8s.io/dynamic-resource-allocation
v0.37.2 cel/compile.go does (CompileCELExpression, DeviceMatches), with its messages.

Where the runtime's words differ from cel-go's, the error is reworded to cel-go's ("no such key: x",
"no such overload", "division by zero"). Two behaviours of upstream need help from the checked AST:

- Looking up a domain that the device lacks gives an empty map upstream (`device.attributes["x"].y`
  fails with "no such key: y", `has(device.attributes.x)` is true) while `"x" in device.attributes`
  and iteration see only the device's domains. The runtime takes only plain maps, so the domains an
  expression looks up by a constant are added as empty maps, unless the expression also uses the
  map another way (`in`, a macro, a computed key): then a missing domain is "no such key".
- The runtime cost limit: the runtime counts no cost, so an expression whose estimated worst case
  (cost.py) exceeds resourceapi.CELSelectorExpressionMaxCost fails on every device with cel-go's
  "operation cancelled: actual cost limit exceeded", where upstream stops only an evaluation that
  actually gets that far. The apiserver refuses such an expression when it is written ("too
  complex, exceeds cost limit"), so a stored one only gets here from an older validation.

cel-go compares numbers of different types (`1 < 1.5`, CrossTypeNumericComparisons); this checker
does not, so an expression whose only type errors are such comparisons is compiled unchecked (the
runtime compares them as cel-go does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel

from kubesched.model.resource import DeviceAttribute, DeviceCapacity
from kubesched.plugins.dynamic_resources.cel import checked as ch
from kubesched.plugins.dynamic_resources.cel import cost, environment, values
from kubesched.plugins.dynamic_resources.cel import quantity as q
from kubesched.plugins.dynamic_resources.cel import semver as sv

# resourceapi.CELSelectorExpressionMaxCost
COST_LIMIT = 1_000_000
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"

_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_TAIL = re.compile(r" \[[A-Z_]+\]$")
_CROSS_NUMERIC = re.compile(r"found no matching overload for '_(?:<|<=|>|>=)_' applied to "
                            r"'\((int|uint|double), (int|uint|double)\)'")
_MISSING_KEY = re.compile(r'^Key not found in map : "?(.*?)"?$')


class CelRuntimeError(Exception):
    pass


def _status_text(e: Exception) -> str:
    return _STATUS_TAIL.sub("", _STATUS.sub("", str(e), count=1))


def runtime_message(text: str) -> str:
    """A runtime error in cel-go's words."""
    text = _STATUS.sub("", text, count=1)
    if m := _MISSING_KEY.match(text):
        return f"no such key: {m.group(1)}"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    if text == "divide by zero":
        return "division by zero"
    if m := re.match(r"^Index error: index=(-?\d+) size=(\d+)$", text):
        return f"index '{m.group(1)}' out of range in list size '{m.group(2)}'"
    return text


# --- types, as cel-go prints them -----------------------------------------------------------------

_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "google.protobuf.Any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def type_name(raw: bytes) -> str:
    fs = ch._fields(raw)
    for n, _, v in fs:
        if n == 1:
            return "dyn"
        if n == 2:
            return "null_type"
        if n == 3 and isinstance(v, int):
            return _PRIMITIVES.get(v, "dyn")
        if n == 4 and isinstance(v, int):
            return f"wrapper({_PRIMITIVES.get(v, 'dyn')})"
        if n == 5 and isinstance(v, int):
            return _WELL_KNOWN.get(v, "dyn")
        if n == 6 and isinstance(v, bytes):
            elem = ch._bytes(ch._fields(v), 1)
            return f"list({type_name(elem) if elem is not None else 'dyn'})"
        if n == 7 and isinstance(v, bytes):
            mf = ch._fields(v)
            key, val = ch._bytes(mf, 1), ch._bytes(mf, 2)
            return f"map({type_name(key or b'')}, {type_name(val or b'')})"
        if n == 9 and isinstance(v, bytes):
            return v.decode()
        if n == 10 and isinstance(v, bytes):
            return v.decode()
        if n == 11 and isinstance(v, bytes):
            return f"type({type_name(v)})" if v else "type"
        if n == 12:
            return "*error*"
        if n == 14 and isinstance(v, bytes):
            af = ch._fields(v)
            params = [type_name(p) for k, _, p in af if k == 2 and isinstance(p, bytes)]
            return f"{ch._str(af, 1)}({', '.join(params)})" if params else ch._str(af, 1)
    return "dyn"


# --- the device ------------------------------------------------------------------------------------

def parse_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def attribute_value(a: DeviceAttribute) -> object:
    """getAttributeValue: list values first (present even with list-type attributes off)."""
    if a.int_values:
        return list(a.int_values)
    if a.bool_values:
        return list(a.bool_values)
    if a.string_values:
        return list(a.string_values)
    if a.version_values:
        return [values.semver_message(_version(s)) for s in a.version_values]
    if a.int_value is not None:
        return a.int_value
    if a.bool_value is not None:
        return a.bool_value
    if a.string_value is not None:
        return a.string_value
    if a.version_value is not None:
        return values.semver_message(_version(a.version_value))
    raise CelRuntimeError("unsupported attribute value")


def _version(s: str) -> sv.Version:
    try:
        return sv.parse(s)
    except sv.SemverError as e:
        raise CelRuntimeError(f"parse semantic version: {e}") from None


# --- compiling ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Defaults:
    """Per device map: the domains to add as empty maps, or None where none may be added."""

    attributes: frozenset[str] | None
    capacity: frozenset[str] | None


def _defaults(checked: ch.CheckedExpr) -> _Defaults:
    keys: dict[str, set[str]] = {environment.ATTRIBUTES: set(), environment.CAPACITY: set()}
    mixed: set[str] = set()
    uses: dict[str, int] = {environment.ATTRIBUTES: 0, environment.CAPACITY: 0}

    def var(n: ch.Node) -> str:
        ref = checked.references.get(n.id)
        return ref[0] if ref is not None and ref[0] in keys else ""

    for n in ch.walk(checked.root):
        name = var(n)
        if name:
            uses[name] += 1
        if n.kind == "select" and n.children and (name := var(n.children[0])):
            keys[name].add(n.name)
        elif n.kind == "call" and n.name == "_[_]" and len(n.children) == 2 and (name := var(n.children[0])):
            key = n.children[1]
            if key.kind == "const" and key.const_kind == "string" and isinstance(key.const, str):
                keys[name].add(key.const)
            else:
                mixed.add(name)
    looked_up = {name: sum(1 for n in ch.walk(checked.root) if _looks_up(checked, n, name)) for name in keys}
    for name in keys:
        if uses[name] != looked_up[name]:
            mixed.add(name)

    def pick(name: str) -> frozenset[str] | None:
        return None if name in mixed else frozenset(keys[name])
    return _Defaults(pick(environment.ATTRIBUTES), pick(environment.CAPACITY))


def _looks_up(checked: ch.CheckedExpr, n: ch.Node, name: str) -> bool:
    def is_var(x: ch.Node) -> bool:
        ref = checked.references.get(x.id)
        return ref is not None and ref[0] == name
    if n.kind == "select" and n.children and is_var(n.children[0]):
        return True
    return n.kind == "call" and n.name == "_[_]" and len(n.children) == 2 and is_var(n.children[0])


@dataclass(frozen=True, slots=True)
class CompilationResult:
    expression: str
    # The error's detail (apiservercel.Error.Detail), None when compiled.
    error: str | None = None
    max_cost: int = 2**64 - 1
    output_type: str = ""
    _program: Any = field(default=None, repr=False, compare=False)
    _defaults: _Defaults = field(default=_Defaults(None, None), repr=False, compare=False)
    # Compiled without the checker, which is what resolves `device.x` to the declared variables.
    _unchecked: bool = field(default=False, repr=False, compare=False)

    def device_matches(self, driver: str, allow_multiple_allocations: bool | None,
                       attributes: Mapping[str, DeviceAttribute], capacity: Mapping[str, DeviceCapacity]) -> bool:
        """DeviceMatches; raises CelRuntimeError with upstream's message."""
        if self._program is None:
            raise CelRuntimeError(self.error or "not compiled")
        attrs: dict[str, dict[str, object]] = {}
        for name, a in attributes.items():
            try:
                value = attribute_value(a)
            except CelRuntimeError as e:
                raise CelRuntimeError(f"attribute {name}: {e}") from None
            domain, ident = parse_qualified_name(name, driver)
            attrs.setdefault(domain, {})[ident] = value
        caps: dict[str, dict[str, object]] = {}
        for name, c in capacity.items():
            domain, ident = parse_qualified_name(name, driver)
            try:
                caps.setdefault(domain, {})[ident] = values.quantity_message(q.parse(c.value))
            except q.QuantityParseError as e:
                raise CelRuntimeError(f"capacity {name}: {e}") from None
        for maps, domains in ((attrs, self._defaults.attributes), (caps, self._defaults.capacity)):
            for d in domains or ():
                maps.setdefault(d, {})
        if self.max_cost > COST_LIMIT:
            raise CelRuntimeError(COST_LIMIT_EXCEEDED)
        data: dict[str, object] = {
            environment.DRIVER: driver,
            environment.MULTI: bool(allow_multiple_allocations),
            environment.ATTRIBUTES: attrs,
            environment.CAPACITY: caps,
        }
        if self._unchecked:
            data = {"device": {k.removeprefix("device."): v for k, v in data.items()}}
        result = self._program.eval(data=data)
        if result.type() == _ERROR_TYPE:
            raise CelRuntimeError(runtime_message(str(result.value())))
        kind = result.type().name()
        if kind.lower() == "bool":
            return bool(result.value())
        name, detail = _conversion_error(kind)
        raise CelRuntimeError(f"CEL result of type {name} could not be converted to bool: {detail}")


_ERROR_TYPE = cel.Type.ERROR


def _conversion_error(kind: str) -> tuple[str, str]:
    """What cel-go's ConvertToNative(bool) says of a non-bool result."""
    k = kind.lower()
    if k.startswith("list"):
        return "list", "type conversion error from list to 'bool'"
    if k.startswith("map"):
        return "map", "type conversion error from map to 'bool'"
    table = {
        "int": ("int", "unsupported type conversion from 'int' to bool"),
        "uint": ("uint", "unsupported type conversion from 'uint' to bool"),
        "double": ("double", "type conversion error from Double to 'bool'"),
        "string": ("string", "unsupported native conversion from string to 'bool'"),
        "bytes": ("bytes", "type conversion error from Bytes to 'bool'"),
        "null_type": ("null_type", "type conversion error from 'null_type' to 'bool'"),
        "null": ("null_type", "type conversion error from 'null_type' to 'bool'"),
        "google.protobuf.duration": ("google.protobuf.Duration", "type conversion error from 'Duration' to 'bool'"),
        "duration": ("google.protobuf.Duration", "type conversion error from 'Duration' to 'bool'"),
        "google.protobuf.timestamp": ("google.protobuf.Timestamp", "type conversion error from 'Timestamp' to 'bool'"),
        "timestamp": ("google.protobuf.Timestamp", "type conversion error from 'Timestamp' to 'bool'"),
        values.QUANTITY_TYPE.lower(): (values.QUANTITY_TYPE, "type conversion error from 'Quantity' to 'bool'"),
        values.SEMVER_TYPE.lower(): (values.SEMVER_TYPE, "type conversion error from 'Semver' to 'bool'"),
    }
    return table.get(k, (kind, f"type conversion error from '{kind}' to 'bool'"))


def compile_expression(expression: str) -> CompilationResult:
    """CompileCELExpression for a stored selector; errors are in the result, never raised."""
    env = environment.environment()
    unchecked = False
    try:
        program = env.compile(expression)
    except RuntimeError as e:
        issues = _status_text(e)
        errors = [line for line in issues.split("\n") if line.startswith("ERROR:")]
        if not errors or not all(_CROSS_NUMERIC.search(line) for line in errors):
            return CompilationResult(expression, error="compilation failed: " + issues)
        try:
            program = env.compile(expression, disable_check=True)
        except RuntimeError as e2:
            return CompilationResult(expression, error="compilation failed: " + _status_text(e2))
        unchecked = True
    tree = ch.decode(program.serialize())
    output = "dyn" if unchecked else type_name(tree.types.get(tree.root.id, b"\x08\x00"))
    if output not in ("bool", "dyn"):
        return CompilationResult(expression, error=f"must evaluate to bool or the unknown type, not {output}")
    return CompilationResult(expression, None, cost.estimate(tree), output, program, _defaults(tree), unchecked)
