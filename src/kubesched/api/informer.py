"""List + watch into a local store, decoding the apiserver's JSON straight into msgspec structs.

One informer per resource (Pods in all namespaces, Nodes, batch/v1 Jobs). It lists page by page,
then watches from the list's resourceVersion with bookmarks on. When the apiserver says the
resourceVersion is too old (HTTP 410, or an ERROR event with code 410) it lists again and diffs the
new list against its store, so objects deleted during the gap reach `on_delete` (lightkube and
kr8s lose those). Network errors reconnect with backoff from the last resourceVersion seen.
There are no per-object requests, ever.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, Protocol, TypeVar

import msgspec

from kubesched.api.client import ApiClient, Params
from kubesched.api.errors import ApiConnectionError, ApiError, Status
from kubesched.model.objects import Job, ListMeta, Node, ObjectMeta, Pod

log = logging.getLogger(__name__)


class _HasMeta(Protocol):
    @property
    def metadata(self) -> ObjectMeta: ...


T = TypeVar("T", bound=_HasMeta)
T_contra = TypeVar("T_contra", contravariant=True)


class Resource(NamedTuple):
    prefix: str  # "/api/v1" or "/apis/<group>/<version>"
    plural: str
    kind: str

    @property
    def path(self) -> str:
        return f"{self.prefix}/{self.plural}"


PODS = Resource("/api/v1", "pods", "Pod")
NODES = Resource("/api/v1", "nodes", "Node")
JOBS = Resource("/apis/batch/v1", "jobs", "Job")


class EventHandler(Protocol[T_contra]):
    def on_add(self, obj: T_contra) -> None: ...
    def on_update(self, old: T_contra, new: T_contra) -> None: ...
    def on_delete(self, obj: T_contra) -> None: ...


@dataclass
class Handlers(Generic[T]):
    """Plain callables as an EventHandler; any left out are ignored."""

    add: Callable[[T], None] | None = None
    update: Callable[[T, T], None] | None = None
    delete: Callable[[T], None] | None = None

    def on_add(self, obj: T) -> None:
        if self.add:
            self.add(obj)

    def on_update(self, old: T, new: T) -> None:
        if self.update:
            self.update(old, new)

    def on_delete(self, obj: T) -> None:
        if self.delete:
            self.delete(obj)


# --- decoding ------------------------------------------------------------------------------------


class ObjectList(msgspec.Struct, Generic[T]):
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[T] = []


class WatchEvent(msgspec.Struct, Generic[T]):
    type: str
    object: T


class _RawWatchEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


class Codec(Generic[T]):
    """Decoders for one resource type. A watch line is decoded typed in one pass; only if that
    fails (an ERROR event carries a Status, not the resource) is it decoded again loosely."""

    def __init__(self, type_: type[T]) -> None:
        self.list = msgspec.json.Decoder(ObjectList[type_])  # type: ignore[valid-type]
        self.event = msgspec.json.Decoder(WatchEvent[type_])  # type: ignore[valid-type]
        self._raw_event = msgspec.json.Decoder(_RawWatchEvent)
        self._status = msgspec.json.Decoder(Status)

    def decode_list(self, body: bytes) -> ObjectList[T]:
        return self.list.decode(body)

    def decode_event(self, line: bytes) -> tuple[str, T | None, Status | None]:
        """(type, object, status); status only for ERROR events. Raises msgspec.DecodeError."""
        try:
            ev = self.event.decode(line)
        except msgspec.ValidationError:
            raw = self._raw_event.decode(line)
            if raw.type != "ERROR":
                raise
            return raw.type, None, self._status.decode(raw.object)
        if ev.type == "ERROR":
            return ev.type, None, self._status.decode(self._raw_event.decode(line).object)
        return ev.type, ev.object, None


def object_key(obj: _HasMeta) -> str:
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


@dataclass
class RelistDiff(Generic[T]):
    added: list[T] = field(default_factory=list)
    updated: list[tuple[T, T]] = field(default_factory=list)
    deleted: list[T] = field(default_factory=list)


def diff_relist(known: Mapping[str, T], listed: Mapping[str, T]) -> RelistDiff[T]:
    """What changed between the store and a fresh list. An object whose uid changed was deleted
    and recreated under the same name: a delete then an add, never an update. Unchanged
    resourceVersions produce nothing."""
    diff: RelistDiff[T] = RelistDiff()
    for key, old in known.items():
        new = listed.get(key)
        if new is None or new.metadata.uid != old.metadata.uid:
            diff.deleted.append(old)
    for key, new in listed.items():
        old_or_none = known.get(key)
        if old_or_none is None or old_or_none.metadata.uid != new.metadata.uid:
            diff.added.append(new)
        elif old_or_none.metadata.resource_version != new.metadata.resource_version:
            diff.updated.append((old_or_none, new))
    return diff


# --- the informer --------------------------------------------------------------------------------


class _Gone(Exception):
    """The watch's resourceVersion is too old: list again."""


@dataclass
class Backoff:
    initial: float = 0.8
    maximum: float = 30.0
    factor: float = 2.0
    jitter: float = 1.0
    _current: float = 0.0

    def next(self) -> float:
        self._current = self.initial if self._current == 0 else min(self.maximum, self._current * self.factor)
        return self._current * (1 + random.random() * self.jitter)

    def reset(self) -> None:
        self._current = 0.0


class Informer(Generic[T]):
    def __init__(
        self,
        client: ApiClient,
        resource: Resource,
        type_: type[T],
        handler: EventHandler[T],
        *,
        field_selector: str = "",
        label_selector: str = "",
        page_size: int = 500,
        min_watch_timeout: int = 300,
    ) -> None:
        self.client = client
        self.resource = resource
        self.handler = handler
        self.name = f"informer/{resource.plural}"
        self.store: dict[str, T] = {}
        self.resource_version = ""
        self._codec = Codec(type_)
        self._selectors: dict[str, str] = {}
        if field_selector:
            self._selectors["fieldSelector"] = field_selector
        if label_selector:
            self._selectors["labelSelector"] = label_selector
        self._page_size = page_size
        self._min_watch_timeout = min_watch_timeout
        self._synced = asyncio.Event()
        self.relists = 0  # how many times a 410 forced a new list; for tests and metrics

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    def get(self, key: str) -> T | None:
        return self.store.get(key)

    def list(self) -> list[T]:
        return list(self.store.values())

    async def run(self) -> None:
        """List and watch until cancelled."""
        backoff = Backoff()
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list_and_sync()
                    need_list = False
                await self._watch()
                backoff.reset()
            except _Gone as e:
                log.info("%s: %s; listing again", self.name, e)
                need_list = True
                self.relists += 1
            except ApiError as e:
                if e.status == 410:
                    log.info("%s: %s; listing again", self.name, e)
                    need_list = True
                    self.relists += 1
                    continue
                delay = backoff.next()
                log.warning("%s: %s; retrying in %.1fs", self.name, e, delay)
                await asyncio.sleep(delay)
            except (ApiConnectionError, msgspec.DecodeError) as e:
                delay = backoff.next()
                log.warning("%s: %s; retrying in %.1fs", self.name, e, delay)
                if isinstance(e, msgspec.DecodeError):
                    need_list = True  # an event we could not read is an event we might have missed
                await asyncio.sleep(delay)

    async def _list_once(self) -> tuple[str, dict[str, T]]:
        items: dict[str, T] = {}
        params: dict[str, str | int] = {"limit": self._page_size, **self._selectors}
        resource_version = ""
        while True:
            body = await self.client.get(self.resource.path, params)
            page = self._codec.decode_list(body)
            for obj in page.items:
                items[object_key(obj)] = obj
            if not resource_version:
                resource_version = page.metadata.resource_version
            if not page.metadata.continue_:
                return resource_version, items
            params["continue"] = page.metadata.continue_

    async def _list_and_sync(self) -> None:
        try:
            resource_version, listed = await self._list_once()
        except ApiError as e:
            if e.status != 410:
                raise
            # The continue token expired between pages: start the list over.
            log.info("%s: list continuation expired; listing from the start", self.name)
            resource_version, listed = await self._list_once()
        diff = diff_relist(self.store, listed)
        self.store = listed
        self.resource_version = resource_version
        for obj in diff.deleted:
            self._call("on_delete", self.handler.on_delete, obj)
        for obj in diff.added:
            self._call("on_add", self.handler.on_add, obj)
        for old, new in diff.updated:
            self._call("on_update", self.handler.on_update, old, new)
        if self.has_synced:
            log.info(
                "%s: relisted at %s: %d added, %d updated, %d deleted",
                self.name, resource_version, len(diff.added), len(diff.updated), len(diff.deleted),
            )
        else:
            log.info("%s: synced %d objects at resourceVersion %s", self.name, len(listed), resource_version)
        self._synced.set()

    async def _watch(self) -> None:
        timeout = int(self._min_watch_timeout * (1 + random.random()))
        params: Params = {
            "watch": "1",
            "allowWatchBookmarks": "true",
            "resourceVersion": self.resource_version,
            "timeoutSeconds": timeout,
            **self._selectors,
        }
        async with self.client.stream(self.resource.path, params, read_timeout=timeout + 60) as lines:
            async for line in lines:
                self._apply(line)

    def _apply(self, line: bytes) -> None:
        kind, obj, status = self._codec.decode_event(line)
        if kind == "ERROR":
            assert status is not None
            if status.code == 410:
                raise _Gone(f"watch expired ({status.reason}: {status.message})")
            raise _Gone(f"watch error {status.code} {status.reason}: {status.message}")
        assert obj is not None
        rv = obj.metadata.resource_version
        if kind == "BOOKMARK":
            self.resource_version = rv
            return
        key = object_key(obj)
        if kind == "ADDED" or kind == "MODIFIED":
            old = self.store.get(key)
            self.store[key] = obj
            self.resource_version = rv
            if old is None:
                self._call("on_add", self.handler.on_add, obj)
            elif old.metadata.uid != obj.metadata.uid:
                # Replaced under the same name while we were not looking.
                self._call("on_delete", self.handler.on_delete, old)
                self._call("on_add", self.handler.on_add, obj)
            else:
                self._call("on_update", self.handler.on_update, old, obj)
        elif kind == "DELETED":
            self.store.pop(key, None)
            self.resource_version = rv
            self._call("on_delete", self.handler.on_delete, obj)
        else:
            log.warning("%s: unknown watch event type %r ignored", self.name, kind)

    def _call(self, what: str, fn: Callable[..., None], *args: T) -> None:
        # A failing handler must not stop the informer, nor be silent.
        try:
            fn(*args)
        except Exception:
            log.exception("%s: %s handler failed for %s", self.name, what, object_key(args[-1]))


def pod_informer(client: ApiClient, handler: EventHandler[Pod], field_selector: str = "") -> Informer[Pod]:
    return Informer(client, PODS, Pod, handler, field_selector=field_selector)


def node_informer(client: ApiClient, handler: EventHandler[Node]) -> Informer[Node]:
    return Informer(client, NODES, Node, handler)


def job_informer(client: ApiClient, handler: EventHandler[Job]) -> Informer[Job]:
    return Informer(client, JOBS, Job, handler)
