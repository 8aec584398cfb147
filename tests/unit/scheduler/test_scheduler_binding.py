"""The binding cycle and the scheduler's health, driven without I/O: a scripted client stands in for
the apiserver's answers to bindings and status patches (nothing here replaces the integration tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import pytest

from kubesched.api import ApiClient, KubeconfigError
from kubesched.api.client import Response
from kubesched.api.errors import ApiConnectionError
from kubesched.backend.queue import QueuedPodInfo
from kubesched.config.load import load
from kubesched.framework.events import ASSIGNED_POD_DELETE
from kubesched.model.objects import Pod
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod

Answer = Callable[[str, str], Awaitable[Response]]


class ScriptedClient:
    """Answers each request with `answer(method, path)`; records what was asked, in order."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, str]] = []
        self.bodies: list[Any] = []
        self.credentials_failing_since: float | None = None

    async def request(self, method: str, path: str, **kw: Any) -> Response:
        self.calls.append((method, path))
        self.bodies.append(kw.get("body"))
        return await self.answer(method, path)

    async def get(self, path: str, params: Any = None) -> bytes:
        raise ApiConnectionError(f"GET {path}: connection refused")

    @asynccontextmanager
    async def stream(self, path: str, params: Any = None, **_: Any) -> AsyncIterator[AsyncIterator[bytes]]:
        raise ApiConnectionError(f"GET {path}: connection refused")
        yield  # pragma: no cover


async def created(_: str, __: str) -> Response:
    return Response(201, b"{}")


def raising(exc: Exception) -> Answer:
    async def answer(method: str, path: str) -> Response:
        if path.endswith("/binding"):
            raise exc
        return Response(200, b"{}")
    return answer


def make_scheduler(answer: Answer, **kw: Any) -> tuple[Scheduler, ScriptedClient]:
    client = ScriptedClient(answer)
    sched = Scheduler(cast(ApiClient, client), load(None), **kw)
    sched.cache.add_node(make_node("n1").capacity(cpu="1").obj())
    return sched, client


def enqueue(sched: Scheduler, pod: Pod) -> None:
    """As the pod informer would: the pod in its store, and in the queue."""
    sched.pods.store[pod.key] = pod
    sched.queue.add(pod)


def pop(sched: Scheduler) -> QueuedPodInfo:
    info = sched.queue.pop_nowait()
    assert info is not None
    return info


@pytest.mark.parametrize("exc", [
    KubeconfigError("exec credential plugin 'get-token' failed to run: No such file or directory"),
    RuntimeError("unable to perform operation on <TCPTransport closed=True>; the handler is closed"),
    ApiConnectionError("POST /binding: connection reset"),
], ids=["credentials", "transport-runtime-error", "connection"])
async def test_a_bind_that_raises_forgets_the_pod_and_requeues_it(exc: Exception) -> None:
    sched, _ = make_scheduler(raising(exc))
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    assert sched.cache.is_assumed(pod)
    await sched.binds.wait()
    assert not sched.cache.is_assumed(pod)
    assert sched.queue.where(pod.metadata.uid) in ("backoff", "unschedulable")
    assert sched.queue.in_flight() == []
    assert sched.stats.bind_failures == 1
    # The room is free again: another pod of the same size fits the node.
    other = make_pod("q").scheduler("kubesched").req(cpu="1").obj()
    enqueue(sched, other)
    sched.schedule_one(pop(sched))
    assert sched.cache.is_assumed(other)


@pytest.mark.parametrize(("status", "body", "change"), [
    (409, b'{"kind":"Status","code":409,"message":"pod p is already assigned to node n2"}', None),
    (404, b'{"kind":"Status","code":404,"message":"pods \\"p\\" not found"}', None),
    (500, b'{"kind":"Status","code":500,"message":"etcdserver: leader changed"}', "deleted"),
    (500, b'{"kind":"Status","code":500,"message":"etcdserver: leader changed"}', "bound-elsewhere"),
], ids=["conflict", "not-found", "deleted-while-binding", "bound-by-someone-else"])
async def test_a_pod_that_is_gone_or_bound_is_not_requeued(status: int, body: bytes, change: str | None) -> None:
    async def answer(method: str, path: str) -> Response:
        return Response(status, body)

    sched, _ = make_scheduler(answer)
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    if change == "deleted":
        del sched.pods.store[pod.key]
    elif change == "bound-elsewhere":
        sched.pods.store[pod.key] = make_pod("p").scheduler("kubesched").node("n2").obj()
    await sched.binds.wait()
    assert not sched.cache.is_assumed(pod)
    assert sched.queue.where(pod.metadata.uid) is None
    assert sched.queue.in_flight() == []


async def test_bind_error_message_and_condition_are_kube_schedulers() -> None:
    async def answer(method: str, path: str) -> Response:
        if path.endswith("/binding"):
            return Response(500, b'{"kind":"Status","code":500,"message":"etcdserver: leader changed"}')
        return Response(200, b"{}")

    sched, _ = make_scheduler(answer)
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    await sched.binds.wait()
    assert sched.conditions._pending[pod.metadata.uid][1:3] == (
        'running Bind plugin "DefaultBinder": etcdserver: leader changed', "SchedulerError")


async def test_a_cancelled_bind_forgets_the_pod() -> None:
    hang = asyncio.Event()

    async def never(_: str, __: str) -> Response:
        await hang.wait()
        raise AssertionError("unreachable")

    sched, _ = make_scheduler(never)
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    await asyncio.sleep(0)
    await sched.binds.cancel()
    assert not sched.cache.is_assumed(pod)


async def test_a_successful_bind_keeps_the_pod_assumed_until_the_informer_confirms() -> None:
    sched, client = make_scheduler(created)
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    await sched.binds.wait()
    assert sched.cache.is_assumed(pod)
    assert client.calls == [("POST", "/api/v1/namespaces/default/pods/p/binding")]
    assert sched.stats.scheduled == 1


async def test_a_condition_queued_before_the_bind_is_dropped() -> None:
    sched, client = make_scheduler(created)
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    sched.conditions.submit(pod, "0/1 nodes are available: 1 Insufficient cpu.")
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    writer = asyncio.create_task(sched.conditions.run())
    await sched.binds.wait()
    await sched.conditions.flush()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert [m for m, _ in client.calls] == ["POST"]


async def test_a_condition_being_written_lands_before_the_binding() -> None:
    release, patching = asyncio.Event(), asyncio.Event()

    async def slow_patch(method: str, path: str) -> Response:
        if method == "PATCH":
            patching.set()
            await release.wait()
        return Response(201 if method == "POST" else 200, b"{}")

    sched, client = make_scheduler(slow_patch)
    pod = make_pod("p").scheduler("kubesched").req(cpu="1").obj()
    writer = asyncio.create_task(sched.conditions.run())
    sched.conditions.submit(pod, "0/1 nodes are available: 1 Insufficient cpu.")
    await patching.wait()  # the worker has sent the patch and waits for its answer
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    for _ in range(5):
        await asyncio.sleep(0)
    assert [m for m, _ in client.calls] == ["PATCH"]  # the binding waits
    release.set()
    await sched.binds.wait()
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer
    assert [m for m, _ in client.calls] == ["PATCH", "POST"]


def test_health_fails_when_credentials_fail_past_the_limit() -> None:
    now = [100.0]
    sched, client = make_scheduler(created, failure_limit=60, clock=lambda: now[0])
    assert sched.health() is None
    client.credentials_failing_since = 50.0
    assert sched.health() is None
    now[0] = 111.0
    assert sched.health() == "no credentials for 61s"


def test_health_fails_when_an_informer_fails_past_the_limit() -> None:
    now = [0.0]
    sched, _ = make_scheduler(created, failure_limit=60, clock=lambda: now[0])
    sched.pods.failing_fatally_since = 0.0
    sched.pods.last_error = "KubeconfigError: cannot read tokenFile '/t': No such file or directory"
    now[0] = 30.0
    assert sched.health() is None
    now[0] = 61.0
    assert sched.health() == ("informer/pods has failed for 61s: KubeconfigError: cannot read tokenFile '/t': "
                              "No such file or directory")


async def test_run_fails_when_a_critical_task_ends() -> None:
    sched, _ = make_scheduler(created)

    async def dies() -> None:
        raise RuntimeError("informer bug")

    sched._informers = ()
    sched.events.run = dies  # type: ignore[method-assign]
    with pytest.raises(Exception, match="task events failed: RuntimeError: informer bug"):
        await asyncio.wait_for(sched.run(), 5)


async def test_stop_before_sync_returns() -> None:
    async def unreachable(_: str, __: str) -> Response:
        raise ApiConnectionError("connection refused")

    sched, _ = make_scheduler(unreachable)
    run = asyncio.create_task(sched.run())
    await asyncio.sleep(0.05)
    await asyncio.wait_for(sched.stop(), 5)
    await asyncio.wait_for(run, 5)
    assert not sched.ready.is_set()


class FakeConditions:
    def __init__(self) -> None:
        self.written: list[tuple[str, str, str]] = []

    def submit(self, pod: Pod, message: str, reason: str = "Unschedulable",
               nominated_node: str | None = "") -> None:
        self.written.append((pod.metadata.name, message, reason))

    def discard(self, uid: str, *, with_nomination: bool = False) -> None:
        return None

    async def settled(self, uid: str) -> None:
        return None


class FakeEvents:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def scheduled(self, pod: Pod, node: str, controller: str | None = None) -> None:
        self.seen.append(("Scheduled", f"{pod.metadata.name} {node}"))

    def failed_scheduling(self, pod: Pod, message: str, controller: str | None = None) -> None:
        self.seen.append(("FailedScheduling", message))


async def test_cycles_run_on_fake_ports_alone() -> None:
    """The cycles need no client: a cache, a queue, a profile whose bind plugin is a fake, and
    fakes of the condition, event and lister ports."""
    from kubesched.config.types import PluginRef, ProfileConfig
    from kubesched.framework.runtime.profile import build_profile
    from kubesched.metrics import Metrics
    from kubesched.plugins.node_resources import fit as node_resources_fit
    from kubesched.scheduler.schedule_one import Cycles
    bound: list[str] = []

    class Recording:
        name = "Recording"

        async def bind(self, state: Any, pod: Any, node_name: str) -> None:
            bound.append(f"{pod.pod.metadata.name}->{node_name}")

    plugins: dict[str, tuple[PluginRef, ...]] = {"filter": (PluginRef("NodeResourcesFit"),),
                                                 "bind": (PluginRef("Recording"),)}
    profile = build_profile(ProfileConfig("kubesched", plugins),
                            {"NodeResourcesFit": node_resources_fit.new, "Recording": lambda args: Recording()})
    sched, _ = make_scheduler(created)  # only for a cache with a node and a queue
    conditions, events = FakeConditions(), FakeEvents()
    store: dict[str, Pod] = {}
    cycles = Cycles({"kubesched": profile}, sched.cache, sched.queue, conditions, events, store,
                    Metrics(["kubesched"], sched.queue.pending_counts))
    fits, too_big = (make_pod(n).scheduler("kubesched").req(cpu=c).obj() for n, c in (("fits", "1"), ("big", "2")))
    for pod in (fits, too_big):
        store[pod.key] = pod
        sched.queue.add(pod)
        cycles.schedule_one(pop(sched))
    await cycles.binds.wait()
    assert bound == ["fits->n1"]
    assert events.seen == [("FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu."),
                           ("Scheduled", "fits n1")]
    assert conditions.written == [("big", "0/1 nodes are available: 1 Insufficient cpu.", "Unschedulable")]


async def test_the_handle_lists_informer_objects_and_writes_through_ports() -> None:
    sched, client = make_scheduler(created)
    pod = make_pod("victim").scheduler("kubesched").node("n1").obj()
    sched.pods.store[pod.key] = pod
    handle = sched.handle
    assert handle.pods.get("default/victim") is pod
    assert list(handle.pods.list()) == [pod]
    assert handle.snapshot().names == ["n1"]
    assert await handle.nominate_pod(pod, "n1") is None
    assert await handle.delete_victim(pod, "Preempted by default/p on node n1", None) is None
    assert await handle.disrupt_victim(pod, "kubesched: preempting to accommodate a higher priority pod") is None
    assert client.calls == [("PATCH", "/api/v1/namespaces/default/pods/victim/status"),
                            ("DELETE", "/api/v1/namespaces/default/pods/victim"),
                            ("PATCH", "/api/v1/namespaces/default/pods/victim/status")]


def _preempt_one(sched: Scheduler) -> tuple[Pod, Pod]:
    """A victim of priority 1 fills n1; a pod of priority 10 preempts it (its cycle run)."""
    victim = make_pod("victim").uid("uid-victim").scheduler("kubesched").node("n1").priority(1).req(cpu="1").obj()
    sched.pods.store[victim.key] = victim
    sched.cache.add_pod(victim)
    pod = make_pod("p").uid("uid-p").scheduler("kubesched").priority(10).req(cpu="1").obj()
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    return victim, pod


async def test_preemption_nominates_with_the_condition_and_deletes_the_victim_in_the_background() -> None:
    sched, client = make_scheduler(created)
    _victim, pod = _preempt_one(sched)
    _, message, reason, nominated = sched.conditions._pending[pod.metadata.uid]
    assert message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement "
                       "for pod on node n1, preempting 1 victims")
    assert (reason, nominated) == ("Unschedulable", "n1")
    await sched._background.wait()
    assert client.calls[-2:] == [("PATCH", "/api/v1/namespaces/default/pods/victim/status"),
                                 ("DELETE", "/api/v1/namespaces/default/pods/victim")]


async def test_preemption_moves_the_metrics_nominates_in_memory_and_names_the_preemptor_in_the_event() -> None:
    sched, _ = make_scheduler(created)
    victim, _pod = _preempt_one(sched)
    # The next cycle sees the nomination before the status patch comes back.
    assert sched.queue.nominator.node_of("uid-p") == "n1"
    await sched._background.wait()
    text = sched.metrics.exposition().decode()
    assert "scheduler_preemption_attempts_total 1.0" in text
    assert "scheduler_preemption_victims_sum 1.0" in text
    assert "scheduler_preemption_victims_count 1.0" in text
    queued = []
    while not sched.events._queue.empty():
        queued.append(sched.events._queue.get_nowait()[1])
    preempted = [e for e in queued if e["reason"] == "Preempted"]
    assert len(preempted) == 1
    e = preempted[0]
    assert (e["type"], e["action"], e["note"], e["reportingController"]) == (
        "Normal", "Preempting", "Preempted by pod uid-p on node n1", "kubesched")
    assert e["regarding"]["name"] == "victim"
    assert "related" not in e  # as kube-scheduler's (see Scheduler._delete_victim)
    # The victim gone (from the informer, then the cache, as its handlers go), the preemptor is
    # assumed on its node, and is nominated no more.
    del sched.pods.store[victim.key]
    sched.cache.remove_pod(victim)
    sched.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)
    sched.schedule_one(pop(sched))
    assert sched.cache.node_of("uid-p") == "n1"
    assert sched.queue.nominator.node_of("uid-p") is None
    await sched.binds.wait()


async def test_a_victim_already_gone_gets_no_preempted_event() -> None:
    async def gone(method: str, path: str) -> Response:
        return Response(404, b'{"kind":"Status","code":404}')
    sched, _ = make_scheduler(gone)
    pod = make_pod("victim").scheduler("kubesched").node("n1").obj()
    assert await sched.handle.delete_victim(pod, "Preempted by pod uid-p on node n1", None) is None
    assert sched.events._queue.empty()


async def test_a_victim_is_deleted_by_name_with_no_precondition() -> None:
    # kube-scheduler's util.DeletePod: Delete(name, metav1.DeleteOptions{}).
    sched, client = make_scheduler(created)
    pod = make_pod("victim").uid("uid-victim").scheduler("kubesched").node("n1").obj()
    assert await sched.handle.delete_victim(pod, "Preempted by pod uid-p on node n1", None) is None
    assert client.calls == [("DELETE", "/api/v1/namespaces/default/pods/victim")]
    assert client.bodies == [{"kind": "DeleteOptions", "apiVersion": "v1"}]


async def test_a_failed_victim_deletion_activates_the_preemptor() -> None:
    async def refuse_deletes(method: str, path: str) -> Response:
        if method == "DELETE":
            return Response(500, b'{"kind":"Status","code":500,"message":"etcdserver: request timed out"}')
        return Response(200, b"{}")

    sched, _ = make_scheduler(refuse_deletes)
    _victim, pod = _preempt_one(sched)
    assert sched.queue.where(pod.metadata.uid) == "unschedulable"
    await sched._background.wait()
    # No deletion event will come for it: activated, it tries again at once.
    assert sched.queue.where(pod.metadata.uid) == "active"
