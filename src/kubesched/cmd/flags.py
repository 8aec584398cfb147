"""kube-scheduler's common flags for `kubesched run`, so the arguments of a kube-scheduler manifest
work: --v, --logging-format, --kube-api-qps/--kube-api-burst, --master, --write-config-to, --version
(the secure serving and delegated auth flags are in kubesched.cmd.serving_flags, the
--leader-elect* flags in kubesched.cmd.leader)."""

from __future__ import annotations

import dataclasses
import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched import __version__
from kubesched.api import ClusterConfig
from kubesched.api.kubeconfig import Credentials
from kubesched.config.types import SchedulerConfig

F = TypeVar("F", bound=Callable[..., Any])
DEBUG_VERBOSITY = 4  # klog V(4) and up is what kube-scheduler logs per pod and per plugin


def _print_version(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value is None or ctx.resilient_parsing:
        return
    if value.lower() in ("false", "0"):
        return
    if value.lower() not in ("true", "1", "raw"):
        raise click.BadParameter(f"{value!r}: expected true, false or raw", param_hint="--version")
    click.echo(f"kubesched {__version__}" if value.lower() != "raw" else
               f"kubesched {__version__} (kube-scheduler v1.37.2 semantics)")
    ctx.exit(0)


def common_options(f: F) -> F:
    options = [
        click.option("--v", "verbosity", type=click.IntRange(min=0), default=None, metavar="LEVEL",
                     help="klog's verbosity: 0-3 log at info, 4 and up at debug (--log-level wins when both "
                          "are given)."),
        click.option("--logging-format", type=click.Choice(["text", "json"]), default=None,
                     help="kube-scheduler's name for --log-format."),
        click.option("--kube-api-qps", type=float, default=None, metavar="QPS",
                     help="Requests a second to the apiserver (clientConnection.qps; ignored with --config, "
                          "as kube-scheduler does). Negative: no client-side limit."),
        click.option("--kube-api-burst", type=click.IntRange(min=0), default=None, metavar="N",
                     help="Requests above the rate allowed in a burst (clientConnection.burst; ignored with "
                          "--config, as kube-scheduler does)."),
        click.option("--master", default=None, metavar="URL",
                     help="The apiserver's address, over the kubeconfig's server."),
        click.option("--write-config-to", default=None, metavar="FILE",
                     help="Write the effective configuration (KubeSchedulerConfiguration, defaults filled in) "
                          "to FILE and exit."),
        click.option("--version", default=None, is_flag=False, flag_value="true", expose_value=False,
                     is_eager=True, callback=_print_version, metavar="[=true|raw]",
                     help="Print the version and exit."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def log_settings(log_format: str | None, log_level: str | None, logging_format: str | None,
                 verbosity: int | None) -> tuple[str, str]:
    """(format, level) from kubesched's and kube-scheduler's spellings; raises click.BadParameter
    when both spellings of the format are given and disagree."""
    if log_format and logging_format and log_format != logging_format:
        raise click.BadParameter(f"{logging_format!r} contradicts --log-format={log_format}; give one of them",
                                 param_hint="--logging-format")
    fmt = log_format or logging_format or "text"
    if log_level:
        return fmt, log_level
    return fmt, "debug" if verbosity is not None and verbosity >= DEBUG_VERBOSITY else "info"


def apply_client_flags(config: SchedulerConfig, config_path: str | None, qps: float | None,
                       burst: int | None) -> tuple[SchedulerConfig, list[str]]:
    """kube-scheduler's ApplyDeprecated: --kube-api-qps/--kube-api-burst set clientConnection only
    without --config. Returns the config and the flags ignored (for a warning)."""
    if qps is None and burst is None:
        return config, []
    if config_path:
        return config, [flag for flag, v in (("--kube-api-qps", qps), ("--kube-api-burst", burst)) if v is not None]
    cc = config.client_connection
    cc = dataclasses.replace(cc, qps=cc.qps if qps is None else qps, burst=cc.burst if burst is None else burst)
    return dataclasses.replace(config, client_connection=cc), []


def check_master(master: str) -> str:
    """The URL, or click.BadParameter: kube-scheduler's --master is an http(s) URL or a host:port."""
    url = master if "://" in master else f"https://{master}"
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise click.BadParameter(f"{master!r}: expected the apiserver's URL, e.g. https://10.0.0.1:6443",
                                 param_hint="--master")
    try:
        parsed.port  # noqa: B018 - validates the port
    except ValueError:
        raise click.BadParameter(f"{master!r}: the port is not a number in 1-65535", param_hint="--master") from None
    return url.rstrip("/")


def with_master(cluster: ClusterConfig | None, master: str) -> ClusterConfig:
    """The kubeconfig's cluster with its server replaced, or, with no kubeconfig at all, a bare
    connection to `master` (system roots, no credentials) as client-go's BuildConfigFromFlags."""
    if cluster is None:
        from kubesched.api.kubeconfig import build_ssl_context

        ssl_context = build_ssl_context(ca_pem=None) if master.startswith("https://") else None
        return ClusterConfig(server=master, ssl_context=ssl_context, credentials=Credentials(), source="--master")
    return dataclasses.replace(cluster, server=master)
