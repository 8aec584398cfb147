"""Serving like kube-scheduler: the secure port (HTTPS, delegated authentication and authorization)
and the plain --serve-address for local use. `prepare` does the blocking, fallible part before the
event loop (flags, certificate); `SecureServer.start` the rest (clients, client CA lookup, listen)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from kubesched.api import ApiClient, ApiConnectionError, ApiError, ClusterConfig, KubeconfigError, load_config
from kubesched.api.tasks import TaskSet
from kubesched.serving.auth import Authenticator, Authorizer
from kubesched.serving.certs import FILE_REFRESH, PAIR_NAME, CertificateError, DynamicTLS, serving_cert
from kubesched.serving.options import OptionsError, ServingOptions
from kubesched.serving.reviews import ClientCAFromConfigMap, Reviews, lookup_client_ca
from kubesched.serving.server import Endpoints, Limits, raise_open_file_limit, start_plain, start_secure

__all__ = [
    "Endpoints",
    "Limits",
    "OptionsError",
    "SecureServer",
    "ServingError",
    "ServingOptions",
    "prepare",
    "raise_open_file_limit",
    "start_plain",
]

log = logging.getLogger("kubesched")
# k8s.io/apiserver's delegated clients: high enough not to throttle the probes and scrapes they serve.
DELEGATED_QPS, DELEGATED_BURST = 200.0, 400


class ServingError(Exception):
    """The secure port cannot be served as configured; the message names the flag or the cause."""


@dataclass
class SecureServer:
    options: ServingOptions
    tls: DynamicTLS
    authn_config: ClusterConfig | None
    authz_config: ClusterConfig | None
    client_ca: bool  # --client-ca-file given: the ConfigMap is not read
    refresh: float = FILE_REFRESH
    _clients: list[ApiClient] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _tasks: TaskSet = field(default_factory=TaskSet)

    def _client(self, config: ClusterConfig) -> ApiClient:
        for c in self._clients:
            if c.config is config:
                return c
        client = ApiClient(config, qps=DELEGATED_QPS, burst=DELEGATED_BURST, max_connections=8,
                           user_agent="kubesched/delegated-auth")
        self._clients.append(client)
        return client

    async def start(self, endpoints: Endpoints) -> None:
        """Raises ServingError."""
        o = self.options
        authn_client = self._client(self.authn_config) if self.authn_config is not None else None
        authz_client = self._client(self.authz_config) if self.authz_config is not None else None
        if not self.client_ca and authn_client is not None and not o.authentication_skip_lookup:
            controller = ClientCAFromConfigMap(lambda: lookup_client_ca(authn_client), self.tls.set_client_ca,
                                               period=self.refresh)
            if not o.authentication_tolerate_lookup_failure:
                await self._first_client_ca(controller)
            # In the background: an unreachable apiserver must not hold up the start, nor a SIGTERM;
            # client certificates authenticate from when the CA is read, new connections taking it.
            self._tasks.spawn(controller.run(), name="serving/client-ca")
        if self.tls.has_files:
            self._tasks.spawn(self._reload_files(), name="serving/certificate-files")
        authn = Authenticator(Reviews(authn_client).token if authn_client else None,
                              ttl=o.authentication_token_webhook_cache_ttl)
        authz = Authorizer(Reviews(authz_client).access if authz_client else None,
                           always_allow_paths=o.authorization_always_allow_paths,
                           allow_ttl=o.authorization_webhook_cache_authorized_ttl,
                           deny_ttl=o.authorization_webhook_cache_unauthorized_ttl)
        try:
            self._runner = await start_secure(o.bind_address, o.secure_port, self.tls.context, endpoints, authn,
                                              authz)
        except OSError as exc:
            await self.close()
            raise ServingError(f"--secure-port: cannot listen on {o.bind_address or '0.0.0.0'}:{o.secure_port}: "
                               f"{exc.strerror or exc} (--secure-port=0 turns the secure port off)") from None
        log.info("serving securely", extra={"address": f"{o.bind_address}:{o.secure_port}"})

    async def _first_client_ca(self, controller: ClientCAFromConfigMap) -> None:
        try:
            await controller.load_once()
        except (ApiError, ApiConnectionError, ValueError, CertificateError) as exc:
            await self.close()
            raise ServingError(f"cannot read the client CA from kube-system/extension-apiserver-authentication: "
                               f"{exc} (--authentication-tolerate-lookup-failure, --client-ca-file)") from None

    async def _reload_files(self) -> None:
        """The serving pair's files and --client-ca-file, checked every refresh (k8s.io/apiserver
        watches them with fsnotify, and polls CA files every minute)."""
        while True:
            await asyncio.sleep(self.refresh)
            try:
                changed = self.tls.reload_files()
            except CertificateError as exc:
                log.warning("a certificate file does not load; the last good one is served",
                            extra={"detail": str(exc)})
                continue
            if changed:
                log.info("reloaded from the files", extra={"what": ", ".join(changed)})

    async def close(self) -> None:
        await self._tasks.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for c in self._clients:
            await c.close()
        self._clients.clear()


def _delegated(path: str, flag: str, main: ClusterConfig) -> ClusterConfig:
    if not path:
        return main
    try:
        return load_config(path)
    except KubeconfigError as exc:
        raise ServingError(f"{flag}: {exc}") from None


def prepare(options: ServingOptions, main: ClusterConfig) -> SecureServer | None:
    """The secure server to start, or None when --secure-port=0; raises ServingError."""
    if not options.enabled:
        return None
    try:
        pair = serving_cert(options.tls_cert_file, options.tls_private_key_file, options.cert_dir,
                            options.bind_address)
        client_ca = None
        if options.client_ca_file:
            try:
                client_ca = Path(options.client_ca_file).read_bytes()
            except OSError as exc:
                raise CertificateError(f"--client-ca-file: cannot read {options.client_ca_file}: "
                                       f"{exc.strerror or exc}") from None
        # Files are read again when they change (as the apiserver library's, the pair in --cert-dir too).
        cert_files = (options.tls_cert_file, options.tls_private_key_file) if options.tls_cert_file else None
        if cert_files is None and options.cert_dir:
            cert_files = (str(Path(options.cert_dir, f"{PAIR_NAME}.crt")),
                          str(Path(options.cert_dir, f"{PAIR_NAME}.key")))
        tls = DynamicTLS(pair, client_ca, cert_files=cert_files, client_ca_file=options.client_ca_file)
    except CertificateError as exc:
        raise ServingError(str(exc)) from None
    log.info("serving certificate", extra={"source": pair.source})
    return SecureServer(options, tls,
                        _delegated(options.authentication_kubeconfig, "--authentication-kubeconfig", main),
                        _delegated(options.authorization_kubeconfig, "--authorization-kubeconfig", main),
                        client_ca is not None)
