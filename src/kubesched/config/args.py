"""Plugin args from `pluginConfig`: strict reading, kube-scheduler's defaults, and its validation rules
(`apis/config/v1/defaults.go`, `apis/config/validation/validation_pluginargs.go`).

Each parser takes the user's args (apiVersion/kind already stripped; {} when none were given),
appends FieldErrors, and returns the defaulted args in the file's own camelCase shape, which is what
plugin factories receive as `ProfileConfig.plugin_args[name]`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
    get_str_items,
    get_str_list,
    index,
    label_value_problem,
    qualified_name_problem,
)
from kubesched.plugins import pool_config

ArgsParser = Callable[[Mapping[str, Any], str, Errors], dict[str, Any]]

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
MAX_CUSTOM_PRIORITY_SCORE = 10  # the score scale of a RequestedToCapacityRatio shape point


def default_resources() -> list[dict[str, Any]]:
    return [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def _resources(raw: Mapping[str, Any], path: str, errs: Errors) -> list[dict[str, Any]]:
    """A `resources` list with kube-scheduler's defaulting: none → cpu and memory; weight 0 → 1."""
    out: list[dict[str, Any]] = []
    for i, item in enumerate(get_list(raw, "resources", path, errs)):
        p = index(child(path, "resources"), i)
        obj = as_mapping(item, p, errs)
        if obj is None:
            continue
        check_fields(obj, p, ("name", "weight"), errs)
        name = get_str(obj, "name", p, errs) or ""
        out.append({"name": name, "weight": get_int(obj, "weight", p, errs) or 1})
    return out or default_resources()


def _shape(raw: Mapping[str, Any], path: str, errs: Errors) -> list[dict[str, int]]:
    shape_path = child(path, "shape")
    points: list[dict[str, int]] = []
    for i, item in enumerate(get_list(raw, "shape", path, errs)):
        p = index(shape_path, i)
        obj = as_mapping(item, p, errs)
        if obj is None:
            continue
        check_fields(obj, p, ("utilization", "score"), errs)
        points.append({"utilization": get_int(obj, "utilization", p, errs) or 0,
                       "score": get_int(obj, "score", p, errs) or 0})
    if not points:
        errs.append(e.required(shape_path, "at least one point must be specified"))
        return points
    for i in range(1, len(points)):
        if points[i - 1]["utilization"] >= points[i]["utilization"]:
            errs.append(e.invalid(child(index(shape_path, i), "utilization"), points[i]["utilization"],
                                  "values must be sorted in increasing order"))
            break
    for i, point in enumerate(points):
        if not 0 <= point["utilization"] <= 100:
            errs.append(e.invalid(child(index(shape_path, i), "utilization"), point["utilization"],
                                  "not in valid range [0, 100]"))
        if not 0 <= point["score"] <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(e.invalid(child(index(shape_path, i), "score"), point["score"],
                                  f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return points


def parse_node_resources_fit(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"), errs)
    ignored = get_str_list(raw, "ignoredResources", path, errs)
    for i, name in enumerate(ignored):
        problem = qualified_name_problem(name)
        if problem:
            errs.append(e.invalid(index(child(path, "ignoredResources"), i), name, problem))
    groups = get_str_list(raw, "ignoredResourceGroups", path, errs)
    for i, group in enumerate(groups):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            errs.append(e.invalid(p, group, "resource group name can't contain '/'"))
        elif problem := qualified_name_problem(group):
            errs.append(e.invalid(p, group, problem))

    strategy_path = child(path, "scoringStrategy")
    strategy = get_mapping(raw, "scoringStrategy", path, errs)
    if strategy is None:
        # only an absent strategy is defaulted whole; a given one keeps its (maybe missing) type
        return {"ignoredResources": ignored, "ignoredResourceGroups": groups,
                "scoringStrategy": {"type": "LeastAllocated", "resources": default_resources()}}
    check_fields(strategy, strategy_path, ("type", "resources", "requestedToCapacityRatio"), errs)
    kind = get_str(strategy, "type", strategy_path, errs) or ""
    if kind not in SCORING_STRATEGIES:
        errs.append(e.unsupported(child(strategy_path, "type"), kind, SCORING_STRATEGIES))
    resources = _resources(strategy, strategy_path, errs)
    for i, res in enumerate(resources):
        if not 0 < res["weight"] <= 100:
            errs.append(e.invalid(child(index(child(strategy_path, "resources"), i), "weight"), res["weight"],
                                  f"resource weight of {res['name']} not in valid range (0, 100]"))
    out_strategy: dict[str, Any] = {"type": kind, "resources": resources}
    ratio_path = child(strategy_path, "requestedToCapacityRatio")
    ratio = get_mapping(strategy, "requestedToCapacityRatio", strategy_path, errs)
    if kind == "RequestedToCapacityRatio":
        if ratio is None:
            errs.append(e.required(ratio_path, "must be specified when type is RequestedToCapacityRatio"))
        else:
            check_fields(ratio, ratio_path, ("shape",), errs)
            out_strategy["requestedToCapacityRatio"] = {"shape": _shape(ratio, ratio_path, errs)}
    elif ratio is not None:
        errs.append(e.forbidden(ratio_path, "must be nil when type is not RequestedToCapacityRatio"))
    return {"ignoredResources": ignored, "ignoredResourceGroups": groups, "scoringStrategy": out_strategy}


def parse_balanced_allocation(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("resources",), errs)
    resources = _resources(raw, path, errs)
    seen: set[str] = set()
    for i, res in enumerate(resources):
        p = index(child(path, "resources"), i)
        if res["name"] in seen:
            errs.append(e.duplicate(child(p, "name"), res["name"]))
        seen.add(res["name"])
        if res["weight"] != 1:
            errs.append(e.invalid(child(p, "weight"), res["weight"], "must be 1"))
    return {"resources": resources}


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


UNSUPPORTED_POD_FIELDS = ("podAffinity", "podAntiAffinity", "topologySpreadConstraints",
                          "persistentVolumeClaim", "ephemeral")


def parse_unsupported_pod_fields(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    # The names are repeated here, not imported from the plugin, so config/ does not depend on plugins/.
    check_fields(raw, path, ("ignoredFields",), errs)
    ignored: list[str] = []
    for i, name in get_str_items(raw, "ignoredFields", path, errs):
        p = index(child(path, "ignoredFields"), i)
        if name not in UNSUPPORTED_POD_FIELDS:
            errs.append(e.unsupported(p, name, UNSUPPORTED_POD_FIELDS))
        elif name in ignored:
            errs.append(e.duplicate(p, name))
        else:
            ignored.append(name)
    return {"ignoredFields": ignored}


# Plugin name -> its args parser. The pool plugin adds "CronJobPool" here (or passes args_parsers to
# load). A known plugin without a parser gets its args passed through unchanged, as kube-scheduler
# does for plugins without a registered args type.
PLUGIN_ARGS: dict[str, ArgsParser] = {
    "NodeResourcesFit": parse_node_resources_fit,
    "NodeResourcesBalancedAllocation": parse_balanced_allocation,
    "NodeAffinity": parse_node_affinity,
    "CronJobPool": pool_config.parse_args,  # the pool plugin owns its schema
    "UnsupportedPodFields": parse_unsupported_pod_fields,
}

