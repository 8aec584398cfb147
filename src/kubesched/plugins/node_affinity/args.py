"""NodeAffinityArgs from `pluginConfig`: strict reading and kube-scheduler's validation of
addedAffinity (`apis/config/validation/validation_pluginargs.go`, ValidateNodeAffinityArgs).
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
    label_value_problem,
    qualified_name_problem,
)

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")
_REQUIREMENT_FIELDS = ("key", "operator", "values")


def _requirement(raw: Any, path: str, by_field: bool, errs: Errors) -> dict[str, Any] | None:
    obj = as_mapping(raw, path, errs)
    if obj is None:
        return None
    check_fields(obj, path, _REQUIREMENT_FIELDS, errs)
    key = get_str(obj, "key", path, errs) or ""
    op = get_str(obj, "operator", path, errs) or ""
    values = get_str_list(obj, "values", path, errs)
    values_path = child(path, "values")
    if by_field:
        if op not in _FIELD_OPERATORS:
            errs.append(e.unsupported(child(path, "operator"), op, _FIELD_OPERATORS))
        elif len(values) != 1:
            errs.append(e.invalid(values_path, values, "must have one element"))
        return {"key": key, "operator": op, "values": values}
    if op not in _SELECTOR_OPERATORS:
        errs.append(e.unsupported(child(path, "operator"), op, _SELECTOR_OPERATORS))
        return None
    if problem := qualified_name_problem(key):
        errs.append(e.invalid(child(path, "key"), key, problem))
    if op in ("In", "NotIn") and not values:
        errs.append(e.invalid(values_path, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(e.invalid(values_path, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(e.invalid(values_path, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            try:
                int(v)
            except ValueError:
                errs.append(e.invalid(index(values_path, i), v,
                                      "for 'Gt', 'Lt' operators, the value must be an integer"))
    if op in ("In", "NotIn"):
        for i, v in enumerate(values):
            if problem := label_value_problem(v):
                errs.append(e.invalid(index(values_path, i), v, problem))
    return {"key": key, "operator": op, "values": values}


def _term(raw: Any, path: str, errs: Errors) -> dict[str, Any]:
    obj = as_mapping(raw, path, errs) or {}
    check_fields(obj, path, ("matchExpressions", "matchFields"), errs)
    out: dict[str, Any] = {}
    for key, by_field in (("matchExpressions", False), ("matchFields", True)):
        reqs = [_requirement(item, index(child(path, key), i), by_field, errs)
                for i, item in enumerate(get_list(obj, key, path, errs))]
        out[key] = [r for r in reqs if r is not None]
    return out


def parse_node_affinity(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("addedAffinity",), errs)
    added_path = child(path, "addedAffinity")
    added = get_mapping(raw, "addedAffinity", path, errs)
    if added is None:
        return {"addedAffinity": None}
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    check_fields(added, added_path, (required_key, preferred_key), errs)
    out: dict[str, Any] = {}
    required = get_mapping(added, required_key, added_path, errs)
    if required is not None:
        req_path = child(added_path, required_key)
        check_fields(required, req_path, ("nodeSelectorTerms",), errs)
        terms = get_list(required, "nodeSelectorTerms", req_path, errs)
        terms_path = child(req_path, "nodeSelectorTerms")
        out[required_key] = {"nodeSelectorTerms": [_term(t, index(terms_path, i), errs)
                                                   for i, t in enumerate(terms)]}
    preferred_path = child(added_path, preferred_key)
    preferred: list[dict[str, Any]] = []
    for i, item in enumerate(get_list(added, preferred_key, added_path, errs)):
        p = index(preferred_path, i)
        obj = as_mapping(item, p, errs)
        if obj is None:
            continue
        check_fields(obj, p, ("weight", "preference"), errs)
        # kube-scheduler checks no range here and skips a term of weight 0
        weight = get_int(obj, "weight", p, errs) or 0
        preferred.append({"weight": weight, "preference": _term(obj.get("preference"), p, errs)})
    if preferred:
        out[preferred_key] = preferred
    return {"addedAffinity": out}
