"""The HTTP extender against a small extender served in this process: the verbs' URLs and bodies,
the answers turned into the port's results, and failures worded as Go's http.Client words them."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import pytest
from aiohttp import web

from kubesched.api.extender import ExtenderConfigError, HTTPExtender, ssl_context_for
from kubesched.framework.extender import ExtenderConfig, ExtenderError, ExtenderTLSConfig, Victims
from kubesched.framework.types import NodeInfo
from kubesched.serving.certs import CertKey, self_signed, server_context
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

Handler = Callable[[dict[str, Any]], Any]


class Server:
    """Answers POST /ext/<verb> with handlers[verb](request body); records (verb, body)."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.status = 200
        self.delay = 0.0
        self.port = 0

    async def handle(self, request: web.Request) -> web.Response:
        verb = request.match_info["verb"]
        body = orjson.loads(await request.read())
        self.seen.append((verb, body))
        assert request.headers["Content-Type"] == "application/json"
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.Response(body=orjson.dumps(self.handlers[verb](body)), status=self.status)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    s = Server()
    app = web.Application()
    app.add_routes([web.post("/ext/{verb}", s.handle)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    s.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield s
    await runner.cleanup()


@pytest.fixture
async def extender(server: Server) -> AsyncIterator[Callable[..., HTTPExtender]]:
    made: list[HTTPExtender] = []

    def make(**kw: Any) -> HTTPExtender:
        ext = HTTPExtender(ExtenderConfig(f"http://127.0.0.1:{server.port}/ext/", **kw), environ={})
        made.append(ext)
        return ext

    yield make
    for ext in made:
        await ext.close()


def infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).capacity().obj()) for n in names]


async def test_filter_with_node_names(server: Server, extender: Callable[..., HTTPExtender]) -> None:
    server.handlers["filter"] = lambda body: {"NodeNames": [n for n in body["NodeNames"] if n != "b"],
                                              "FailedNodes": {"b": "b is busy"}}
    ext = extender(filter_verb="filter", node_cache_capable=True)
    nodes = infos("a", "b", "c")
    result = await ext.filter(make_pod("p").obj(), nodes)
    assert result.nodes == [nodes[0], nodes[2]]
    assert result.failed == {"b": "b is busy"}
    verb, body = server.seen[0]
    assert verb == "filter"
    assert body["NodeNames"] == ["a", "b", "c"]
    assert body["Nodes"] is None


async def test_filter_with_whole_nodes_gives_bare_node_infos(server: Server,
                                                             extender: Callable[..., HTTPExtender]) -> None:
    server.handlers["filter"] = lambda body: {"Nodes": {"items": body["Nodes"]["items"][1:]}}
    ext = extender(filter_verb="filter")
    result = await ext.filter(make_pod("p").obj(), infos("a", "b"))
    assert [ni.name for ni in result.nodes] == ["b"]
    assert result.nodes[0].pods == {}
    assert result.nodes[0].allocatable.milli_cpu == 4000


@pytest.mark.parametrize(("answer", "message"), [
    pytest.param({"Error": "extender is overloaded"}, "extender is overloaded", id="error-field"),
    pytest.param({"NodeNames": ["zz"]}, 'extender "http://127.0.0.1:{port}/ext/" claims a filtered node "zz" which '
                 "is not found in the input node list", id="unknown-node"),
])
async def test_filter_errors(server: Server, extender: Callable[..., HTTPExtender], answer: dict[str, Any],
                             message: str) -> None:
    server.handlers["filter"] = lambda body: answer
    with pytest.raises(ExtenderError) as info:
        await extender(filter_verb="filter", node_cache_capable=True).filter(make_pod("p").obj(), infos("a"))
    assert str(info.value) == message.format(port=server.port)


async def test_no_filter_verb_keeps_every_node_without_a_call(server: Server,
                                                              extender: Callable[..., HTTPExtender]) -> None:
    nodes = infos("a")
    assert (await extender().filter(make_pod("p").obj(), nodes)).nodes == nodes
    assert server.seen == []


async def test_prioritize(server: Server, extender: Callable[..., HTTPExtender]) -> None:
    server.handlers["prio"] = lambda body: [{"Host": n["metadata"]["name"], "Score": 7} for n in body["Nodes"]["items"]]
    scores, weight = await extender(prioritize_verb="prio", weight=3).prioritize(make_pod("p").obj(), infos("a"))
    assert (scores, weight) == ([("a", 7)], 3)
    assert await extender().prioritize(make_pod("p").obj(), infos("a")) == ([("a", 0)], 0)


async def test_bind(server: Server, extender: Callable[..., HTTPExtender]) -> None:
    server.handlers["bind"] = lambda body: {"Error": ""}
    await extender(bind_verb="bind").bind(make_pod("p", "ns").uid("u").obj(), "n1")
    assert server.seen == [("bind", {"PodName": "p", "PodNamespace": "ns", "PodUID": "u", "Node": "n1"})]
    server.handlers["bind"] = lambda body: {"Error": "no"}
    with pytest.raises(ExtenderError, match=r"^no$"):
        await extender(bind_verb="bind").bind(make_pod("p").obj(), "n1")


async def test_process_preemption(server: Server, extender: Callable[..., HTTPExtender]) -> None:
    snapshot = snapshot_with([make_node("n1"), make_node("n2")],
                             [make_pod("v1").uid("u1").node("n1"), make_pod("v2").uid("u2").node("n2")])
    v1 = snapshot.node_infos[snapshot.index["n1"]].pods["u1"]
    v2 = snapshot.node_infos[snapshot.index["n2"]].pods["u2"]
    server.handlers["preempt"] = lambda body: {"NodeNameToMetaVictims": {
        "n2": {"Pods": [{"UID": "u2"}], "NumPDBViolations": 1}}}
    ext = extender(preempt_verb="preempt", node_cache_capable=True)
    got = await ext.process_preemption(make_pod("p").obj(), {"n1": Victims([v1]), "n2": Victims([v2])}, snapshot)
    assert list(got) == ["n2"]
    assert got["n2"].pods == [v2]
    assert got["n2"].num_pdb_violations == 1
    assert server.seen[0][1]["NodeNameToMetaVictims"]["n1"] == {"Pods": [{"UID": "u1"}], "NumPDBViolations": 0}


async def test_non_200_is_an_error(server: Server, extender: Callable[..., HTTPExtender]) -> None:
    server.handlers["filter"] = lambda body: {}
    server.status = 500
    with pytest.raises(ExtenderError) as info:
        await extender(filter_verb="filter").filter(make_pod("p").obj(), infos("a"))
    assert str(info.value) == f"failed filter with extender at URL http://127.0.0.1:{server.port}/ext/filter, code 500"


async def test_timeout(server: Server, extender: Callable[..., HTTPExtender]) -> None:
    server.handlers["filter"] = lambda body: {}
    server.delay = 1.0
    with pytest.raises(ExtenderError) as info:
        await extender(filter_verb="filter", http_timeout=0.1).filter(make_pod("p").obj(), infos("a"))
    assert str(info.value) == (f'Post "http://127.0.0.1:{server.port}/ext/filter": context deadline exceeded '
                               "(Client.Timeout exceeded while awaiting headers)")


async def test_connection_refused(unused_tcp_port: int) -> None:
    ext = HTTPExtender(ExtenderConfig(f"http://127.0.0.1:{unused_tcp_port}", filter_verb="filter"), environ={})
    try:
        with pytest.raises(ExtenderError) as info:
            await ext.filter(make_pod("p").obj(), infos("a"))
    finally:
        await ext.close()
    assert str(info.value) == (f'Post "http://127.0.0.1:{unused_tcp_port}/filter": dial tcp '
                               f"127.0.0.1:{unused_tcp_port}: connect: connection refused")


@pytest.mark.parametrize(("prefix", "want"), [
    pytest.param("", 'Post "/filter": unsupported protocol scheme ""', id="empty"),
    pytest.param("ext:8888", 'Post "ext:8888/filter": unsupported protocol scheme "ext"', id="no-scheme"),
])
async def test_a_url_without_a_scheme(prefix: str, want: str) -> None:
    ext = HTTPExtender(ExtenderConfig(prefix, filter_verb="filter"), environ={})
    try:
        with pytest.raises(ExtenderError) as info:
            await ext.filter(make_pod("p").obj(), infos("a"))
    finally:
        await ext.close()
    assert str(info.value) == want


async def test_https_with_the_extenders_ca() -> None:
    chain, key = self_signed("localhost", ["127.0.0.1"], [])
    async def answer(_: web.Request) -> web.Response:
        return web.json_response({"NodeNames": ["a"]})

    app = web.Application()
    app.add_routes([web.post("/filter", answer)])
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(CertKey(chain, key, "test")))
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        for tls in (ExtenderTLSConfig(ca_data=chain), None):
            ext = HTTPExtender(ExtenderConfig(f"https://127.0.0.1:{port}", filter_verb="filter", enable_https=True,
                                              node_cache_capable=True, tls_config=tls), environ={})
            try:
                assert [n.name for n in (await ext.filter(make_pod("p").obj(), infos("a"))).nodes] == ["a"]
            finally:
                await ext.close()
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(("config", "want"), [
    pytest.param(ExtenderConfig("http://x"), None, id="nothing-set-is-the-default-transport"),
    pytest.param(ExtenderConfig("https://x", enable_https=True), "insecure", id="https-without-ca-does-not-verify"),
    pytest.param(ExtenderConfig("https://x", tls_config=ExtenderTLSConfig(insecure=True)), "insecure", id="insecure"),
    pytest.param(ExtenderConfig("https://x", tls_config=ExtenderTLSConfig(server_name="e.example")), "verify",
                 id="server-name-alone"),
])
def test_ssl_context(config: ExtenderConfig, want: str | None) -> None:
    import ssl
    ctx = ssl_context_for(config)
    if want is None:
        assert ctx is None
        return
    assert ctx is not None
    assert (ctx.verify_mode == ssl.CERT_NONE) is (want == "insecure")


def test_ca_with_insecure_is_refused() -> None:
    config = ExtenderConfig("https://x", tls_config=ExtenderTLSConfig(insecure=True, ca_data=base64.b64decode("QQ==")))
    with pytest.raises(ExtenderConfigError, match="specifying a root certificates file with the insecure flag is "
                                                  "not allowed"):
        ssl_context_for(config)


def test_a_missing_ca_file_is_refused(tmp_path: Any) -> None:
    config = ExtenderConfig("https://x", tls_config=ExtenderTLSConfig(ca_file=str(tmp_path / "nope.pem")))
    with pytest.raises(ExtenderConfigError, match=r"nope\.pem"):
        ssl_context_for(config)

