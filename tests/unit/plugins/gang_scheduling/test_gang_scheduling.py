"""GangScheduling, as kube-scheduler's gangscheduling_test.go drives it (the cases without
composite pod groups): PreEnqueue, Permit with the pods already waiting, the placement check of
the pod-group cycle, and the queueing hints."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.pod_groups import PodGroupState, pod_group_key
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.framework.waiting import WaitingPod
from kubesched.model.objects import Pod
from kubesched.model.workload import PodGroup
from kubesched.plugins.gang_scheduling import PERMIT_TIMEOUT, GangScheduling, placement_feasible
from tests.builders import make_pod, make_pod_group

PG1 = make_pod_group("pg1", "ns1", min_count=3)
PG2 = make_pod_group("pg2", "ns1", min_count=4)
PG3 = make_pod_group("pg3", "ns1")  # basic


def _pod(name: str, group: str | None = None) -> Pod:
    b = make_pod(name, "ns1").uid(name)
    return (b.pod_group(group) if group else b).obj()


P1, P2, P3 = (_pod(n, "pg1") for n in ("p1", "p2", "p3"))
P4, P5 = (_pod(n, "pg2") for n in ("p4", "p5"))
BASIC = _pod("basic-pod", "pg3")
NON_GANG = _pod("non-gang")


class FakeGroups:
    """Pod groups and their members: those waiting at Permit count as assumed, the others as unscheduled."""

    def __init__(self, groups: Sequence[PodGroup], pods: Sequence[Pod], waiting: Sequence[Pod]) -> None:
        self.groups = {g.key: g for g in groups}
        self.pods = list(pods)
        self.waiting = {p.metadata.uid for p in waiting}

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.groups.get(f"{namespace}/{name}")

    def members_count(self, namespace: str, name: str) -> int:
        return self.state(namespace, name).all_pods_count()

    def state(self, namespace: str, name: str) -> PodGroupState:
        members = [p for p in self.pods if pod_group_key(p) == f"{namespace}/{name}"]
        return PodGroupState(unscheduled=[p for p in members if p.metadata.uid not in self.waiting],
                             assumed=[p for p in members if p.metadata.uid in self.waiting])


ALL_GROUPS = [PG1, PG2, PG3]
# (pod, other pods, pod groups, pods waiting at Permit, PreEnqueue's status, Permit's, activated, allowed)
FLOW = [
    pytest.param(NON_GANG, [], ALL_GROUPS, [], None, None, [], [], id="non-gang pod succeeds immediately"),
    pytest.param(BASIC, [], ALL_GROUPS, [], None, None, [], [], id="basic policy pod succeeds immediately"),
    pytest.param(P1, [P2, P3, P4, P5], [], [],
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "waiting for pods's pod group \"pg1\" to appear in scheduling queue"), "skip", [], [],
                 id="gang pod fails PreEnqueue when pod group is not yet created"),
    pytest.param(P1, [P2, P4, P5], [PG1, PG2], [],
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        "waiting for minCount pods from a gang to appear in scheduling queue"), "skip", [], [],
                 id="gang pod fails PreEnqueue when quorum is not met"),
    pytest.param(P1, [P2, P3, P4, P5], [PG1, PG2], [P2, P4, P5], None,
                 Status(Code.WAIT, "waiting for minCount pods from a gang to be scheduled"), ["p3"], [],
                 id="gang pod passes PreEnqueue, but waits at Permit"),
    pytest.param(P1, [P2, P3, P4, P5], [PG1, PG2], [P2, P3, P4, P5], None, None, [], ["p1", "p2", "p3"],
                 id="final gang pod arrives at Permit and allows all waiting pods from a gang"),
]


@pytest.mark.parametrize(("pod", "others", "groups", "waiting_pods", "want_pre_enqueue", "want_permit",
                          "want_activated", "want_allowed"), FLOW)
async def test_gang_scheduling_flow(pod: Pod, others: list[Pod], groups: list[PodGroup], waiting_pods: list[Pod],
                                    want_pre_enqueue: Status | None, want_permit: Status | str | None,
                                    want_activated: list[str], want_allowed: list[str]) -> None:
    # The pod itself is assumed (it is at Permit) as kube-scheduler's test has it.
    groups_port = FakeGroups(groups, [pod, *others], [pod, *waiting_pods])
    activated: list[str] = []
    handle = Handle(activate=lambda pods: activated.extend(p.metadata.name for p in pods))
    handle.pod_groups = groups_port
    plugin = GangScheduling(handle)
    for p in waiting_pods:
        handle.waiting_pods.add(WaitingPod(p.metadata.uid, p.metadata.name, {"GangScheduling": 60.0}))

    got = plugin.pre_enqueue(pod)
    assert got == (None if want_pre_enqueue is None else
                   Status(want_pre_enqueue.code, *want_pre_enqueue.reasons, plugin="GangScheduling"))
    if want_permit == "skip":
        return
    status, timeout = plugin.permit(CycleState(), PodInfo(pod), "node")
    if want_permit is None:
        assert status is None
        assert timeout == 0
    else:
        assert isinstance(want_permit, Status)
        assert status == Status(want_permit.code, *want_permit.reasons, plugin="GangScheduling")
        assert timeout == PERMIT_TIMEOUT
    assert activated == want_activated
    await asyncio.sleep(0)
    allowed = sorted(w.uid for w in handle.waiting_pods if not w.pending)
    assert allowed == sorted(set(want_allowed) - {pod.metadata.uid})


@pytest.mark.parametrize(("min_count", "remaining", "scheduled", "want"), [
    pytest.param(2, 2, 0, Code.WAIT, id="all pods succeed, first: minCount not yet met"),
    pytest.param(2, 0, 2, None, id="all pods succeed, minCount met at end"),
    pytest.param(3, 2, 0, Code.UNSCHEDULABLE, id="first pod fails, minCount not satisfiable"),
    pytest.param(2, 0, 1, Code.UNSCHEDULABLE, id="second pod fails, minCount not satisfiable"),
    pytest.param(2, 1, 2, None, id="already scheduled pods count"),
    pytest.param(None, 0, 0, Code.UNSCHEDULABLE, id="non-gang pod group with 0 scheduled pods fails"),
    pytest.param(None, 0, 1, None, id="non-gang pod group with one scheduled pod succeeds"),
])
def test_placement_feasible(min_count: int | None, remaining: int, scheduled: int, want: Code | None) -> None:
    status = placement_feasible(make_pod_group("g", min_count=min_count), remaining, scheduled)
    assert (None if status is None else status.code) == want


def test_placement_feasible_messages() -> None:
    group = make_pod_group("g", min_count=3)
    assert placement_feasible(group, 0, 2) == Status(
        Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining", plugin="GangScheduling")
    assert placement_feasible(group, 2, 1) == Status(
        Code.WAIT, "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining", plugin="GangScheduling")


def _pg(name: str, namespace: str = "ns1", min_count: int | None = 3) -> PodGroup:
    return make_pod_group(name, namespace, min_count=min_count)


@pytest.mark.parametrize(("added", "want"), [
    pytest.param(_pod("p2", "pg1"), QueueingHint.QUEUE, id="add a newPod which matches the pod's scheduling group"),
    pytest.param(make_pod("p2", "ns1").pod_group("pg1").node("n").obj(), QueueingHint.QUEUE,
                 id="add a newPod with NodeName set which matches the pod's scheduling group"),
    pytest.param(make_pod("p2", "ns2").pod_group("pg1").obj(), QueueingHint.QUEUE_SKIP,
                 id="add a newPod which doesn't match the pod's namespace"),
    pytest.param(_pod("p2", "pg2"), QueueingHint.QUEUE_SKIP,
                 id="add a newPod which doesn't match the pod's pod group name"),
])
def test_after_pod_added(added: Pod, want: QueueingHint) -> None:
    """kube-scheduler's cases, with the gang (minCount 3) complete: its three pods are known."""
    handle = Handle()
    handle.pod_groups = FakeGroups(ALL_GROUPS, [P1, P2, P3], [])
    assert GangScheduling(handle)._after_pod_added(P1, None, added) is want


@pytest.mark.parametrize(("members", "groups", "want"), [
    pytest.param([P1, P2], ALL_GROUPS, QueueingHint.QUEUE_SKIP, id="gang-still-short-of-minCount"),
    pytest.param([P1, P2, P3], ALL_GROUPS, QueueingHint.QUEUE, id="the-arrival-completes-the-gang"),
    pytest.param([P1, P2, P3], [PG2, PG3], QueueingHint.QUEUE_SKIP, id="no-pod-group-yet"),
])
def test_after_pod_added_skips_what_pre_enqueue_would_hold_again(members: list[Pod], groups: list[PodGroup],
                                                                   want: QueueingHint) -> None:
    """A move PreEnqueue would undo is skipped; the hint queues once minCount pods are known."""
    handle = Handle()
    handle.pod_groups = FakeGroups(groups, members, [])
    plugin = GangScheduling(handle)
    assert plugin._after_pod_added(P1, None, members[-1]) is want
    assert (plugin.pre_enqueue(P1) is None) is (want is QueueingHint.QUEUE)


@pytest.mark.parametrize(("added", "want"), [
    pytest.param(_pg("pg1"), QueueingHint.QUEUE, id="add a pod group which matches the pod's pod group name"),
    pytest.param(_pg("pg2"), QueueingHint.QUEUE_SKIP,
                 id="add a pod group which doesn't match the pod's scheduling group name"),
    pytest.param(_pg("pg1", "ns2"), QueueingHint.QUEUE_SKIP,
                 id="add a pod group which doesn't match the pod's scheduling group namespace"),
])
def test_after_pod_group_added(added: PodGroup, want: QueueingHint) -> None:
    assert GangScheduling._after_group_added(P1, None, added) is want


@pytest.mark.parametrize(("pod", "old", "new", "want"), [
    pytest.param(P1, _pg("pg1", min_count=4), _pg("pg1", min_count=3), QueueingHint.QUEUE,
                 id="minCount decreased matches target pod"),
    pytest.param(P1, _pg("pg1", min_count=None), _pg("pg1", min_count=None), QueueingHint.QUEUE_SKIP,
                 id="update Basic policy"),
    pytest.param(P1, _pg("pg1", min_count=3), _pg("pg1", min_count=4), QueueingHint.QUEUE_SKIP,
                 id="minCount increased matches target pod"),
    pytest.param(P1, _pg("pg1", min_count=3), _pg("pg1", min_count=3), QueueingHint.QUEUE_SKIP,
                 id="minCount unchanged matches target pod"),
    pytest.param(P1, _pg("pg2", min_count=4), _pg("pg2", min_count=3), QueueingHint.QUEUE_SKIP,
                 id="minCount decreased but pod group name doesn't match target pod"),
    pytest.param(P1, _pg("pg1", "ns2", 4), _pg("pg1", "ns2", 3), QueueingHint.QUEUE_SKIP,
                 id="minCount decreased but pod group namespace doesn't match target pod"),
    pytest.param(NON_GANG, _pg("pg1", min_count=4), _pg("pg1", min_count=3), QueueingHint.QUEUE_SKIP,
                 id="pod without a scheduling group is skipped"),
])
def test_after_pod_group_updated(pod: Pod, old: PodGroup, new: PodGroup, want: QueueingHint) -> None:
    assert GangScheduling._after_group_updated(pod, old, new) is want


_WAITING = [P1, P4, BASIC, NON_GANG, make_pod("p9", "ns2").pod_group("pg1").obj()]
_ADDED = [None, P2, P5, NON_GANG, make_pod("p8", "ns2").pod_group("pg1").obj(),
          make_pod("p7", "ns1").pod_group("pg1").node("n").obj(), "not-a-pod"]
_GROUPS = [None, _pg("pg1"), _pg("pg1", min_count=2), _pg("pg2"), _pg("pg1", "ns2"), _pg("pg3", min_count=None),
           "not-a-group"]


@pytest.mark.parametrize("pod", [pytest.param(p, id=p.metadata.name) for p in _WAITING])
def test_the_group_narrowings_leave_out_only_pods_the_hints_skip(pod: Pod) -> None:
    """The EventNarrowing contract: a pod none of whose keys the event names gets QUEUE_SKIP."""
    regs = {(r.event.resource, r.event.action_type): r for r in GangScheduling(Handle()).events_to_register()
            if isinstance(r, ClusterEventWithHint)}
    cases: list[tuple[EventResource, ActionType, object, object]] = [
        (EventResource.UNSCHEDULED_POD, ActionType.ADD, None, new) for new in _ADDED]
    cases += [(EventResource.ASSIGNED_POD, ActionType.ADD, None, new) for new in _ADDED]
    cases += [(EventResource.POD_GROUP, ActionType.ADD, None, new) for new in _GROUPS]
    cases += [(EventResource.POD_GROUP, ActionType.UPDATE, old, new) for old in _GROUPS for new in _GROUPS]
    for resource, action, old, new in cases:
        reg = regs[(resource, action)]
        assert reg.narrowing is not None
        assert reg.hint is not None
        keys = reg.narrowing.event_keys(old, new)
        if keys is not None and not keys & reg.narrowing.pod_keys(pod):
            assert reg.hint(pod, old, new) is QueueingHint.QUEUE_SKIP, (resource, action, old, new)
