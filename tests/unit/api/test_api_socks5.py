"""socks5 proxies as client-go uses them: the cluster's `proxy-url: socks5://...` (clientcmd takes
socks5, not socks5h) and HTTPS_PROXY/HTTP_PROXY with socks5:// or socks5h:// (Go's Transport treats
them alike), the server's name sent to the proxy unresolved, the URL's user and password as RFC
1929 authentication (never as a Proxy-Authorization header), port 1080 when the URL has none.
Every request goes through the proxy, the lean POST pool's too, and TLS to the server is verified
as on a direct connection (CA, tls-server-name). Tested through a real SOCKS5 server started here
in front of a local TLS apiserver stand-in; it sends every tunnel to that server whatever host was
asked for, and records what it was asked."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from kubesched.api.client import ApiClient
from kubesched.api.errors import ApiConnectionError
from kubesched.api.extender import HTTPExtender
from kubesched.api.kubeconfig import KubeconfigError, load_kubeconfig
from kubesched.api.proxy import Route, Socks5, route_for
from kubesched.framework.extender import ExtenderConfig, ExtenderError
from kubesched.serving.certs import CertKey, self_signed, server_context

PROXY_ENV = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD")
# The only name in the stand-in's certificate; the kubeconfig's server is another name.
CERT_NAME = "named.example.test"
DOMAIN, IPV4, IPV6 = 3, 1, 4  # RFC 1928 address types
BINDING = "/api/v1/namespaces/ns/pods/p/binding"


@dataclass
class Socks5Server:
    """RFC 1928 CONNECT, with RFC 1929 user/password when `users` is set; each tunnel goes to
    127.0.0.1:`target`. Records (address type, host, port) asked and the credentials offered."""

    target: int
    users: dict[str, str] | None = None
    port: int = 0
    asked: list[tuple[int, str, int]] = field(default_factory=list)
    offered: list[tuple[str, str]] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _pipes: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if not await self._handshake(reader, writer):
                writer.close()
                return
        except asyncio.IncompleteReadError:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        writer.write(b"\x05\x00\x00\x01" + bytes(6))  # succeeded, bound to 0.0.0.0:0

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        for task in (asyncio.create_task(pipe(reader, up_writer)), asyncio.create_task(pipe(up_reader, writer))):
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        version, count = await reader.readexactly(2)
        assert version == 5
        methods = await reader.readexactly(count)
        method = 2 if self.users is not None else 0
        if method not in methods:
            writer.write(b"\x05\xff")
            return False
        writer.write(bytes([5, method]))
        if self.users is not None:
            _, size = await reader.readexactly(2)
            user = (await reader.readexactly(size)).decode()
            password = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            self.offered.append((user, password))
            if self.users.get(user) != password:
                writer.write(b"\x01\x01")
                return False
            writer.write(b"\x01\x00")
        _, command, _, kind = await reader.readexactly(4)
        assert command == 1  # CONNECT
        if kind == IPV4:
            host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
        elif kind == IPV6:
            host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
        else:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        port = int.from_bytes(await reader.readexactly(2), "big")
        self.asked.append((kind, host, port))
        return True

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        await self._server.wait_closed()


@functools.cache
def certificate() -> tuple[bytes, bytes]:
    return self_signed(CERT_NAME, [], [])


@dataclass
class Apiserver:
    port: int
    ca: bytes
    proxy_authorization: list[str | None]


@pytest.fixture
async def apiserver() -> AsyncIterator[Apiserver]:
    """GET /version and POST .../binding over TLS, its certificate for CERT_NAME only."""
    seen: list[str | None] = []

    async def version(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Proxy-Authorization"))
        return web.json_response({"major": "1", "minor": "37"})

    async def bind(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Proxy-Authorization"))
        return web.json_response({"kind": "Status", "status": "Success"}, status=201)

    app = web.Application()
    app.add_routes([web.get("/version", version), web.post(BINDING, bind)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    chain, key = certificate()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(CertKey(chain, key, "test")))
    await site.start()
    yield Apiserver(site._server.sockets[0].getsockname()[1], chain, seen)  # type: ignore[union-attr]
    await runner.cleanup()


@pytest.fixture
async def socks(apiserver: Apiserver) -> AsyncIterator[Socks5Server]:
    p = Socks5Server(apiserver.port)
    await p.start()
    yield p
    await p.close()


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_ENV:
        monkeypatch.delenv(name, raising=False)


def kubeconfig(tmp_path: Path, server: str, ca: bytes, proxy_url: str = "", tls_server_name: str = CERT_NAME) -> Path:
    path = tmp_path / "config"
    proxy = f"\n    proxy-url: {proxy_url}" if proxy_url else ""
    name = f"\n    tls-server-name: {tls_server_name}" if tls_server_name else ""
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
                    f"clusters:\n- name: c\n  cluster:\n    server: {server}\n"
                    f"    certificate-authority-data: {base64.b64encode(ca).decode()}{proxy}{name}\n"
                    "users:\n- name: u\n  user: {token: t}\n"
                    "contexts:\n- name: ctx\n  context: {cluster: c, user: u}\n")
    return path


def calls(client: ApiClient) -> list[Callable[[], Awaitable[bytes]]]:
    """A GET and a binding POST, each to be awaited in its turn."""
    return [lambda: client.get("/version"), lambda: client.post(BINDING, {})]


async def both(client: ApiClient) -> None:
    """A GET (aiohttp) and a binding POST (the lean pool): both must take the proxy."""
    assert b"37" in await client.get("/version")
    assert await client.post(BINDING, {"kind": "Binding"})
    assert client._posts is not None, "the binding went over aiohttp, not the lean pool"


async def test_proxy_url_socks5_carries_every_request_with_the_name_unresolved(
        tmp_path: Path, apiserver: Apiserver, socks: Socks5Server) -> None:
    # Only the proxy knows where api.example.test is: resolved here, it would fail.
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca,
                                            f"socks5://127.0.0.1:{socks.port}")))
    async with ApiClient(config) as client:
        await both(client)
    assert len(socks.asked) == 2  # one connection for aiohttp, one for the lean pool
    assert set(socks.asked) == {(DOMAIN, "api.example.test", apiserver.port)}
    assert apiserver.proxy_authorization == [None, None]


async def test_proxy_url_socks5_for_loopback_sends_the_address(tmp_path: Path, apiserver: Apiserver,
                                                               socks: Socks5Server) -> None:
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://127.0.0.1:{apiserver.port}", apiserver.ca,
                                            f"socks5://127.0.0.1:{socks.port}")))
    async with ApiClient(config) as client:
        await both(client)
    assert set(socks.asked) == {(IPV4, "127.0.0.1", apiserver.port)}


async def test_socks5_user_and_password_are_rfc1929_not_a_header(tmp_path: Path, apiserver: Apiserver,
                                                                 socks: Socks5Server) -> None:
    socks.users = {"me": "p@ss:w/rd"}
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca,
                                            f"socks5://me:p%40ss%3Aw%2Frd@127.0.0.1:{socks.port}")))
    async with ApiClient(config) as client:
        await both(client)
    assert set(socks.offered) == {("me", "p@ss:w/rd")}
    assert apiserver.proxy_authorization == [None, None]


async def test_socks5_refusing_the_credentials_fails_the_request_without_printing_them(
        tmp_path: Path, apiserver: Apiserver, socks: Socks5Server) -> None:
    socks.users = {"me": "right"}
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca,
                                            f"socks5://me:wrong-secret@127.0.0.1:{socks.port}")))
    async with ApiClient(config) as client:
        for call in calls(client):
            with pytest.raises(ApiConnectionError) as err:
                await call()
            assert "wrong-secret" not in str(err.value)
            assert f"127.0.0.1:{socks.port}" in str(err.value)
    assert socks.asked == []


async def test_tls_through_socks5_is_verified_with_the_tls_server_name(tmp_path: Path, apiserver: Apiserver,
                                                                       socks: Socks5Server) -> None:
    """The tunnel's TLS is the kubeconfig's: without tls-server-name the stand-in's certificate
    (for CERT_NAME only) does not match api.example.test, so both clients refuse it."""
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca,
                                            f"socks5://127.0.0.1:{socks.port}", tls_server_name="")))
    async with ApiClient(config) as client:
        for call in calls(client):
            with pytest.raises(ApiConnectionError, match=r"certificate|hostname"):
                await call()
    assert apiserver.proxy_authorization == []


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
async def test_https_proxy_socks_from_the_environment(tmp_path: Path, apiserver: Apiserver, socks: Socks5Server,
                                                      monkeypatch: pytest.MonkeyPatch, scheme: str) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"{scheme}://127.0.0.1:{socks.port}")
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca)))
    async with ApiClient(config) as client:
        await both(client)
    assert set(socks.asked) == {(DOMAIN, "api.example.test", apiserver.port)}


async def test_no_proxy_exempts_from_a_socks_proxy(tmp_path: Path, apiserver: Apiserver, socks: Socks5Server,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", f"socks5://127.0.0.1:{socks.port}")
    monkeypatch.setenv("NO_PROXY", ".example.test")
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca)))
    async with ApiClient(config) as client:
        with pytest.raises(ApiConnectionError):  # direct: the name does not resolve here
            await client.get("/version")
    assert socks.asked == []


async def test_a_proxy_of_another_scheme_is_never_bypassed(tmp_path: Path, apiserver: Apiserver,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks4://127.0.0.1:1")
    config = load_kubeconfig(str(kubeconfig(tmp_path, f"https://api.example.test:{apiserver.port}", apiserver.ca)))
    async with ApiClient(config) as client:
        for call in calls(client):
            with pytest.raises(ApiConnectionError, match='scheme "socks4"'):
                await call()
    assert apiserver.proxy_authorization == []


async def test_extender_through_a_socks_proxy_from_the_environment() -> None:
    """kube-scheduler's extender client takes HTTP(S)_PROXY as every Go client does."""
    async def answer(_: web.Request) -> web.Response:
        return web.Response(body=b'{"Error": ""}')

    plain = Socks5Server(0)
    app = web.Application()
    app.add_routes([web.post("/ext/filter", answer)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    plain.target = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    await plain.start()
    ext = HTTPExtender(ExtenderConfig("http://extender.example.test:8888/ext/", filter_verb="filter"),
                       environ={"HTTP_PROXY": f"socks5://127.0.0.1:{plain.port}"})
    other = HTTPExtender(ExtenderConfig("http://extender.example.test:8888/ext/", filter_verb="filter"),
                         environ={"HTTP_PROXY": "socks4://127.0.0.1:1"})
    try:
        assert await ext.send("filter", b"{}") == b'{"Error": ""}'
        with pytest.raises(ExtenderError, match='scheme "socks4"'):
            await other.send("filter", b"{}")
    finally:
        await ext.close()
        await other.close()
        await plain.close()
        await runner.cleanup()
    assert plain.asked == [(DOMAIN, "extender.example.test", 8888)]


@pytest.mark.parametrize(("proxy_url", "environ", "expected"), [
    pytest.param("socks5://p", {}, Route(socks=Socks5("p", 1080)), id="default-port-1080"),
    pytest.param("socks5://u:p%2Fw@p:9", {}, Route(socks=Socks5("p", 9, "u", "p/w")), id="credentials-decoded"),
    pytest.param("socks5://u@p:9", {}, Route(socks=Socks5("p", 9, "u", None)), id="user-only"),
    pytest.param("", {"HTTPS_PROXY": "socks5h://p:9"}, Route(socks=Socks5("p", 9)), id="env-socks5h"),
    pytest.param("", {"HTTPS_PROXY": "SOCKS5://p:9"}, Route(socks=Socks5("p", 9)), id="env-scheme-any-case"),
    pytest.param("", {"HTTPS_PROXY": "socks4://p:9"}, Route(unsupported="socks4"), id="env-other-scheme"),
    pytest.param("http://u:pw@p:3", {}, Route(http="http://p:3", headers={"Proxy-Authorization": "Basic dTpwdw=="}),
                 id="http-keeps-its-header"),
    pytest.param("", {}, Route(), id="direct"),
])
def test_route(proxy_url: str, environ: dict[str, str], expected: Route) -> None:
    assert route_for("https://h:1", proxy_url, environ) == expected


@pytest.mark.parametrize(("proxy_url", "error"), [
    pytest.param("socks5://127.0.0.1:1080", None, id="socks5"),
    pytest.param("socks5h://127.0.0.1:1080", 'unsupported scheme "socks5h", must be http, https or socks5',
                 id="socks5h-refused-as-clientcmd"),
    pytest.param("socks5://", "no host", id="no-host"),
])
def test_kubeconfig_proxy_url_schemes(tmp_path: Path, proxy_url: str, error: str | None) -> None:
    path = kubeconfig(tmp_path, "https://h:1", certificate()[0], proxy_url)
    if error is None:
        assert load_kubeconfig(str(path)).proxy_url == proxy_url
    else:
        with pytest.raises(KubeconfigError, match=error):
            load_kubeconfig(str(path))
