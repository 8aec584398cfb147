"""A lean HTTP/1.1 client for the two writes every pod costs: the binding and the `Scheduled` event.

aiohttp's client spends ~0.15 ms of CPU a request in its own machinery (request and response
objects, timers, tracing hooks); at two writes a pod that was a quarter of kubesched's CPU. These
requests are tiny POSTs with tiny answers, so a keep-alive connection pool that writes the request
in one piece and reads a status line, headers and a Content-Length or chunked body does the same
work for a fraction of it. Everything else (lists, watches, patches) stays on aiohttp.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping

from kubesched.api.errors import ApiConnectionError

_MAX_HEAD = 64 * 1024

# Opens a TCP connection to (host, port) some other way than directly (through a socks5 proxy).
Dial = Callable[[str, int], Awaitable[socket.socket]]


class Http1Pool:
    def __init__(self, server: str, ssl_context: ssl.SSLContext | None, *, size: int,
                 server_hostname: str | None = None, user_agent: str = "kubesched", dial: Dial | None = None) -> None:
        url = urllib.parse.urlsplit(server)
        self._tls = url.scheme == "https"
        self._host = url.hostname or "localhost"
        self._port = url.port or (443 if self._tls else 80)
        self._prefix = url.path.rstrip("/")
        self._ssl = (ssl_context or ssl.create_default_context()) if self._tls else None
        self._server_hostname = (server_hostname or self._host) if self._tls else None
        self._fixed = f"Host: {url.netloc}\r\nUser-Agent: {user_agent}\r\n"
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._slots = asyncio.Semaphore(size)
        self._dial = dial

    async def request(self, method: str, path: str, body: bytes, headers: Mapping[str, str],
                      time_limit: float) -> tuple[int, bytes]:
        accept = "" if "Accept" in headers else "Accept: application/json\r\n"
        head = (f"{method} {self._prefix}{path} HTTP/1.1\r\n{self._fixed}{accept}Content-Length: {len(body)}\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode("latin-1") + body
        async with self._slots:
            # A reused connection may have been closed by the server while idle; that shows as EOF
            # before any byte of the answer, and the request was not processed: retry on a new one.
            while self._idle:
                conn = self._idle.pop()
                try:
                    return await self._exchange(conn, head, time_limit)
                except _ClosedBeforeAnswer:
                    continue
            try:
                return await self._exchange(await self._connect(time_limit), head, time_limit)
            except _ClosedBeforeAnswer as e:
                raise ApiConnectionError(f"{method} {path}: connection closed before an answer") from e

    async def _connect(self, time_limit: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            async with asyncio.timeout(time_limit):
                if self._dial is None:
                    return await asyncio.open_connection(self._host, self._port, ssl=self._ssl,
                                                         server_hostname=self._server_hostname, limit=_MAX_HEAD)
                sock = await self._dial(self._host, self._port)
                try:
                    return await asyncio.open_connection(sock=sock, ssl=self._ssl,
                                                         server_hostname=self._server_hostname, limit=_MAX_HEAD)
                except BaseException:
                    sock.close()
                    raise
        except (OSError, TimeoutError) as e:
            raise ApiConnectionError(f"connecting to {self._host}:{self._port}: {type(e).__name__}: {e}") from e

    async def _exchange(self, conn: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes,
                        time_limit: float) -> tuple[int, bytes]:
        reader, writer = conn
        keep = False
        try:
            async with asyncio.timeout(time_limit):
                writer.write(request)
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError as e:
                    if not e.partial:
                        raise _ClosedBeforeAnswer from e
                    raise
                status, length, chunked, keep = _parse_head(raw)
                if chunked:
                    payload = await _read_chunked(reader)
                elif length is not None:
                    payload = await reader.readexactly(length)
                else:
                    payload, keep = await reader.read(), False
        except (_ClosedBeforeAnswer, asyncio.CancelledError):
            writer.close()  # half a request or answer: the connection cannot be reused
            raise
        except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
            writer.close()
            raise ApiConnectionError(f"{type(e).__name__}: {e}") from e
        if keep:
            self._idle.append(conn)
        else:
            writer.close()
        return status, payload

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()


class _ClosedBeforeAnswer(Exception):
    pass


def _parse_head(raw: bytes) -> tuple[int, int | None, bool, bool]:
    """(status, content length, chunked, keep-alive) from a response head."""
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {lines[0]!r}")
    status = int(parts[1])
    length: int | None = None
    chunked = False
    keep = parts[0] == "HTTP/1.1"
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            continue
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding":
            chunked = "chunked" in value.lower()
        elif name == "connection":
            keep = value.strip().lower() == "keep-alive" or (keep and value.strip().lower() != "close")
    return status, length, chunked, keep


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            # Trailers, if any, end with an empty line.
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass
            return b"".join(parts)
        parts.append((await reader.readexactly(size + 2))[:-2])
