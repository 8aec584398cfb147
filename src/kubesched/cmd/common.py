"""What the read-only commands (explain, snapshot, simulate, shadow) share: the config and plugins
loaded as `kubesched run` loads them, and the cluster connection options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.api import ClusterConfig, KubeconfigError, load_config
from kubesched.config import ConfigError, load
from kubesched.config.features import FeatureGateError, FeatureGates, parse_feature_gates
from kubesched.config.types import SchedulerConfig
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.outoftree import PluginLoadError, out_of_tree_plugins
from kubesched.plugins.registry import in_tree_registry

F = TypeVar("F", bound=Callable[..., Any])


def connection_options(fn: F) -> F:
    """--kubeconfig and --context, as `kubesched run` has them."""
    fn = click.option("--context", default=None, help="Kubeconfig context to use (default: its current-context).")(fn)
    return click.option(
        "--kubeconfig", default=None, metavar="FILE",
        help="Kubeconfig file (default: clientConnection.kubeconfig of --config, then $KUBECONFIG, then the "
             "in-cluster service account, then ~/.kube/config).")(fn)


def plugin_option(fn: F) -> F:
    return click.option("--plugin", "plugin_flags", multiple=True, metavar="NAME=MODULE:ATTR",
                        help="An out-of-tree plugin, as `kubesched run --plugin` loads it (repeatable).")(fn)


def gates_option(fn: F) -> F:
    return click.option("--feature-gates", "feature_gates", multiple=True, metavar="NAME=BOOL,...",
                        help="kube-scheduler's feature gates, as `kubesched run` takes them; "
                             "GenericWorkload=true schedules the pods of a PodGroup (scheduling.k8s.io) "
                             "together.")(fn)


def parse_gates(values: tuple[str, ...]) -> FeatureGates:
    try:
        gates, _ = parse_feature_gates(values)
    except FeatureGateError as exc:
        raise click.BadParameter(str(exc), param_hint="--feature-gates") from None
    return gates


def load_scheduler_config(config_path: str | None, plugin_flags: tuple[str, ...],
                          gates: FeatureGates | None = None) -> tuple[SchedulerConfig, list[PluginSpec]]:
    """The config and the out-of-tree plugins, validated against the same registry as `run`'s; the
    gates add the default plugins they add for `run` (GenericWorkload: GangScheduling)."""
    try:
        built_in = in_tree_registry()
        extra = out_of_tree_plugins(plugin_flags, built_in)
        config = load(config_path, registry=built_in.merged(extra),
                      gates=gates.default_plugin_gates() if gates is not None else frozenset())
    except (PluginLoadError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from None
    if config.extenders:
        click.echo("warning: this tool does not call the configured extenders; it decides as if there were "
                   "none: " + ", ".join(e.url_prefix for e in config.extenders), err=True)
    return config, list(extra)


def cluster_config(config: SchedulerConfig, kubeconfig: str | None, context: str | None) -> ClusterConfig:
    try:
        return load_config(kubeconfig or config.client_connection.kubeconfig or None, context)
    except KubeconfigError as exc:
        raise click.ClickException(str(exc)) from None
