"""Out-of-tree plugins in Python: `kubesched run --plugin NAME=module:attr` and the installed
distributions' `kubesched.plugins` entry points (entry name = plugin name, value = module:attr).

`attr` is a PluginSpec or a factory (`factory(args)` or `factory(args, handle)`; a plugin class
counts as one). A factory's extension points come from the plugin class (the factory itself, or
its return annotation); a factory that names none is called once with empty args to look at the
instance it makes. Each failure is one PluginLoadError naming the flag or entry point, for the CLI
to print without a traceback.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata

from kubesched.framework.extension_points import implemented_points
from kubesched.framework.handle import Handle
from kubesched.framework.profile_config import EXTENSION_POINTS
from kubesched.framework.registry import PluginFactory, PluginSpec, plugin_class

ENTRY_POINT_GROUP = "kubesched.plugins"
FLAG_SHAPE = "expected NAME=module:attr, e.g. --plugin MyFilter=my_plugins.filters:new"


class PluginLoadError(ValueError):
    """An out-of-tree plugin that cannot be loaded; the message names where it was asked for."""


def parse_flag(value: str) -> tuple[str, str, str]:
    """NAME=module:attr -> (NAME, module, attr)."""
    name, sep, target = value.partition("=")
    module, colon, attr = target.partition(":")
    if not sep or not colon or not name.strip() or not module.strip() or not attr.strip():
        raise PluginLoadError(f"--plugin {value}: {FLAG_SHAPE}")
    return name.strip(), module.strip(), attr.strip()


def load_target(source: str, module: str, attr: str) -> object:
    try:
        obj: object = importlib.import_module(module)
    except ImportError as exc:
        raise PluginLoadError(f"{source}: cannot import module {module!r}: {exc}") from exc
    except Exception as exc:  # the user's module raised while importing: say so, not a traceback of ours
        raise PluginLoadError(f"{source}: importing module {module!r} failed: {type(exc).__name__}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PluginLoadError(f"{source}: module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def to_spec(source: str, name: str, obj: object, attr: str) -> PluginSpec:
    if isinstance(obj, PluginSpec):
        if obj.name != name:
            raise PluginLoadError(f"{source}: {attr} is the PluginSpec of plugin {obj.name!r}, not {name!r}; "
                                  f"register it as {obj.name}")
        return obj
    if not callable(obj):
        raise PluginLoadError(f"{source}: {attr} is a {type(obj).__name__}, not callable: give a plugin "
                              "factory (args[, handle]) -> plugin, a plugin class or a PluginSpec")
    points = None if plugin_class(obj) is not None else _probe(source, name, obj)
    try:
        return PluginSpec(name, obj, points)
    except ValueError as exc:  # PluginSpec's own checks
        raise PluginLoadError(f"{source}: {exc}") from exc


def _probe(source: str, name: str, factory: PluginFactory) -> frozenset[str]:
    try:
        probe = PluginSpec(name, factory, EXTENSION_POINTS).new({}, Handle())
    except Exception as exc:
        raise PluginLoadError(
            f"{source}: cannot tell which extension points it implements: its factory names no plugin class "
            f"(as its return annotation) and calling it with empty args failed ({type(exc).__name__}: {exc}); "
            "annotate the factory's return type or give a PluginSpec with extension_points") from exc
    points = implemented_points(probe)
    if not points:
        raise PluginLoadError(f"{source}: its {type(probe).__name__} implements no extension point (none of the "
                              "methods of kubesched.framework's plugin protocols)")
    return points


def from_flags(values: Iterable[str]) -> list[tuple[str, PluginSpec]]:
    out = []
    for value in values:
        name, module, attr = parse_flag(value)
        source = f"--plugin {value}"
        out.append((source, to_spec(source, name, load_target(source, module, attr), attr)))
    return out


def from_entry_points() -> list[tuple[str, PluginSpec]]:
    out = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = f" of {ep.dist.name}" if ep.dist is not None else ""
        source = f"entry point {ep.name} = {ep.value} (group {ENTRY_POINT_GROUP}{dist})"
        module, _, attr = ep.value.partition(":")
        if not attr:
            raise PluginLoadError(f"{source}: expected module:attr")
        out.append((source, to_spec(source, ep.name, load_target(source, module.strip(), attr.strip()), attr)))
    return out


def out_of_tree_plugins(flags: Sequence[str], built_in: Mapping[str, object]) -> list[PluginSpec]:
    """The installed entry points' plugins and the --plugin ones, refusing a name that is taken."""
    seen: dict[str, str] = {}
    out: list[PluginSpec] = []
    for source, spec in [*from_entry_points(), *from_flags(flags)]:
        if spec.name in built_in:
            raise PluginLoadError(f"{source}: {spec.name} is the name of a built-in plugin; choose another name")
        if spec.name in seen:
            raise PluginLoadError(f"{source}: plugin {spec.name} is already given by {seen[spec.name]}")
        seen[spec.name] = source
        out.append(spec)
    return out
