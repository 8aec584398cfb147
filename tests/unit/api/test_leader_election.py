"""The elector against an in-memory lease store, in fake time: client-go's tryAcquireOrRenew cases one
attempt at a time, then the acquire/renew/release loops with several candidates."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import pytest

from kubesched.api.errors import ApiConnectionError
from kubesched.api.leaderelection import LeaderElector, Timing
from kubesched.api.lease import LeaseConflict, LeaseRecord

TIMING = Timing(lease_duration=15.0, renew_deadline=10.0, retry_period=2.0)
OLD = "2020-01-01T00:00:00.000000Z"


class FakeTime:
    """A virtual clock: `sleep` parks on it; `advance` wakes sleepers in deadline order."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def clock(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)

    async def sleep(self, seconds: float) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(seconds, 0.0), next(self._seq), fut))
        await fut

    async def _settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        until = self.now + seconds
        while True:
            await self._settle()
            while self._sleepers and self._sleepers[0][2].done():
                heapq.heappop(self._sleepers)
            if not self._sleepers or self._sleepers[0][0] > until:
                self.now = until
                await self._settle()
                return
            at, _, fut = heapq.heappop(self._sleepers)
            self.now = max(self.now, at)
            fut.set_result(None)


@dataclass
class Store:
    """The apiserver's one Lease: a record and its resourceVersion."""

    record: LeaseRecord | None = None
    version: int = 0
    down: bool = False
    # Requests hang forever whatever their request_timeout (a stuck connection, or a wait for a
    # rate-limit token that the request timeout does not cover).
    hung: bool = False
    # Seconds (fake time) each read takes to come back.
    read_delay: float = 0.0
    # Before the next update lands, another writer changes the lease (so that update gets a 409).
    interleave: LeaseRecord | None = None
    writes: list[LeaseRecord] = field(default_factory=list)

    def put(self, record: LeaseRecord) -> None:
        self.record = record
        self.version += 1
        self.writes.append(record)


class FakeLock:
    """One candidate's view of the store, conditional on the version it saw, as ApiLeaseLock."""

    def __init__(self, store: Store, time: FakeTime | None = None) -> None:
        self.store = store
        self.time = time
        self.seen: int | None = None

    def describe(self) -> str:
        return "kube-system/kubesched"

    async def _check(self) -> None:
        if self.store.hung:
            await asyncio.get_running_loop().create_future()
        if self.store.down:
            raise ApiConnectionError("connection refused")

    async def get(self, request_timeout: float) -> LeaseRecord | None:
        await self._check()
        if self.store.read_delay and self.time is not None:
            await self.time.sleep(self.store.read_delay)
        self.seen = self.store.version if self.store.record is not None else None
        return self.store.record

    async def create(self, record: LeaseRecord, request_timeout: float) -> None:
        await self._check()
        if self.store.record is not None:
            raise LeaseConflict("AlreadyExists")
        self.store.put(record)
        self.seen = self.store.version

    async def update(self, record: LeaseRecord, request_timeout: float) -> None:
        await self._check()
        if self.store.interleave is not None:
            self.store.put(self.store.interleave)
            self.store.interleave = None
        if self.seen is None or self.seen != self.store.version:
            raise LeaseConflict("409 Conflict: the object has been modified")
        self.store.put(record)
        self.seen = self.store.version


def elector(store: Store, time: FakeTime, identity: str, timing: Timing = TIMING) -> LeaderElector:
    return LeaderElector(FakeLock(store, time), identity, timing, clock=time.clock, wall=time.wall, sleep=time.sleep,
                         rng=random.Random(0))


def held_by(holder: str, transitions: int = 3, duration: int = 15) -> LeaseRecord:
    return LeaseRecord(holder, duration, OLD, OLD, transitions)


@dataclass(frozen=True)
class Attempt:
    initial: LeaseRecord | None
    # (seconds to wait, result) for each attempt, in order
    attempts: tuple[tuple[float, bool], ...]
    holder: str
    transitions: int
    conflict: LeaseRecord | None = None


ATTEMPTS = [
    pytest.param(Attempt(None, ((0, True),), "me", 0), id="acquire-free-lease-by-creating-it"),
    pytest.param(Attempt(held_by(""), ((0, True),), "me", 4), id="acquire-released-lease"),
    pytest.param(Attempt(held_by("other"), ((0, False), (14.9, False)), "other", 3), id="wait-while-held"),
    # renewTime is years old, but expiry counts from when this candidate saw the record, not from it
    pytest.param(Attempt(held_by("other"), ((0, False), (15.1, True)), "me", 4), id="take-over-expired"),
    pytest.param(Attempt(None, ((0, True), (2, True), (2, True)), "me", 0), id="renew"),
    pytest.param(Attempt(held_by(""), ((0, False), (2, False)), "rival", 4, conflict=held_by("rival", 4)),
                 id="conflict-409-then-held-by-the-winner"),
]


@pytest.mark.parametrize("case", ATTEMPTS)
async def test_try_acquire_or_renew(case: Attempt) -> None:
    time = FakeTime()
    store = Store(record=case.initial, interleave=case.conflict)
    me = elector(store, time, "me")
    for wait, expected in case.attempts:
        time.now += wait
        assert await me.try_acquire_or_renew(5.0) is expected
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_transitions) == (case.holder, case.transitions)
    assert me.is_leader() is (case.holder == "me")


async def test_renewal_keeps_acquire_time_and_moves_renew_time() -> None:
    time = FakeTime()
    store = Store()
    me = elector(store, time, "me")
    assert await me.try_acquire_or_renew(5.0)
    first = store.record
    time.now += 2
    assert await me.try_acquire_or_renew(5.0)
    assert store.record is not None
    assert first is not None
    assert store.record.acquire_time == first.acquire_time
    assert store.record.renew_time > first.renew_time
    assert store.record.lease_duration_seconds == 15


async def test_leader_falls_back_to_reading_when_its_fast_path_conflicts() -> None:
    time = FakeTime()
    store = Store()
    me = elector(store, time, "me")
    assert await me.try_acquire_or_renew(5.0)
    # someone rewrote the lease with us still as holder (say, kubectl): the fast path gets a 409
    assert store.record is not None
    store.put(replace(store.record, lease_transitions=7))
    time.now += 2
    assert await me.try_acquire_or_renew(5.0)
    assert store.record.holder_identity == "me"
    assert store.record.lease_transitions == 7


async def test_leader_loses_when_renewal_fails_past_the_deadline() -> None:
    time = FakeTime()
    store = Store()
    me = elector(store, time, "me")
    changes: list[bool] = []
    me.add_observer(changes.append)
    task = asyncio.create_task(me.run(), name="elector")
    await time.advance(0)
    assert me.leading.is_set()
    assert changes == [True]
    await time.advance(20)  # renewals keep it
    assert not task.done()
    store.down = True
    down_at = time.now
    await time.advance(TIMING.renew_deadline + TIMING.retry_period)
    assert task.done()
    assert task.exception() is None
    assert not me.leading.is_set()
    assert changes == [True, False]
    # stopped within renewDeadline of its last renewal, before any standby may take over
    assert time.now - down_at <= TIMING.renew_deadline + TIMING.retry_period


async def test_leader_stops_at_once_when_another_has_taken_the_lease() -> None:
    time = FakeTime()
    store = Store()
    me = elector(store, time, "me")
    task = asyncio.create_task(me.run(), name="elector")
    await time.advance(0)
    store.put(held_by("usurper"))
    await time.advance(TIMING.retry_period)
    assert task.done()
    assert not me.leading.is_set()


async def test_standby_takes_over_within_lease_duration_and_retry_period_of_the_last_renewal() -> None:
    time = FakeTime()
    store = Store()
    a, b = elector(store, time, "a"), elector(store, time, "b")
    ta = asyncio.create_task(a.run(), name="elector-a")
    await time.advance(0)
    tb = asyncio.create_task(b.run(), name="elector-b")
    await time.advance(7)
    assert a.leading.is_set()
    assert not b.leading.is_set()
    ta.cancel()  # killed: no release
    await asyncio.wait([ta])
    assert store.writes[-1].holder_identity == "a"
    last_renewal = time.now - (time.now - 1000.0) % TIMING.retry_period
    await time.advance(TIMING.lease_duration + TIMING.retry_period * 1.2)
    assert b.leading.is_set()
    assert store.record is not None
    assert store.record.holder_identity == "b"
    assert store.record.lease_transitions == 1
    taken_at = datetime.fromisoformat(store.record.acquire_time).timestamp()
    assert taken_at - last_renewal <= TIMING.lease_duration + TIMING.retry_period * 1.2
    tb.cancel()
    await asyncio.wait([tb])


async def test_release_on_stop_hands_over_at_the_standbys_next_attempt() -> None:
    time = FakeTime()
    store = Store()
    a, b = elector(store, time, "a"), elector(store, time, "b")
    ta = asyncio.create_task(a.run(), name="elector-a")
    await time.advance(0)
    tb = asyncio.create_task(b.run(), name="elector-b")
    await time.advance(5)
    ta.cancel()
    await asyncio.wait([ta])
    assert await a.release(2.0)
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_duration_seconds) == ("", 1)
    assert not a.leading.is_set()
    released_at = time.now
    await time.advance(TIMING.retry_period * 1.1)
    assert b.leading.is_set()
    assert store.record.holder_identity == "b"
    taken_at = datetime.fromisoformat(store.record.acquire_time).timestamp()
    assert taken_at - released_at <= TIMING.retry_period * 1.1 + 1e-6
    tb.cancel()
    await asyncio.wait([tb])


async def test_release_by_a_standby_writes_nothing() -> None:
    time = FakeTime()
    store = Store(record=held_by("other"))
    me = elector(store, time, "me")
    assert not await me.try_acquire_or_renew(5.0)
    writes = len(store.writes)
    assert await me.release(2.0)
    assert len(store.writes) == writes


async def test_leader_stops_within_renew_deadline_when_its_requests_hang() -> None:
    """The request timeout alone does not bound a renewal (a wait for a token or a connection comes
    before it): the leader must stop leading renewDeadline after its last renewal all the same,
    before a standby, counting leaseDuration from when it read that renewal, may take over."""
    time = FakeTime()
    store = Store()
    me, standby = elector(store, time, "me"), elector(store, time, "standby")
    ta = asyncio.create_task(me.run(), name="elector-me")
    await time.advance(0)
    tb = asyncio.create_task(standby.run(), name="elector-standby")
    await time.advance(10)
    assert me.leading.is_set()
    assert store.record is not None
    last_renewal = datetime.fromisoformat(store.record.renew_time).timestamp()
    lost_at: list[float] = []
    me.add_observer(lambda leading: lost_at.append(time.now) if not leading else None)
    lock = me.lock
    assert isinstance(lock, FakeLock)
    hung_lock = FakeLock(Store(hung=True), time)
    me.lock = hung_lock  # only the leader's connection hangs; the standby still reaches the store
    await time.advance(TIMING.renew_deadline + TIMING.retry_period)
    assert ta.done()
    assert ta.exception() is None
    assert me.lost
    assert lost_at
    assert lost_at[0] - last_renewal <= TIMING.renew_deadline
    await time.advance(TIMING.lease_duration)
    assert standby.leading.is_set()
    taken_at = datetime.fromisoformat(store.record.acquire_time).timestamp()
    assert taken_at > lost_at[0]
    # the one that lost writes nothing more, not even a release
    writes = len(store.writes)
    me.lock = lock
    assert await me.release(2.0)
    assert len(store.writes) == writes
    tb.cancel()
    await asyncio.wait([tb])


async def test_acquire_gives_up_an_attempt_that_hangs_and_tries_again() -> None:
    time = FakeTime()
    store = Store(hung=True)
    me = elector(store, time, "me")
    task = asyncio.create_task(me.run(), name="elector")
    await time.advance(TIMING.renew_deadline * 2.5)
    assert not me.leading.is_set()
    store.hung = False
    await time.advance(TIMING.renew_deadline + TIMING.retry_period * 1.1)
    assert me.leading.is_set()
    task.cancel()
    await asyncio.wait([task])


async def test_a_read_counts_from_when_it_came_back() -> None:
    """client-go's observedTime is taken when the changed record has been read: a read that took 3 s
    must not make the standby take over 3 s early."""
    time = FakeTime()
    store = Store(record=held_by("other"), read_delay=3.0)
    me = elector(store, time, "me")
    sent = time.now
    attempt = asyncio.create_task(me.try_acquire_or_renew(10.0), name="attempt")
    await time.advance(3.0)
    assert attempt.done()
    assert attempt.result() is False
    assert me.observed_time == sent + 3.0


async def test_a_stopped_leader_still_releases() -> None:
    """Cancelling run() (a SIGTERM) is not losing the lease: release() hands it over."""
    time = FakeTime()
    store = Store()
    me = elector(store, time, "me")
    task = asyncio.create_task(me.run(), name="elector")
    await time.advance(0)
    task.cancel()
    await asyncio.wait([task])
    assert not me.lost
    assert await me.release(2.0)
    assert store.record is not None
    assert store.record.holder_identity == ""
