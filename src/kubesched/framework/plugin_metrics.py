"""What the framework needs to time plugins: a recorder it is handed, never a metrics library.

kube-scheduler samples scheduler_plugin_execution_duration_seconds: each scheduling cycle records
with probability pluginMetricsSamplePercent (10 %), decided once when the cycle starts
(schedule_one.go). The framework does the same through CycleState.plugin_recorder: None in an
unsampled cycle, so the extension points run untimed; the recorder in a sampled one, whose clock
times every plugin call.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import ParamSpec, Protocol, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

PLUGIN_METRICS_SAMPLE_PERCENT = 10


class PluginRecorder(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic clock."""
        ...

    def observe(self, plugin: str, extension_point: str, code: int, seconds: float, count: int = 1) -> None:
        """`count` calls of `plugin` at `extension_point` that ended with Status code `code`, each
        taking `seconds` (count > 1: a batch over nodes, its time shared evenly)."""
        ...


class PointRecorder(Protocol):
    def point(self, extension_point: str, code: int, seconds: float) -> None:
        """One run of an extension point (all its plugins) that ended with Status code `code`
        (scheduler_framework_extension_point_duration_seconds)."""
        ...


def sampled(recorder: PluginRecorder | None, rng: random.Random,
            percent: int = PLUGIN_METRICS_SAMPLE_PERCENT) -> PluginRecorder | None:
    """The recorder for this cycle, or None: rand.Intn(100) < percent, as kube-scheduler draws it."""
    if recorder is None or rng.randrange(100) >= percent:
        return None
    return recorder


def status_code(result: object) -> int:
    """The Status code of a plugin's answer: a Status, None (Success), or a tuple holding one."""
    if isinstance(result, tuple):
        result = next((r for r in result if hasattr(r, "code")), None)
    code = getattr(result, "code", None)
    return 0 if code is None else int(code)


def timed(rec: PluginRecorder, plugin: str, extension_point: str, call: Callable[P, T],
          *args: P.args, **kwargs: P.kwargs) -> T:
    """call(*args), observed; used only in sampled cycles, so the others pay nothing for it."""
    t = rec.now()
    result = call(*args, **kwargs)
    rec.observe(plugin, extension_point, status_code(result), rec.now() - t)
    return result


async def timed_async(rec: PluginRecorder, plugin: str, extension_point: str, call: Callable[P, Awaitable[T]],
                      *args: P.args, **kwargs: P.kwargs) -> T:
    t = rec.now()
    result = await call(*args, **kwargs)
    rec.observe(plugin, extension_point, status_code(result), rec.now() - t)
    return result
