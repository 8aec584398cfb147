"""kube-scheduler's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate.

    config = load(path_or_None, scheduler_name_override=None, registry=None)  # None: in-tree plugins
    for entry in config.unimplemented: ...   # log one warning naming them all
    for profile in config.profiles: ...      # ProfileConfig: plugins per extension point, plugin_args

A bad file raises ConfigError (a ValueError) naming the file, each bad field's path, its value and
what would be valid.
"""

from kubesched.config.args import ArgsParser, plugin_args
from kubesched.config.load import DEFAULT_SCHEDULER_NAME, from_dict, kube_scheduler_default_plugins, load, loads
from kubesched.config.plugins import KUBE_SCHEDULER_PLUGINS, kubesched_plugins
from kubesched.config.types import (
    EXTENSION_POINTS,
    ClientConnection,
    LeaderElection,
    PluginRef,
    ProfileConfig,
    SchedulerConfig,
)
from kubesched.framework.field_errors import ConfigError, FieldError

__all__ = [
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KUBE_SCHEDULER_PLUGINS",
    "ArgsParser",
    "ClientConnection",
    "ConfigError",
    "FieldError",
    "LeaderElection",
    "PluginRef",
    "ProfileConfig",
    "SchedulerConfig",
    "from_dict",
    "kube_scheduler_default_plugins",
    "kubesched_plugins",
    "load",
    "loads",
    "plugin_args",
]
