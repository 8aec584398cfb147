"""List + watch into a local store, decoding the apiserver's JSON straight into msgspec structs.

One informer per resource (Pods in all namespaces, Nodes, batch/v1 Jobs, Namespaces). It lists page
by page, then watches from the list's resourceVersion with bookmarks on. When the apiserver says the
resourceVersion is too old (HTTP 410, or an ERROR event with code 410) it lists again and diffs the
new list against its store, so objects deleted during the gap reach `on_delete` (lightkube and
kr8s lose those). Network errors reconnect with backoff from the last resourceVersion seen.
There are no per-object requests, ever.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Mapping, ValuesView
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, Protocol, TypeVar

import msgspec

from kubesched.api.client import ApiClient, Params
from kubesched.api.errors import ApiConnectionError, ApiError, Status
from kubesched.model.decode import ListDecoder, Skipped, TolerantDecoder, object_meta
from kubesched.model.intern import share_pod
from kubesched.model.objects import Job, ListMeta, Namespace, Node, ObjectMeta, Pod

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
SERVICES = Resource("/api/v1", "services", "Service")
REPLICATION_CONTROLLERS = Resource("/api/v1", "replicationcontrollers", "ReplicationController")
REPLICA_SETS = Resource("/apis/apps/v1", "replicasets", "ReplicaSet")
STATEFUL_SETS = Resource("/apis/apps/v1", "statefulsets", "StatefulSet")
NAMESPACES = Resource("/api/v1", "namespaces", "Namespace")
# Storage, for the volume plugins.
PERSISTENT_VOLUMES = Resource("/api/v1", "persistentvolumes", "PersistentVolume")
PERSISTENT_VOLUME_CLAIMS = Resource("/api/v1", "persistentvolumeclaims", "PersistentVolumeClaim")
STORAGE_CLASSES = Resource("/apis/storage.k8s.io/v1", "storageclasses", "StorageClass")
CSI_NODES = Resource("/apis/storage.k8s.io/v1", "csinodes", "CSINode")
CSI_DRIVERS = Resource("/apis/storage.k8s.io/v1", "csidrivers", "CSIDriver")
CSI_STORAGE_CAPACITIES = Resource("/apis/storage.k8s.io/v1", "csistoragecapacities", "CSIStorageCapacity")
VOLUME_ATTACHMENTS = Resource("/apis/storage.k8s.io/v1", "volumeattachments", "VolumeAttachment")
POD_DISRUPTION_BUDGETS = Resource("/apis/policy/v1", "poddisruptionbudgets", "PodDisruptionBudget")
# The Workload API (GenericWorkload), for gang scheduling.
POD_GROUPS = Resource("/apis/scheduling.k8s.io/v1beta1", "podgroups", "PodGroup")
WORKLOADS = Resource("/apis/scheduling.k8s.io/v1beta1", "workloads", "Workload")
# scheduler-plugins' PodGroup CRD, for its Coscheduling plugin.
CO_POD_GROUPS = Resource("/apis/scheduling.x-k8s.io/v1alpha1", "podgroups", "PodGroup")
# Dynamic Resource Allocation: resource.k8s.io/v1, the only version kube-apiserver 1.37 serves by default.
_DRA = "/apis/resource.k8s.io/v1"
RESOURCE_CLAIMS = Resource(_DRA, "resourceclaims", "ResourceClaim")
RESOURCE_SLICES = Resource(_DRA, "resourceslices", "ResourceSlice")
DEVICE_CLASSES = Resource(_DRA, "deviceclasses", "DeviceClass")
DEVICE_TAINT_RULES = Resource(_DRA, "devicetaintrules", "DeviceTaintRule")
DRA_RESOURCES = (RESOURCE_CLAIMS, RESOURCE_SLICES, DEVICE_CLASSES, DEVICE_TAINT_RULES)

# How long one watch request lasts (timeoutSeconds, randomised up to twice this), and how much
# longer than that a silent connection is trusted. The apiserver's bookmarks are no heartbeat: it
# sends one only once the resource's watch cache has moved on (seen here: none in 4 minutes on a
# quiet plane), so a dead connection is noticed only by a read timeout, which must therefore
# follow timeoutSeconds (client-go's 5-10 minutes would leave a dropped watch unnoticed that long).
MIN_WATCH_TIMEOUT = 45
WATCH_GRACE = 10.0


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


class _RawWatchEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw = msgspec.Raw()


class Event(NamedTuple, Generic[T]):
    """One watch line, read. `obj` only for ADDED/MODIFIED/DELETED, `status` only for ERROR,
    `resource_version` for everything but ERROR, `skipped` when the object did not decode."""

    type: str
    obj: T | None = None
    status: Status | None = None
    resource_version: str = ""
    skipped: Skipped | None = None


class Codec(Generic[T]):
    """Decoders for one resource type. A watch line's type is read first: an ERROR carries a
    Status and a BOOKMARK a bare object with null fields, neither of them the resource."""

    def __init__(self, type_: type[T], slim: Callable[[T], object] | None = None) -> None:
        self.list = ListDecoder(type_, ObjectList[type_])  # type: ignore[valid-type]
        self.object = TolerantDecoder(type_)
        self._event = msgspec.json.Decoder(_RawWatchEvent)
        self._status = msgspec.json.Decoder(Status)
        # Run on each decoded object, in place (pods: their repeated strings shared, model.intern).
        self._slim = slim

    def decode_list(self, body: bytes) -> tuple[ListMeta, list[T], list[Skipped]]:
        meta, items, skipped = self.list.decode(body)
        if self._slim is not None:
            for obj in items:
                self._slim(obj)
        return meta, items, skipped

    def decode_event(self, line: bytes) -> Event[T]:
        """Raises msgspec.DecodeError only when the line itself is not a watch event."""
        raw = self._event.decode(line)
        if raw.type == "ERROR":
            return Event(raw.type, status=self._status.decode(raw.object))
        if raw.type == "BOOKMARK":
            return Event(raw.type, resource_version=object_meta(raw.object).resource_version or "")
        decoded = self.object.try_decode(raw.object)
        if isinstance(decoded, Skipped):
            return Event(raw.type, resource_version=object_meta(raw.object).resource_version or "",
                         skipped=decoded)
        if self._slim is not None:
            self._slim(decoded)
        return Event(raw.type, decoded, resource_version=decoded.metadata.resource_version)


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
        min_watch_timeout: int = MIN_WATCH_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        slim: Callable[[T], object] | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.handler = handler
        self.name = f"informer/{resource.plural}"
        self.store: dict[str, T] = {}
        self.resource_version = ""
        self._codec = Codec(type_, slim)
        self._selectors: dict[str, str] = {}
        if field_selector:
            self._selectors["fieldSelector"] = field_selector
        if label_selector:
            self._selectors["labelSelector"] = label_selector
        self._page_size = page_size
        self._min_watch_timeout = min_watch_timeout
        self._clock = clock
        # When the informer began failing (any error), and when it began failing with an error
        # waiting will not mend (credentials, 4xx, a bug); None while it works.
        self.failing_since: float | None = None
        self.failing_fatally_since: float | None = None
        self.last_error = ""
        self._synced = asyncio.Event()
        # Set while the store follows the apiserver: the list is in and a watch is open (or has just
        # ended normally and resumes from where it was). Cleared as soon as a list or watch fails:
        # from then until the next list or watch succeeds, changes may be going unseen, and the
        # scheduler does not decide on a store it knows to be behind (see Scheduler._schedule_loop).
        self._live = asyncio.Event()
        self.relists = 0  # how many times a 410 forced a new list; for tests and metrics
        self.skipped = 0  # objects that could not be decoded, logged and left out

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    @property
    def live(self) -> bool:
        return self._live.is_set()

    async def wait_live(self) -> None:
        await self._live.wait()

    def get(self, key: str) -> T | None:
        return self.store.get(key)

    def list(self) -> list[T]:
        return list(self.store.values())

    def values(self) -> ValuesView[T]:
        """The stored objects, not copied: read them before the next await."""
        return self.store.values()

    async def run(self) -> None:
        """List and watch until cancelled. Nothing but cancellation ends it: every failure is
        logged with its reason and retried with backoff, and `failing_since` tells the scheduler
        how long the informer has been unable to list or watch."""
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
                self._live.clear()
                log.info("%s: %s; listing again", self.name, e)
                need_list = True
                self.relists += 1
            except ApiError as e:
                self._live.clear()
                if e.status == 410:
                    log.info("%s: %s; listing again", self.name, e)
                    need_list = True
                    self.relists += 1
                    continue
                await self._failed(e, backoff, fatal=not (e.status == 429 or e.status >= 500))
            except ApiConnectionError as e:
                self._live.clear()
                await self._failed(e, backoff, fatal=False)
            except msgspec.DecodeError as e:
                self._live.clear()
                need_list = True  # an event we could not read is an event we might have missed
                await self._failed(e, backoff, fatal=False)
            except Exception as e:
                # Credentials that cannot be refreshed (KubeconfigError), a transport's RuntimeError,
                # a bug: retried like the rest, but they count against liveness.
                self._live.clear()
                need_list = True
                await self._failed(e, backoff, fatal=True)

    async def _failed(self, e: Exception, backoff: Backoff, *, fatal: bool) -> None:
        now = self._clock()
        if self.failing_since is None:
            self.failing_since = now
        if fatal and self.failing_fatally_since is None:
            self.failing_fatally_since = now
        self.last_error = f"{type(e).__name__}: {e}"
        delay = backoff.next()
        log.warning("%s: %s; retrying in %.1fs", self.name, self.last_error, delay)
        await asyncio.sleep(delay)

    def _working(self) -> None:
        if self.failing_since is not None:
            log.info("%s: working again after %.0fs of failures", self.name, self._clock() - self.failing_since)
        self.failing_since = None
        self.failing_fatally_since = None
        self.last_error = ""

    async def _list_once(self) -> tuple[str, dict[str, T]]:
        items: dict[str, T] = {}
        params: dict[str, str | int] = {"limit": self._page_size, **self._selectors}
        resource_version = ""
        while True:
            body = await self.client.get(self.resource.path, params)
            meta, page, skipped = self._codec.decode_list(body)
            for obj in page:
                items[object_key(obj)] = obj
            for bad in skipped:
                self._skip(bad)
            if not resource_version:
                resource_version = meta.resource_version
            if not meta.continue_:
                return resource_version, items
            params["continue"] = meta.continue_

    async def _list_and_sync(self) -> None:
        try:
            resource_version, listed = await self._list_once()
        except ApiError as e:
            if e.status != 410:
                raise
            # The continue token expired between pages: start the list over.
            log.info("%s: list continuation expired; listing from the start", self.name)
            resource_version, listed = await self._list_once()
        self._working()
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
        async with self.client.stream(self.resource.path, params, read_timeout=timeout + WATCH_GRACE) as lines:
            self._working()
            self._live.set()
            async for line in lines:
                self._apply(line)

    def _apply(self, line: bytes) -> None:
        event = self._codec.decode_event(line)
        kind, obj = event.type, event.obj
        if kind == "ERROR":
            status = event.status
            assert status is not None
            if status.code == 410:
                raise _Gone(f"watch expired ({status.reason}: {status.message})")
            raise _Gone(f"watch error {status.code} {status.reason}: {status.message}")
        if event.resource_version:
            self.resource_version = event.resource_version
        if kind == "BOOKMARK":
            return
        if event.skipped is not None:
            # The stored copy (if any) stays: dropping it could free a node's room that a bound
            # pod still holds.
            self._skip(event.skipped)
            return
        assert obj is not None
        key = object_key(obj)
        if kind == "ADDED" or kind == "MODIFIED":
            old = self.store.get(key)
            self.store[key] = obj
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
            self._call("on_delete", self.handler.on_delete, obj)
        else:
            log.warning("%s: unknown watch event type %r ignored", self.name, kind)

    def _skip(self, bad: Skipped) -> None:
        self.skipped += 1
        log.error("%s: %s skipped: it does not decode as a %s (%s)", self.name, bad.key, self.resource.kind,
                  bad.error)

    def _call(self, what: str, fn: Callable[..., None], *args: T) -> None:
        # A failing handler must not stop the informer, nor be silent.
        try:
            fn(*args)
        except Exception:
            log.exception("%s: %s handler failed for %s", self.name, what, object_key(args[-1]))


def pod_informer(client: ApiClient, handler: EventHandler[Pod], field_selector: str = "") -> Informer[Pod]:
    return Informer(client, PODS, Pod, handler, field_selector=field_selector, slim=share_pod)


def node_informer(client: ApiClient, handler: EventHandler[Node]) -> Informer[Node]:
    return Informer(client, NODES, Node, handler)


def job_informer(client: ApiClient, handler: EventHandler[Job]) -> Informer[Job]:
    return Informer(client, JOBS, Job, handler)


def namespace_informer(client: ApiClient, handler: EventHandler[Namespace]) -> Informer[Namespace]:
    """Namespaces, for their labels (pod affinity's namespaceSelector); keyed by name."""
    return Informer(client, NAMESPACES, Namespace, handler)


def storage_informer(client: ApiClient, resource: Resource, type_: type[T]) -> Informer[T]:
    """One of the storage resources above, with no handlers yet."""
    return Informer(client, resource, type_, Handlers())
