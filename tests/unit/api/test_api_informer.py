"""Watch-event decoding, the relist diff, and an informer driven by a scripted fake apiserver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

import orjson
import pytest

from kubesched.api.client import ApiClient
from kubesched.api.errors import ApiError
from kubesched.api.informer import PODS, Codec, Informer, diff_relist
from kubesched.model.objects import Job, ObjectMeta, Pod


def pod_json(name: str, rv: str, uid: str | None = None, node: str = "") -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}", "resourceVersion": rv,
                     "managedFields": [{"manager": "x"}]},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "pause"}]},
        "status": {"phase": "Pending"},
    }


def event_line(kind: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind, "object": obj})


GONE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1 (5)", "reason": "Expired", "code": 410}


def test_decode_typed_events() -> None:
    codec = Codec(Pod)
    kind, obj, status, _, skipped = codec.decode_event(event_line("ADDED", pod_json("a", "7", node="n1")))
    assert (kind, status, skipped) == ("ADDED", None, None)
    assert obj is not None
    assert obj.spec.node_name == "n1"
    assert obj.metadata.resource_version == "7"


def test_decode_bookmark() -> None:
    line = event_line("BOOKMARK", {"kind": "Pod", "apiVersion": "v1", "metadata": {
        "resourceVersion": "99", "annotations": {"k8s.io/initial-events-end": "true"}}})
    event = Codec(Pod).decode_event(line)
    assert (event.type, event.obj, event.resource_version) == ("BOOKMARK", None, "99")


@pytest.mark.parametrize("type_", [Pod, Job], ids=["pod", "job"])
def test_decode_error_event_as_status(type_: type[Pod] | type[Job]) -> None:
    # A Status fits a Job's slim struct (metadata only): the type field must decide, not the shape.
    kind, obj, status, _, _ = Codec(type_).decode_event(event_line("ERROR", GONE))
    assert kind == "ERROR"
    assert obj is None
    assert status is not None
    assert (status.code, status.reason) == (410, "Expired")


def _pod(name: str, rv: str, uid: str | None = None) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="ns", uid=uid or f"uid-{name}", resource_version=rv))


def test_diff_relist() -> None:
    known = {"ns/same": _pod("same", "1"), "ns/changed": _pod("changed", "1"),
             "ns/gone": _pod("gone", "1"), "ns/replaced": _pod("replaced", "1")}
    listed = {"ns/same": _pod("same", "1"), "ns/changed": _pod("changed", "2"),
              "ns/replaced": _pod("replaced", "3", uid="new-uid"), "ns/new": _pod("new", "4")}
    diff = diff_relist(known, listed)
    assert sorted(p.metadata.name for p in diff.deleted) == ["gone", "replaced"]
    assert sorted((p.metadata.name, p.metadata.uid) for p in diff.added) == [
        ("new", "uid-new"), ("replaced", "new-uid")]
    assert [(o.metadata.resource_version, n.metadata.resource_version) for o, n in diff.updated] == [("1", "2")]


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def on_add(self, obj: Pod) -> None:
        self.seen.append(("add", obj.metadata.name))

    def on_update(self, old: Pod, new: Pod) -> None:
        self.seen.append(("update", new.metadata.name))

    def on_delete(self, obj: Pod) -> None:
        self.seen.append(("delete", obj.metadata.name))


class FakeApiserver:
    """Serves scripted list pages and watch streams; a watch script may be an exception to raise,
    a list page an exception or raw bytes."""

    def __init__(self, lists: list[list[dict[str, Any]] | Exception | bytes],
                 watches: list[list[bytes] | Exception]) -> None:
        self.lists = lists
        self.watches = watches
        self.list_calls: list[dict[str, Any]] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.done = asyncio.Event()

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> bytes:
        params = dict(params or {})
        self.list_calls.append(params)
        pages = self.lists[0]
        if isinstance(pages, Exception | bytes):
            self.lists.pop(0)
            if isinstance(pages, bytes):
                return pages
            raise pages
        # Two items per page, to exercise `continue`.
        start = int(params.get("continue", 0))
        page, rest = pages[start:start + 2], pages[start + 2:]
        if not rest:
            self.lists.pop(0)
        rv = str(100 * (len(self.list_calls)))
        meta = {"resourceVersion": rv, **({"continue": str(start + 2)} if rest else {})}
        return orjson.dumps({"kind": "PodList", "metadata": meta, "items": page})

    @asynccontextmanager
    async def stream(self, path: str, params: Mapping[str, Any] | None = None,
                     *, read_timeout: float | None = None) -> AsyncIterator[AsyncIterator[bytes]]:
        self.watch_calls.append(dict(params or {}))
        if not self.watches:
            self.done.set()
            await asyncio.Event().wait()  # hang like an idle watch
        script = self.watches.pop(0)
        if isinstance(script, Exception):
            raise script

        async def lines() -> AsyncIterator[bytes]:
            for line in script:
                yield line

        yield lines()


def make_informer(api: FakeApiserver, handler: Recorder) -> Informer[Pod]:
    return Informer(cast(ApiClient, api), PODS, Pod, handler, page_size=2)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


async def run_until_idle(informer: Informer[Pod], api: FakeApiserver) -> None:
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(api.done.wait(), 5)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_list_pages_then_watch(recorder: Recorder) -> None:
    api = FakeApiserver(
        lists=[[pod_json("a", "1"), pod_json("b", "2"), pod_json("c", "3")]],
        watches=[[event_line("MODIFIED", pod_json("a", "101", node="n1")),
                  event_line("BOOKMARK", {"metadata": {"resourceVersion": "150"}}),
                  event_line("DELETED", pod_json("b", "160")),
                  event_line("ADDED", pod_json("d", "170"))]],
    )
    informer = make_informer(api, recorder)
    await run_until_idle(informer, api)
    assert informer.has_synced
    assert [c.get("continue") for c in api.list_calls] == [None, "2"]
    assert recorder.seen == [("add", "a"), ("add", "b"), ("add", "c"),
                             ("update", "a"), ("delete", "b"), ("add", "d")]
    assert api.watch_calls[0]["resourceVersion"] == "100"
    assert api.watch_calls[0]["allowWatchBookmarks"] == "true"
    # The stream ended normally: the next watch resumes from the last version seen.
    assert api.watch_calls[1]["resourceVersion"] == "170"
    assert sorted(informer.store) == ["ns/a", "ns/c", "ns/d"]
    assert informer.store["ns/a"].spec.node_name == "n1"


async def test_gone_relists_and_delivers_missed_deletes(recorder: Recorder) -> None:
    api = FakeApiserver(
        lists=[[pod_json("a", "1"), pod_json("b", "2")],
               # While the watch was away: b deleted, a changed, c created.
               [pod_json("a", "5"), pod_json("c", "6")]],
        watches=[[event_line("ERROR", GONE)]],
    )
    informer = make_informer(api, recorder)
    await run_until_idle(informer, api)
    assert informer.relists == 1
    assert recorder.seen == [("add", "a"), ("add", "b"), ("delete", "b"), ("add", "c"), ("update", "a")]
    assert api.watch_calls[-1]["resourceVersion"] == "200"


async def test_http_410_on_watch_start_relists(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_sleep(_: float) -> None:
        return None

    monkeypatch.setattr("kubesched.api.informer.asyncio.sleep", no_sleep)
    api = FakeApiserver(
        lists=[[pod_json("a", "1")], []],
        watches=[ApiError(410, "Expired", "too old resource version")],
    )
    informer = make_informer(api, recorder)
    await run_until_idle(informer, api)
    assert recorder.seen == [("add", "a"), ("delete", "a")]


async def test_handler_failure_is_logged_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    class Exploding(Recorder):
        def on_add(self, obj: Pod) -> None:
            super().on_add(obj)
            raise RuntimeError("boom")

    handler = Exploding()
    api = FakeApiserver(lists=[[pod_json("a", "1"), pod_json("b", "2")]], watches=[])
    await run_until_idle(make_informer(api, handler), api)
    assert handler.seen == [("add", "a"), ("add", "b")]
    assert "on_add handler failed for ns/a" in caplog.text
