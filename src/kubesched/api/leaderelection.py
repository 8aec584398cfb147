"""Leader election on a Lease, as client-go's tools/leaderelection does it (tryAcquireOrRenew, acquire,
renew, release on cancel), so kubesched replicas and kube-scheduler's behaviour line up.

Written here rather than taken from kubernetes_asyncio's leaderelection: that one brings its own API
client (a second set of credentials, TLS and rate limiting beside ApiClient) and reads the real clock,
so it could neither share this process's connection nor be tested in fake time.

Expiry is judged as client-go judges it: by this process's monotonic clock at the moment it read the
changed record (`observed_time`, taken after the read returns) plus the record's leaseDurationSeconds,
never by the timestamps another host wrote, so clock skew between replicas does not matter.

Every attempt runs under one deadline that covers all of it, the wait for a connection or a rate-limit
token included (client-go's context per round): a request that hangs cannot keep a leader believing it
leads past renewDeadline, after which a standby may take over.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from kubesched.api.lease import LeaseLock, LeaseRecord, micro_time

log = logging.getLogger("kubesched.leaderelection")

# client-go waits retryPeriod * (1 + rand * 1.2) between attempts to acquire. A smaller spread keeps
# a standby's view of the holder at most ~1.1 retryPeriods old, so it takes over within about
# leaseDuration + retryPeriod of the holder's last renewal.
ACQUIRE_JITTER = 0.1


def new_identity() -> str:
    """kube-scheduler's holderIdentity: the host name and a fresh UUID, unique per process."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, slots=True)
class Timing:
    lease_duration: float
    renew_deadline: float
    retry_period: float


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LeaderElector:
    """One candidate. `run()` returns only once it has been leader and lost the lease; cancel it to
    stop campaigning, then `release()` to hand the lease over at once."""

    def __init__(self, lock: LeaseLock, identity: str, timing: Timing, *,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], datetime] = _utc_now,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 rng: random.Random | None = None) -> None:
        self.lock = lock
        self.identity = identity
        self.timing = timing
        self._clock = clock
        self._wall = wall
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.observed: LeaseRecord | None = None
        self.observed_time = 0.0
        self.leading = asyncio.Event()
        # Set when run() gives the lease up after leading: nothing may be written for it any more,
        # not even a release (another candidate may hold the lease by now).
        self.lost = False
        self._observers: list[Callable[[bool], None]] = []
        self._reported_holder: str | None = None

    def describe(self) -> str:
        return self.lock.describe()

    def add_observer(self, observer: Callable[[bool], None]) -> None:
        """Called with True on becoming leader and False on ceasing to be one."""
        self._observers.append(observer)

    def is_leader(self) -> bool:
        return self.observed is not None and self.observed.holder_identity == self.identity

    def holder(self) -> str:
        return self.observed.holder_identity if self.observed is not None else ""

    def _lease_valid(self, now: float) -> bool:
        return self.observed is not None and self.observed_time + self.observed.lease_duration_seconds > now

    def _observe(self, record: LeaseRecord, now: float) -> None:
        if record != self.observed:
            self.observed = record
            self.observed_time = now
        if record.holder_identity != self._reported_holder:
            self._reported_holder = record.holder_identity
            if record.holder_identity and record.holder_identity != self.identity:
                log.info("the leader is %s", record.holder_identity, extra={"lease": self.describe()})

    # --- one attempt ----------------------------------------------------------------------------------

    async def try_acquire_or_renew(self, request_timeout: float) -> bool:
        """client-go's tryAcquireOrRenew: True when this candidate holds the lease afterwards."""
        now = self._clock()
        stamp = micro_time(self._wall())
        desired = LeaseRecord(self.identity, max(1, int(self.timing.lease_duration)), stamp, stamp, 0)
        observed = self.observed
        # 1. the leader's fast path: update what it wrote last, no read first
        if observed is not None and self.is_leader() and self._lease_valid(now):
            mine = replace(desired, acquire_time=observed.acquire_time,
                           lease_transitions=observed.lease_transitions)
            try:
                await self.lock.update(mine, request_timeout)
            except Exception as exc:
                log.warning("renewing the lease without reading it failed, reading it: %s", exc,
                            extra={"lease": self.describe()})
            else:
                self._observe(mine, self._clock())
                return True
        # 2. read the record, or create it
        try:
            current = await self.lock.get(request_timeout)
        except Exception as exc:
            log.warning("cannot read the lease: %s", exc, extra={"lease": self.describe()})
            return False
        if current is None:
            try:
                await self.lock.create(desired, request_timeout)
            except Exception as exc:
                log.warning("cannot create the lease: %s", exc, extra={"lease": self.describe()})
                return False
            self._observe(desired, self._clock())
            return True
        # 3. someone else holds it and it has not expired by our clock. A changed record counts from
        # when it was read, not from when the read was sent: a slow read must not shorten the wait.
        self._observe(current, self._clock())
        if current.holder_identity and self._lease_valid(now) and not self.is_leader():
            return False
        # 4. take it over (counting the transition) or renew it
        if self.is_leader():
            desired = replace(desired, acquire_time=current.acquire_time,
                              lease_transitions=current.lease_transitions)
        else:
            desired = replace(desired, lease_transitions=current.lease_transitions + 1)
        try:
            await self.lock.update(desired, request_timeout)
        except Exception as exc:
            # a 409 lands here too: another candidate moved first; the next attempt reads its record
            log.warning("cannot update the lease: %s", exc, extra={"lease": self.describe()})
            return False
        self._observe(desired, self._clock())
        return True

    async def _attempt_within(self, seconds: float) -> bool:
        """One tryAcquireOrRenew that ends within `seconds` however its requests behave: on time
        out it is cancelled (and counts as failed), so nothing of it can land later."""
        attempt = asyncio.ensure_future(self.try_acquire_or_renew(seconds))
        timer = asyncio.ensure_future(self._sleep(seconds))
        try:
            await asyncio.wait((attempt, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not attempt.done():
                attempt.cancel()
                log.warning("the lease request did not finish within %.3gs; cancelled", seconds,
                            extra={"lease": self.describe()})
                await asyncio.wait((attempt,))
        return not attempt.cancelled() and attempt.result()

    # --- the loops ------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Acquire the lease, then renew it until that fails for renewDeadline; returns having lost it."""
        await self.acquire()
        try:
            await self.renew()
            self.lost = True  # not when cancelled: a stop hands the lease over with release()
        finally:
            self._set_leading(False)

    async def acquire(self) -> None:
        log.info("attempting to acquire the leader lease", extra={"lease": self.describe(),
                                                                   "identity": self.identity})
        while not await self._attempt_within(self.timing.renew_deadline):
            wait = self.timing.retry_period * (1 + ACQUIRE_JITTER * self._rng.random())
            if self.observed is not None and self.observed.holder_identity:
                # try the moment the holder's lease runs out by our clock, not up to a period later
                expires_in = self.observed_time + self.observed.lease_duration_seconds - self._clock()
                if expires_in > 0:  # an expired lease that could not be taken waits a full period
                    wait = min(wait, expires_in)
            await self._sleep(wait)
        self._set_leading(True)

    async def renew(self) -> None:
        """Renew every retryPeriod; give up once no renewal has succeeded for renewDeadline.

        The deadline counts from the last successful renewal (client-go counts from the start of the
        failing round, a retryPeriod later): stopping sooner keeps this process from scheduling after
        another could have taken the lease over."""
        last_renewed = self._clock()
        while True:
            await self._sleep(self.timing.retry_period)
            while True:
                started = self._clock()
                remaining = last_renewed + self.timing.renew_deadline - started
                if remaining <= 0:
                    log.error("failed to renew the leader lease within renewDeadline",
                              extra={"lease": self.describe(), "renew_deadline": self.timing.renew_deadline})
                    return
                if await self._attempt_within(remaining):
                    last_renewed = started
                    break
                if not self.is_leader():
                    log.error("the leader lease was taken over", extra={"lease": self.describe(),
                                                                         "holder": self.holder()})
                    return
                await self._sleep(min(self.timing.retry_period,
                                      max(last_renewed + self.timing.renew_deadline - self._clock(), 0.0)))

    async def release(self, request_timeout: float) -> bool:
        """client-go's release (ReleaseOnCancel): an empty holder and a 1 s lease, so a standby takes
        over at its next attempt instead of waiting out leaseDuration. True if not held afterwards."""
        if self.lost or not self.is_leader() or self.observed is None:
            return True
        stamp = micro_time(self._wall())
        record = LeaseRecord("", 1, stamp, stamp, self.observed.lease_transitions)
        try:
            await self.lock.update(record, request_timeout)
        except Exception as exc:
            log.error("failed to release the leader lease: %s", exc, extra={"lease": self.describe()})
            return False
        self._observe(record, self._clock())
        self._set_leading(False)
        log.info("released the leader lease", extra={"lease": self.describe()})
        return True

    def _set_leading(self, leading: bool) -> None:
        if leading == self.leading.is_set():
            return
        if leading:
            self.leading.set()
            log.info("became leader", extra={"lease": self.describe(), "identity": self.identity})
        else:
            self.leading.clear()
            log.info("stopped leading", extra={"lease": self.describe(), "identity": self.identity})
        for observer in self._observers:
            observer(leading)
