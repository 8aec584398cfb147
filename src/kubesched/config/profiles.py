"""One `profiles[i]` entry: its plugins merged over the defaults and its pluginConfig args."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from kubesched.config.plugins import (
    API_VERSION,
    KUBE_SCHEDULER_PLUGINS,
    MULTI_POINT,
    PLUGINS_FIELDS,
    REMOVED_PLUGINS,
    UNIMPLEMENTED_POINTS,
    PluginSet,
    default_plugins,
    expand,
    merge_plugin_set,
    parse_plugin_set,
    unknown_plugin,
)
from kubesched.config.types import EXTENSION_POINTS, PluginRef, ProfileConfig
from kubesched.framework import field_errors as e
from kubesched.framework.field_errors import FieldError
from kubesched.framework.fields import (
    Errors,
    as_mapping,
    check_fields,
    child,
    get_int,
    get_list,
    get_mapping,
    get_str,
    index,
)
from kubesched.framework.registry import ArgsParser

PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")


@dataclass(frozen=True)
class Catalog:
    """What a load may use: plugins (name -> extension points) and args parsers (name -> parser)."""

    plugins: Mapping[str, AbstractSet[str]]
    args: Mapping[str, ArgsParser]
    # The feature gates on that change kube-scheduler's default plugins (GenericWorkload).
    gates: AbstractSet[str] = frozenset()


def check_percentage(raw: Mapping[str, Any], path: str, errs: Errors) -> int | None:
    value = get_int(raw, "percentageOfNodesToScore", path, errs)
    if value is not None and not 0 <= value <= 100:
        errs.append(e.invalid(child(path, "percentageOfNodesToScore"), value, "not in valid range [0-100]"))
        return None
    return value


def parse_profile(
    raw: Mapping[str, Any], path: str, name: str, catalog: Catalog, errs: Errors, unimplemented: list[str]
) -> ProfileConfig:
    check_fields(raw, path, PROFILE_FIELDS, errs)
    percentage = check_percentage(raw, path, errs)
    plugins = _plugins(raw, path, catalog, errs, unimplemented)
    args = _plugin_config(raw, path, catalog, errs, unimplemented)
    enabled = {ref.name for refs in plugins.values() for ref in refs}
    for plugin in sorted(enabled):
        parser = catalog.args.get(plugin)
        if plugin not in args and parser is not None:
            args[plugin] = _parse(parser, {}, child(path, "pluginConfig"), errs)
    return ProfileConfig(scheduler_name=name, plugins=plugins, plugin_args=args,
                         percentage_of_nodes_to_score=percentage)


def _plugins(
    raw: Mapping[str, Any], path: str, catalog: Catalog, errs: Errors, unimplemented: list[str]
) -> dict[str, tuple[PluginRef, ...]]:
    plugins_path = child(path, "plugins")
    section = get_mapping(raw, "plugins", path, errs) or {}
    check_fields(section, plugins_path, PLUGINS_FIELDS, errs)
    points: dict[str, PluginSet] = {}
    for point in EXTENSION_POINTS:
        points[point] = parse_plugin_set(section.get(point), child(plugins_path, point), catalog.plugins,
                                         errs, unimplemented)
    for point in UNIMPLEMENTED_POINTS:
        if section.get(point):
            unimplemented.append(child(plugins_path, point))
    custom_multi = parse_plugin_set(section.get(MULTI_POINT), child(plugins_path, MULTI_POINT),
                                    catalog.plugins, errs, unimplemented)
    multi = merge_plugin_set(default_plugins(catalog.plugins, catalog.gates), custom_multi)
    out = expand(points, multi, catalog.plugins, plugins_path, errs)
    if len(out["queueSort"]) != 1:
        errs.append(e.invalid(child(plugins_path, "queueSort"), [p.name for p in out["queueSort"]],
                              "exactly one queue sort plugin must be enabled (kubesched has: PrioritySort)"))
    if not out["bind"]:
        binders = sorted(n for n, points_ in catalog.plugins.items() if "bind" in points_)
        errs.append(e.required(child(plugins_path, "bind"),
                               f"at least one bind plugin is needed (kubesched has: {', '.join(binders)})"))
    return out


def _plugin_config(
    raw: Mapping[str, Any], path: str, catalog: Catalog, errs: Errors, unimplemented: list[str]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    config_path = child(path, "pluginConfig")
    for i, item in enumerate(get_list(raw, "pluginConfig", path, errs)):
        p = index(config_path, i)
        obj = as_mapping(item, p, errs)
        if obj is None:
            continue
        check_fields(obj, p, ("name", "args"), errs)
        name = get_str(obj, "name", p, errs)
        if not name:
            errs.append(e.required(child(p, "name")))
            continue
        if name in seen:
            errs.append(e.duplicate(p, name))
            continue
        seen.add(name)
        if name in REMOVED_PLUGINS:
            errs.append(e.invalid(p, name, f'was invalid in version "{API_VERSION}" '
                                           f'(KubeSchedulerConfiguration is version "{API_VERSION}")'))
            continue
        if name not in catalog.plugins:
            if name in KUBE_SCHEDULER_PLUGINS:
                unimplemented.append(f"{p} ({name})")
            else:
                errs.append(unknown_plugin(child(p, "name"), name, catalog.plugins))
            continue
        args = _strip_type(obj.get("args"), child(p, "args"), name, errs)
        if args is None:
            continue
        parser = catalog.args.get(name)
        out[name] = _parse(parser, args, child(p, "args"), errs) if parser else dict(args)
    return out


def _parse(parser: ArgsParser, args: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    """An out-of-tree parser may raise instead of appending FieldErrors: its message still gets the
    field path, and the user no traceback."""
    try:
        return parser(args, path, errs)
    except (ValueError, TypeError) as exc:
        errs.append(FieldError(path, str(exc)))
        return dict(args)


def _strip_type(raw: Any, path: str, plugin: str, errs: Errors) -> Mapping[str, Any] | None:
    """The args without apiVersion/kind, which must name this plugin's args type when given."""
    args = as_mapping(raw, path, errs)
    if args is None:
        return None
    kind = args.get("kind")
    if kind is not None and kind != f"{plugin}Args":
        errs.append(e.invalid(child(path, "kind"), kind, f'must be "{plugin}Args" (or left out)'))
    version = args.get("apiVersion")
    if version is not None and version != API_VERSION:
        errs.append(e.unsupported(child(path, "apiVersion"), version, (API_VERSION,)))
    return {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
