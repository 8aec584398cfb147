"""The API client's proxy as client-go's: the cluster's proxy-url when set (for every host, loopback
too: http.ProxyURL), else HTTPS_PROXY / HTTP_PROXY / NO_PROXY as Go's http.ProxyFromEnvironment
reads them (golang.org/x/net/http/httpproxy: localhost and loopback addresses never proxied;
NO_PROXY's "*", CIDRs, IPs, domains with their subdomains, ".domain" for subdomains only, ports).
Tested through a real CONNECT proxy, started here, in front of a local TLS apiserver stand-in; it
sends every tunnel to that server whatever host was asked for, and counts them."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from kubesched.api.client import ApiClient
from kubesched.api.errors import ApiConnectionError
from kubesched.api.kubeconfig import load_kubeconfig
from kubesched.serving.certs import CertKey, self_signed, server_context

PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD")


@dataclass
class Proxy:
    """An HTTP CONNECT proxy: each tunnel goes to `target` (host and port asked are recorded)."""

    target: int
    port: int = 0
    asked: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _pipes: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, where, _ = head[0].split(" ", 2)
        headers = dict(h.split(": ", 1) for h in head[1:] if ": " in h)
        if method != "CONNECT":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        self.asked.append(where)
        self.auth.append(headers.get("Proxy-Authorization"))
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        for task in (asyncio.create_task(pipe(reader, up_writer)), asyncio.create_task(pipe(up_reader, writer))):
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        await self._server.wait_closed()


@pytest.fixture
async def apiserver() -> AsyncIterator[int]:
    """GET /version and POST .../bindings over TLS on 127.0.0.1."""
    async def version(_: web.Request) -> web.Response:
        return web.json_response({"major": "1", "minor": "37"})

    async def bind(_: web.Request) -> web.Response:
        return web.json_response({"kind": "Status", "status": "Success"}, status=201)

    app = web.Application()
    app.add_routes([web.get("/version", version), web.post("/api/v1/namespaces/ns/pods/p/binding", bind)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    chain, key = self_signed("localhost", ["127.0.0.1"], ["api.example.test"])
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(CertKey(chain, key, "test")))
    await site.start()
    yield site.port
    await runner.cleanup()


@pytest.fixture
async def proxy(apiserver: int) -> AsyncIterator[Proxy]:
    p = Proxy(apiserver)
    await p.start()
    yield p
    await p.close()


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_ENV:
        monkeypatch.delenv(name, raising=False)


def kubeconfig(tmp_path: Path, server: str, proxy_url: str = "") -> Path:
    path = tmp_path / "config"
    proxy = f"\n    proxy-url: {proxy_url}" if proxy_url else ""
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
                    f"clusters:\n- name: c\n  cluster:\n    server: {server}\n"
                    f"    insecure-skip-tls-verify: true{proxy}\n"
                    "users:\n- name: u\n  user: {token: t}\n"
                    "contexts:\n- name: ctx\n  context: {cluster: c, user: u}\n")
    return path


async def both(client: ApiClient) -> None:
    """A GET (aiohttp) and a binding POST (the lean pool): both must take the proxy."""
    assert b"37" in await client.get("/version")
    assert await client.post("/api/v1/namespaces/ns/pods/p/binding", {"kind": "Binding"})


async def test_proxy_url_of_the_cluster_is_used_even_for_loopback(tmp_path: Path, apiserver: int,
                                                                   proxy: Proxy) -> None:
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://127.0.0.1:{apiserver}",
                                            f"http://me:pw@127.0.0.1:{proxy.port}")))
    async with ApiClient(config) as client:
        await both(client)
    assert proxy.asked
    assert set(proxy.asked) == {f"127.0.0.1:{apiserver}"}
    assert set(proxy.auth) == {"Basic " + base64.b64encode(b"me:pw").decode()}


async def test_https_proxy_from_the_environment(tmp_path: Path, apiserver: int, proxy: Proxy,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"127.0.0.1:{proxy.port}")  # no scheme: Go reads it as http://
    monkeypatch.setenv("NO_PROXY", "other.example.test,10.0.0.0/8")
    # Only the proxy knows where api.example.test is: a direct connection would not resolve it.
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver}")))
    async with ApiClient(config) as client:
        await both(client)
    assert proxy.asked
    assert set(proxy.asked) == {f"api.example.test:{apiserver}"}


async def test_proxy_url_wins_over_the_environment(tmp_path: Path, apiserver: int, proxy: Proxy,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # nothing listens there
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver}",
                                            f"http://127.0.0.1:{proxy.port}")))
    async with ApiClient(config) as client:
        await both(client)
    assert proxy.asked


@pytest.mark.parametrize("no_proxy", ["api.example.test", "example.test", ".example.test", "*", "*.example.test",
                                      f"api.example.test:{0}"])
async def test_no_proxy_goes_direct(tmp_path: Path, apiserver: int, proxy: Proxy, monkeypatch: pytest.MonkeyPatch,
                                    no_proxy: str) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
    monkeypatch.setenv("NO_PROXY", no_proxy.replace(":0", f":{apiserver}"))
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver}")))
    async with ApiClient(config) as client:
        with pytest.raises(ApiConnectionError):  # direct: the name does not resolve here
            await client.get("/version")
    assert proxy.asked == []


async def test_loopback_is_never_proxied_from_the_environment(tmp_path: Path, apiserver: int, proxy: Proxy,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
    for host in ("127.0.0.1", "localhost"):
        config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://{host}:{apiserver}")))
        async with ApiClient(config) as client:
            await both(client)
    assert proxy.asked == []


@pytest.mark.parametrize(("server", "env", "expected"), [
    pytest.param("https://h:1", {"HTTPS_PROXY": "http://p:3"}, "http://p:3", id="https-proxy"),
    pytest.param("https://h:1", {"https_proxy": "http://p:3"}, "http://p:3", id="lower-case"),
    pytest.param("https://h:1", {"HTTPS_PROXY": "", "https_proxy": "http://p:3"}, "http://p:3",
                 id="empty-upper-case-falls-to-lower"),
    pytest.param("https://h:1", {"HTTP_PROXY": "http://p:3"}, None, id="http-proxy-not-for-https"),
    pytest.param("http://h:1", {"HTTP_PROXY": "http://p:3"}, "http://p:3", id="http-proxy-for-http"),
    pytest.param("http://h:1", {"HTTP_PROXY": "http://p:3", "REQUEST_METHOD": "GET"}, None, id="cgi"),
    pytest.param("https://h:1", {"HTTPS_PROXY": "p:3"}, "http://p:3", id="no-scheme-is-http"),
    pytest.param("https://h:1", {"HTTPS_PROXY": "https://p:3"}, "https://p:3", id="https-scheme-kept"),
    pytest.param("https://127.0.0.1:1", {"HTTPS_PROXY": "http://p:3"}, None, id="loopback"),
    pytest.param("https://[::1]:1", {"HTTPS_PROXY": "http://p:3"}, None, id="loopback-v6"),
    pytest.param("https://localhost:1", {"HTTPS_PROXY": "http://p:3"}, None, id="localhost"),
    pytest.param("https://h.example.com:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "example.com"}, None,
                 id="domain-and-subdomains"),
    pytest.param("https://example.com:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": ".example.com"},
                 "http://p:3", id="dot-domain-subdomains-only"),
    pytest.param("https://h.example.com:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": ".example.com"}, None,
                 id="dot-domain-subdomain"),
    pytest.param("https://notexample.com:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "example.com"},
                 "http://p:3", id="suffix-is-not-a-subdomain"),
    pytest.param("https://h.example.com", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "example.com:443"}, None,
                 id="port-default-443"),
    pytest.param("https://h.example.com:6443", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "example.com:443"},
                 "http://p:3", id="other-port"),
    pytest.param("https://10.1.2.3:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": " 10.0.0.0/8 "}, None, id="cidr"),
    pytest.param("https://10.1.2.3:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "10.1.2.3"}, None, id="ip"),
    pytest.param("https://10.1.2.3:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "10.1.2.4,h"}, "http://p:3",
                 id="other-ip"),
    pytest.param("https://10.1.2.3:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "10.1.2.3:2"}, "http://p:3",
                 id="ip-other-port"),
    pytest.param("https://H.Example.COM:1", {"HTTPS_PROXY": "http://p:3", "no_proxy": "EXAMPLE.com"}, None,
                 id="case-insensitive"),
    pytest.param("https://h:1", {"HTTPS_PROXY": "http://p:3", "NO_PROXY": "*"}, None, id="star"),
])
def test_proxy_from_environment_as_go(server: str, env: dict[str, str], expected: str | None) -> None:
    from kubesched.api.proxy import proxy_for

    assert proxy_for(server, "", env) == expected
    assert proxy_for(server, "http://explicit:1", env) == "http://explicit:1"
