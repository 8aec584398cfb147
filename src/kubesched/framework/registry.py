"""Plugin registry: name -> factory taking the plugin's validated args (kube-scheduler registry.go).

The in-tree registry lives in `kubesched.plugins.registry`; out-of-tree plugins are merged in at
the entry point only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

# (args) or (args, handle): the handle is passed to factories that take a second argument.
PluginFactory = Callable[..., object]
Registry = dict[str, PluginFactory]


def merge(base: Mapping[str, PluginFactory], extra: Mapping[str, PluginFactory]) -> Registry:
    clash = sorted(set(base) & set(extra))
    if clash:
        raise ValueError(f"plugin(s) {clash} are already registered")
    return {**base, **extra}
