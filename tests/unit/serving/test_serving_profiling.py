"""enableProfiling's paths on a served port: kube-scheduler's /debug/pprof/ and /debug/flags/v with
Python's profiles behind them and Go's replies around them; none of /debug/ with profiling off."""

from __future__ import annotations

import asyncio
import marshal
from collections.abc import AsyncIterator

import aiohttp
import pytest

from kubesched.serving.profiling import parse_verbosity
from kubesched.serving.server import Endpoints, start_plain


def _endpoints(profiling: bool, levels: list[int]) -> Endpoints:
    return Endpoints(lambda: b"", lambda: True, lambda: None, debug=lambda: {"sizes": {}}, profiling=profiling,
                     set_verbosity=levels.append)


async def _serve(endpoints: Endpoints) -> AsyncIterator[str]:
    runner = await start_plain("127.0.0.1:0", endpoints)
    try:
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
def levels() -> list[int]:
    return []


@pytest.fixture
async def on(levels: list[int]) -> AsyncIterator[str]:
    async for url in _serve(_endpoints(True, levels)):
        yield url


@pytest.fixture
async def off(levels: list[int]) -> AsyncIterator[str]:
    async for url in _serve(_endpoints(False, levels)):
        yield url


async def _get(url: str, method: str = "GET", data: str | None = None) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session, session.request(method, url, data=data,
                                                                   allow_redirects=False) as r:
        return r.status, await r.text(errors="replace"), r.headers.get("Location", "")


@pytest.mark.parametrize(("path", "status", "text"), [
    pytest.param("/debug/pprof/", 200, "goroutine", id="index"),
    pytest.param("/debug/pprof/heap", 404, "Unknown profile\n", id="no-heap"),
    pytest.param("/debug/pprof/block", 404, "Unknown profile\n", id="no-block"),
    pytest.param("/debug/pprof/goroutine", 200, "task ", id="tasks"),
    pytest.param("/debug/flags", 200, "/debug/flags/", id="flags-index"),
    pytest.param("/debug/flags/v", 406, "unsupported http method\n", id="flags-get"),
    pytest.param("/debug/kubesched/state", 200, "sizes", id="state"),
])
async def test_profiling_on(on: str, path: str, status: int, text: str) -> None:
    got_status, body, _ = await _get(on + path)
    assert got_status == status
    assert text in body


async def test_pprof_redirects_to_its_index(on: str) -> None:
    assert (await _get(on + "/debug/pprof"))[::2] == (302, "/debug/pprof/")


@pytest.mark.parametrize("path", ["/debug/pprof", "/debug/pprof/", "/debug/pprof/profile", "/debug/flags/v",
                                  "/debug/kubesched/state"])
async def test_profiling_off_serves_no_debug_path(off: str, path: str) -> None:
    assert (await _get(off + path))[0] == 404
    assert (await _get(off + "/healthz"))[0] == 200


@pytest.mark.parametrize(("body", "status", "reply", "set_to"), [
    pytest.param("3", 200, "successfully set klog.logging.verbosity to 3\n", [3], id="set"),
    pytest.param("3\n", 400, 'strconv.ParseUint: parsing "3\\n": invalid syntax\n', [], id="newline"),
    pytest.param("-1", 400, 'strconv.ParseUint: parsing "-1": invalid syntax\n', [], id="negative"),
    pytest.param("4294967296", 400, 'strconv.ParseUint: parsing "4294967296": value out of range\n', [],
                 id="too-big"),
])
async def test_put_verbosity(on: str, levels: list[int], body: str, status: int, reply: str,
                             set_to: list[int]) -> None:
    assert (await _get(on + "/debug/flags/v", "PUT", body))[:2] == (status, reply)
    assert levels == set_to


async def test_cpu_profile_is_pstats_data_and_one_at_a_time(on: str) -> None:
    first = asyncio.ensure_future(_get(on + "/debug/pprof/profile?seconds=1&format=text"))
    await asyncio.sleep(0.3)
    busy = await _get(on + "/debug/pprof/profile?seconds=1")
    assert busy[:2] == (500, "Could not enable CPU profiling: cpu profiling already in use\n")
    status, text, _ = await first
    assert status == 200
    assert "function calls" in text
    async with aiohttp.ClientSession() as session, session.get(on + "/debug/pprof/profile?seconds=1") as r:
        assert r.headers["Content-Disposition"] == 'attachment; filename="profile"'
        stats = marshal.loads(await r.read())
    assert isinstance(stats, dict)
    assert stats


@pytest.mark.parametrize(("text", "level"), [
    pytest.param("0", 0, id="zero"),
    pytest.param("10", 10, id="ten"),
    pytest.param("4294967295", 4294967295, id="max-uint32"),
])
def test_parse_verbosity(text: str, level: int) -> None:
    assert parse_verbosity(text) == level
