"""What the composition root hands the scheduler from kube-scheduler's flags reaches its queue:
--pod-max-in-unschedulable-pods-duration and the SchedulerPopFromBackoffQ gate."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.api.client import ApiClient
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load
from kubesched.config.features import FeatureGates, parse_feature_gates
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_pod


def _scheduler(**kwargs: object) -> Scheduler:
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    return Scheduler(client, load(None), **kwargs)  # type: ignore[arg-type]


def _rejected(sched: Scheduler) -> str:
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    sched.queue.add(pod)
    info = sched.queue.pop_nowait()
    assert info is not None
    info.unschedulable_plugins = {"NodeResourcesFit"}
    assert sched.queue.add_unschedulable_if_not_present(info)
    return pod.metadata.uid


@pytest.mark.parametrize(("duration", "flushed"), [
    pytest.param(None, 0, id="default-5m"),
    pytest.param(-1.0, 1, id="negative-flushes-at-once"),
])
def test_pod_max_in_unschedulable_pods_duration_reaches_the_queue(duration: float | None, flushed: int) -> None:
    sched = _scheduler() if duration is None else _scheduler(max_in_unschedulable=duration)
    _rejected(sched)
    assert sched.queue.flush_unschedulable_leftover() == flushed


@pytest.mark.parametrize(("features", "popped"), [
    pytest.param(FeatureGates(), True, id="default-on"),
    pytest.param(parse_feature_gates(["SchedulerPopFromBackoffQ=false"])[0], False, id="off"),
])
def test_pop_from_backoff_gate_reaches_the_queue(features: FeatureGates, popped: bool) -> None:
    sched = _scheduler(max_in_unschedulable=-1.0, features=features)
    uid = _rejected(sched)
    assert sched.queue.flush_unschedulable_leftover() == 1
    assert sched.queue.where(uid) == "backoff"
    assert (sched.queue.pop_nowait() is not None) == popped


def test_events_go_through_their_own_client_and_both_are_fenced_when_the_lease_is_lost() -> None:
    """kube-scheduler's createClients: a clientset for events beside the scheduler's, each with its
    own QPS and burst; losing the lease fences both."""
    cluster = ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test")
    client, events = ApiClient(cluster), ApiClient(cluster, user_agent="kubesched/events")
    sched = Scheduler(client, load(None), event_client=events)
    assert sched.events.client is events
    assert sched.writes.client is client

    class LostAtOnce:
        async def run(self) -> None:
            return None  # run() returns once the lease is lost

    asyncio.run(sched._campaign(LostAtOnce()))  # type: ignore[arg-type]
    assert (client.fenced, events.fenced) == ("the leader lease was lost",) * 2
    assert sched.failure == "leader election lost"


def test_without_an_event_client_events_share_the_scheduler_s() -> None:
    sched = _scheduler()
    assert sched.events.client is sched.client
