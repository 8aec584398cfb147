"""kube-scheduler's common flags for `kubesched run`, so the arguments of a kube-scheduler manifest
work: -v/--v, --logging-format, --log-flush-frequency, its "deprecated" group (--kube-api-qps,
--kube-api-burst, --kube-api-content-type, --profiling, --contention-profiling,
--pod-max-in-unschedulable-pods-duration), --master, --write-config-to, --version (the secure
serving and delegated auth flags are in kubesched.cmd.serving_flags, the --leader-elect* flags in
kubesched.cmd.leader, the feature gates in kubesched.cmd.gate_flags, the flags kubesched refuses in
kubesched.cmd.unsupported_flags)."""

from __future__ import annotations

import dataclasses
import logging
import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched import __version__
from kubesched.api import ClusterConfig
from kubesched.api.kubeconfig import Credentials
from kubesched.backend.queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
from kubesched.cmd.params import Duration
from kubesched.config.types import SchedulerConfig
from kubesched.logs import level_for_verbosity

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("kubesched")
JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"  # kube-scheduler's default --kube-api-content-type
# The flags kube-scheduler applies only without --config (its ApplyDeprecated): param -> flag
DEPRECATED_FLAGS = {
    "kube_api_qps": "--kube-api-qps", "kube_api_burst": "--kube-api-burst",
    "kube_api_content_type": "--kube-api-content-type", "profiling": "--profiling",
    "contention_profiling": "--contention-profiling",
}


class Verbosity(click.ParamType[int]):
    """klog's level: an unsigned number; `-v=2` reaches click as "=2"."""

    name = "level"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).removeprefix("=")
        if not text.isascii() or not text.isdigit() or int(text) >= 1 << 32:
            self.fail(f"{value!r}: expected a number, 0 or more", param, ctx)
        return int(text)


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
        click.option("-v", "--v", "verbosity", type=Verbosity(), default=None, metavar="LEVEL",
                     help="klog's verbosity: 0-3 log at info, 4 and up at debug (--log-level wins when both "
                          "are given)."),
        click.option("--logging-format", type=click.Choice(["text", "json"]), default=None,
                     help="text (default) or json."),
        click.option("--log-format", type=click.Choice(["text", "json"]), default=None, hidden=True,
                     help="Deprecated: --logging-format."),
        click.option("--log-flush-frequency", type=Duration(), default=5.0, metavar="DURATION", expose_value=False,
                     help="Accepted: kubesched writes each record as it is logged, nothing waits for a flush."),
        click.option("--kube-api-qps", type=float, default=None, metavar="QPS",
                     help="Requests a second to the apiserver (clientConnection.qps; ignored with --config, "
                          "as kube-scheduler does). Negative: no client-side limit."),
        click.option("--kube-api-burst", type=click.IntRange(min=0), default=None, metavar="N",
                     help="Requests above the rate allowed in a burst (clientConnection.burst; ignored with "
                          "--config, as kube-scheduler does)."),
        click.option("--kube-api-content-type", default=None, metavar="TYPE",
                     help=f"clientConnection.contentType (ignored with --config): {PROTOBUF} (the default, "
                          f"as kube-scheduler's) writes each pod's binding and event as protobuf; {JSON} "
                          "writes them as JSON. Reads and patches are JSON either way."),
        click.option("--profiling", type=click.BOOL, default=None, is_flag=False, flag_value=True,
                     metavar="[=BOOL]",
                     help="enableProfiling (default true; ignored with --config): serve /debug/pprof/ (a "
                          "Python CPU profile, the tasks' stacks) and /debug/flags/v; false serves no /debug/ "
                          "path."),
        click.option("--contention-profiling", type=click.BOOL, default=None, is_flag=False, flag_value=True,
                     metavar="[=BOOL]",
                     help="enableContentionProfiling (ignored with --config): accepted; Python has no block "
                          "profile, so it changes nothing."),
        click.option("--pod-max-in-unschedulable-pods-duration", type=Duration(),
                     default=DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, metavar="DURATION",
                     help="How long a pod stays in unschedulablePods before it is moved to backoffQ or "
                          "activeQ without a cluster event (5m; honoured with --config too, as kube-scheduler)."),
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
    fmt = logging_format or log_format or "text"
    if log_level:
        return fmt, log_level
    return fmt, level_for_verbosity(verbosity or 0)


def content_type(value: str) -> str:
    """--kube-api-content-type=`value`, or click.BadParameter for one kubesched cannot send."""
    if value in (JSON, PROTOBUF):
        return value
    raise click.BadParameter(f"{value!r}: expected {PROTOBUF} (kube-scheduler's default) or {JSON}",
                             param_hint="--kube-api-content-type")


def apply_deprecated(config: SchedulerConfig, config_path: str | None,
                     flags: dict[str, Any]) -> tuple[SchedulerConfig, list[str]]:
    """kube-scheduler's ApplyDeprecated: the flags of DEPRECATED_FLAGS (popped from `flags`; None when
    not given) set clientConnection and the profiling fields only without --config. Returns the
    config and the flags given but ignored (for a warning)."""
    given = {name: v for name in DEPRECATED_FLAGS if (v := flags.pop(name, None)) is not None}
    if config_path:
        return config, [DEPRECATED_FLAGS[name] for name in given]
    if "kube_api_content_type" in given:
        given["kube_api_content_type"] = content_type(given["kube_api_content_type"])
    cc = config.client_connection
    cc = dataclasses.replace(cc, qps=given.get("kube_api_qps", cc.qps), burst=given.get("kube_api_burst", cc.burst),
                             content_type=given.get("kube_api_content_type", cc.content_type))
    return dataclasses.replace(
        config, client_connection=cc, enable_profiling=given.get("profiling", config.enable_profiling),
        enable_contention_profiling=given.get("contention_profiling", config.enable_contention_profiling)), []


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
