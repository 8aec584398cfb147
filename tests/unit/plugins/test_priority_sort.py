"""PrioritySort's Less, ported from kube-scheduler's queuesort/priority_sort_test.go (TestLess), and
its heap key (`sort_key`, what the scheduling queue's activeQ orders by) checked against the same
table."""

from __future__ import annotations

import pytest

from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.plugins.priority_sort import PrioritySort
from tests.builders import make_pod

LOW_PRIORITY, HIGH_PRIORITY = 10, 100
T1 = 1_000.0
T2 = T1 + 1.0  # t1.Add(time.Second)

LESS_CASES = [
    # TestLess's four cases; upstream leaves the timestamps of the first two at the zero time.
    pytest.param(LOW_PRIORITY, 0.0, HIGH_PRIORITY, 0.0, False,  # p2 should be ahead of p1 in the queue
                 id="p1.priority less than p2.priority"),
    pytest.param(HIGH_PRIORITY, 0.0, LOW_PRIORITY, 0.0, True,  # p1 should be ahead of p2 in the queue
                 id="p1.priority greater than p2.priority"),
    pytest.param(HIGH_PRIORITY, T1, HIGH_PRIORITY, T2, True,
                 id="equal priority. p1 is added to schedulingQ earlier than p2"),
    pytest.param(HIGH_PRIORITY, T2, HIGH_PRIORITY, T1, False,
                 id="equal priority. p2 is added to schedulingQ earlier than p1"),
    # By hand from PrioritySort.Less, `(p1 > p2) || (p1 == p2 && t1.Before(t2))`: Before is strict,
    # so an entity is never ahead of one with the same priority and timestamp (nor of itself).
    pytest.param(HIGH_PRIORITY, T1, HIGH_PRIORITY, T1, False,
                 id="equal priority and equal timestamp (by hand: Before is strict)"),
    # By hand: a higher priority wins even when added later.
    pytest.param(HIGH_PRIORITY, T2, LOW_PRIORITY, T1, True,
                 id="p1.priority greater than p2.priority, p1 added later (by hand)"),
]


def _queued(priority: int, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(make_pod("p").priority(priority).obj(), timestamp)


@pytest.mark.parametrize(("p1", "t1", "p2", "t2", "expected"), LESS_CASES)
def test_less(p1: int, t1: float, p2: int, t2: float, expected: bool) -> None:
    assert PrioritySort().less(_queued(p1, t1), _queued(p2, t2)) is expected


@pytest.mark.parametrize(("p1", "t1", "p2", "t2", "expected"), LESS_CASES)
def test_sort_key_orders_as_less(p1: int, t1: float, p2: int, t2: float, expected: bool) -> None:
    """activeQ pops the smallest `sort_key` first: p1's key is smaller exactly when Less(p1, p2)."""
    assert (PrioritySort.sort_key(p1, t1) < PrioritySort.sort_key(p2, t2)) is expected
