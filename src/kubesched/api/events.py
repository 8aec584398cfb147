"""Events as kube-scheduler records them: events.k8s.io/v1, through client-go's tools/events.

What that means, all reproduced here:
- reportingController is the profile's schedulerName, reportingInstance `<schedulerName>-<hostname>`;
  action `Scheduling` (FailedScheduling) or `Binding` (Scheduled); regarding is the pod's
  reference (kind, namespace, name, uid, apiVersion, resourceVersion).
- The name is `<pod>.<now in ns as hex>`; the note is cut to 1024 bytes ending in " ..." by the
  scheduler (truncateMessage); the pod condition keeps the whole message.
- Isomorphic events (same type, action, reason, controller, instance, regarding incl. its
  resourceVersion) within 6 minutes form a series: the second is a PATCH of
  `series: {count: 2, lastObservedTime}`, later ones only count up in memory; series are
  re-sent every 30 minutes and a last time once quiet for 6 minutes. Scheduled events, which
  cannot repeat, are not kept for that (NEVER_REPEATED).

Sending happens in background workers fed by a bounded queue: recording never blocks or awaits,
and when the queue is full the event is dropped and counted, as client-go's broadcaster does.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import socket
import time
import uuid
from typing import Any, cast

import orjson

from kubesched.api import protobuf
from kubesched.api.client import JSON, STRATEGIC_MERGE_PATCH, ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.model.objects import Pod

log = logging.getLogger(__name__)

NOTE_LENGTH_LIMIT = 1024
MAX_QUEUED_EVENTS = 1000
EVENT_WORKERS = 8
SERIES_FINISH_AFTER = 6 * 60.0
SERIES_REFRESH_EVERY = 30 * 60.0
# A Scheduled event is recorded once a bind succeeds, and a pod is bound once: no second event can
# carry the same pod resourceVersion, so none ever becomes a series. client-go keeps it 6 to 12
# minutes all the same; at 50 binds a second that was 18,000-36,000 entries, most of the
# scheduler's memory and a sawtooth in it (issue 24, R6). Not kept, nothing written changes.
NEVER_REPEATED = frozenset({"Scheduled"})
_SEND_RETRIES = (1.0, 5.0)  # client-go retries a network failure 12 times, 10 s apart


def senders(binds_in_flight: int) -> int:
    """Event senders (and the event client's connections) for a binder with this many binds in flight.

    Each bind records one Scheduled event, so as many senders keep the events at the binds' pace;
    client-go sends each event from a goroutine of its own and never drops one while the apiserver is
    slow. With 8, a third of the Scheduled events were dropped at 250 binds/s here."""
    return max(binds_in_flight, EVENT_WORKERS)


def truncate_note(message: str) -> str:
    """kube-scheduler's truncateMessage: Go slices bytes, so do we (a rune cut in two becomes U+FFFD,
    as Go's JSON encoder renders invalid UTF-8)."""
    raw = message.encode()
    if len(raw) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = b" ..."
    return (raw[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix).decode(errors="replace")


def micro_time(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_name(ref_name: str, unix_nano: int) -> str:
    name = f"{ref_name}.{unix_nano:x}"
    # util.GenerateEventName falls back to a uuid when the result is no DNS subdomain.
    return name if len(name) <= 253 else str(uuid.uuid4())


def pod_reference(pod: Pod) -> dict[str, str]:
    m = pod.metadata
    ref = {"kind": "Pod", "namespace": m.namespace, "name": m.name, "uid": m.uid, "apiVersion": "v1"}
    if m.resource_version:
        ref["resourceVersion"] = m.resource_version
    return ref


def make_event(
    pod: Pod,
    type_: str,
    reason: str,
    action: str,
    note: str,
    reporting_controller: str,
    reporting_instance: str,
    now: float,
) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {
            "name": event_name(pod.metadata.name, int(now * 1e9)),
            "namespace": pod.metadata.namespace or "default",
        },
        "eventTime": micro_time(now),
        "reportingController": reporting_controller,
        "reportingInstance": reporting_instance,
        "action": action,
        "reason": reason,
        "regarding": pod_reference(pod),
        "note": note,
        "type": type_,
    }


_Key = tuple[str, str, str, str, str, str, str, str, str]


def isomorphic_key(event: dict[str, Any]) -> _Key:
    r = event["regarding"]
    return (
        event["type"], event["action"], event["reason"],
        event["reportingController"], event["reportingInstance"],
        r["namespace"], r["name"], r["uid"], r.get("resourceVersion", ""),
    )


class _Cached:
    """An event kept for series counting. Once written it is kept as its JSON (a third of the
    dict's size: a batch of 50,000 pods keeps 50,000 Scheduled events for 6 to 12 minutes)."""

    __slots__ = ("_event", "_waiter", "count", "first_seen", "last_observed", "written")

    def __init__(self, event: dict[str, Any], first_seen: float) -> None:
        self._event: dict[str, Any] | bytes = event
        self.first_seen = first_seen
        self.count = 1  # 1 until the event becomes a series
        self.last_observed = 0.0
        # Set once the first write is done, so a series PATCH never overtakes its own POST.
        self.written = False
        self._waiter: asyncio.Event | None = None

    @property
    def event(self) -> dict[str, Any]:
        e = self._event
        return e if isinstance(e, dict) else cast(dict[str, Any], orjson.loads(e))

    def mark_written(self) -> None:
        self.written = True
        if isinstance(self._event, dict):
            # orjson's bytes keep a 4 KB buffer whatever the length: copied to their size.
            self._event = bytes(memoryview(orjson.dumps(self._event)))
        if self._waiter is not None:
            self._waiter.set()

    async def wait_written(self) -> None:
        if self.written:
            return
        if self._waiter is None:
            self._waiter = asyncio.Event()
        await self._waiter.wait()


class EventRecorder:
    def __init__(
        self,
        client: ApiClient,
        reporting_controller: str,
        reporting_instance: str | None = None,
        *,
        workers: int = EVENT_WORKERS,
        max_queued: int = MAX_QUEUED_EVENTS,
        use_protobuf: bool = False,
    ) -> None:
        self.client = client
        # Creates as Kubernetes protobuf (kube-scheduler's default content type); series PATCHes
        # stay JSON, the only patch encoding the apiserver takes.
        self._encode = protobuf.event if use_protobuf else orjson.dumps
        self._content_type = protobuf.PROTOBUF if use_protobuf else JSON
        self._accept: str | None = protobuf.ACCEPT if use_protobuf else None
        self.reporting_controller = reporting_controller
        self._hostname = socket.gethostname()
        self.reporting_instance = reporting_instance or f"{reporting_controller}-{self._hostname}"
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], _Cached | None]] = asyncio.Queue(
            max_queued
        )
        self._workers = workers
        self._cache: dict[_Key, _Cached] = {}
        self.sent = 0
        self.dropped = 0
        self.failed = 0
        self._last_drop_log = 0.0

    @property
    def series_count(self) -> int:
        """Events kept to be counted into series (pruned as they age)."""
        return len(self._cache)

    # --- recording (sync, never blocks) ---------------------------------------------------------

    # `controller` is the profile's schedulerName when there are several profiles; kube-scheduler
    # keeps one recorder per profile, kubesched one recorder with the name per call.

    def scheduled(self, pod: Pod, node: str, controller: str | None = None) -> None:
        ns, name = pod.metadata.namespace, pod.metadata.name
        note = f"Successfully assigned {ns}/{name} to {node}"
        self.eventf(pod, "Normal", "Scheduled", "Binding", note, controller)

    def failed_scheduling(self, pod: Pod, message: str, controller: str | None = None) -> None:
        self.eventf(pod, "Warning", "FailedScheduling", "Scheduling", truncate_note(message), controller)

    def eventf(
        self, pod: Pod, type_: str, reason: str, action: str, note: str, controller: str | None = None
    ) -> None:
        now = time.time()
        if controller is None or controller == self.reporting_controller:
            controller, instance = self.reporting_controller, self.reporting_instance
        else:
            instance = f"{controller}-{self._hostname}"
        event = make_event(pod, type_, reason, action, note, controller, instance, now)
        if reason in NEVER_REPEATED:
            self._enqueue("create", event, None)
            return
        key = isomorphic_key(event)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = _Cached(event, now)
            if not self._enqueue("create", event, cached):
                cached.mark_written()
            return
        cached.count += 1
        cached.last_observed = now
        if cached.count == 2:
            self._enqueue("series", self._with_series(cached), cached)

    def _with_series(self, cached: _Cached) -> dict[str, Any]:
        return {
            **cached.event,
            "series": {"count": cached.count, "lastObservedTime": micro_time(cached.last_observed)},
        }

    def _enqueue(self, op: str, event: dict[str, Any], cached: _Cached | None) -> bool:
        try:
            self._queue.put_nowait((op, event, cached))
            return True
        except asyncio.QueueFull:
            self.dropped += 1
            now = time.monotonic()
            if now - self._last_drop_log > 10:
                self._last_drop_log = now
                log.warning("event queue full: %d events dropped so far", self.dropped)
            return False

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    # --- sending (background) -------------------------------------------------------------------

    async def run(self) -> None:
        """Workers plus series upkeep, until cancelled."""
        async with asyncio.TaskGroup() as tg:
            for i in range(self._workers):
                tg.create_task(self._worker(), name=f"events/worker-{i}")
            tg.create_task(self._series_upkeep(), name="events/series")

    async def flush(self) -> None:
        """Wait until everything queued so far has been sent (or given up on)."""
        await self._queue.join()

    async def _worker(self) -> None:
        while True:
            op, event, cached = await self._queue.get()
            try:
                if op == "series" and cached is not None:
                    await cached.wait_written()
                await self._send(op, event)
            except Exception:
                self.failed += 1
                log.exception("event %s for %s not written", event["reason"], event["regarding"]["name"])
            finally:
                if op == "create" and cached is not None:
                    cached.mark_written()
                self._queue.task_done()

    async def _send(self, op: str, event: dict[str, Any]) -> None:
        ns = event["metadata"]["namespace"]
        for delay in (*_SEND_RETRIES, None):
            try:
                if op == "series":
                    path = f"/apis/events.k8s.io/v1/namespaces/{ns}/events/{event['metadata']['name']}"
                    patch = orjson.dumps({"series": event["series"]})
                    resp = await self.client.request(
                        "PATCH", path, body=patch, content_type=STRATEGIC_MERGE_PATCH
                    )
                    if resp.status != 404:
                        self._check(resp.status, resp.body, path)
                        return
                    # The original is gone (expired or never written): create it with its series.
                path = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
                resp = await self.client.request("POST", path, body=self._encode(event),
                                                 content_type=self._content_type, accept=self._accept)
                self._check(resp.status, resp.body, path)
                return
            except ApiConnectionError as e:
                if delay is None:
                    raise
                log.debug("event write failed (%s); retrying in %.0fs", e, delay)
                await asyncio.sleep(delay)

    def _check(self, status: int, body: bytes, path: str) -> None:
        if 200 <= status < 300:
            self.sent += 1
            return
        # client-go gives up on any answer from the server (no retry); AlreadyExists is quiet.
        err = ApiError.from_response(status, body, path=path)
        if status == 409:
            log.debug("event already exists: %s", err)
            return
        self.failed += 1
        log.warning("event rejected: %s", err)

    async def _series_upkeep(self) -> None:
        last_refresh = time.time()
        while True:
            await asyncio.sleep(SERIES_FINISH_AFTER)
            now = time.time()
            self.finish_series(now)
            if now - last_refresh >= SERIES_REFRESH_EVERY:
                last_refresh = now
                for cached in self._cache.values():
                    if cached.count > 1:
                        self._enqueue("series", self._with_series(cached), cached)

    def finish_series(self, now: float) -> None:
        """Forget events quiet for 6 minutes; a series is sent one last time with its final count."""
        for key, cached in list(self._cache.items()):
            if cached.count > 1:
                if cached.last_observed < now - SERIES_FINISH_AFTER:
                    self._enqueue("series", self._with_series(cached), cached)
                    del self._cache[key]
            elif cached.first_seen < now - SERIES_FINISH_AFTER:
                del self._cache[key]
