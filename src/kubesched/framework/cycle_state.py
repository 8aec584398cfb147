"""Per-cycle scratch space: PreFilter/PreScore write here, Filter/Score read (kube-scheduler CycleState)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.framework.plugin_metrics import PluginRecorder, PointRecorder


class CycleState:
    __slots__ = ("_data", "parallel_pre_bind_plugins", "plugin_recorder", "point_recorder", "skip_filter_plugins",
                 "skip_pre_bind_plugins", "skip_score_plugins")

    def __init__(self, plugin_recorder: PluginRecorder | None = None,
                 point_recorder: PointRecorder | None = None) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        # Written by the PreBind plugins' pre-flights: the ones with nothing to do, and the ones
        # whose PreBind may run alongside their neighbours'.
        self.skip_pre_bind_plugins: set[str] = set()
        self.parallel_pre_bind_plugins: set[str] = set()
        # Set in the cycles sampled for scheduler_plugin_execution_duration_seconds (plugin_metrics.py).
        self.plugin_recorder = plugin_recorder
        # Set by the scheduling loop: the runtime times the extension points it runs (every cycle).
        self.point_recorder = point_recorder

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value under key; KeyError if the PreFilter/PreScore that writes it did not run."""
        return self._data[key]

    def get(self, key: str) -> Any:
        return self._data.get(key)

    def clone(self) -> CycleState:
        """A copy whose values can be changed without touching this one (kube-scheduler's
        CycleState.Clone): a value with a `clone()` method is cloned, others are shared."""
        c = CycleState(self.plugin_recorder, self.point_recorder)
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            c._data[key] = clone() if callable(clone) else value
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.parallel_pre_bind_plugins = set(self.parallel_pre_bind_plugins)
        return c
