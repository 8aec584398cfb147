"""What a failed attempt leaves for the queue, as kube-scheduler v1.37.2's handleSchedulingFailure
does: the rejectors of an earlier attempt are cleared (ClearRejectorPlugins), then a FitError's are
set: the Filter's, a Reserve or Permit rejection's plugin (AddPluginStatus), WaitOnPermit's
rejector (bindingCycle). An error, or a PreBind or Bind rejection (no FitError), leaves none: the
pod backs off as an error, with the status's own message. A binding cycle's failure reports the
forgotten pod with its node set (AssignedPodDelete), after the failure handler for a rejection and
then not to the pod itself (handleBindingCycleError)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.backend.cache import Cache
from kubesched.backend.queue import QueuedPodInfo, SchedulingQueue
from kubesched.backend.queue.clock import FakeClock
from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework import CycleState, PodInfo
from kubesched.framework import events as ev
from kubesched.framework.events import ClusterEventWithHint, QueueingHint, Registration
from kubesched.framework.handle import Handle
from kubesched.framework.runtime.profile import build_profile
from kubesched.framework.status import Code, Status
from kubesched.metrics import Metrics
from kubesched.model.objects import Pod
from kubesched.scheduler.schedule_one import Cycles
from tests.builders import make_node, make_pod
from tests.unit.scheduler.test_binding_nomination import Conditions
from tests.unit.scheduler.test_scheduler_binding import FakeEvents

PROFILE = "kubesched"
REFUSED = Status(Code.UNSCHEDULABLE, "no room here")
BOOM = Status(Code.ERROR, "boom")


class Answers:
    """Reserve, Permit, PreBind and Bind plugin in one, each answering what it is told."""

    name = "Gate"

    def __init__(self, reserve: Status | None = None, permit: Status | None = None,
                 pre_bind: Status | None = None) -> None:
        self.reserve_answer, self.permit_answer, self.pre_bind_answer = reserve, permit, pre_bind

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self.reserve_answer

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return self.permit_answer, 60.0

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return self.pre_bind_answer

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None


class Setup:
    def __init__(self, gate: Answers, plugin_events: dict[str, dict[str, tuple[Registration, ...]]] | None = None):
        self.handle = Handle()
        plugins: dict[str, tuple[PluginRef, ...]] = {
            point: (PluginRef("Gate"),) for point in ("reserve", "permit", "preBind", "bind")}
        registry: dict[str, Any] = {"Gate": lambda args: gate}
        profile = build_profile(ProfileConfig(PROFILE, plugins), registry, self.handle)
        self.queue = SchedulingQueue(FakeClock(), plugin_events=plugin_events)
        self.cache = Cache()
        self.cache.add_node(make_node("n1").capacity(cpu="2").obj())
        self.store: dict[str, Pod] = {}
        self.conditions = Conditions()
        self.cycles = Cycles({PROFILE: profile}, self.cache, self.queue, self.conditions, FakeEvents(), self.store,
                             Metrics([PROFILE], self.queue.pending_counts, process=False))

    def schedule(self, pod: Pod, earlier: frozenset[str] = frozenset()) -> QueuedPodInfo:
        """One attempt; `earlier`: the rejectors an earlier attempt left on the pod."""
        self.store[pod.key] = pod
        self.queue.add(pod)
        info = self.queue.pop_nowait()
        assert isinstance(info, QueuedPodInfo)
        info.unschedulable_plugins = earlier
        self.cycles.schedule_one(info)
        return info


def pod(name: str = "p") -> Pod:
    return make_pod(name).uid(f"uid-{name}").scheduler(PROFILE).req(cpu="1").obj()


@pytest.mark.parametrize(("gate", "earlier", "where", "rejectors", "message", "reason"), [
    pytest.param(Answers(reserve=REFUSED), frozenset(), "unschedulable", {"Gate"},
                 "0/1 nodes are available: 1 no room here.", "Unschedulable", id="reserve-rejection-names-its-plugin"),
    pytest.param(Answers(permit=REFUSED), frozenset(), "unschedulable", {"Gate"},
                 "0/1 nodes are available: 1 no room here.", "Unschedulable", id="permit-rejection-names-its-plugin"),
    pytest.param(Answers(reserve=REFUSED), frozenset({"NodeResourcesFit"}), "unschedulable", {"Gate"},
                 "0/1 nodes are available: 1 no room here.", "Unschedulable",
                 id="reserve-rejection-replaces-an-earlier-attempts-rejectors"),
    pytest.param(Answers(reserve=BOOM), frozenset({"NodeResourcesFit"}), "backoff", set(),
                 'running Reserve plugin "Gate": boom', "SchedulerError",
                 id="reserve-error-after-a-rejection-backs-off-as-an-error"),
])
def test_scheduling_cycle_failures(gate: Answers, earlier: frozenset[str], where: str, rejectors: set[str],
                                   message: str, reason: str) -> None:
    s = Setup(gate)
    info = s.schedule(pod(), earlier)
    assert s.queue.where("uid-p") == where
    assert set(info.unschedulable_plugins) == rejectors
    assert info.consecutive_errors_count == (1 if reason == "SchedulerError" else 0)
    assert [(m, r) for _, m, r, _ in s.conditions.submitted] == [(message, reason)]


@pytest.mark.parametrize(("gate", "earlier", "where", "rejectors", "message", "reason"), [
    pytest.param(Answers(pre_bind=REFUSED), frozenset(), "backoff", set(), "no room here", "Unschedulable",
                 id="pre-bind-rejection-is-its-own-message-with-no-rejector"),
    pytest.param(Answers(pre_bind=REFUSED), frozenset({"NodeResourcesFit"}), "backoff", set(), "no room here",
                 "Unschedulable", id="pre-bind-rejection-clears-an-earlier-attempts-rejectors"),
    pytest.param(Answers(pre_bind=BOOM), frozenset(), "backoff", set(), 'running PreBind plugin "Gate": boom',
                 "SchedulerError", id="pre-bind-error"),
])
async def test_binding_cycle_failures(gate: Answers, earlier: frozenset[str], where: str, rejectors: set[str],
                                      message: str, reason: str) -> None:
    s = Setup(gate)
    info = s.schedule(pod(), earlier)
    await s.cycles.binds.wait()
    assert s.queue.where("uid-p") == where
    assert set(info.unschedulable_plugins) == rejectors
    assert [(m, r) for _, m, r, _ in s.conditions.submitted] == [(message, reason)]


async def test_a_rejection_while_waiting_on_permit_names_its_plugin() -> None:
    s = Setup(Answers(permit=Status(Code.WAIT)))
    info = s.schedule(pod())
    waiting = s.handle.waiting_pods.get("uid-p")
    assert waiting is not None
    waiting.reject("Gate", "gang timed out")
    await s.cycles.binds.wait()
    assert s.queue.where("uid-p") == "unschedulable"
    assert set(info.unschedulable_plugins) == {"Gate"}
    assert [(m, r) for _, m, r, _ in s.conditions.submitted] == [
        ("0/1 nodes are available: 1 gang timed out.", "Unschedulable")]


async def test_a_failed_binding_reports_the_forgotten_pod_on_its_node() -> None:
    """A pod another plugin turned away is asked about the forgotten pod, on its node."""
    seen: list[tuple[str, Any, Any]] = []

    def hint(waiting: Pod, old: Any, new: Any) -> QueueingHint:
        seen.append((waiting.metadata.name, old, new))
        return QueueingHint.QUEUE

    registrations: tuple[Registration, ...] = (ClusterEventWithHint(ev.ASSIGNED_POD_DELETE, hint),)
    s = Setup(Answers(pre_bind=BOOM), {PROFILE: {"Waits": registrations}})
    waiting = pod("w")
    s.store[waiting.key] = waiting
    s.queue.add(waiting)
    w = s.queue.pop_nowait()
    assert w is not None
    w.unschedulable_plugins = frozenset({"Waits"})
    s.queue.add_unschedulable_if_not_present(w)
    s.schedule(pod())
    await s.cycles.binds.wait()
    assert [(name, old.metadata.name, old.spec.node_name, new) for name, old, new in seen] == [("w", "p", "n1", None)]
    assert s.queue.where("uid-w") == "backoff"


async def test_a_pod_rejected_while_waiting_on_permit_is_not_moved_by_its_own_forgetting() -> None:
    """The rejector registered the event its own forgetting reports: kube-scheduler defers that event
    until the pod is back in unschedulablePods, and keeps it from the pod itself."""
    registrations: tuple[Registration, ...] = (
        ClusterEventWithHint(ev.ASSIGNED_POD_DELETE, lambda pod, old, new: QueueingHint.QUEUE),)
    s = Setup(Answers(permit=Status(Code.WAIT)), {PROFILE: {"Gate": registrations}})
    s.schedule(pod())
    waiting = s.handle.waiting_pods.get("uid-p")
    assert waiting is not None
    waiting.reject("Gate", "gang timed out")
    await s.cycles.binds.wait()
    assert s.queue.where("uid-p") == "unschedulable"


def test_a_cycle_that_raised_after_the_failure_handler_leaves_the_requeued_pod_as_it_is() -> None:
    from kubesched.scheduler.scheduler import requeue_after_bug
    s = Setup(Answers(reserve=REFUSED))
    info = s.schedule(pod())
    assert s.queue.where("uid-p") == "unschedulable"
    requeue_after_bug(s.queue, info)
    assert set(info.unschedulable_plugins) == {"Gate"}
    assert s.queue.where("uid-p") == "unschedulable"


def test_a_cycle_that_raised_backs_the_pod_off_as_an_error() -> None:
    from kubesched.scheduler.scheduler import requeue_after_bug
    s = Setup(Answers())
    s.queue.add(pod())
    info = s.queue.pop_nowait()
    assert info is not None
    info.unschedulable_plugins = frozenset({"NodeResourcesFit"})
    requeue_after_bug(s.queue, info)
    assert s.queue.where("uid-p") == "backoff"
    assert info.consecutive_errors_count == 1


def test_a_co_scheduling_members_error_leaves_no_rejector() -> None:
    from kubesched.scheduler.podgroup_algorithm import PodResult
    from kubesched.scheduler.schedule_one_cogroup import member_failure
    r = PodResult(info=QueuedPodInfo(pod(), 0.0), pod_info=PodInfo(pod()), state=CycleState(), started=0.0)
    told = member_failure(r, Status(Code.ERROR, "group error"), None, set(), False)
    assert told is not None
    assert (told.plugins, told.reason) == (set(), "SchedulerError")
