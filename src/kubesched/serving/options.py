"""kube-scheduler's secure serving, authentication and authorization flags (k8s.io/apiserver
SecureServingOptions, DelegatingAuthenticationOptions, DelegatingAuthorizationOptions, as
cmd/kube-scheduler/app/options sets them), with their defaults, validated once at start."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from kubesched.cli_types import Duration
from kubesched.serving.auth import DEFAULT_ALWAYS_ALLOW_PATHS, DEFAULT_TTL, path_matcher

DEFAULT_SECURE_PORT = 10259  # kube-scheduler's DefaultKubeSchedulerPort
F = TypeVar("F", bound=Callable[..., Any])


class OptionsError(ValueError):
    """A flag with a bad value; the message names the flag and what would be valid."""


@dataclass(frozen=True)
class ServingOptions:
    secure_port: int = DEFAULT_SECURE_PORT
    bind_address: str = "0.0.0.0"
    cert_dir: str = ""
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    client_ca_file: str = ""
    authentication_kubeconfig: str = ""
    authorization_kubeconfig: str = ""
    authentication_skip_lookup: bool = False
    authentication_tolerate_lookup_failure: bool = True
    authentication_token_webhook_cache_ttl: float = DEFAULT_TTL
    authorization_webhook_cache_authorized_ttl: float = DEFAULT_TTL
    authorization_webhook_cache_unauthorized_ttl: float = DEFAULT_TTL
    authorization_always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW_PATHS

    @property
    def enabled(self) -> bool:
        return self.secure_port != 0

    def validate(self) -> ServingOptions:
        """self, or OptionsError for the first bad flag (SecureServingOptions.Validate and friends)."""
        if not 0 <= self.secure_port <= 65535:
            raise OptionsError(f"--secure-port {self.secure_port} must be between 0 and 65535, inclusive. "
                               "0 for turning off secure port")
        if self.bind_address:
            try:
                ipaddress.ip_address(self.bind_address)
            except ValueError:
                raise OptionsError(f"--bind-address {self.bind_address!r}: expected an IP address such as "
                                   "0.0.0.0, 127.0.0.1 or ::") from None
        if bool(self.tls_cert_file) != bool(self.tls_private_key_file):
            raise OptionsError("--tls-cert-file and --tls-private-key-file must be given together")
        for flag, ttl in (("--authentication-token-webhook-cache-ttl", self.authentication_token_webhook_cache_ttl),
                          ("--authorization-webhook-cache-authorized-ttl",
                           self.authorization_webhook_cache_authorized_ttl),
                          ("--authorization-webhook-cache-unauthorized-ttl",
                           self.authorization_webhook_cache_unauthorized_ttl)):
            if ttl < 0:
                raise OptionsError(f"{flag} must not be negative (0 turns the cache off)")
        try:
            path_matcher(self.authorization_always_allow_paths)
        except ValueError as exc:
            raise OptionsError(f"--authorization-always-allow-paths: {exc}") from None
        return self


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
