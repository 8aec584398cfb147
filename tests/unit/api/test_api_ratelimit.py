"""client-go's token bucket: burst first, then qps."""

from __future__ import annotations

import pytest

from kubesched.api.ratelimit import TokenBucket


class Now:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_burst_then_rate() -> None:
    now = Now()
    bucket = TokenBucket(10, 3, now)
    assert [bucket.reserve() for _ in range(3)] == [0, 0, 0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)  # queued behind the previous reservation
    now.t = 10.0
    assert [bucket.reserve() for _ in range(3)] == [0, 0, 0]  # refilled, but never beyond burst
    assert bucket.reserve() > 0


def test_negative_qps_is_unlimited() -> None:
    bucket = TokenBucket(-1, 1, Now())
    assert all(bucket.reserve() == 0 for _ in range(1000))


def test_zero_qps_takes_client_go_defaults() -> None:
    bucket = TokenBucket(0, 0, Now())
    assert [bucket.reserve() for _ in range(10)] == [0] * 10
    assert bucket.reserve() == pytest.approx(0.2)
