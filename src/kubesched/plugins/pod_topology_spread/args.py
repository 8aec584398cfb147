"""PodTopologySpread's args: strict reading, kube-scheduler's defaulting (defaultingType System) and
its validation (validation_pluginargs.go ValidatePodTopologySpreadArgs).

    defaultingType: List            # System (the default) or List
    defaultConstraints:             # only with List; no labelSelector (deduced per pod)
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}

`parse_args` has the config loader's ArgsParser signature and returns the defaulted args in the
file's camelCase shape, so parsing its own output gives the same result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import (
    Errors,
    as_mapping,
    check_fields,
    child,
    get_int,
    get_list,
    get_mapping,
    get_str,
    get_str_list,
    index,
    qualified_name_problem,
)

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
ARGS_FIELDS = ("defaultConstraints", "defaultingType")
CONSTRAINT_FIELDS = ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                     "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


def _constraint(raw: Any, path: str, errs: Errors) -> dict[str, Any] | None:
    obj = as_mapping(raw, path, errs)
    if obj is None:
        return None
    check_fields(obj, path, CONSTRAINT_FIELDS, errs)
    out: dict[str, Any] = {}
    max_skew = get_int(obj, "maxSkew", path, errs)
    out["maxSkew"] = max_skew or 0
    out["topologyKey"] = get_str(obj, "topologyKey", path, errs) or ""
    out["whenUnsatisfiable"] = get_str(obj, "whenUnsatisfiable", path, errs) or ""
    if obj.get("labelSelector") is not None:
        get_mapping(obj, "labelSelector", path, errs)
        out["labelSelector"] = obj["labelSelector"]
    min_domains = get_int(obj, "minDomains", path, errs)
    if min_domains is not None:
        out["minDomains"] = min_domains
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = get_str(obj, key, path, errs)
        if value is not None:
            out[key] = value
    keys = get_str_list(obj, "matchLabelKeys", path, errs)
    if keys:
        out["matchLabelKeys"] = keys
    return out


def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    """PodTopologySpread's ArgsParser: the defaulted args; every bad field appended to errs."""
    check_fields(raw, path, ARGS_FIELDS, errs)
    constraints_path = child(path, "defaultConstraints")
    constraints: list[dict[str, Any]] = []
    for i, item in enumerate(get_list(raw, "defaultConstraints", path, errs)):
        c = _constraint(item, index(constraints_path, i), errs)
        if c is not None:
            constraints.append(c)
    defaulting = get_str(raw, "defaultingType", path, errs) or SYSTEM_DEFAULTING

    type_path = child(path, "defaultingType")
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(e.unsupported(type_path, defaulting, (SYSTEM_DEFAULTING, LIST_DEFAULTING)))
    elif defaulting == SYSTEM_DEFAULTING and constraints:
        errs.append(e.invalid(type_path, defaulting, "when .defaultConstraints are not empty"))
    for i, c in enumerate(constraints):
        p = index(constraints_path, i)
        if c["maxSkew"] <= 0:
            errs.append(e.invalid(child(p, "maxSkew"), c["maxSkew"], "not in valid range (0, inf)"))
        key = c["topologyKey"]
        if not key:
            errs.append(e.required(child(p, "topologyKey"), "can not be empty"))
        else:
            problem = qualified_name_problem(key)
            if problem is not None:
                errs.append(e.invalid(child(p, "topologyKey"), key, problem))
        when = c["whenUnsatisfiable"]
        if not when:
            errs.append(e.required(child(p, "whenUnsatisfiable"), "can not be empty"))
        elif when not in WHEN_UNSATISFIABLE:
            errs.append(e.unsupported(child(p, "whenUnsatisfiable"), when, WHEN_UNSATISFIABLE))
        if "labelSelector" in c:
            errs.append(e.forbidden(child(p, "labelSelector"),
                                    "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if other["topologyKey"] == key and other["whenUnsatisfiable"] == when:
                errs.append(e.duplicate(p, f"{{{key}, {when}}}"))
                break
    return {"defaultConstraints": constraints, "defaultingType": defaulting}
