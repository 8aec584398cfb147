"""Which extension points a plugin implements, told from its methods (kube-scheduler checks the
same thing with Go interface assertions when it builds a framework)."""

from __future__ import annotations

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

# Every extension point, in kube-scheduler's names, and the protocol its plugins implement.
POINT_PROTOCOLS: dict[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}

# The methods each protocol requires. Spelled out because a class (not yet an instance, as the
# config loader needs it) cannot be checked with isinstance; a unit test keeps this in step with
# the protocols.
POINT_METHODS: dict[str, tuple[str, ...]] = {
    "preEnqueue": ("pre_enqueue",),
    "queueSort": ("less",),
    "preFilter": ("pre_filter",),
    "filter": ("filter",),
    "postFilter": ("post_filter",),
    "preScore": ("pre_score",),
    "score": ("score",),
    "reserve": ("reserve", "unreserve"),
    "permit": ("permit",),
    "preBind": ("pre_bind",),
    "bind": ("bind",),
    "postBind": ("post_bind",),
}


def implemented_points(plugin: object) -> frozenset[str]:
    """The extension points a plugin class (or instance) has every method of."""
    return frozenset(point for point, methods in POINT_METHODS.items()
                     if all(callable(getattr(plugin, m, None)) for m in methods))
