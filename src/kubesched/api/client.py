"""One aiohttp session to the apiserver: pooled keep-alive HTTP/1.1, client-side QPS/burst,
orjson bodies in, raw bytes out (callers decode with msgspec into slim structs).

Measured on the 2-core box: 64 keep-alive HTTP/1.1 connections reach ~350-390 binds+events/s at
~0.6 ms CPU a pod; a single HTTP/2 connection (what client-go uses) is the bottleneck there.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from kubesched.api.errors import ApiConnectionError, ApiError, ApiFenced
from kubesched.api.http1 import Http1Pool
from kubesched.api.kubeconfig import ClusterConfig
from kubesched.api.proxy import route_for
from kubesched.api.ratelimit import TokenBucket

log = logging.getLogger(__name__)

JSON = "application/json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# Methods that change nothing: a fenced client still sends them.
READS = frozenset({"GET", "HEAD", "OPTIONS"})
MERGE_PATCH = "application/merge-patch+json"
DEFAULT_TIMEOUT = 30.0

Params = Mapping[str, str | int]


@dataclass(slots=True)
class Response:
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class ApiClient:
    def __init__(
        self,
        config: ClusterConfig,
        *,
        qps: float = 50.0,
        burst: int = 100,
        max_connections: int = 64,
        user_agent: str = "kubesched",
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self._clock = clock
        # Since when no request could get credentials (an exec plugin or token file failing); None
        # while they work. The scheduler exits when this lasts: a restart re-reads them.
        self.credentials_failing_since: float | None = None
        self.server = config.server
        self._limiter = TokenBucket(qps, burst)
        self._max_connections = max_connections
        self._user_agent = user_agent
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._posts: Http1Pool | None = None
        # client-go decides per request; the server is fixed, so once. Go reads the environment once.
        self._route = route_for(config.server, config.proxy_url)
        # Why writes are refused (fence()), and the tasks with a write under way, to cancel then.
        self.fenced: str | None = None
        self._writing: set[asyncio.Task[Any]] = set()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = self._route.connector(
                limit=self._max_connections,
                limit_per_host=self._max_connections,
                keepalive_timeout=60,
                ssl=self.config.ssl_context if self.config.ssl_context is not None else True,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                # Never let REQUESTS_CA_BUNDLE / SSL_CERT_FILE / netrc from the environment in; the
                # proxy is client-go's choice (route_for): an http(s) one passed with each request, a
                # socks5 one dialled by the connector.
                trust_env=False,
                json_serialize=lambda o: orjson.dumps(o).decode(),
                headers={"User-Agent": self._user_agent, "Accept": JSON},
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._posts is not None:
            await self._posts.close()
            self._posts = None

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _headers(self, content_type: str | None, accept: str | None = None) -> dict[str, str]:
        headers: dict[str, str] = {"Accept": accept} if accept else {}
        try:
            auth = await self.config.credentials.authorization()
        except Exception:
            if self.credentials_failing_since is None:
                self.credentials_failing_since = self._clock()
            raise
        self.credentials_failing_since = None
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _request_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {}
        if self.config.tls_server_name:
            kw["server_hostname"] = self.config.tls_server_name
        if refusal := self._route.refusal():
            raise ApiConnectionError(f"{self.server}: {refusal}")
        kw.update(self._route.request_kwargs())
        return kw

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = JSON,
        request_timeout: float | None = None,
        accept: str | None = None,
    ) -> Response:
        """One request, returning status and raw body without raising on HTTP errors.

        `body` may be bytes (sent as is) or anything orjson can encode. `accept` replaces the
        Accept header (JSON): a protobuf write asks for a protobuf answer, as client-go does, which
        costs the apiserver less to encode (errors.decode_status reads either). Network failures
        raise ApiConnectionError. A 401 with a refreshable token is retried once with a fresh one."""
        if method not in READS:
            return await self._write(method, path, params, body, content_type, request_timeout, accept)
        return await self._request(method, path, params, body, content_type, request_timeout, accept)

    def fence(self, reason: str) -> None:
        """From now on refuse every write (ApiFenced), and cancel those under way, whether waiting
        for a token or a connection or sent and awaiting the answer; reads and watches go on.

        For the moment leadership is lost: kube-scheduler exits then, so no bind, patch or event of
        the old leader can follow the new leader's first."""
        if self.fenced is not None:
            return
        self.fenced = reason
        current = asyncio.current_task()
        for task in list(self._writing):
            if task is not current:
                task.cancel(reason)

    async def _write(self, method: str, path: str, params: Params | None, body: Any, content_type: str,
                     request_timeout: float | None, accept: str | None) -> Response:
        if self.fenced is not None:
            raise ApiFenced(f"{method} {path}: not sent: {self.fenced}")
        task = asyncio.current_task()
        assert task is not None
        self._writing.add(task)
        try:
            return await self._request(method, path, params, body, content_type, request_timeout, accept)
        except asyncio.CancelledError:
            if self.fenced is None:
                raise
            # cancelled by fence(): the caller sees a failed write, as for a dropped connection
            task.uncancel()
            raise ApiFenced(f"{method} {path}: cancelled: {self.fenced}") from None
        finally:
            self._writing.discard(task)

    async def _request(self, method: str, path: str, params: Params | None, body: Any, content_type: str,
                       request_timeout: float | None, accept: str | None = None) -> Response:
        data = body if body is None or isinstance(body, bytes) else orjson.dumps(body)
        time_limit = request_timeout or self._timeout
        # Creates take the lean pool, direct or through a socks5 proxy (it dials the pool's
        # connections); through an http(s) proxy, aiohttp, which speaks CONNECT and Proxy-Authorization.
        route = self._route
        lean = (method == "POST" and params is None and data is not None and route.http is None
                and not route.unsupported)
        for attempt in range(2):
            await self._limiter.acquire()
            if self.fenced is not None and method not in READS:
                raise ApiFenced(f"{method} {path}: not sent: {self.fenced}")
            headers = await self._headers(content_type if data is not None else None, accept)
            if lean:
                assert data is not None
                status, payload = await self._post(path, data, headers, time_limit)
            else:
                status, payload = await self._aiohttp(method, path, params, data, headers, time_limit)
            if status == 401 and attempt == 0 and self.config.credentials.dynamic:
                self.config.credentials.invalidate()
                continue
            return Response(status, payload)
        raise AssertionError("unreachable")

    async def _post(self, path: str, data: bytes, headers: dict[str, str], time_limit: float) -> tuple[int, bytes]:
        """Creates (bindings, events) go over the lean HTTP/1.1 pool: they are the per-pod hot path."""
        if self._posts is None:
            socks = self._route.socks
            self._posts = Http1Pool(self.server, self.config.ssl_context, size=self._max_connections,
                                    server_hostname=self.config.tls_server_name, user_agent=self._user_agent,
                                    dial=socks.dial if socks is not None else None)
        return await self._posts.request("POST", path, data, headers, time_limit)

    async def _aiohttp(self, method: str, path: str, params: Params | None, data: bytes | None,
                       headers: dict[str, str], time_limit: float) -> tuple[int, bytes]:
        try:
            async with self.session.request(
                method,
                self.server + path,
                params=params,
                data=data,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=time_limit),
                **self._request_kwargs(),
            ) as resp:
                return resp.status, await resp.read()
        except (aiohttp.ClientError, TimeoutError) as e:
            raise ApiConnectionError(f"{method} {path}: {type(e).__name__}: {e}") from e

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = JSON,
        request_timeout: float | None = None,
    ) -> bytes:
        """Like `request`, but a non-2xx answer raises ApiError."""
        resp = await self.request(
            method, path, params=params, body=body, content_type=content_type, request_timeout=request_timeout
        )
        if not resp.ok:
            raise ApiError.from_response(resp.status, resp.body, method=method, path=path)
        return resp.body

    async def get(self, path: str, params: Params | None = None) -> bytes:
        return await self.call("GET", path, params=params)

    async def post(self, path: str, body: Any) -> bytes:
        return await self.call("POST", path, body=body)

    async def patch(self, path: str, body: Any, content_type: str = STRATEGIC_MERGE_PATCH) -> bytes:
        return await self.call("PATCH", path, body=body, content_type=content_type)

    async def delete(self, path: str) -> bytes:
        return await self.call("DELETE", path)

    @asynccontextmanager
    async def stream(
        self, path: str, params: Params | None = None, *, read_timeout: float | None = None
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """A long-running GET (watch): yields an iterator of newline-terminated lines.

        `read_timeout` bounds the silence between chunks, so a connection that died without a
        reset is noticed. Non-2xx raises ApiError before anything is yielded."""
        await self._limiter.acquire()
        headers = await self._headers(None)
        try:
            resp = await self.session.get(
                self.server + path,
                params=params,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=read_timeout),
                **self._request_kwargs(),
            )
        except (aiohttp.ClientError, TimeoutError) as e:
            raise ApiConnectionError(f"GET {path}: {type(e).__name__}: {e}") from e
        try:
            if resp.status == 401:
                self.config.credentials.invalidate()
            if not 200 <= resp.status < 300:
                raise ApiError.from_response(resp.status, await resp.read(), method="GET", path=path)
            yield _lines(resp)
        finally:
            resp.release()


async def _lines(resp: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    # Split by hand: aiohttp's readline refuses lines over its buffer limit, and a pod with big
    # annotations can exceed it.
    buf = bytearray()
    try:
        async for chunk in resp.content.iter_any():
            buf += chunk
            start = 0
            while (end := buf.find(b"\n", start)) >= 0:
                if end > start:
                    yield bytes(buf[start:end])
                start = end + 1
            if start:
                del buf[:start]
    except (TimeoutError, aiohttp.ClientError) as e:
        raise ApiConnectionError(f"watch stream broke: {type(e).__name__}: {e}") from e
    if buf.strip():
        yield bytes(buf)
