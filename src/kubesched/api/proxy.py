"""The proxy client-go would use for a server, and the connections through it.

Which proxy: the cluster's `proxy-url`, else HTTPS_PROXY / HTTP_PROXY / NO_PROXY as Go's
http.ProxyFromEnvironment reads them. How: an http(s) proxy is aiohttp's own (`proxy=`, a CONNECT
tunnel for https servers); a socks5 one (socks5h too, from the environment: Go's Transport treats
them alike) is dialled here with python-socks, the server's name sent to the proxy to resolve as
Go's socks dialer does, and the TLS handshake then done by asyncio over that socket, so the
kubeconfig's `tls-server-name` and CA apply as on a direct connection. (aiohttp-socks does the
handshake itself with the URL's host and so would drop `tls-server-name`.)
"""

from __future__ import annotations

import asyncio
import base64
import errno
import ipaddress
import os
import socket
import ssl
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp
import python_socks
from aiohttp.abc import AbstractResolver, ResolveResult
from python_socks.async_.asyncio import Proxy as _SocksDialer

if TYPE_CHECKING:
    from aiohttp.client_proto import ResponseHandler
    from aiohttp.connector import AddrInfoType

SOCKS_SCHEMES = ("socks5", "socks5h")
HTTP_SCHEMES = ("http", "https")
SOCKS_PORT = 1080  # Go's default port for a socks5 proxy URL without one


def _env(environ: Mapping[str, str], *names: str) -> str:
    """httpproxy.getEnvAny: the first of the names set to something."""
    for name in names:
        if environ.get(name):
            return environ[name]
    return ""


def _parse_proxy(value: str) -> str | None:
    """httpproxy.parseProxy: a value without a scheme (or host) is read as http://value."""
    try:
        url = urllib.parse.urlsplit(value)
        if url.scheme and url.netloc:
            return value
    except ValueError:
        pass
    try:
        urllib.parse.urlsplit("http://" + value).port  # noqa: B018  # raises for what is not a URL
    except ValueError:
        return None
    return "http://" + value


def _no_proxy(host: str, port: str, no_proxy: str) -> bool:
    """httpproxy's useProxy, negated: localhost and loopback addresses, then NO_PROXY's entries
    ("*"; a CIDR or an IP, optionally with a port, for IP hosts; "domain" for it and its
    subdomains, ".domain" or "*.domain" for its subdomains only, optionally with a port)."""
    if host == "localhost":
        return True
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None and ip.is_loopback:
        return True
    host = host.strip().lower()
    for entry in no_proxy.split(","):
        p = entry.strip().lower()
        if not p:
            continue
        if p == "*":
            return True
        try:
            net = ipaddress.ip_network(p, strict=False) if "/" in p else None
        except ValueError:
            net = None
        if net is not None:
            if ip is not None and ip in net:
                return True
            continue
        phost, pport = p, ""
        split = urllib.parse.urlsplit("//" + p)
        try:
            if split.port is not None:
                phost, pport = split.hostname or "", str(split.port)
        except ValueError:
            pass
        phost = phost.removeprefix("[").removesuffix("]")
        try:
            pip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(phost)
        except ValueError:
            pip = None
        if pip is not None:
            if ip is not None and ip == pip and pport in ("", port):
                return True
            continue
        if not phost or ip is not None:
            continue
        phost = phost.removeprefix("*")
        exact = not phost.startswith(".")
        suffix = phost if phost.startswith(".") else "." + phost
        if (host.endswith(suffix) or (exact and host == suffix[1:])) and pport in ("", port):
            return True
    return False


def proxy_for(server: str, proxy_url: str = "", environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy client-go would use for `server`: the cluster's proxy-url (http.ProxyURL, for every
    host), else http.ProxyFromEnvironment's (HTTPS_PROXY for https, HTTP_PROXY for http, not in a
    CGI environment; NO_PROXY); None for a direct connection."""
    if proxy_url:
        return proxy_url
    env = os.environ if environ is None else environ
    url = urllib.parse.urlsplit(server)
    if url.scheme == "https":
        value = _env(env, "HTTPS_PROXY", "https_proxy")
    elif url.scheme == "http":
        value = _env(env, "HTTP_PROXY", "http_proxy")
        if value and env.get("REQUEST_METHOD"):  # Go refuses it (golang.org/s/cgihttpproxy)
            return None
    else:
        return None
    proxy = _parse_proxy(value) if value else None
    if proxy is None:
        return None
    port = str(url.port or (443 if url.scheme == "https" else 80))
    if _no_proxy(url.hostname or "", port, _env(env, "NO_PROXY", "no_proxy")):
        return None
    return proxy


def proxy_and_auth(proxy: str) -> tuple[str, dict[str, str]]:
    """The proxy URL without its user:password, and the Proxy-Authorization Go's Transport sends
    for them."""
    url = urllib.parse.urlsplit(proxy)
    if url.username is None:
        return proxy, {}
    user = urllib.parse.unquote(url.username)
    password = urllib.parse.unquote(url.password or "")
    netloc = url.netloc.rsplit("@", 1)[1]
    bare = urllib.parse.urlunsplit(url._replace(netloc=netloc))
    return bare, {"Proxy-Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@dataclass(frozen=True, slots=True)
class Socks5:
    """A SOCKS5 proxy, with the user and password of its URL (RFC 1929) when it has them."""

    host: str
    port: int
    username: str | None = None
    password: str | None = None

    async def dial(self, host: str, port: int) -> socket.socket:
        """A TCP connection to host:port through the proxy. A name is sent as is for the proxy to
        resolve (Go's socks dialer does not look it up first). Failures are OSError, naming the
        proxy but never its credentials; the caller bounds the time (asyncio.timeout)."""
        dialer = _SocksDialer(python_socks.ProxyType.SOCKS5, self.host, self.port,
                              username=self.username, password=self.password, rdns=True)
        try:
            return await dialer.connect(host, port)
        except python_socks.ProxyTimeoutError as e:
            raise TimeoutError(f"socks5 proxy {self.host}:{self.port}: {e}") from None
        except python_socks.ProxyConnectionError as e:
            raise ConnectionError(e.errno, f"socks5 proxy: {e.strerror or e}") from None
        except python_socks.ProxyError as e:
            # errno set so that aiohttp's ClientConnectorError shows the message
            raise ConnectionError(errno.ECONNABORTED,
                                  f"socks5 proxy {self.host}:{self.port} did not connect {host}:{port}: {e}") from None


def socks5_of(proxy: str) -> Socks5:
    url = urllib.parse.urlsplit(proxy)
    return Socks5(
        host=url.hostname or "",
        port=url.port or SOCKS_PORT,
        username=urllib.parse.unquote(url.username) if url.username is not None else None,
        password=urllib.parse.unquote(url.password) if url.password is not None else None,
    )


@dataclass(frozen=True, slots=True)
class Route:
    """How requests reach one server: direct (all None), through an http(s) proxy (`http`, its
    Proxy-Authorization in `headers`) or through a socks5 one (`socks`). `unsupported` names the
    scheme of a proxy neither speaks (from the environment: the kubeconfig refuses them)."""

    http: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    socks: Socks5 | None = None
    unsupported: str = ""

    def refusal(self) -> str:
        """Why no request can go out ("" when they can): never direct when a proxy was asked for."""
        if not self.unsupported:
            return ""
        return f'the proxy has the scheme "{self.unsupported}": kubesched speaks only http, https and socks5 proxies'

    def request_kwargs(self) -> dict[str, Any]:
        """aiohttp's per-request proxy arguments: only an http(s) proxy has any."""
        if self.http is None:
            return {}
        if self.headers:
            return {"proxy": self.http, "proxy_headers": dict(self.headers)}
        return {"proxy": self.http}

    def connector(self, **kwargs: Any) -> aiohttp.TCPConnector:
        """The session's connector: one that dials through the socks5 proxy, else aiohttp's."""
        if self.socks is not None:
            return SocksConnector(self.socks, **kwargs)
        return aiohttp.TCPConnector(**kwargs)


def route_for(server: str, proxy_url: str = "", environ: Mapping[str, str] | None = None) -> Route:
    proxy = proxy_for(server, proxy_url, environ)
    if proxy is None:
        return Route()
    scheme = urllib.parse.urlsplit(proxy).scheme.lower()
    if scheme in SOCKS_SCHEMES:
        return Route(socks=socks5_of(proxy))
    if scheme in HTTP_SCHEMES:
        bare, headers = proxy_and_auth(proxy)
        return Route(http=bare, headers=headers)
    return Route(unsupported=scheme)


class _Unresolved(AbstractResolver):
    """Hands the name on unresolved: the socks5 proxy resolves it."""

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        return [{"hostname": host, "host": host, "port": port, "family": family, "proto": 0, "flags": 0}]

    async def close(self) -> None:
        return None


class SocksConnector(aiohttp.TCPConnector):
    """aiohttp's connector with each connection dialled through a socks5 proxy; TLS, pooling and
    keep-alive stay aiohttp's."""

    def __init__(self, socks: Socks5, **kwargs: Any) -> None:
        super().__init__(resolver=_Unresolved(), **kwargs)
        self._socks = socks

    async def _wrap_create_connection(
        self,
        *args: Any,
        addr_infos: list[AddrInfoType],
        req: aiohttp.ClientRequest,
        timeout: aiohttp.ClientTimeout,  # noqa: ASYNC109  # aiohttp's signature
        client_error: type[Exception] = aiohttp.ClientConnectorError,
        **kwargs: Any,
    ) -> tuple[asyncio.Transport, ResponseHandler]:
        host, port = addr_infos[0][4][0], addr_infos[0][4][1]
        sock: socket.socket | None = None
        try:
            async with asyncio.timeout(timeout.sock_connect):
                try:
                    sock = await self._socks.dial(str(host), int(port))
                except OSError as exc:
                    raise aiohttp.ClientProxyConnectionError(req.connection_key, exc) from exc
                return await self._loop.create_connection(*args, **kwargs, sock=sock)
        except ssl.CertificateError as exc:
            _close(sock)
            raise aiohttp.ClientConnectorCertificateError(req.connection_key, exc) from exc
        except ssl.SSLError as exc:
            _close(sock)
            raise aiohttp.ClientConnectorSSLError(req.connection_key, exc) from exc
        except aiohttp.ClientError:
            raise
        except OSError as exc:
            _close(sock)
            if isinstance(exc, TimeoutError):
                raise
            raise client_error(req.connection_key, exc) from exc
        except BaseException:
            _close(sock)
            raise


def _close(sock: socket.socket | None) -> None:
    if sock is not None:
        sock.close()
