"""The flags of kube-scheduler's secure serving, authentication and authorization, in its spelling
and with its defaults, read into kubesched.serving.options.ServingOptions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.cmd.params import Duration
from kubesched.serving.auth import DEFAULT_ALWAYS_ALLOW_PATHS, DEFAULT_TTL
from kubesched.serving.options import DEFAULT_SECURE_PORT, ServingOptions

F = TypeVar("F", bound=Callable[..., Any])


def _paths(_: click.Context, __: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """pflag's StringSlice: repeatable and comma-separated; given at all, it replaces the default."""
    if not value:
        return DEFAULT_ALWAYS_ALLOW_PATHS
    return tuple(p.strip() for v in value for p in v.split(",") if p.strip())


FLAG_NAMES = (
    "secure_port", "bind_address", "cert_dir", "tls_cert_file", "tls_private_key_file", "client_ca_file",
    "authentication_kubeconfig", "authorization_kubeconfig", "authentication_skip_lookup",
    "authentication_tolerate_lookup_failure", "authentication_token_webhook_cache_ttl",
    "authorization_webhook_cache_authorized_ttl", "authorization_webhook_cache_unauthorized_ttl",
    "authorization_always_allow_paths",
)


def serving_options(f: F) -> F:
    """The flags, in kube-scheduler's spelling and with its defaults."""
    options = [
        click.option("--secure-port", type=int, default=DEFAULT_SECURE_PORT, show_default=True,
                     help="Serve /healthz, /livez, /readyz and /metrics over HTTPS with authentication and "
                          "authorization on this port; 0 turns it off."),
        click.option("--bind-address", default="0.0.0.0", show_default=True, metavar="IP",
                     help="The IP address the secure port listens on; 0.0.0.0 or :: for every interface."),
        click.option("--cert-dir", default="", metavar="DIR",
                     help="Where the serving pair kubesched.crt/kubesched.key is (generated, self-signed, when "
                          "absent). Ignored with --tls-cert-file. Default: a self-signed pair in memory."),
        click.option("--tls-cert-file", default="", metavar="FILE",
                     help="The x509 serving certificate (intermediate CAs after it)."),
        click.option("--tls-private-key-file", default="", metavar="FILE",
                     help="The private key matching --tls-cert-file."),
        click.option("--client-ca-file", default="", metavar="FILE",
                     help="Client certificates signed by one of these CAs authenticate as their CN, with their "
                          "O's as groups. Default: the cluster's, read from kube-system/"
                          "extension-apiserver-authentication unless --authentication-skip-lookup."),
        click.option("--authentication-kubeconfig", default="", metavar="FILE",
                     help="Kubeconfig allowed to create tokenreviews.authentication.k8s.io (default: the main "
                          "kubeconfig)."),
        click.option("--authorization-kubeconfig", default="", metavar="FILE",
                     help="Kubeconfig allowed to create subjectaccessreviews.authorization.k8s.io (default: "
                          "the main kubeconfig)."),
        click.option("--authentication-skip-lookup", type=click.BOOL, default=False, is_flag=False,
                     flag_value=True, metavar="[=BOOL]",
                     help="Do not read the client CA from the cluster's extension-apiserver-authentication "
                          "ConfigMap."),
        click.option("--authentication-tolerate-lookup-failure", type=click.BOOL, default=True, is_flag=False,
                     flag_value=True, metavar="[=BOOL]", show_default=True,
                     help="Start even if that ConfigMap cannot be read (it is read again, backing off; client "
                          "certificates are refused until it is, unless --client-ca-file)."),
        click.option("--authentication-token-webhook-cache-ttl", type=Duration(), default=DEFAULT_TTL,
                     metavar="DURATION", help="How long TokenReview answers are cached (10s)."),
        click.option("--authorization-webhook-cache-authorized-ttl", type=Duration(), default=DEFAULT_TTL,
                     metavar="DURATION", help="How long allowed SubjectAccessReview answers are cached (10s)."),
        click.option("--authorization-webhook-cache-unauthorized-ttl", type=Duration(), default=DEFAULT_TTL,
                     metavar="DURATION", help="How long denied SubjectAccessReview answers are cached (10s)."),
        click.option("--authorization-always-allow-paths", multiple=True, callback=_paths, metavar="PATHS",
                     help="Paths served without authorization, comma-separated; a trailing * is a prefix "
                          "(default: /healthz,/readyz,/livez)."),
        # Accepted, meaning what they mean for a server that speaks HTTP/1.1 only and, as Go's
        # listeners on Linux, always sets SO_REUSEADDR.
        click.option("--disable-http2-serving", type=click.BOOL, default=False, is_flag=False, flag_value=True,
                     metavar="[=BOOL]", expose_value=False,
                     help="Accepted: kubesched serves HTTP/1.1 only, as kube-scheduler with this flag."),
        click.option("--http2-max-streams-per-connection", type=click.IntRange(min=0), default=0, metavar="N",
                     expose_value=False, help="Accepted: kubesched serves HTTP/1.1 only, no stream to limit."),
        click.option("--permit-address-sharing", type=click.BOOL, default=False, is_flag=False, flag_value=True,
                     metavar="[=BOOL]", expose_value=False,
                     help="Accepted: the secure port's listener always has SO_REUSEADDR, as Go's have on Linux."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def from_flags(flags: dict[str, Any]) -> ServingOptions:
    """The options from the flags `serving_options` added (popped from `flags`); raises OptionsError."""
    given = {name: flags.pop(name) for name in FLAG_NAMES if name in flags}
    given["authorization_always_allow_paths"] = tuple(given.get("authorization_always_allow_paths",
                                                                DEFAULT_ALWAYS_ALLOW_PATHS))
    return ServingOptions(**given).validate()
