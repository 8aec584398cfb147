"""kube-scheduler v1.37.2's flags that kubesched does not implement: accepted at kube-scheduler's
default value (they then change nothing), refused by name with any other, so a manifest that needs
one stops at start instead of running without it. Hidden from --help; docs/running.md lists them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Unsupported:
    flag: str
    why: str
    # The values, as given, that are kube-scheduler's default (a list flag's items in order, joined by commas).
    defaults: frozenset[str] = frozenset({""})
    boolean: bool = False  # --flag alone means true, as pflag's bool flags


def _bool(flag: str, why: str) -> Unsupported:
    return Unsupported(flag, why, frozenset({"false", "0", "f", "F", "FALSE", "False"}), boolean=True)


REQUEST_HEADER = ("kubesched authenticates client certificates and bearer tokens, not front-proxy request "
                  "headers")
LOG_OPTIONS = "kubesched writes every record to stderr, unbuffered"
FLAGS: tuple[Unsupported, ...] = (
    Unsupported("tls-cipher-suites", "kubesched offers OpenSSL's default cipher suites for TLS 1.2 and 1.3"),
    Unsupported("tls-curve-preferences", "kubesched offers OpenSSL's default key exchange groups"),
    Unsupported("tls-min-version", "kubesched accepts TLS 1.2 and 1.3, as kube-scheduler does by default",
                frozenset({"", "VersionTLS12"})),
    Unsupported("tls-sni-cert-key", "kubesched serves one certificate, --tls-cert-file's or its generated one"),
    _bool("permit-port-sharing", "kubesched does not set SO_REUSEPORT on its listener"),
    Unsupported("requestheader-allowed-names", REQUEST_HEADER),
    Unsupported("requestheader-client-ca-file", REQUEST_HEADER),
    Unsupported("requestheader-extra-headers-prefix", REQUEST_HEADER, frozenset({"", "x-remote-extra-"})),
    Unsupported("requestheader-group-headers", REQUEST_HEADER, frozenset({"", "x-remote-group"})),
    Unsupported("requestheader-uid-headers", REQUEST_HEADER),
    Unsupported("requestheader-username-headers", REQUEST_HEADER, frozenset({"", "x-remote-user"})),
    Unsupported("allow-metric-labels", "kubesched exports every label value of its metrics"),
    Unsupported("allow-metric-labels-manifest", "kubesched exports every label value of its metrics"),
    Unsupported("disabled-metrics", "kubesched exports all of its metrics"),
    Unsupported("show-hidden-metrics-for-version", "kubesched exports none of the metrics kube-scheduler hides"),
    Unsupported("vmodule", "kubesched's verbosity is one level for the whole program (-v)"),
    _bool("log-text-split-stream", LOG_OPTIONS),
    _bool("log-json-split-stream", LOG_OPTIONS),
    Unsupported("log-text-info-buffer-size", LOG_OPTIONS, frozenset({"", "0"})),
    Unsupported("log-json-info-buffer-size", LOG_OPTIONS, frozenset({"", "0"})),
)
BY_PARAM = {f.flag.replace("-", "_"): f for f in FLAGS}


def _check(flag: Unsupported) -> Callable[[click.Context, click.Parameter, tuple[str, ...]], None]:
    def callback(ctx: click.Context, _: click.Parameter, values: tuple[str, ...]) -> None:
        if ctx.resilient_parsing:
            return
        for value in values:
            if value.strip() not in flag.defaults:
                raise click.UsageError(f"kubesched does not support --{flag.flag}={value}: {flag.why} "
                                       "(docs/running.md lists kube-scheduler's flags and what kubesched does "
                                       "with each)", ctx)
    return callback


def unsupported_options(f: F) -> F:
    """The flags above, hidden, taking their values as kube-scheduler's do; none reaches the command."""
    for flag in FLAGS:
        extra: dict[str, Any] = {"is_flag": False, "flag_value": "true"} if flag.boolean else {}
        f = click.option(f"--{flag.flag}", multiple=True, hidden=True, expose_value=False, callback=_check(flag),
                         **extra)(f)
    return f
