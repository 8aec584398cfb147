"""Which plugins exist, which are on by default, and kube-scheduler's rules for merging a profile's
`plugins` section over the defaults and expanding `multiPoint` into the extension points.

Mirrors kube-scheduler v1.37.2: `apis/config/v1/default_plugins.go` (mergePluginSet) and
`framework/runtime/framework.go` (expandMultiPointPlugins, getValidScoreWeights).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kubesched.config.types import EXTENSION_POINTS, PluginRef
from kubesched.framework import field_errors as e
from kubesched.framework.fields import (
    Errors,
    as_mapping,
    check_fields,
    child,
    get_int,
    get_list,
    get_str,
    index,
)
from kubesched.plugins.registry import in_tree_registry

API_VERSION = "kubescheduler.config.k8s.io/v1"

# Plugins kubesched implements -> the extension points each one implements: a read-only view of the
# in-tree registry (kubesched.plugins.registry), where each plugin's points are read from its class.
# Out-of-tree plugins join through the registry given to load(registry=...).
@functools.cache
def kubesched_plugins() -> MappingProxyType[str, frozenset[str]]:
    """Built when first asked, not when the config package is imported (the registry instantiates
    nothing, but building it imports every plugin)."""
    return MappingProxyType(in_tree_registry().extension_points())

# kube-scheduler v1.37.2's default multiPoint list (default_plugins.go: its feature gates, GA in
# v1.37, append NodeDeclaredFeatures after DefaultBinder, then insert DynamicResources before
# DefaultPreemption; the other gated plugins' gates are off). Weight None: the plugin does not score.
KUBE_SCHEDULER_DEFAULT_PLUGINS: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeName", None),
    ("NodeUnschedulable", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
)

# kube-scheduler v1.37.2's in-tree registry: a user may name these; kubesched warns about the ones
# it does not implement instead of rejecting a config that kube-scheduler accepts.
KUBE_SCHEDULER_PLUGINS: frozenset[str] = frozenset(
    {name for name, _ in KUBE_SCHEDULER_DEFAULT_PLUGINS}
    | {"DeferredPodScheduling", "GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount"}
)

# Removed from the v1 API; kube-scheduler rejects them with this wording.
REMOVED_PLUGINS: frozenset[str] = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})

MULTI_POINT = "multiPoint"
# Extension points of the v1 API that kubesched has no equivalent of yet.
UNIMPLEMENTED_POINTS = ("placementGenerate", "placementScore", "podGroupPostFilter")
PLUGINS_FIELDS = (*EXTENSION_POINTS, MULTI_POINT, *UNIMPLEMENTED_POINTS)


# kubesched's own default list: kube-scheduler's, plus the CronJob pool (kubesched's signature) placed
# before TaintToleration, so a pool node's taint is reported as "reserved for the pool" to other pods;
# and UnsupportedPodFields where the plugin it stands in for would run, so a pod that needs
# VolumeBinding is rejected, not placed as if it did not (after VolumeRestrictions, whose PreFilter
# reports a missing claim in kube-scheduler's words).
_POOL_AFTER = "NodeUnschedulable"
_UNSUPPORTED_BEFORE = "VolumeBinding"
KUBESCHED_DEFAULT_PLUGINS: tuple[tuple[str, int | None], ...] = tuple(
    entry for name, weight in KUBE_SCHEDULER_DEFAULT_PLUGINS
    for entry in (((name, weight), ("CronJobPool", None)) if name == _POOL_AFTER else
                  (("UnsupportedPodFields", None), (name, weight)) if name == _UNSUPPORTED_BEFORE else
                  ((name, weight),))
)


def default_plugins(known: Mapping[str, Any]) -> list[PluginEntry]:
    """kubesched's default multiPoint list, restricted to the plugins kubesched implements."""
    return [PluginEntry(n, w or 0, "") for n, w in KUBESCHED_DEFAULT_PLUGINS if n in known]


@dataclass(frozen=True)
class PluginEntry:
    name: str
    weight: int  # 0: not given
    path: str  # where the user wrote it; "" for a default


@dataclass
class PluginSet:
    enabled: list[PluginEntry] = field(default_factory=list)
    disabled: set[str] = field(default_factory=set)


def _parse_entry(raw: Any, path: str, errs: Errors) -> tuple[str, int] | None:
    obj = as_mapping(raw, path, errs)
    if obj is None:
        return None
    check_fields(obj, path, ("name", "weight"), errs)
    name = get_str(obj, "name", path, errs)
    weight = get_int(obj, "weight", path, errs)
    if not name:
        if name is not None or "name" not in obj:
            errs.append(e.required(child(path, "name")))
        return None
    if weight is not None and weight < 0:
        errs.append(e.invalid(child(path, "weight"), weight,
                              "must be a positive integer (0 or unset: the default weight)"))
    return name, max(weight or 0, 0)


def parse_plugin_set(
    raw: Any, path: str, known: Mapping[str, Any], errs: Errors, unimplemented: list[str]
) -> PluginSet:
    """Reads one `{enabled, disabled}` set, keeping only the plugins kubesched can run."""
    out = PluginSet()
    obj = as_mapping(raw, path, errs)
    if obj is None:
        return out
    check_fields(obj, path, ("enabled", "disabled"), errs)
    for i, item in enumerate(get_list(obj, "disabled", path, errs)):
        parsed = _parse_entry(item, index(child(path, "disabled"), i), errs)
        if parsed is not None:
            out.disabled.add(parsed[0])
    for i, item in enumerate(get_list(obj, "enabled", path, errs)):
        item_path = index(child(path, "enabled"), i)
        parsed = _parse_entry(item, item_path, errs)
        if parsed is None:
            continue
        name, weight = parsed
        if name in known:
            out.enabled.append(PluginEntry(name, weight, item_path))
        elif name in REMOVED_PLUGINS:
            errs.append(e.invalid(item_path, name, f'was invalid in version "{API_VERSION}" '
                                                   f'(KubeSchedulerConfiguration is version "{API_VERSION}")'))
        elif name in KUBE_SCHEDULER_PLUGINS:
            unimplemented.append(f"{item_path} ({name})")
        else:
            errs.append(unknown_plugin(child(item_path, "name"), name, known))
    return out


def unknown_plugin(path: str, name: str, known: Mapping[str, Any]) -> e.FieldError:
    others = sorted(KUBE_SCHEDULER_PLUGINS - set(known))
    note = f" (kube-scheduler's {', '.join(others)} are accepted but not run yet)" if others else ""
    return e.unsupported(path, name, sorted(known), note)


def merge_plugin_set(defaults: list[PluginEntry], custom: PluginSet) -> PluginSet:
    """kube-scheduler's mergePluginSet: a default named again is replaced in place, the rest appended."""
    custom_by_name = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginEntry] = []
    if "*" not in custom.disabled:
        for default in defaults:
            if default.name in custom.disabled:
                continue
            i = custom_by_name.get(default.name)
            if i is not None:
                replaced.add(i)
                enabled.append(custom.enabled[i])
            else:
                enabled.append(default)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled, set(custom.disabled))


def expand(
    points: Mapping[str, PluginSet], multi: PluginSet, known: Mapping[str, AbstractSet[str]],
    path: str, errs: Errors,
) -> dict[str, tuple[PluginRef, ...]]:
    """Per extension point: the plugins that run there, in order, with final score weights."""
    out: dict[str, tuple[PluginRef, ...]] = {}
    for point in EXTENSION_POINTS:
        specific = points.get(point, PluginSet())
        seen: set[str] = set()
        for p in specific.enabled:
            if point not in known[p.name]:
                implements = ", ".join(sorted(known[p.name])) or "none"
                errs.append(e.invalid(p.path, p.name, f"plugin does not extend {point} "
                                                      f"(it implements: {implements})"))
            elif p.name in seen:
                errs.append(e.duplicate(p.path, p.name))
            seen.add(p.name)
        ordered = _order(point, specific, multi, known, path, errs)
        out[point] = tuple(PluginRef(p.name, _weight(p.name, specific, multi) if point == "score" else 0)
                           for p in ordered)
    return out


def _order(
    point: str, specific: PluginSet, multi: PluginSet, known: Mapping[str, AbstractSet[str]],
    path: str, errs: Errors,
) -> list[PluginEntry]:
    """expandMultiPointPlugins: overrides (specific order), then multiPoint-only, then the other specifics."""
    valid_specific = [p for p in specific.enabled if point in known[p.name]]
    if "*" in specific.disabled:
        return _dedupe(valid_specific)
    specific_names = {p.name for p in valid_specific}
    overrides: set[str] = set()
    from_multi: list[PluginEntry] = []
    multi_names: set[str] = set()
    for p in multi.enabled:
        if point not in known[p.name] or p.name in specific.disabled:
            continue
        if p.name in specific_names:
            overrides.add(p.name)
            continue
        if p.name in multi_names:
            errs.append(e.invalid(p.path or child(path, "multiPoint"), p.name,
                                  f"plugin already registered as {point} plugin"))
            continue
        multi_names.add(p.name)
        from_multi.append(p)
    first = [p for p in valid_specific if p.name in overrides]
    rest = [p for p in valid_specific if p.name not in overrides]
    return _dedupe(first + from_multi + rest)


def _dedupe(plugins: list[PluginEntry]) -> list[PluginEntry]:
    seen: set[str] = set()
    out = []
    for p in plugins:
        if p.name not in seen:
            seen.add(p.name)
            out.append(p)
    return out


def _weight(name: str, specific: PluginSet, multi: PluginSet) -> int:
    """getValidScoreWeights: score's own entry wins over multiPoint's; an unset or 0 weight counts as 1."""
    for p in (*specific.enabled, *multi.enabled):
        if p.name == name:
            return p.weight or 1
    return 1
