"""The HTTP endpoints (/healthz, /livez, /readyz, /metrics) over plain HTTP (--serve-address, for
local use) and over HTTPS on the secure port, where every request is authenticated, then
authorized, as kube-scheduler's handler chain does (WithAuthentication around WithAuthorization):
a bad token is refused even on /healthz, an anonymous request reaches it."""

from __future__ import annotations

import logging
import ssl
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

log = logging.getLogger("kubesched")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Endpoints:
    exposition: Callable[[], bytes]
    ready: Callable[[], bool]
    health: Callable[[], str | None]
    # /debug/kubesched/state's JSON (internal map sizes, the cache comparer's result): plain HTTP only.
    debug: Callable[[], dict[str, Any]] | None = None


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
    debug = endpoints.debug
    if debug is not None:
        async def debug_page(_: web.Request) -> web.Response:
            return web.json_response(debug())
        routes.append(web.get("/debug/kubesched/state", debug_page))
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


async def start_secure(bind_address: str, port: int, tls: ssl.SSLContext, endpoints: Endpoints,
                       authn: Authenticator, authz: Authorizer) -> web.AppRunner:
    """Raises OSError when the port cannot be bound."""
    app = web.Application(middlewares=[auth_middleware(authn, authz)])
    app.add_routes(_routes(endpoints))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    # None: every interface and both families, as Go's listener on an unspecified address.
    host = None if bind_address in ("", "0.0.0.0", "::") else bind_address
    try:
        await web.TCPSite(runner, host, port, ssl_context=tls).start()
    except OSError:
        await runner.cleanup()
        raise
    return runner
