"""The preemption workload's measure: binds wait for a first pass of preemptions, so victims leaving
count as progress against the stall limit, and throughput counts from the contender's readiness."""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubesched_dev.bench import run, stats, workloads
from kubesched_dev.bench.pending import pods_left


class Meter:
    def sample(self) -> None:
        pass


@dataclass
class Running:
    started: float
    name: str = "contender"
    log_path: Path = Path("contender.log")
    meter: Meter = field(default_factory=Meter)

    def check_alive(self) -> None:
        pass


@dataclass
class Watcher:
    bound_at: dict[str, float] = field(default_factory=dict)


@dataclass
class Options:
    pods: int

    def run_timeout(self) -> float:
        return 60.0


class Client:
    """Answers the stall report's list of pending pods and the one-pod page of pods_left."""

    def __init__(self, left: int = 0) -> None:
        self.left = left
        self.asked: list[dict[str, Any]] = []

    async def get(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        self.asked.append(params or {})
        if params and params.get("limit") == 1:
            items: list[dict[str, Any]] = [{}] if self.left else []
            meta = {"remainingItemCount": self.left - 1} if self.left > 1 else {}
            return orjson.dumps({"metadata": meta, "items": items})
        return orjson.dumps({"items": [{"metadata": {"name": "pause-0"}}]})


def wait(watcher: Watcher, client: Client, victims: bool, *, bind_after: int | None = None,
         going: int = 0) -> str:
    """_wait_bound with a 0.25 s first-bind limit, ticks of 0.01 s; `going` victims leave one per
    tick; the pod binds after `bind_after` ticks. "bound" or the stall message."""
    loop_ticks = itertools.count()

    async def scenario() -> str:
        async def victims_left() -> int:
            return client.left

        async def churn() -> None:
            for i in loop_ticks:
                await asyncio.sleep(0.01)
                if going and client.left > 0 and i < going:
                    client.left -= 1
                if bind_after is not None and i >= bind_after:
                    watcher.bound_at["pause-0"] = 1.0
                    return

        task = asyncio.create_task(churn(), name="test/churn")
        running = Running(started=time.monotonic())
        try:
            await run._wait_bound(running, watcher, Options(1), lambda _: None, client,  # type: ignore[arg-type]
                                  victims_left if victims else None)
            return "bound"
        except TimeoutError as e:
            return str(e)
        finally:
            task.cancel()

    return asyncio.run(scenario())


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "TICK", 0.01)
    # Limits 25 ticks long: a loaded machine that holds the loop up for a few ticks must not
    # look like a stall.
    monkeypatch.setattr(run, "STALL_FIRST_S", 0.25)
    monkeypatch.setattr(run, "STALL_S", 0.25)


def test_victims_leaving_keep_a_run_without_binds_alive() -> None:
    # 60 ticks of victims leaving (0.6 s, over twice the limit), then the bind.
    assert wait(Watcher(), Client(left=80), victims=True, going=60, bind_after=62) == "bound"


def test_without_the_victim_count_the_same_run_stalls() -> None:
    text = wait(Watcher(), Client(left=80), victims=False, going=60, bind_after=62)
    assert re.match(r"stalled: 0/1 pods bound, none for \d+ s; 1 pending; 1 with no PodScheduled condition", text)


def test_no_bind_and_no_victim_gone_stalls_saying_how_many_are_left() -> None:
    text = wait(Watcher(), Client(left=12), victims=True, going=3)
    assert re.match(r"stalled: 0/1 pods bound, none for \d+ s, no low-priority pod gone for \d+ s \(9 left\); "
                    r"1 pending;", text)


def test_pods_left_reads_one_pod_and_the_remaining_count() -> None:
    for left in (0, 1, 4000):
        client = Client(left=left)
        assert asyncio.run(pods_left(client, "bench-fill")) == left  # type: ignore[arg-type]
        assert client.asked == [{"limit": 1}]


def test_throughput_from_a_start_counts_the_wait_before_the_first_bind() -> None:
    # Ready at 100; nothing bound for 8 s (the first pass), then 20 binds in 2 s.
    times = [108.0 + i / 10 for i in range(20)]
    assert stats.throughput(times).pods_per_s == pytest.approx(20 / 1.9)
    tp = stats.throughput(times, start=100.0)
    assert tp.pods_per_s == pytest.approx(20 / 9.9)
    assert tp.samples == [0] * 8 + [10]
    # A start after the first bind (a bind seen before readiness) starts at that bind.
    assert stats.throughput(times, start=109.0).pods_per_s == pytest.approx(20 / 1.9)


def test_only_preemption_waits_for_a_first_pass() -> None:
    assert [k.name for k in workloads.KINDS.values() if k.first_pass] == ["preemption"]
