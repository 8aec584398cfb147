"""The few API calls `cluster up` makes: health checks and creating nodes.

The SSL context is built from the plane's own CA and client certificate; nothing is taken from
the environment (this machine sets SSL_CERT_FILE and friends, and proxies must not be used for
loopback).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import aiohttp


def tls_context(ca: Path | None, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    if ca is None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl.create_default_context(cafile=str(ca))
    if cert is not None and key is not None:
        ctx.load_cert_chain(str(cert), str(key))
    return ctx


_opener_cache: dict[int, urllib.request.OpenerDirector] = {}


def get(url: str, ctx: ssl.SSLContext | None, timeout: float = 2.0) -> tuple[int, bytes]:
    opener = _opener_cache.get(id(ctx))
    if opener is None:
        handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]
        if ctx is not None:
            handlers.append(urllib.request.HTTPSHandler(context=ctx))
        opener = _opener_cache[id(ctx)] = urllib.request.build_opener(*handlers)
    try:
        with opener.open(url, timeout=timeout) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def get_json(url: str, ctx: ssl.SSLContext) -> Any:
    status, body = get(url, ctx, timeout=30)
    if status != 200:
        raise RuntimeError(f"GET {url}: HTTP {status}: {body[:300]!r}")
    return json.loads(body)


async def create_all(server: str, ctx: ssl.SSLContext, path: str, objects: Iterable[dict[str, Any]],
                     on_progress: Callable[[int], None], concurrency: int = 32) -> None:
    """POST every object, `concurrency` at a time; an existing object (409) counts as created."""
    items = list(objects)
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    done = 0
    connector = aiohttp.TCPConnector(ssl=ctx, limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:

        async def worker() -> None:
            nonlocal done
            while not queue.empty():
                obj = queue.get_nowait()
                async with session.post(server + path, data=json.dumps(obj),
                                        headers={"Content-Type": "application/json"}) as resp:
                    if resp.status not in (200, 201, 409):
                        text = await resp.text()
                        name = obj.get("metadata", {}).get("name")
                        raise RuntimeError(f"creating {obj.get('kind')} {name!r}: HTTP {resp.status}: {text[:300]}")
                done += 1
                if done % 250 == 0 or done == len(items):
                    on_progress(done)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(items)))))
