"""The CEL environment of a device selector, as kube-scheduler compiles stored expressions
(k8s.io/dynamic-resource-allocation v0.37.2 cel/compile.go on k8s.io/apiserver's base environment,
StoredExpressions: every library ever introduced, the newest declaration of `device`).

`device` is declared as its four fields, `device.driver`, `device.allowMultipleAllocations`,
`device.attributes` and `device.capacity` (the checker resolves such dotted names), because the
runtime has no object type without a protobuf schema. Functions are declared through the runtime's
environment configuration, whose overloads can share one Python callable per argument kinds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import cache
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from kubesched.plugins.dynamic_resources.cel import library, values

DRIVER, MULTI, ATTRIBUTES, CAPACITY = ("device.driver", "device.allowMultipleAllocations", "device.attributes",
                                       "device.capacity")
_WELL_KNOWN = {"duration": "google.protobuf.Duration", "timestamp": "google.protobuf.Timestamp"}
_KINDS = {"int", "uint", "double", "bool", "string", "bytes", "duration", "timestamp", "null_type"}


def _type_node(t: str) -> str:
    t = t.strip()
    if "(" in t:
        name, _, rest = t.partition("(")
        params = _split_params(rest[:-1])
        return "{{type_name: {}, params: [{}]}}".format(name, ", ".join(_type_node(p) for p in params))
    return f"{{type_name: {_WELL_KNOWN.get(t, t)}}}"


def _split_params(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for c in s:
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (c == "(") - (c == ")")
        cur += c
    return [*out, cur]


def _kind(t: str | None) -> str:
    if t is None:
        return ""
    base = t.partition("(")[0]
    if base in ("list", "map", "dyn"):
        return base
    return base if base in _KINDS else "message"


def config_yaml(overloads: list[library.Overload]) -> str:
    by_function: dict[str, list[library.Overload]] = defaultdict(list)
    for o in overloads:
        by_function[o.function].append(o)
    lines = ["functions:"]
    for name, group in by_function.items():
        lines += [f"  - name: {name}", "    overloads:"]
        for o in group:
            lines.append(f"      - id: {o.id}")
            if o.target is not None:
                lines.append(f"        target: {_type_node(o.target)}")
            if o.args:
                lines.append(f"        args: [{', '.join(_type_node(a) for a in o.args)}]")
            lines.append(f"        return: {_type_node(o.result)}")
    return "\n".join(lines) + "\n"


def implementations(overloads: list[library.Overload]) -> dict[str, Callable[..., Any]]:
    """One callable per function and argument kinds (the runtime's dispatch key)."""
    seen: set[tuple[str, bool, tuple[str, ...]]] = set()
    impls: dict[str, Callable[..., Any]] = {}
    for o in overloads:
        key = (o.function, o.target is not None, (_kind(o.target), *(_kind(a) for a in o.args)))
        if o.impl is None:
            continue
        if key in seen:
            raise ValueError(f"{o.id}: a second callable for {key}")
        seen.add(key)
        impls[o.id] = o.impl
    return impls


def _variables() -> dict[str, Any]:
    t = cel.Type
    quantity = t(values.QUANTITY_TYPE)
    return {
        DRIVER: t.STRING,
        MULTI: t.BOOL,
        ATTRIBUTES: t.Map(t.STRING, t.Map(t.STRING, t.DYN)),
        CAPACITY: t.Map(t.STRING, t.Map(t.STRING, quantity)),
    }


@cache
def environment() -> Any:
    """Built once per process: declaring the libraries is the expensive part."""
    overloads = library.ALL
    config = cel.NewEnvConfigFromYaml(config_yaml(overloads))
    return cel.NewEnv(values.POOL, config=config, variables=_variables(),
                      extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings(), ext_optional.ExtOptional()],
                      function_impls=implementations(overloads))
