"""`kubesched shadow`: beside another scheduler, what kubesched would have decided for each of its
binds; reads only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Sequence
from typing import IO

import click

from kubesched import logs
from kubesched.api import ApiClient, ClusterConfig
from kubesched.cmd.common import cluster_config, connection_options, load_scheduler_config, plugin_option
from kubesched.config.types import SchedulerConfig
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import ProfileError
from kubesched.serving.server import Endpoints, start_plain
from kubesched.tools.shadow.watch import Shadow

log = logging.getLogger("kubesched.tools.shadow")


@click.command()
@click.option("--scheduler-name", default="default-scheduler", show_default=True,
              help="Judge the binds of pods whose spec.schedulerName is this.")
@click.option("--profile", "profile_name", default=None,
              help="The kubesched profile to judge with (default: the config's first).")
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="The KubeSchedulerConfiguration kubesched would run with (default: kubesched's default profile). "
                   "Give kube-scheduler's own to check kubesched decides as it does.")
@plugin_option
@connection_options
@click.option("--disagreements", "disagreements_path", default=None, metavar="FILE",
              help="Append each verdict other than same/tie to FILE as a JSON line.")
@click.option("--serve-address", default="", metavar="HOST:PORT",
              help="Serve /metrics (kubesched_shadow_decisions_total{verdict}, ...) and /healthz here.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info",
              show_default=True)
def shadow(scheduler_name: str, profile_name: str | None, config_path: str | None, plugin_flags: tuple[str, ...],
           kubeconfig: str | None, context: str | None, disagreements_path: str | None, serve_address: str,
           log_format: str, log_level: str) -> None:
    """Watch the pods another scheduler binds and judge each with kubesched's profile on the state just
    before that bind: same node, a tie (a node of equal best score), a different node (both totals),
    or unschedulable (kubesched's message). Writes nothing to the cluster. Logs a summary on exit and
    on SIGUSR1.

    \b
    Examples:
      kubesched shadow --serve-address 127.0.0.1:10261 --disagreements /var/log/kubesched-shadow.jsonl
      kubesched shadow --config my-kube-scheduler.yaml --profile default-scheduler
    """
    logs.setup(log_format, log_level)
    config, extra = load_scheduler_config(config_path, plugin_flags)
    cluster = cluster_config(config, kubeconfig, context)
    out: IO[bytes] | None = open(disagreements_path, "ab") if disagreements_path else None  # noqa: SIM115
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_watch(cluster, config, scheduler_name, profile_name, extra, out, serve_address))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    except ProfileError as exc:
        raise click.ClickException(f"{config_path or 'the default config'}: {exc}") from None
    finally:
        if out is not None:
            out.close()


async def _watch(cluster: ClusterConfig, config: SchedulerConfig, scheduler_name: str, profile_name: str | None,
                 extra: Sequence[PluginSpec], out: IO[bytes] | None, address: str) -> None:
    conn = config.client_connection
    async with ApiClient(cluster, qps=conn.qps, burst=conn.burst) as client:
        watcher = Shadow(client, config, scheduler_name=scheduler_name, profile_name=profile_name,
                         out_of_tree=extra, disagreements=out)
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        loop.add_signal_handler(signal.SIGUSR1, watcher.log_summary, "SIGUSR1")
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stopping.set)
        runner = (await start_plain(address, Endpoints(watcher.metrics.exposition, watcher.ready.is_set,
                                                       watcher.health)) if address else None)
        task = asyncio.ensure_future(watcher.run())
        stop = asyncio.ensure_future(stopping.wait())
        try:
            await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
        finally:
            task.cancel()
            stop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await watcher.stop()
            if runner is not None:
                await runner.cleanup()
            watcher.log_summary("exit")
            for sig in (signal.SIGUSR1, signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(Exception):
                    loop.remove_signal_handler(sig)
