"""kube-scheduler's HTTPExtender: each verb is a POST of JSON to urlPrefix/verb, answered with 200
and JSON (extender_wire.py), within httpTimeout (5 s by default).

TLS as kube-scheduler's makeTransport sets it up: tlsConfig's CA, client certificate, server name
and insecure flag; enableHTTPS without a CA means no verification (enableHTTPS does not change the
URL's scheme). Proxies as Go's transport picks them (HTTPS_PROXY, HTTP_PROXY, NO_PROXY). Failures
read as the errors Go's http.Client gives, since they end up in FailedScheduling messages.
"""

from __future__ import annotations

import errno
import logging
import ssl
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path

import aiohttp

from kubesched.api import extender_wire as wire
from kubesched.api.kubeconfig import build_ssl_context
from kubesched.api.proxy import route_for
from kubesched.framework.extender import (
    ConfiguredExtender,
    ExtenderConfig,
    ExtenderError,
    FilterResult,
    Victims,
    bare_node_info,
    go_quote,
    victims_from_meta,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod

log = logging.getLogger(__name__)

JSON = "application/json"
# Go's http.Transport keeps up to 2 idle connections per host; a few more let filter and
# prioritize calls of concurrent binds overlap.
MAX_CONNECTIONS = 8


class ExtenderConfigError(ValueError):
    """An extender whose TLS settings kube-scheduler would refuse at start-up."""


def ssl_context_for(config: ExtenderConfig) -> ssl.SSLContext | None:
    """makeTransport's TLS: None for the default one (system roots), else a context from tlsConfig;
    enableHTTPS with no CA turns verification off."""
    tls = config.tls_config
    insecure = bool(tls and tls.insecure)
    has_ca = bool(tls and (tls.ca_file or tls.ca_data))
    if config.enable_https and not has_ca:
        insecure = True
    server_name = tls.server_name if tls else ""
    has_cert = bool(tls and (tls.cert_file or tls.cert_data or tls.key_file or tls.key_data))
    if not (has_ca or has_cert or insecure or server_name):
        return None
    if has_ca and insecure:
        raise ExtenderConfigError("specifying a root certificates file with the insecure flag is not allowed")
    assert tls is not None or insecure

    def data(inline: bytes, file: str) -> bytes | None:
        if inline:
            return inline
        if file:
            try:
                return Path(file).read_bytes()
            except OSError as exc:
                raise ExtenderConfigError(f"open {file}: {exc.strerror or exc}") from exc
        return None

    ca = data(tls.ca_data, tls.ca_file) if tls else None
    cert = data(tls.cert_data, tls.cert_file) if tls else None
    key = data(tls.key_data, tls.key_file) if tls else None
    if bool(cert) != bool(key):
        raise ExtenderConfigError("tls: both a client certificate and its key are needed")
    try:
        return build_ssl_context(ca_pem=ca, cert_pem=cert, key_pem=key, insecure=insecure)
    except (ssl.SSLError, ValueError) as exc:
        raise ExtenderConfigError(f"tlsConfig: {exc}") from exc


class HTTPExtender(ConfiguredExtender):
    """The Extender port over HTTP. Build it inside the event loop; close() it at the end."""

    def __init__(self, config: ExtenderConfig, environ: Mapping[str, str] | None = None) -> None:
        super().__init__(config)
        self._ssl = ssl_context_for(config)
        self._server_name = config.tls_config.server_name if config.tls_config else ""
        self._session: aiohttp.ClientSession | None = None
        self._route = route_for(config.url_prefix, environ=environ)

    def _url(self, verb: str) -> str:
        return self.config.url_prefix.rstrip("/") + "/" + verb

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = self._route.connector(limit=MAX_CONNECTIONS, keepalive_timeout=90,
                                              ssl=self._ssl if self._ssl is not None else True)
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                                  headers={"User-Agent": "kubesched"})
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, verb: str, body: bytes) -> bytes:
        """POST the args to urlPrefix/verb: the answer's body, or ExtenderError as Go words the failure."""
        url = self._url(verb)
        kw: dict[str, object] = {}
        if self._server_name:
            kw["server_hostname"] = self._server_name
        if refusal := self._route.refusal():
            raise ExtenderError(f'Post "{url}": {refusal}')
        kw.update(self._route.request_kwargs())
        stage = "awaiting headers"
        try:
            async with self.session.post(url, data=body, headers={"Content-Type": JSON},
                                         timeout=aiohttp.ClientTimeout(total=self.config.timeout),
                                         **kw) as resp:  # type: ignore[arg-type]
                if resp.status != 200:
                    raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
                stage = "reading body"
                return await resp.read()
        except TimeoutError:
            detail = ("context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
                      if stage == "awaiting headers" else
                      "context deadline exceeded (Client.Timeout or context cancellation while reading body)")
            raise ExtenderError(f'Post "{url}": {detail}') from None
        except aiohttp.ClientError as exc:
            raise ExtenderError(f'Post "{url}": {_go_dial_error(url, exc)}') from None

    async def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterResult:
        if not self.config.filter_verb:
            return FilterResult(list(nodes))
        cache_capable = self.config.node_cache_capable
        answer = wire.filter_result(await self.send(self.config.filter_verb,
                                                    wire.extender_args(pod, nodes, cache_capable)))
        if answer.error:
            raise ExtenderError(answer.error)
        kept: list[NodeInfo] = []
        if cache_capable and answer.node_names is not None:
            by_name = {ni.name: ni for ni in nodes}
            for name in answer.node_names:
                ni = by_name.get(name)
                if ni is None:
                    raise ExtenderError(f"extender {go_quote(self.name())} claims a filtered node {go_quote(name)} "
                                        "which is not found in the input node list")
                kept.append(ni)
        elif answer.nodes is not None:
            kept = [bare_node_info(node) for node in answer.nodes]
        return FilterResult(kept, answer.failed, answer.failed_and_unresolvable)

    async def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        if not self.config.prioritize_verb:
            return [(ni.name, 0) for ni in nodes], 0
        body = await self.send(self.config.prioritize_verb,
                               wire.extender_args(pod, nodes, self.config.node_cache_capable))
        return wire.host_priority_list(body), self.config.weight

    async def bind(self, pod: Pod, node: str) -> None:
        if not self.is_binder():
            raise ExtenderError("unexpected empty bindVerb in extender")
        error = wire.binding_error(await self.send(self.config.bind_verb, wire.binding_args(pod, node)))
        if error:
            raise ExtenderError(error)

    async def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                                 snapshot: Snapshot) -> dict[str, Victims]:
        if not self.supports_preemption():
            raise ExtenderError(f"preempt verb is not defined for extender {self.name()} but run into "
                                "ProcessPreemption")
        body = await self.send(self.config.preempt_verb,
                               wire.preemption_args(pod, victims, self.config.node_cache_capable))
        return victims_from_meta(self.name(), wire.preemption_result(body), snapshot)


def _go_dial_error(url: str, exc: aiohttp.ClientError) -> str:
    """The part of Go's *url.Error after the URL, for the connection failures a user meets."""
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.NonHttpUrlClientError):
        return f"unsupported protocol scheme {go_quote(urllib.parse.urlsplit(url).scheme)}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        parsed = urllib.parse.urlsplit(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        host = parsed.hostname or ""
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        os_error = exc.os_error
        if getattr(os_error, "errno", None) == errno.ECONNREFUSED:
            return f"dial tcp {address}: connect: connection refused"
        if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientSSLError):
            return f"tls: {os_error}"
        return f"dial tcp {address}: {os_error.strerror or os_error}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "EOF"
    return f"{type(exc).__name__}: {exc}"


def http_extenders(configs: Sequence[ExtenderConfig]) -> list[HTTPExtender]:
    """One HTTPExtender per configured extender, in the config's order (raises ExtenderConfigError)."""
    return [HTTPExtender(c) for c in configs]
