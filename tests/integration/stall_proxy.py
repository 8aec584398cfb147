"""A reverse proxy in front of the plane's apiserver that can stall: plain HTTP towards kubesched, the
plane's TLS and admin credentials towards the apiserver. It records when each request arrives (by this
machine's monotonic clock, the one every process here shares), and once `stall()`ed it forwards
nothing more, neither new requests nor the rest of open answers and watches, yet keeps every
connection open: to the scheduler behind it the apiserver hangs, as behind a broken network path."""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from aiohttp import web

from tests.integration.kube import Kube

T = TypeVar("T")
READS = frozenset({"GET", "HEAD", "OPTIONS"})
KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: proxied
clusters: [{{name: proxied, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: proxied, user: {{}}}}]
contexts: [{{name: proxied, context: {{cluster: proxied, user: proxied}}}}]
"""


@dataclass(frozen=True)
class Arrival:
    at: float  # time.monotonic()
    method: str
    path: str

    @property
    def write(self) -> bool:
        return self.method not in READS


class StallProxy:
    def __init__(self, plane: Kube, kubeconfig: Path) -> None:
        self._upstream = plane.server
        pki = Path(plane.cluster.dir) / "pki"
        self._ssl = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self._ssl.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self.arrivals: list[Arrival] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="stall-proxy", daemon=True)
        self._thread.start()
        self._stalled = False
        self._closed: asyncio.Event | None = None
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        port = self._call(self._start())
        self.kubeconfig = kubeconfig
        kubeconfig.write_text(KUBECONFIG.format(port=port))

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    async def _start(self) -> int:
        self._closed = asyncio.Event()
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self._ssl, limit=0),
                                              timeout=aiohttp.ClientTimeout(total=None), trust_env=False)
        app = web.Application(client_max_size=64 << 20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return int(self._runner.addresses[0][1])

    def stall(self) -> float:
        """From now on forward nothing; the moment it took effect."""
        self._stalled = True
        return time.monotonic()

    def writes(self) -> list[Arrival]:
        return [a for a in list(self.arrivals) if a.write]

    async def _hold(self) -> None:
        assert self._closed is not None
        await self._closed.wait()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.arrivals.append(Arrival(time.monotonic(), request.method, request.path_qs))
        if self._stalled:
            await self._hold()
            raise web.HTTPServiceUnavailable()
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept")}
        assert self._session is not None
        async with self._session.request(request.method, self._upstream + request.path_qs, data=body or None,
                                         headers=headers) as upstream:
            response = web.StreamResponse(status=upstream.status, headers={
                "Content-Type": upstream.headers.get("Content-Type", "application/json")})
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                if self._stalled:
                    await self._hold()
                    break
                await response.write(chunk)
            if not self._stalled:
                await response.write_eof()
            return response

    def close(self) -> None:
        if not self._loop.is_running():
            return
        async def stop() -> None:
            assert self._closed is not None
            assert self._runner is not None
            assert self._session is not None
            self._closed.set()
            await self._runner.cleanup()
            await self._session.close()
        try:
            self._call(stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
