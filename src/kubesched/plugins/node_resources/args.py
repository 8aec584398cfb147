"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs from `pluginConfig`: strict reading,
kube-scheduler's defaults and its validation rules (`apis/config/v1/defaults.go`,
`apis/config/validation/validation_pluginargs.go`), in the file's own camelCase shape, which is
what the plugins' factories receive.
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
from kubesched.plugins.helper.shape_score import shape_points

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


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
            out_strategy["requestedToCapacityRatio"] = {"shape": shape_points(ratio, ratio_path, errs)}
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
