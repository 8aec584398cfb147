"""A scheduling profile: the plugin instances of each extension point, built from its config."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.events import Registration, registered_events
from kubesched.framework.extension_points import POINT_PROTOCOLS as _CYCLE_POINTS
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.profile_config import ProfileConfig
from kubesched.framework.registry import PluginFactory, PluginSpec


class ProfileError(ValueError):
    pass


@dataclass(frozen=True)
class PluginMethods:
    """The optional fast paths each plugin offers, looked up once when the profile is built."""

    filter_batch: dict[str, Callable[..., Any]] = field(default_factory=dict)
    filter_statuses: dict[str, Callable[..., Any]] = field(default_factory=dict)
    score_batch: dict[str, Callable[..., Any]] = field(default_factory=dict)
    normalize_scores: dict[str, Callable[..., Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, plugins: Iterable[object]) -> PluginMethods:
        found: dict[str, dict[str, Callable[..., Any]]] = {f: {} for f in
                                                           ("filter_batch", "filter_statuses", "score_batch",
                                                            "normalize_scores")}
        for pl in plugins:
            for method, by_name in found.items():
                fn = getattr(pl, method, None)
                if callable(fn):
                    by_name[pl.name] = fn  # type: ignore[attr-defined]
        return cls(**found)


@dataclass
class Profile:
    scheduler_name: str
    pre_enqueue: tuple[PreEnqueuePlugin, ...] = ()
    queue_sort: QueueSortPlugin | None = None
    pre_filter: tuple[PreFilterPlugin, ...] = ()
    filter: tuple[FilterPlugin, ...] = ()
    post_filter: tuple[PostFilterPlugin, ...] = ()
    pre_score: tuple[PreScorePlugin, ...] = ()
    score: tuple[tuple[ScorePlugin, int], ...] = ()
    reserve: tuple[ReservePlugin, ...] = ()
    permit: tuple[PermitPlugin, ...] = ()
    pre_bind: tuple[PreBindPlugin, ...] = ()
    bind: tuple[BindPlugin, ...] = ()
    post_bind: tuple[PostBindPlugin, ...] = ()
    handle: Handle = field(default_factory=Handle)
    methods: PluginMethods = field(default_factory=PluginMethods)
    percentage_of_nodes_to_score: int | None = None
    # One instance per plugin name, shared by all the points it is enabled at.
    instances: dict[str, object] = field(default_factory=dict)
    # The events a plugin's spec declared, which win over its instance's events_to_register.
    declared_events: dict[str, tuple[Registration, ...]] = field(default_factory=dict)

    def plugin(self, name: str) -> object | None:
        return self.instances.get(name)

    def plugin_events(self) -> dict[str, tuple[Registration, ...]]:
        """The events each plugin that can reject a pod registered, for the queue (kube-scheduler
        builds its queueing hint map from the same extension points)."""
        found = registered_events((*self.pre_enqueue, *self.pre_filter, *self.filter, *self.reserve))
        return {name: self.declared_events.get(name, evs) for name, evs in found.items()}


def build_profile(config: ProfileConfig, registry: Mapping[str, PluginSpec | PluginFactory],
                  handle: Handle | None = None) -> Profile:
    """Instantiate each enabled plugin once with its args (and the handle, if its factory takes
    one), and check it implements its points. A registry entry may be a bare factory (tests)."""
    handle = handle or Handle()
    instances: dict[str, object] = {}
    declared: dict[str, tuple[Registration, ...]] = {}

    def instance(name: str, point: str) -> object:
        if name not in instances:
            entry = registry.get(name)
            if entry is None:
                raise ProfileError(f"profile {config.scheduler_name!r}: plugin {name!r} enabled at "
                                   f"{point} is not registered; known: {sorted(registry)}")
            spec = entry if isinstance(entry, PluginSpec) else PluginSpec(name, entry, _CYCLE_POINTS)
            instances[name] = _new(config.scheduler_name, spec, config.plugin_args.get(name, {}), handle,
                                   check_name=isinstance(entry, PluginSpec))
            if spec.events is not None:
                declared[name] = spec.events
        pl = instances[name]
        if not isinstance(pl, _CYCLE_POINTS[point]):
            raise ProfileError(f"profile {config.scheduler_name!r}: plugin {name!r} does not "
                               f"implement the {point} extension point")
        return pl

    points: dict[str, list[object]] = {p: [] for p in _CYCLE_POINTS}
    weights: list[int] = []
    for point, refs in config.plugins.items():
        if point not in _CYCLE_POINTS:
            raise ProfileError(f"profile {config.scheduler_name!r}: unknown extension point {point!r}")
        for ref in refs:
            points[point].append(instance(ref.name, point))
            if point == "score":
                weights.append(ref.weight or 1)
    queue_sort = points["queueSort"]
    if len(queue_sort) > 1:
        raise ProfileError(f"profile {config.scheduler_name!r}: only one queueSort plugin may be enabled")
    profile = Profile(
        scheduler_name=config.scheduler_name,
        pre_enqueue=tuple(points["preEnqueue"]),  # type: ignore[arg-type]
        queue_sort=queue_sort[0] if queue_sort else None,  # type: ignore[arg-type]
        pre_filter=tuple(points["preFilter"]),  # type: ignore[arg-type]
        filter=tuple(points["filter"]),  # type: ignore[arg-type]
        post_filter=tuple(points["postFilter"]),  # type: ignore[arg-type]
        pre_score=tuple(points["preScore"]),  # type: ignore[arg-type]
        score=tuple(zip(points["score"], weights, strict=True)),  # type: ignore[arg-type]
        reserve=tuple(points["reserve"]),  # type: ignore[arg-type]
        permit=tuple(points["permit"]),  # type: ignore[arg-type]
        pre_bind=tuple(points["preBind"]),  # type: ignore[arg-type]
        bind=tuple(points["bind"]),  # type: ignore[arg-type]
        post_bind=tuple(points["postBind"]),  # type: ignore[arg-type]
        handle=handle,
        methods=PluginMethods.of(instances.values()),
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        instances=instances,
        declared_events=declared,
    )
    # A plugin that runs the profile's own plugins (DefaultPreemption's dry run) is given the profile.
    for pl in instances.values():
        attach = getattr(pl, "attach_profile", None)
        if callable(attach):
            attach(profile)
    return profile


def _new(profile: str, spec: PluginSpec, args: Mapping[str, Any], handle: Handle, *, check_name: bool) -> object:
    """A plugin's factory refusing its args (ValueError, TypeError, or a KeyError: args["x"] with no x)
    is a configuration error, told as one; anything else it raises is a bug in the plugin and keeps its
    traceback."""
    try:
        pl = spec.new(args, handle)
    except (ValueError, TypeError) as exc:
        raise ProfileError(f"profile {profile!r}: plugin {spec.name} rejected its args: {exc}") from exc
    except KeyError as exc:
        raise ProfileError(f"profile {profile!r}: plugin {spec.name} rejected its args: "
                           f"no {exc} in {dict(args)}") from exc
    # Statuses, batch methods and queueing events are keyed by the instance's name.
    if check_name and getattr(pl, "name", None) != spec.name:
        raise ProfileError(f"profile {profile!r}: plugin {spec.name} is registered under that name, but its "
                           f"instance's `name` is {getattr(pl, 'name', None)!r}; they must be the same")
    return pl
