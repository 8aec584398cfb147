"""What a profile is built from: the plugins enabled at each extension point and their args.

The config loader (kubesched.config) produces these from a KubeSchedulerConfiguration file;
`build_profile` turns one into plugin instances through the plugin registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Extension points, in kube-scheduler's names and in the order a cycle runs them.
EXTENSION_POINTS = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind",
)


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0  # only meaningful at the score extension point


@dataclass(frozen=True)
class ProfileConfig:
    scheduler_name: str
    # extension point name -> enabled plugins in order (defaults merged with the user's enabled/disabled)
    plugins: dict[str, tuple[PluginRef, ...]]
    # plugin name -> its args (the `args` object of pluginConfig, apiVersion/kind stripped), defaults applied
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None  # None: use the top-level value
