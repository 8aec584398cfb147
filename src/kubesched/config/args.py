"""Plugin args from `pluginConfig`: each plugin's parser lives next to the plugin and is named by
its PluginSpec (kubesched.framework.registry); the loader takes the parsers from the registry it
is given.

A parser takes the user's args (apiVersion/kind already stripped; {} when none were given),
appends FieldErrors, and returns the defaulted args in the file's own camelCase shape, which is what
plugin factories receive as `ProfileConfig.plugin_args[name]`. A known plugin without a parser gets
its args passed through unchanged, as kube-scheduler does for plugins without a registered args type.
"""

from __future__ import annotations

import functools
from types import MappingProxyType

from kubesched.framework.registry import ArgsParser
from kubesched.plugins.registry import in_tree_registry

__all__ = ["ArgsParser", "plugin_args"]

# The in-tree plugins' parsers, read-only: derived from the in-tree registry, never registered into.
@functools.cache
def plugin_args() -> MappingProxyType[str, ArgsParser]:
    return MappingProxyType(in_tree_registry().args_parsers())
