"""Client-side rate limiting: client-go's token bucket (clientConnection qps/burst)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    """`qps` tokens a second, at most `burst` saved up. qps < 0 disables limiting; qps == 0 takes
    client-go's defaults (5 qps, burst 10)."""

    def __init__(self, qps: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        if qps == 0:
            qps, burst = 5.0, 10
        self.unlimited = qps < 0
        self._rate = qps
        self._burst = float(max(burst, 1))
        self._tokens = self._burst
        self._now = now
        self._last = now()

    def _refill(self) -> None:
        now = self._now()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now

    def reserve(self) -> float:
        """Take a token now, going into debt if needed; returns how long to wait before using it.

        Taking first and waiting after keeps callers in arrival order without a lock."""
        if self.unlimited:
            return 0.0
        self._refill()
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self._rate

    async def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
