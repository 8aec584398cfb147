"""The HTTP endpoints (/healthz, /livez, /readyz, /metrics) over plain HTTP (--serve-address, for
local use) and over HTTPS on the secure port, where every request is authenticated, then
authorized, as kube-scheduler's handler chain does (WithAuthentication around WithAuthorization):
a bad token is refused even on /healthz, an anonymous request reaches it.

The secure port has the limits of k8s.io/apiserver's secure server (pkg/server/secure_serving.go,
SecureServingInfo.Serve) as Go's net/http applies them, which aiohttp alone does not have: the TLS
handshake and then a request's header must arrive within ReadHeaderTimeout (32 s) — from the
accept for the first request, from its first byte for the next on a kept-alive connection —, a
kept-alive connection waits at most IdleTimeout (90 s) for it, a header of more than
MaxHeaderBytes (1 MiB, and Go's 4096 bytes of slop) is answered 431 and the connection closed.
Beyond the library, the connections are capped (a flood must not take the file descriptors the
scheduler's own connections need): a new one past the cap closes the one that has waited longest
without a request in progress, or itself when every one has one.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import ssl
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from kubesched.serving.auth import (
    Attributes,
    Authenticator,
    Authorizer,
    Decision,
    Unauthenticated,
    forbidden_message,
)
from kubesched.serving.profiling import profiling_routes

log = logging.getLogger("kubesched")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Endpoints:
    exposition: Callable[[], bytes]
    ready: Callable[[], bool]
    health: Callable[[], str | None]
    # /debug/kubesched/state's JSON (internal map sizes, the cache comparer's result): plain HTTP only,
    # and with profiling on.
    debug: Callable[[], dict[str, Any]] | None = None
    # enableProfiling: /debug/pprof/ and /debug/flags/v (kubesched.serving.profiling), which sets
    # the log verbosity through `set_verbosity`.
    profiling: bool = False
    set_verbosity: Callable[[int], None] | None = None


def _routes(endpoints: Endpoints) -> list[web.RouteDef]:
    async def healthz(_: web.Request) -> web.Response:
        reason = endpoints.health()
        return web.Response(text="ok") if reason is None else web.Response(status=500, text=reason)

    async def readyz(_: web.Request) -> web.Response:
        reason = endpoints.health()
        if reason is not None:
            return web.Response(status=503, text=reason)
        return web.Response(text="ok") if endpoints.ready() else web.Response(status=503, text="caches not synced")

    async def metrics_page(_: web.Request) -> web.Response:
        return web.Response(body=endpoints.exposition(), content_type="text/plain", charset="utf-8")

    routes = [web.get("/healthz", healthz), web.get("/livez", healthz), web.get("/readyz", readyz),
              web.get("/metrics", metrics_page)]
    # enableProfiling governs every /debug/ path, kubesched's own state page too.
    debug = endpoints.debug if endpoints.profiling else None
    if debug is not None:
        async def debug_page(_: web.Request) -> web.Response:
            return web.json_response(debug())
        routes.append(web.get("/debug/kubesched/state", debug_page))
    if endpoints.profiling:
        routes.extend(profiling_routes(endpoints.set_verbosity))
    return routes


def status_body(code: int, reason: str, message: str, details: bool) -> bytes:
    """A metav1.Status as apimachinery's JSON serializer writes it (Go's HTML-safe escaping,
    a trailing newline)."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": message, "reason": reason}
    if details:
        status["details"] = {}
    status["code"] = code
    text = orjson.dumps(status).decode()
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "\n").encode()


def _status(code: int, reason: str, message: str, details: bool = False) -> web.Response:
    return web.Response(status=code, body=status_body(code, reason, message, details),
                        content_type="application/json", headers={"X-Content-Type-Options": "nosniff"})


def client_cert_subject(request: web.Request) -> tuple[str, tuple[str, ...]] | None:
    """(CN, Os) of the client certificate, which the TLS layer has verified against the client CA
    (it only hands over verified ones)."""
    transport = request.transport
    cert = transport.get_extra_info("peercert") if transport is not None else None
    if not cert:
        return None
    cn = ""
    orgs: list[str] = []
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and not cn:
                cn = value
            elif key == "organizationName":
                orgs.append(value)
    return cn, tuple(orgs)


def auth_middleware(authn: Authenticator, authz: Authorizer) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            user = await authn.authenticate(client_cert_subject(request), request.headers.get("Authorization"))
        except Unauthenticated as exc:
            log.debug("unauthorized", extra={"path": request.path, "detail": str(exc)})
            return _status(401, "Unauthorized", "Unauthorized")
        attrs = Attributes(user, request.method.lower(), request.path)
        try:
            verdict = await authz.authorize(attrs)
        except Exception as exc:
            log.warning("authorization failed", extra={"path": request.path, "user": user.name, "detail": str(exc)})
            # responsewriters.InternalError: Go's %q of the URI, HTML-escaped
            text = f"Internal Server Error: {orjson.dumps(request.path_qs).decode()}: {exc}"
            return web.Response(status=500, text=text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
        if verdict.decision is Decision.ALLOW:
            return await handler(request)
        return _status(403, "Forbidden", forbidden_message(attrs, verdict.reason), details=True)

    return middleware


async def start_plain(address: str, endpoints: Endpoints) -> web.AppRunner:
    """HOST:PORT, unauthenticated: for local use."""
    host, _, port = address.rpartition(":")
    app = web.Application()
    app.add_routes(_routes(endpoints))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host or "127.0.0.1", int(port)).start()
    return runner


# k8s.io/apiserver pkg/server/secure_serving.go, SecureServingInfo.Serve's http.Server
# "just shy of requestTimeoutUpperBound"; also the TLS handshake's (Go's tlsHandshakeTimeout)
READ_HEADER_TIMEOUT = 32.0
IDLE_TIMEOUT = 90.0  # "matches http.DefaultTransport keep-alive timeout"
MAX_HEADER_BYTES = 1 << 20  # net/http reads up to this + 4096 ("bufio slop") of request line and header
HEADER_SLOP = 4096
_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
              b"Connection: close\r\n\r\n431 Request Header Fields Too Large")


def default_max_connections() -> int:
    """Half the open-file limit (the rest for the scheduler's own connections), 16 to 4096."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft // 2))


def raise_open_file_limit() -> tuple[int, int]:
    """As every Go program does at start (syscall/rlimit.go): the soft RLIMIT_NOFILE raised to the
    hard one, so that connections, not an inherited default of 1024 or 256, are what is bounded.
    Returns (before, after); a limit that cannot be raised stays as it was."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft == resource.RLIM_INFINITY or soft >= hard:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        return soft, soft
    return soft, hard


@dataclass(frozen=True)
class Limits:
    read_header_timeout: float = READ_HEADER_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    max_header_bytes: int = MAX_HEADER_BYTES
    max_connections: int = 0  # 0: default_max_connections()


class _Connection(asyncio.Protocol):
    """One accepted connection: its TLS handshake (with the server's context of the moment), its
    read-header and idle timers, its header size, then aiohttp's request handler, which gets every
    protocol event through it."""

    HANDSHAKE, WAITING, HEADERS, REQUEST, IDLE = "handshake", "waiting", "headers", "request", "idle"

    def __init__(self, connections: Connections) -> None:
        self._c = connections
        self.transport: asyncio.Transport | None = None
        self._inner: asyncio.Protocol | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None
        self._header_bytes = 0
        self._tail = b""
        self.state = self.HANDSHAKE
        self._closed = False

    async def serve(self, sock: socket.socket) -> None:
        """The TLS handshake on an accepted socket (nothing read from it yet), within the
        read-header timeout as Go's tlsHandshakeTimeout; then the protocol events do the rest."""
        loop = asyncio.get_running_loop()
        try:
            await loop.connect_accepted_socket(lambda: self, sock, ssl=self._c.tls(),
                                               ssl_handshake_timeout=self._c.limits.read_header_timeout)
        except (TimeoutError, OSError, ssl.SSLError, RuntimeError) as exc:
            log.debug("secure port: TLS handshake failed", extra={"detail": str(exc) or type(exc).__name__})
            sock.close()
            self._lost()
        except asyncio.CancelledError:  # evicted, or the server stopping
            sock.close()
            self._lost()

    # --- asyncio.Protocol, after the handshake ------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self._closed:
            transport.abort()  # type: ignore[attr-defined]
            return
        self._c.by_transport[transport] = self
        self._inner = self._c.handler()
        self._inner.connection_made(transport)
        # Go: the handshake's deadline, then ReadHeaderTimeout anew for the first request
        self._to(self.WAITING, self._c.limits.read_header_timeout)

    def data_received(self, data: bytes) -> None:
        if self._closed or self._inner is None:
            return
        if self.state in (self.WAITING, self.IDLE):
            self._to(self.HEADERS, self._c.limits.read_header_timeout)
            self._header_bytes, self._tail = 0, b""
        if self.state == self.HEADERS:
            seen = self._tail + data
            ends = [i for i in (seen.find(b"\r\n\r\n"), seen.find(b"\n\n")) if i >= 0]
            self._header_bytes += (min(ends) + 2 - len(self._tail)) if ends else len(data)
            if self._header_bytes > self._c.limits.max_header_bytes + HEADER_SLOP:
                self._refuse_too_large()
                return
            if ends:
                self._to(self.REQUEST, None)
            self._tail = seen[-3:]
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost()
        if self._inner is not None:
            self._inner.connection_lost(exc)

    # --- the request's progress, told by the middleware ---------------------------------------------

    def request_started(self) -> None:
        self._to(self.REQUEST, None)

    def request_done(self) -> None:
        if not self._closed:
            self._to(self.IDLE, self._c.limits.idle_timeout)

    # --- ---------------------------------------------------------------------------------------------

    def _to(self, state: str, timeout: float | None) -> None:
        self.state = state
        self._c.waiting(self, state != self.REQUEST)
        self._set_timer(timeout)

    def _set_timer(self, timeout: float | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if timeout is not None and timeout > 0 and not self._closed:
            self._timer = asyncio.get_running_loop().call_later(timeout, self._expired)

    def _expired(self) -> None:
        self._timer = None
        if self.state != self.REQUEST:  # no header in time, or idle too long: closed without a word, as Go
            self.close()

    def _refuse_too_large(self) -> None:
        assert self.transport is not None
        self.transport.write(_TOO_LARGE)
        self.transport.close()
        self._lost()

    def close(self) -> None:
        """Closes it at once (timed out, evicted, or the server stopping)."""
        self._lost()
        if self.transport is not None:
            self.transport.abort()
        elif self.task is not None and not self.task.done():
            self.task.cancel()

    def _lost(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._set_timer(None)
        self._c.release(self)


class Connections:
    """The secure port's connections: their limits, the cap, and the ones waiting without a request
    in progress, oldest first (the first closed when the cap is reached)."""

    def __init__(self, limits: Limits, tls: Callable[[], ssl.SSLContext]) -> None:
        self.limits = limits
        self.max = limits.max_connections or default_max_connections()
        self.tls = tls
        self.handler: Callable[[], asyncio.Protocol] = asyncio.Protocol
        self.open: set[_Connection] = set()
        self._waiting: OrderedDict[_Connection, None] = OrderedDict()
        self.by_transport: dict[asyncio.BaseTransport, _Connection] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def accepted(self, sock: socket.socket) -> None:
        conn = _Connection(self)
        if len(self.open) >= self.max:
            if not self._waiting:  # every one has a request in progress: this one waits no turn
                sock.close()
                return
            log.debug("secure port: at the connection cap, closing the one waiting longest",
                      extra={"max": self.max})
            next(iter(self._waiting)).close()
        self.open.add(conn)
        self._waiting[conn] = None
        conn.task = asyncio.get_running_loop().create_task(conn.serve(sock), name="serving/tls-handshake")
        self.tasks.add(conn.task)
        conn.task.add_done_callback(self.tasks.discard)
        conn._set_timer(self.limits.read_header_timeout)  # the handshake's own, should its timeout not fire

    def waiting(self, conn: _Connection, yes: bool) -> None:
        self._waiting.pop(conn, None)
        if yes and conn in self.open:
            self._waiting[conn] = None  # to the end: it waits from now

    def release(self, conn: _Connection) -> None:
        self.open.discard(conn)
        self._waiting.pop(conn, None)
        if conn.transport is not None:
            self.by_transport.pop(conn.transport, None)

    async def close_waiting(self) -> None:
        """Closes those without a request in progress (aiohttp finishes the others)."""
        for conn in list(self.open):
            if conn.state != conn.REQUEST:
                conn.close()
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def middleware(self) -> Any:
        @web.middleware
        async def track(request: web.Request, handler: Handler) -> web.StreamResponse:
            conn = self.by_transport.get(request.transport) if request.transport is not None else None
            if conn is not None:
                conn.request_started()
            try:
                return await handler(request)
            finally:
                if conn is not None:
                    conn.request_done()

        return track


def _listen(host: str | None, port: int) -> list[socket.socket]:
    """Listening sockets as Go's net.Listen("tcp", host:port): an unspecified host is one dual-stack
    socket where the system has them."""
    if host is None:
        if socket.has_dualstack_ipv6():
            return [socket.create_server(("::", port), family=socket.AF_INET6, backlog=socket.SOMAXCONN,
                                         reuse_port=False, dualstack_ipv6=True)]
        return [socket.create_server(("0.0.0.0", port), backlog=socket.SOMAXCONN)]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return [socket.create_server((host, port), family=family, backlog=socket.SOMAXCONN)]


@dataclass
class _Listening:
    sockets: list[socket.socket]

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


class _GuardedSite(web.BaseSite):
    """aiohttp's TCPSite, with its own accept loop: each socket is handed, unread, to the
    _Connection that does its TLS handshake and guards it (counted from the accept)."""

    def __init__(self, runner: web.AppRunner, host: str | None, port: int, connections: Connections) -> None:
        super().__init__(runner)
        self._host, self._port, self.connections = host, port, connections
        self._sockets: list[socket.socket] = []
        self._accepting: list[asyncio.Task[None]] = []

    @property
    def name(self) -> str:
        return f"https://{self._host or '0.0.0.0'}:{self._port}"

    @property
    def sockets(self) -> list[socket.socket]:
        return self._sockets

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self.connections.handler = server  # each call: aiohttp's RequestHandler
        self._sockets = _listen(self._host, self._port)
        self._server = _Listening(self._sockets)  # type: ignore[assignment]  # what runner.addresses reads
        loop = asyncio.get_running_loop()
        for sock in self._sockets:
            sock.setblocking(False)
            self._accepting.append(loop.create_task(self._accept(sock), name="serving/accept"))

    async def _accept(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _ = await loop.sock_accept(listener)
            except OSError as exc:  # EMFILE and the like: the listener stays, as Go's retries
                log.warning("secure port: accept failed", extra={"detail": str(exc)})
                await asyncio.sleep(0.1)
                continue
            sock.setblocking(False)
            self.connections.accepted(sock)

    async def stop(self) -> None:
        self._runner._check_site(self)
        for task in self._accepting:
            task.cancel()
        await asyncio.gather(*self._accepting, return_exceptions=True)
        self._accepting.clear()
        for sock in self._sockets:
            sock.close()
        self._runner._unreg_site(self)
        await self.connections.close_waiting()


async def start_secure(bind_address: str, port: int, tls: ssl.SSLContext | Callable[[], ssl.SSLContext],
                       endpoints: Endpoints, authn: Authenticator, authz: Authorizer,
                       limits: Limits = Limits()) -> web.AppRunner:
    """Raises OSError when the port cannot be bound. `tls`: the context, or what gives the one a new
    connection is to use (a reloaded certificate or client CA)."""
    connections = Connections(limits, tls if callable(tls) else (lambda: tls))
    app = web.Application(middlewares=[connections.middleware(), auth_middleware(authn, authz)])
    app.add_routes(_routes(endpoints))
    # aiohttp's own limits only as a backstop: _Connection keeps Go's (each header line may be as
    # long as the whole header may be, as in Go).
    runner = web.AppRunner(app, access_log=None, keepalive_timeout=limits.idle_timeout + limits.read_header_timeout,
                           max_line_size=limits.max_header_bytes + HEADER_SLOP,
                           max_field_size=limits.max_header_bytes + HEADER_SLOP)
    await runner.setup()
    # None: every interface and both families, as Go's listener on an unspecified address.
    host = None if bind_address in ("", "0.0.0.0", "::") else bind_address
    try:
        await _GuardedSite(runner, host, port, connections).start()
    except OSError:
        await runner.cleanup()
        raise
    return runner
