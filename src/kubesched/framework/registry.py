"""The plugin registry: one PluginSpec per plugin name (kube-scheduler's registry.go, plus what
kube-scheduler keeps elsewhere: the args type with its defaulting and validation, and the
extension points a plugin implements).

The in-tree registry is `kubesched.plugins.registry.in_tree_registry`; the config loader reads the
known plugins, their points and their args parsers from a Registry, and the scheduler builds its
profiles from the same one, so the two can never disagree. Out-of-tree plugins are merged in at
the entry point only.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from kubesched.framework.events import Registration
from kubesched.framework.extension_points import implemented_points
from kubesched.framework.fields import Errors
from kubesched.framework.handle import Handle
from kubesched.framework.profile_config import EXTENSION_POINTS

# factory(args) or factory(args, handle) -> the plugin instance.
PluginFactory = Callable[..., object]
# (the user's args without apiVersion/kind, their path in the file, errors to append to) -> the
# defaulted args the factory receives.
ArgsParser = Callable[[Mapping[str, Any], str, Errors], dict[str, Any]]


def takes_handle(factory: PluginFactory) -> bool:
    """kube-scheduler's factories take (args, handle); one that takes only the args still works.
    The handle goes to a factory with a second required positional parameter or one named handle."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    required = [p for p in params.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return len(required) >= 2 or "handle" in params


def plugin_class(factory: PluginFactory) -> type | None:
    """The class a factory makes: the factory itself when it is a class, else its return annotation
    (through functools.partial); None when neither says."""
    target: Any = factory
    while isinstance(target, functools.partial):
        target = target.func
    if isinstance(target, type):
        return target
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # an annotation that does not resolve says nothing usable
        return None
    made = hints.get("return")
    return made if isinstance(made, type) else None


class PluginSpec:
    """Everything kubesched needs to know about a plugin before and when it builds one.

    `extension_points` left out: the points whose methods the plugin class has (the class being the
    factory itself or its return annotation). `args_parser` left out: the factory gets the user's
    args mapping unchanged. `events` left out: the instance's `events_to_register()`, or every
    event when it has none.
    """

    __slots__ = ("args_parser", "events", "extension_points", "factory", "name")

    def __init__(self, name: str, factory: PluginFactory, extension_points: Iterable[str] | None = None,
                 args_parser: ArgsParser | None = None, events: Sequence[Registration] | None = None) -> None:
        if not name:
            raise ValueError("a plugin needs a name")
        if not callable(factory):
            raise ValueError(f"plugin {name}: its factory {factory!r} is not callable")
        if extension_points is None:
            cls = plugin_class(factory)
            if cls is None:
                raise ValueError(f"plugin {name}: cannot tell which extension points it implements; give "
                                 "extension_points or annotate its factory's return type with the plugin class")
            extension_points = implemented_points(cls)
        points = frozenset(extension_points)
        bad = sorted(points - set(EXTENSION_POINTS))
        if bad:
            raise ValueError(f"plugin {name}: unknown extension points {bad}; valid: {', '.join(EXTENSION_POINTS)}")
        if not points:
            raise ValueError(f"plugin {name}: implements no extension point (none of the methods of "
                             "kubesched.framework's plugin protocols)")
        self.name = name
        self.factory = factory
        self.extension_points = points
        self.args_parser = args_parser
        self.events = tuple(events) if events is not None else None

    def new(self, args: Mapping[str, Any], handle: Handle) -> object:
        """The plugin instance, from its (parsed) args and, if its factory takes it, the handle."""
        return self.factory(args, handle) if takes_handle(self.factory) else self.factory(args)

    def __repr__(self) -> str:
        return f"PluginSpec({self.name!r}, points={sorted(self.extension_points)})"


class Registry(Mapping[str, PluginSpec]):
    """Plugin name -> its spec; built once, never changed (`merged` makes a new one)."""

    def __init__(self, specs: Iterable[PluginSpec] = ()) -> None:
        self._specs: dict[str, PluginSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"plugin {spec.name!r} is registered twice")
            self._specs[spec.name] = spec

    def __getitem__(self, name: str) -> PluginSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def merged(self, extra: Iterable[PluginSpec]) -> Registry:
        """This registry plus `extra`, refusing a name that is taken (kube-scheduler's Registry.Merge)."""
        extra = list(extra)
        clash = sorted({s.name for s in extra} & set(self._specs))
        if clash:
            raise ValueError(f"plugin(s) {clash} are already registered")
        return Registry([*self._specs.values(), *extra])

    def extension_points(self) -> dict[str, frozenset[str]]:
        return {name: spec.extension_points for name, spec in self._specs.items()}

    def args_parsers(self) -> dict[str, ArgsParser]:
        return {name: spec.args_parser for name, spec in self._specs.items() if spec.args_parser is not None}
