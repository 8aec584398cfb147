"""The secure port cannot be starved: connections that never finish the TLS handshake, that send
nothing after it, half a header, a header a byte at a time, or nothing after a request, are closed
after the read-header or idle timeout (shortened here) while a normal request is still answered;
a header past MaxHeaderBytes is a 431; the connections are capped; the soft open-file limit is
raised to the hard one. Each scenario runs on asyncio's event loop and on uvloop's (which `kubesched
run` uses), each on a loop of its own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import uvloop
from aiohttp import web

from kubesched.serving.auth import Authenticator, Authorizer
from kubesched.serving.certs import server_context, serving_cert
from kubesched.serving.server import Endpoints, Limits, raise_open_file_limit, start_secure

LOOPS = {"asyncio": asyncio.run, "uvloop": uvloop.run}
HEADER_TIMEOUT, IDLE_TIMEOUT = 1.5, 2.5
ENDPOINTS = Endpoints(exposition=lambda: b"", ready=lambda: True, health=lambda: None)
SERVER_TLS = server_context(serving_cert("", "", "", "127.0.0.1"))


@pytest.fixture(autouse=True)
def _log_everything(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="kubesched")  # what is logged on the way must not break it


def client_tls() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def serve(limits: Limits) -> tuple[web.AppRunner, int]:
    runner = await start_secure("127.0.0.1", 0, SERVER_TLS, ENDPOINTS, Authenticator(None), Authorizer(None),
                                limits=limits)
    return runner, int(runner.addresses[0][1])


async def get(port: int, path: str = "/healthz", extra: str = "") -> bytes:
    """One request on a connection of its own; the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_tls())
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n".encode())
    try:
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.wait_closed()


async def closed_by_server(reader: asyncio.StreamReader, within: float) -> bool:
    """True when the server closes (EOF or reset) within `within` s, whatever arrives before."""
    deadline = asyncio.get_running_loop().time() + within
    try:
        while True:
            # past the deadline already (many opened before it): what has arrived still counts
            left = max(deadline - asyncio.get_running_loop().time(), 0.05)
            if not await asyncio.wait_for(reader.read(65536), left):
                return True
            if asyncio.get_running_loop().time() >= deadline:
                return False
    except TimeoutError:  # an OSError: first
        return False
    except (ConnectionError, ssl.SSLError, OSError):
        return True


Opener = Callable[[int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


async def tcp_silent(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)  # not even a ClientHello


async def tcp_half_hello(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # the start of a ClientHello
    return reader, writer


async def tls_silent(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, ssl=client_tls())


async def tls_half_header(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await tls_silent(port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ")
    return reader, writer


async def tls_after_a_request(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A kept-alive connection, answered once and then silent: the idle timeout's."""
    reader, writer = await tls_silent(port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await asyncio.wait_for(reader.readuntil(b"ok"), 10)
    return reader, writer


KINDS: dict[str, tuple[Opener, float]] = {  # how to open one, and the timeout that must close it
    "tcp-silent": (tcp_silent, HEADER_TIMEOUT),
    "tcp-half-client-hello": (tcp_half_hello, HEADER_TIMEOUT),
    "tls-silent": (tls_silent, 2 * HEADER_TIMEOUT),  # Go: the handshake's deadline, then the header's
    "tls-half-header": (tls_half_header, 2 * HEADER_TIMEOUT),
    "tls-idle-after-a-request": (tls_after_a_request, IDLE_TIMEOUT),
}


async def flood(count: int) -> dict[str, Any]:
    runner, port = await serve(Limits(read_header_timeout=HEADER_TIMEOUT, idle_timeout=IDLE_TIMEOUT,
                                      max_connections=10 * count))
    held: list[tuple[str, float, asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        loop = asyncio.get_running_loop()
        for i in range(count):
            name = list(KINDS)[i % len(KINDS)]
            opener, timeout = KINDS[name]
            reader, writer = await opener(port)
            held.append((name, loop.time() + timeout, reader, writer))

        async def slowloris() -> bool:
            """A header a byte every 0.2 s: activity does not extend the read-header timeout."""
            reader, writer = await tls_silent(port)
            started = loop.time()
            try:
                for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000:
                    writer.write(bytes([b]))
                    await asyncio.sleep(0.2)
                    if reader.at_eof() or writer.is_closing():
                        break
                    if loop.time() - started > 4 * HEADER_TIMEOUT:
                        return False
                return await closed_by_server(reader, 2 * HEADER_TIMEOUT)
            finally:
                writer.close()

        slow = asyncio.create_task(slowloris())
        served = await get(port)  # while every one of them is held
        results = await asyncio.gather(*(closed_by_server(r, deadline + 1.5 - loop.time())
                                         for _, deadline, r, _ in held))
        site = next(iter(runner.sites))
        left_open = len(getattr(site, "connections").open) if hasattr(site, "connections") else -1  # noqa: B009
        return {"served": served, "open": {name: sum(1 for (n, *_), ok in zip(held, results, strict=True)
                                                     if n == name and not ok) for name in KINDS},
                "slowloris_closed": await slow, "left_open": left_open, "after": await get(port)}
    finally:
        for *_, writer in held:
            writer.close()
        await runner.cleanup()


@pytest.mark.parametrize("loop", list(LOOPS))
# Hundreds here; KUBESCHED_FLOOD_CONNECTIONS=5000 for thousands (the open-file limit permitting).
@pytest.mark.parametrize("count", [int(os.environ.get("KUBESCHED_FLOOD_CONNECTIONS", "250"))])
def test_idle_and_half_open_connections_are_closed_while_requests_are_served(loop: str, count: int) -> None:
    started = time.monotonic()
    out = LOOPS[loop](flood(count))
    assert out["served"].startswith(b"HTTP/1.1 200 OK")
    assert out["served"].endswith(b"ok")
    assert out["open"] == dict.fromkeys(KINDS, 0)  # every one closed by its timeout
    assert out["slowloris_closed"]
    assert 0 <= out["left_open"] <= 1  # at most the one the second request is on
    assert out["after"].startswith(b"HTTP/1.1 200 OK")
    assert time.monotonic() - started < 60


async def header_sizes() -> tuple[bytes, bytes]:
    runner, port = await serve(Limits(max_header_bytes=8192))
    try:
        fits = await get(port, extra=f"X-Big: {'a' * (8192 + 4096 - 200)}\r\n")
        too_large = await get(port, extra=f"X-Big: {'a' * (8192 + 4096 + 10)}\r\n")
        return fits, too_large
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("loop", list(LOOPS))
def test_a_header_past_max_header_bytes_is_431(loop: str) -> None:
    fits, too_large = LOOPS[loop](header_sizes())
    assert fits.startswith(b"HTTP/1.1 200 OK")
    assert too_large == (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8"
                         b"\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large")


async def capped(cap: int, idle: int) -> dict[str, Any]:
    runner, port = await serve(Limits(max_connections=cap))
    held = []
    try:
        for _ in range(idle):
            held.append(await tls_silent(port))
        await asyncio.sleep(0.2)
        site = next(iter(runner.sites))
        open_now = len(getattr(site, "connections").open) if hasattr(site, "connections") else -1  # noqa: B009
        closed = sum(await asyncio.gather(*(closed_by_server(r, 0.5) for r, _ in held)))
        return {"open": open_now, "closed": closed, "served": await get(port)}
    finally:
        for _, writer in held:
            writer.close()
        await runner.cleanup()


@pytest.mark.parametrize("loop", list(LOOPS))
def test_connections_past_the_cap_close_the_longest_waiting(loop: str) -> None:
    out = LOOPS[loop](capped(cap=20, idle=50))
    assert out["open"] == 20
    assert out["closed"] == 30  # the 30 oldest, to make room
    assert out["served"].startswith(b"HTTP/1.1 200 OK")  # a new client is still served


def test_the_soft_open_file_limit_is_raised_to_the_hard_one() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        # No finite limit to raise to: left as it is, whatever the machine (never a skip).
        assert raise_open_file_limit() == (soft, soft)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (soft, hard)
        return
    lowered = min(256, hard // 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
    try:
        assert raise_open_file_limit() == (lowered, hard)
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (hard, hard)
        assert raise_open_file_limit() == (hard, hard)  # already there: left alone
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
