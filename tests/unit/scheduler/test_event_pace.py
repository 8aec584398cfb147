"""Scheduled events keep pace with the binds: every bind in flight can have its event in flight too.

client-go sends each event from a goroutine of its own (tools/events recordToSink), so
kube-scheduler never drops one while the apiserver is slow; kubesched's recorder has a fixed set of
senders in front of a queue of 1,000 that drops when full. With 8 senders and 64 binds in flight it
dropped 28-37 % of the Scheduled events of `kubesched bench --workload gang-batch` at 250 binds/s
(kube-scheduler: none)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

import pytest

from kubesched.api import events
from kubesched.api.client import ApiClient, Response
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_pod


class SlowApiserver:
    """Holds every request until released; counts how many were in flight at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.in_flight = 0
        self.peak = 0
        self.created = 0

    async def request(self, method: str, path: str, **_: Any) -> Response:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await self.release.wait()
        finally:
            self.in_flight -= 1
        self.created += 1
        return Response(201, b"{}")


@pytest.mark.parametrize("binds", [pytest.param(64, id="default-64"), pytest.param(100, id="flag-100")])
async def test_every_bind_in_flight_has_room_for_its_event(binds: int) -> None:
    api = SlowApiserver()
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    sched = Scheduler(client, load(None), max_binds_in_flight=binds, event_client=cast(ApiClient, api))
    senders = asyncio.create_task(sched.events.run())
    try:
        for i in range(binds):
            sched.events.scheduled(make_pod(f"p{i}").obj(), "node-1")
        for _ in range(10):
            await asyncio.sleep(0)
        assert (api.peak, sched.events.pending) == (binds, 0)
        api.release.set()
        await sched.events.flush()
        assert (api.created, sched.events.dropped) == (binds, 0)
    finally:
        api.release.set()
        senders.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await senders


def test_senders_follow_the_binds_in_flight_and_never_drop_below_eight() -> None:
    assert [events.senders(n) for n in (1, 8, 64, 100)] == [8, 8, 64, 100]


async def test_events_sharing_the_main_client_stay_at_eight() -> None:
    """Without a client of their own, events share the binder's and the informers' pool: 8 senders,
    as before, so a burst of events never takes the connections the lists and watches need."""
    api = SlowApiserver()
    sched = Scheduler(cast(ApiClient, api), load(None), max_binds_in_flight=64)
    senders = asyncio.create_task(sched.events.run())
    try:
        for i in range(20):
            sched.events.scheduled(make_pod(f"p{i}").obj(), "node-1")
        for _ in range(10):
            await asyncio.sleep(0)
        assert api.peak == events.EVENT_WORKERS
    finally:
        api.release.set()
        senders.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await senders
