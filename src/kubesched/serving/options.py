"""kube-scheduler's secure serving, authentication and authorization options (k8s.io/apiserver
SecureServingOptions, DelegatingAuthenticationOptions, DelegatingAuthorizationOptions, as
cmd/kube-scheduler/app/options sets them), with their defaults, validated once at start. The
flags that fill them are kubesched.cmd.serving_flags'."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from kubesched.serving.auth import DEFAULT_ALWAYS_ALLOW_PATHS, DEFAULT_TTL, path_matcher

DEFAULT_SECURE_PORT = 10259  # kube-scheduler's DefaultKubeSchedulerPort


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
