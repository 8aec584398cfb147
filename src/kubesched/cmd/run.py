"""`kubesched run`: schedule pods on a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
from collections.abc import AsyncIterator, Sequence
from typing import Any

import click
import uvloop

from kubesched import logs, serving
from kubesched.api import ApiClient, ClusterConfig, KubeconfigError, load_config
from kubesched.api.events import senders
from kubesched.api.extender import ExtenderConfigError, HTTPExtender, http_extenders
from kubesched.api.informer import DRA_RESOURCES
from kubesched.backend.queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
from kubesched.cmd import serving_flags
from kubesched.cmd.flags import apply_deprecated, check_master, common_options, log_settings, with_master
from kubesched.cmd.gate_flags import feature_gate_options, gates_from_flags
from kubesched.cmd.leader import apply_flags, elector_for, leader_election_options
from kubesched.cmd.unsupported_flags import unsupported_options
from kubesched.config import ConfigError, load
from kubesched.config.dump import dumps
from kubesched.config.features import FeatureGates
from kubesched.config.types import SchedulerConfig
from kubesched.framework import PluginSpec, ProfileError
from kubesched.framework.events import STORAGE_RESOURCES
from kubesched.framework.runtime.outoftree import ENTRY_POINT_GROUP, PluginLoadError, out_of_tree_plugins
from kubesched.plugins import unsupported_fields
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.debugger import log_comparison
from kubesched.scheduler.scheduler import DEFAULT_FAILURE_LIMIT, Scheduler, SchedulerFailed

log = logging.getLogger("kubesched")


def unguarded_profiles(config: SchedulerConfig) -> list[str]:
    """Profiles a user's config left without UnsupportedPodFields (say, by disabling "*"): their
    misplacements would otherwise be silent. None while no field is unsupported."""
    if not unsupported_fields.FIELDS:
        return []
    return [p.scheduler_name for p in config.profiles
            if all(ref.name != "UnsupportedPodFields" for ref in p.plugins.get("preFilter", ()))]


# -h as kube-scheduler's, however the command is reached: click keeps the help option of the first
# context a command is made in, and one made without the group's settings would have --help only.
@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kubeconfig", envvar=None, default=None, metavar="FILE",
              help="Kubeconfig file (default: clientConnection.kubeconfig of --config, then $KUBECONFIG, "
                   "then the in-cluster service account, then ~/.kube/config).")
@click.option("--context", default=None, help="Kubeconfig context to use (default: its current-context).")
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="A kube-scheduler KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file, "
                   "used unchanged: profiles, plugins, weights, pluginConfig, percentageOfNodesToScore, "
                   "clientConnection. Default: kube-scheduler's default profile plus the CronJob pool.")
@click.option("--scheduler-name", default=None,
              help="Schedule the pods whose spec.schedulerName is this (default: kubesched, or the config's "
                   "profile). Renames the single profile of --config.")
@click.option("--plugin", "plugin_flags", multiple=True, metavar="NAME=MODULE:ATTR",
              help="Load an out-of-tree plugin written in Python: ATTR is its factory (args[, handle]) or a "
                   "kubesched.framework.PluginSpec; enable it by NAME in --config like a built-in. Repeatable. "
                   f"Installed packages' `{ENTRY_POINT_GROUP}` entry points are loaded too.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default=None,
              help="info unless --v is 4 or more (debug).")
@click.option("--serve-address", default="", metavar="HOST:PORT",
              help="Also serve /healthz, /livez, /readyz and /metrics over plain HTTP, unauthenticated, here, "
                   "e.g. 127.0.0.1:10260, for local use (default: not served).")
@click.option("--event-loop", type=click.Choice(["uvloop", "asyncio"]), default="uvloop", show_default=True,
              help="uvloop (libuv) costs less CPU a pod than asyncio's own loop; see docs/benchmarks.md, "
                   "'What made it fast'.")
@click.option("--binds-in-flight", type=click.IntRange(1, 1024), default=64, show_default=True,
              help="Bindings sent concurrently (each on its own keep-alive HTTP/1.1 connection); as many "
                   "events (at least 8), so each bind's Scheduled event keeps pace.")
@click.option("--failure-exit-after", "failure_limit", type=click.FloatRange(min=1), default=DEFAULT_FAILURE_LIMIT,
              show_default=True, metavar="SECONDS",
              help="Exit non-zero (and fail /livez) when credentials or an informer have failed with errors "
                   "that waiting will not mend (exec plugin, token file, 4xx) for this long.")
@leader_election_options
@serving_flags.serving_options
@feature_gate_options
@common_options
@unsupported_options
def run(kubeconfig: str | None, context: str | None, config_path: str | None, scheduler_name: str | None,
        log_format: str | None, log_level: str | None, serve_address: str, event_loop: str, binds_in_flight: int,
        failure_limit: float, plugin_flags: tuple[str, ...], verbosity: int | None, logging_format: str | None,
        master: str | None, write_config_to: str | None, pod_max_in_unschedulable_pods_duration: float,
        **flags: Any) -> None:
    """Watch pods that name this scheduler in spec.schedulerName, choose a node for each by
    kube-scheduler's rules, and bind it.

    \b
    Examples:
      kubesched run                                  # default profile, scheduler name "kubesched"
      kubesched run --config my-kube-scheduler.yaml  # an existing kube-scheduler config, unchanged
      kubesched run --kubeconfig ~/.kube/config --context kind-kind --scheduler-name my-scheduler
      kubesched run --plugin MyFilter=my_plugins.filters:new --config with-my-filter.yaml
    """
    logs.setup(*log_settings(log_format, log_level, logging_format, verbosity))
    if log_format is not None:
        log.warning("--log-format is deprecated: use kube-scheduler's --logging-format")
    try:
        serving_options = serving_flags.from_flags(flags)
    except serving.OptionsError as exc:
        raise click.UsageError(str(exc)) from None
    features = gates_from_flags(flags)
    master_url = check_master(master) if master is not None else None
    try:
        built_in = in_tree_registry()
        extra = out_of_tree_plugins(plugin_flags, built_in)
        config = load(config_path, scheduler_name_override=scheduler_name, registry=built_in.merged(extra),
                      gates=features.default_plugin_gates())
        config = apply_flags(config, config_path, flags)
    except (PluginLoadError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from None
    config, ignored = apply_deprecated(config, config_path, flags)
    if ignored:
        log.warning("with --config, the file's clientConnection and profiling fields are used and these flags "
                    "are ignored, as kube-scheduler does: " + ", ".join(ignored))
    if write_config_to:
        try:
            with open(write_config_to, "w", encoding="utf-8") as f:
                f.write(dumps(config))
        except OSError as exc:
            raise click.BadParameter(f"cannot write {write_config_to}: {exc.strerror or exc}",
                                     param_hint="--write-config-to") from None
        log.info("Wrote configuration", extra={"file": write_config_to})
        return
    if extra:
        log.info("out-of-tree plugins loaded", extra={"plugins": {s.name: sorted(s.extension_points) for s in extra}})
    if config.unimplemented:
        log.warning("kubesched does not implement these configured fields yet; they are ignored: "
                    + ", ".join(config.unimplemented))
    unguarded = unguarded_profiles(config)
    if unguarded:
        log.warning("these profiles do not run UnsupportedPodFields at preFilter, so their pods that use "
                    f"these fields are placed as if the fields were absent ({', '.join(unsupported_fields.FIELDS)}): "
                    + ", ".join(unguarded))
    cluster = _cluster(kubeconfig or config.client_connection.kubeconfig or None, context, master_url)
    if serve_address and not _valid_address(serve_address):
        raise click.BadParameter(f"{serve_address!r}: expected HOST:PORT, e.g. 127.0.0.1:10260",
                                 param_hint="--serve-address")
    try:
        secure = serving.prepare(serving_options, cluster)
    except serving.ServingError as exc:
        raise click.ClickException(str(exc)) from None
    # As every Go program (kube-scheduler too) at start: the soft open-file limit raised to the hard one.
    before, after = serving.raise_open_file_limit()
    if after != before:
        log.info("raised the open-file limit", extra={"from": before, "to": after})
    with contextlib.suppress(KeyboardInterrupt):
        # uvloop: libuv's event loop and TLS cut the per-request CPU that bounds throughput here.
        run_loop = uvloop.run if event_loop == "uvloop" else asyncio.run
        try:
            run_loop(serve(cluster, config, binds_in_flight, serve_address, failure_limit, extra, secure,
                           features=features, max_in_unschedulable=pod_max_in_unschedulable_pods_duration))
        except (SchedulerFailed, serving.ServingError) as exc:
            raise click.ClickException(f"kubesched stopped: {exc}") from None
        except ProfileError as exc:  # a plugin refused its args: a config error, told as one
            raise click.ClickException(f"{config_path or 'the default config'}: {exc}") from None


def _cluster(kubeconfig: str | None, context: str | None, master: str | None) -> ClusterConfig:
    try:
        return load_config(kubeconfig, context) if master is None else with_master(
            load_config(kubeconfig, context), master)
    except KubeconfigError as exc:
        if master is not None and kubeconfig is None and context is None and str(exc).startswith("no cluster"):
            return with_master(None, master)
        raise click.ClickException(str(exc)) from None


@contextlib.asynccontextmanager
async def _closing(extenders: Sequence[HTTPExtender]) -> AsyncIterator[None]:
    try:
        yield
    finally:
        for ext in extenders:
            await ext.close()


def _valid_address(address: str) -> bool:
    _, sep, port = address.rpartition(":")
    return bool(sep) and port.isdigit() and 0 <= int(port) < 65536


async def serve(cluster: ClusterConfig, config: SchedulerConfig, binds_in_flight: int, address: str = "",
                failure_limit: float = DEFAULT_FAILURE_LIMIT, out_of_tree: Sequence[PluginSpec] = (),
                secure: serving.SecureServer | None = None, *, features: FeatureGates | None = None,
                max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) -> None:
    conn = config.client_connection
    try:
        extenders = http_extenders(config.extenders)
    except ExtenderConfigError as exc:
        raise click.ClickException(f"couldn't create scheduler: {exc}") from None
    # Every informer's watch holds a connection of its own: 8, one per storage resource and one per
    # DRA resource.
    async with ApiClient(cluster, qps=conn.qps, burst=conn.burst,
                         max_connections=binds_in_flight + 8 + len(STORAGE_RESOURCES) + len(DRA_RESOURCES)) as client, \
            ApiClient(cluster, qps=conn.qps, burst=conn.burst, max_connections=2,
                      user_agent="kubesched/leader-election") as election_client, \
            ApiClient(cluster, qps=conn.qps, burst=conn.burst, max_connections=senders(binds_in_flight),
                      user_agent="kubesched/events") as event_client, \
            _closing(extenders):
        # The lease has a client of its own, as kube-scheduler's: its renewals never queue for a
        # token or a connection behind binds, events and patches. Events have one too, as
        # kube-scheduler's eventClient (createClients): binds and events each get the QPS.
        scheduler = Scheduler(client, config, max_binds_in_flight=binds_in_flight, failure_limit=failure_limit,
                              out_of_tree=out_of_tree, elector=elector_for(election_client, config.leader_election),
                              features=features or FeatureGates(), max_in_unschedulable=max_in_unschedulable,
                              extenders=extenders, event_client=event_client)
        loop = asyncio.get_running_loop()
        stopping: list[asyncio.Task[None]] = []

        def on_signal(sig: signal.Signals) -> None:
            log.info("stopping: letting in-flight binds finish", extra={"signal": sig.name})
            if not stopping:
                stopping.append(loop.create_task(scheduler.stop()))

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, on_signal, sig)
        # As kube-scheduler: SIGUSR2 logs the cache comparer's result, and the map sizes.
        def dump_state() -> None:
            log_comparison(scheduler.compare_cache())
            log.info("internal sizes", extra=scheduler.internal_sizes())

        loop.add_signal_handler(signal.SIGUSR2, dump_state)
        log.info("kubesched starting", extra={"server": client.server, "profiles": sorted(scheduler.names),
                                              **({"extenders": [e.name() for e in scheduler.extenders]}
                                                 if scheduler.extenders else {})})
        endpoints = serving.Endpoints(scheduler.metrics.exposition, scheduler.ready.is_set, scheduler.health,
                                      profiling=config.enable_profiling, set_verbosity=logs.set_verbosity)
        runner = await serving.start_plain(address, dataclasses.replace(
            endpoints, debug=lambda: scheduler.debug_state().page())) if address else None
        try:
            if secure is not None:
                await secure.start(endpoints)
            await scheduler.run()
        finally:
            if secure is not None:
                await secure.close()
            if runner is not None:
                await runner.cleanup()
            if stopping:
                await stopping[0]
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR2):
                with contextlib.suppress(Exception):
                    loop.remove_signal_handler(sig)
        log.info("kubesched stopped", extra={"attempts": scheduler.stats.attempts,
                                             "scheduled": scheduler.stats.scheduled})
