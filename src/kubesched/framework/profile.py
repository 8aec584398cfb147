"""A scheduling profile: the plugin instances of each extension point, built from its config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.events import ClusterEvent, registered_events
from kubesched.framework.interface import (
    FilterPlugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.profile_config import ProfileConfig
from kubesched.framework.registry import PluginFactory

# Points the scheduling cycle runs itself; plugins named at the others (permit, preBind, bind,
# postBind) are left to the binding cycle, which knows them by name.
_CYCLE_POINTS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
}


class ProfileError(ValueError):
    pass


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
    # Names configured at permit/preBind/bind/postBind, for the binding cycle.
    binding_plugins: dict[str, tuple[str, ...]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    # One instance per plugin name, shared by all the points it is enabled at.
    instances: dict[str, object] = field(default_factory=dict)

    def plugin(self, name: str) -> object | None:
        return self.instances.get(name)

    def plugin_events(self) -> dict[str, tuple[ClusterEvent, ...]]:
        """The events each plugin that can reject a pod registered, for the queue (kube-scheduler
        builds its queueing hint map from the same extension points)."""
        return registered_events((*self.pre_enqueue, *self.pre_filter, *self.filter, *self.reserve))


def build_profile(config: ProfileConfig, registry: Mapping[str, PluginFactory]) -> Profile:
    """Instantiate each enabled plugin once with its args, and check it implements its points."""
    instances: dict[str, object] = {}

    def instance(name: str, point: str) -> object:
        if name not in instances:
            factory = registry.get(name)
            if factory is None:
                raise ProfileError(f"profile {config.scheduler_name!r}: plugin {name!r} enabled at "
                                   f"{point} is not registered; known: {sorted(registry)}")
            args: Mapping[str, Any] = config.plugin_args.get(name, {})
            instances[name] = factory(args)
        pl = instances[name]
        if not isinstance(pl, _CYCLE_POINTS[point]):
            raise ProfileError(f"profile {config.scheduler_name!r}: plugin {name!r} does not "
                               f"implement the {point} extension point")
        return pl

    points: dict[str, list[object]] = {p: [] for p in _CYCLE_POINTS}
    weights: list[int] = []
    binding: dict[str, tuple[str, ...]] = {}
    for point, refs in config.plugins.items():
        if point not in _CYCLE_POINTS:
            binding[point] = tuple(r.name for r in refs)
            continue
        for ref in refs:
            points[point].append(instance(ref.name, point))
            if point == "score":
                weights.append(ref.weight or 1)
    queue_sort = points["queueSort"]
    if len(queue_sort) > 1:
        raise ProfileError(f"profile {config.scheduler_name!r}: only one queueSort plugin may be enabled")
    return Profile(
        scheduler_name=config.scheduler_name,
        pre_enqueue=tuple(points["preEnqueue"]),  # type: ignore[arg-type]
        queue_sort=queue_sort[0] if queue_sort else None,  # type: ignore[arg-type]
        pre_filter=tuple(points["preFilter"]),  # type: ignore[arg-type]
        filter=tuple(points["filter"]),  # type: ignore[arg-type]
        post_filter=tuple(points["postFilter"]),  # type: ignore[arg-type]
        pre_score=tuple(points["preScore"]),  # type: ignore[arg-type]
        score=tuple(zip(points["score"], weights, strict=True)),  # type: ignore[arg-type]
        reserve=tuple(points["reserve"]),  # type: ignore[arg-type]
        binding_plugins=binding,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        instances=instances,
    )
