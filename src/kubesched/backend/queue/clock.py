"""Time as the queue sees it: seconds as a float from an arbitrary origin."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...


class MonotonicClock:
    """Wall-clock jumps (NTP, suspend) must not shorten or stretch a backoff."""

    def now(self) -> float:
        return time.monotonic()


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def step(self, seconds: float) -> None:
        self._now += seconds

    def set(self, now: float) -> None:
        self._now = now
