"""A fenced client (its leader lease lost) sends no write: none queued, none waiting for an answer,
none asked for later; reads and watches go on. Against a local HTTP apiserver stand-in whose writes
hang until released, so a write is under way at the moment the fence goes up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from kubesched.api.client import ApiClient
from kubesched.api.errors import ApiFenced
from kubesched.api.kubeconfig import load_kubeconfig

KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: x
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
"""


class Server:
    def __init__(self) -> None:
        self.arrived: list[str] = []
        self.answer = asyncio.Event()
        self.first = asyncio.Event()

    async def handle(self, request: web.Request) -> web.Response:
        self.arrived.append(f"{request.method} {request.path}")
        self.first.set()
        if request.method != "GET":
            await self.answer.wait()
        return web.json_response({"kind": "Status", "status": "Success"})


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Server, ApiClient]]:
    server = Server()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG.format(port=port))
    client = ApiClient(load_kubeconfig(str(path)), qps=1000, burst=1)
    try:
        yield server, client
    finally:
        server.answer.set()
        await client.close()
        await runner.cleanup()


@pytest.mark.parametrize("method", [pytest.param("POST", id="create"), pytest.param("PATCH", id="patch"),
                                    pytest.param("DELETE", id="delete"), pytest.param("PUT", id="update")])
async def test_fence_cancels_writes_under_way_and_refuses_later_ones(
        served: tuple[Server, ApiClient], method: str) -> None:
    server, client = served
    under_way = asyncio.create_task(client.request(method, "/api/v1/namespaces/a/pods/p", body={"x": 1}))
    await server.first.wait()
    # a second write waits for a token (burst 1 at a high rate: briefly) or a connection
    queued = asyncio.create_task(client.request(method, "/api/v1/namespaces/a/pods/q", body={"x": 2}))
    await asyncio.sleep(0)
    client.fence("the leader lease was lost")
    for task in (under_way, queued):
        with pytest.raises(ApiFenced, match="the leader lease was lost"):
            await task
    with pytest.raises(ApiFenced, match="not sent"):
        await client.request(method, "/api/v1/namespaces/a/pods/r", body={"x": 3})
    assert f"{method} /api/v1/namespaces/a/pods/r" not in server.arrived
    assert f"{method} /api/v1/namespaces/a/pods/q" not in server.arrived
    # reads go on: informers keep a standby-to-be's caches current until the process exits
    server.answer.set()
    assert (await client.request("GET", "/api/v1/nodes")).status == 200


async def test_a_cancelled_caller_is_not_turned_into_a_fenced_write(served: tuple[Server, ApiClient]) -> None:
    server, client = served
    task = asyncio.create_task(client.request("POST", "/api/v1/namespaces/a/events", body={}))
    await server.first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.fenced is None
