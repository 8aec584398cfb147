"""Coscheduling, as scheduler-plugins' pkg/coscheduling tests drive it (core_test.go's PreFilter,
Permit and CheckClusterResource, coscheduling_test.go's Less, Permit, PostFilter and its reject
threshold), with an in-memory pod store, PodGroup store and a fake clock."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kubesched.backend.queue import QueuedPodInfo
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.handle import Handle
from kubesched.framework.resources import Resource
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.waiting import WaitingPod
from kubesched.model.coscheduling import POD_GROUP_LABEL, CoPodGroup, CoPodGroupSpec
from kubesched.model.objects import ObjectMeta, Pod, SchedulingGate
from kubesched.plugins.coscheduling import parse_args
from kubesched.plugins.coscheduling.args import CoschedulingArgs
from kubesched.plugins.coscheduling.core import check_cluster_resource
from kubesched.plugins.coscheduling.plugin import Coscheduling
from kubesched.scheduler.sources import Store
from tests.builders import make_node, make_pod


def pg(name: str, min_member: int, min_resources: dict[str, str] | None = None, created: str | None = None,
       timeout: int | None = None) -> CoPodGroup:
    return CoPodGroup(metadata=ObjectMeta(name=name, namespace="ns", creation_timestamp=created),
                      spec=CoPodGroupSpec(min_member=min_member, min_resources=min_resources,
                                          schedule_timeout_seconds=timeout))


def pod(name: str, group: str | None = None, node: str | None = None, cpu: str | None = None,
        gated: bool = False, priority: int = 0) -> Pod:
    b = make_pod(name, "ns").uid(name).priority(priority)
    if group:
        b = b.label(POD_GROUP_LABEL, group)
    if node:
        b = b.node(node)
    if cpu:
        b = b.req(cpu=cpu)
    p = b.obj()
    if gated:
        p.spec.scheduling_gates = [SchedulingGate(name="example-gate")]
    return p


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def plugin(pods: Sequence[Pod] = (), groups: Sequence[CoPodGroup] = (), *, reject_percentage: int = 10,
           backoff: int = 0, clock: Clock | None = None) -> tuple[Coscheduling, Handle, list[str]]:
    activated: list[str] = []
    handle = Handle(pods=Store(pods), clock=clock or Clock(),
                    activate=lambda ps: activated.extend(p.metadata.name for p in ps))
    args = CoschedulingArgs(permit_waiting_time_seconds=10, pod_group_backoff_seconds=backoff,
                            pod_group_reject_percentage=reject_percentage)
    return Coscheduling(args, handle, Store(groups), wall=lambda: 0.0), handle, activated


def nodes(cpu: str, *names: str, pods: Sequence[Pod] = ()) -> list[NodeInfo]:
    out = []
    for n in names:
        info = NodeInfo(make_node(n).capacity(cpu=cpu, pods="32").obj())
        for p in pods:
            if p.spec.node_name == n:
                info.add_pod(PodInfo(p))
        out.append(info)
    return out


@pytest.mark.parametrize(("target", "pending", "groups", "want"), [
    pytest.param(make_pod("p").obj(), [pod("p1", "pg1"), pod("p2", "pg2")], [pg("pg1", 1), pg("pg2", 1)], None,
                 id="pod does not belong to any pg"),
    pytest.param(pod("p", "pg-non-existent"), [], [pg("pg1", 1)], None, id="pod belongs to a non-existent pg"),
    pytest.param(pod("p", "pg1"), [pod("pg2-1", "pg2")], [pg("pg1", 2), pg("pg2", 2)],
                 "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2",
                 id="pod count less than minMember"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1")], [pg("pg1", 2), pg("pg2", 2)], None,
                 id="pod count equal minMember"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1"), pod("p1c", "pg1")], [pg("pg1", 2), pg("pg2", 2)], None,
                 id="pod count more than minMember"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1"), pod("p1c", "pg1", gated=True)], [pg("pg1", 2)], None,
                 id="gated pods but still meeting quorum (minMember < replicas)"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1", gated=True), pod("p1c", "pg1")], [pg("pg1", 3)],
                 "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
                 id="gated pods push group below quorum"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1", gated=True), pod("p1c", "pg1", gated=True)], [pg("pg1", 2)],
                 "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
                 id="all sibling pods are gated"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1"), pod("p1c", "pg1")], [pg("pg1", 2, {"cpu": "6"})], None,
                 id="cluster's resource satisfies minResource"),
    pytest.param(pod("p1a", "pg1"), [pod("p1b", "pg1"), pod("p1c", "pg1")], [pg("pg1", 2, {"cpu": "10"})],
                 "resource gap: map[cpu:2]", id="cluster's resource cannot satisfy minResource"),
])
def test_pre_filter(target: Pod, pending: list[Pod], groups: list[CoPodGroup], want: str | None) -> None:
    pl, _, _ = plugin([*pending, target], groups)
    assert pl.manager.pre_filter(target, nodes("4", "node-a", "node-b")) == want


@pytest.mark.parametrize(("existing", "min_cpu", "want"), [
    pytest.param([pod("p1", node="node-a", cpu="2")], "4", True, id="Cluster resource enough"),
    pytest.param([pod("p1", node="node-a", cpu="2"), pod("p2", node="node-b", cpu="1")], "4", False,
                 id="Cluster resource not enough"),
    pytest.param([pod("p1", "pg1", node="node-a", cpu="2"), pod("p2", node="node-b", cpu="1")], "4", True,
                 id="Cluster resource enough as p1's resource needs to be excluded from minResources"),
])
def test_check_cluster_resource(existing: list[Pod], min_cpu: str, want: bool) -> None:
    gap = check_cluster_resource(nodes("3", "node-a", "node-b", pods=existing), Resource.from_list({"cpu": min_cpu}),
                                 "ns/pg1")
    assert (gap == "") is want


@pytest.mark.parametrize(("target", "existing", "want", "timeout"), [
    pytest.param(make_pod("p").obj(), [], None, 0.0, id="pods do not belong to any podGroup"),
    pytest.param(pod("p", "pg-x"), [], Status(Code.UNSCHEDULABLE, "PodGroup not found", plugin="Coscheduling"), 0.0,
                 id="pod specifies a non-existent pg"),
    pytest.param(pod("p", "pg1"), [], Status(Code.WAIT, plugin="Coscheduling"), 10.0,
                 id="pods belong to a pg1, but quorum not satisfied"),
    pytest.param(pod("p", "pg1"), [pod("p1", "pg1", node="node"), pod("p2", "pg1", node="node")], None, 0.0,
                 id="pods belong to a podGroup, and quorum satisfied"),
])
def test_permit(target: Pod, existing: list[Pod], want: Status | None, timeout: float) -> None:
    pl, _, _ = plugin([target, *existing], [pg("pg1", 3)])
    assert pl.permit(CycleState(), PodInfo(target), "node") == (want, timeout)


async def test_permit_waits_for_the_group_timeout_then_allows_every_waiting_sibling() -> None:
    members = [pod(f"p{i}", "pg1") for i in range(3)]
    pl, handle, activated = plugin(members, [pg("pg1", 3, timeout=30)])
    status, timeout = pl.permit(CycleState(), PodInfo(members[0]), "node")
    assert (status, timeout) == (Status(Code.WAIT, plugin="Coscheduling"), 30.0)
    assert activated == ["p1", "p2"]  # the first pod past Permit activates its siblings
    for p in members[:2]:
        handle.waiting_pods.add(WaitingPod(p.metadata.uid, f"ns/{p.metadata.name}", {"Coscheduling": 30.0}))
    assert pl.permit(CycleState(), PodInfo(members[1]), "node")[0] == Status(Code.WAIT, plugin="Coscheduling")
    assert pl.permit(CycleState(), PodInfo(members[2]), "node") == (None, 0.0)
    assert all(not w.pending for w in handle.waiting_pods)


def _queued(p: Pod, initial: float) -> QueuedPodInfo:
    return QueuedPodInfo(pod=p, timestamp=initial, initial_attempt_timestamp=initial)


EARLY, LATE = "1970-01-01T00:00:10Z", "1970-01-01T00:00:20Z"


@pytest.mark.parametrize(("p1", "t1", "p2", "t2", "want"), [
    pytest.param(pod("p1", priority=10), 1.0, pod("p2", priority=20), 2.0, False,
                 id="p1.priority less than p2.priority"),
    pytest.param(pod("p1", priority=20), 1.0, pod("p2", priority=10), 2.0, True,
                 id="p1.priority greater than p2.priority"),
    pytest.param(pod("p1", priority=10), 1.0, pod("p2", priority=10), 2.0, True,
                 id="equal priority. p1 is added to schedulingQ earlier than p2"),
    pytest.param(pod("p1", priority=10), 2.0, pod("p2", priority=10), 1.0, False,
                 id="equal priority. p2 is added to schedulingQ earlier than p1"),
    pytest.param(pod("p1", "pg1", priority=10), 1.0, pod("p2", "pg2", priority=10), 2.0, False,
                 id="equal priority. p1 belongs to pg1 created later than pg2"),
    pytest.param(pod("p1", "pg2", priority=10), 2.0, pod("p2", "pg1", priority=10), 1.0, True,
                 id="equal priority. p1 belongs to pg2 created earlier than pg1"),
    pytest.param(pod("p1", "pg1", priority=10), 1.0, pod("p2", "pg1", priority=10), 1.0, True,
                 id="equal priority and creation time: by namespace/name"),
])
def test_less(p1: Pod, t1: float, p2: Pod, t2: float, want: bool) -> None:
    # Group creation times on the clock: wall 0 is clock 1000, so pg2 (10 s) < pg1 (20 s) < any queue time.
    pl, _, _ = plugin([p1, p2], [pg("pg1", 1, created=LATE), pg("pg2", 1, created=EARLY)])
    pl.manager.wall = lambda: 0.0
    pl.manager.clock = lambda: 0.0
    assert pl.less(_queued(p1, t1), _queued(p2, t2)) is want


def test_a_group_that_failed_sorts_after_one_created_later() -> None:
    clock = Clock()
    p1, p2 = pod("p1", "pg1"), pod("p2", "pg2")
    pl, _, _ = plugin([p1, p2], [pg("pg1", 2, created=EARLY), pg("pg2", 2, created=LATE)], clock=clock)
    pl.manager.wall = lambda: 100.0  # the groups were created 90 s and 80 s ago
    assert pl.less(_queued(p1, 0), _queued(p2, 0))
    clock.now += 5
    pl.post_filter(CycleState(), PodInfo(p1), FitError(PodInfo(p1), 1, Diagnosis()))
    assert not pl.less(_queued(p1, 0), _queued(p2, 0))


REJECT = Status(Code.UNSCHEDULABLE, "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
                plugin="Coscheduling")
NO_REJECT = Status(Code.UNSCHEDULABLE, plugin="Coscheduling")


@pytest.mark.parametrize(("target", "existing", "groups", "want"), [
    pytest.param(pod("p"), [], [pg("pg1", 2)],
                 Status(Code.UNSCHEDULABLE, "can not find pod group", plugin="Coscheduling"),
                 id="pod does not belong to any pod group"),
    pytest.param(pod("p", "pg1"), [pod("p1", "pg1", node="node")], [pg("pg1", 1)], NO_REJECT,
                 id="enough pods assigned, do not reject all"),
    pytest.param(pod("p", "pg1"), [pod("p1", "pg1", node="node")], [pg("pg1", 2)], REJECT,
                 id="pod failed at filter phase, reject all pods"),
])
def test_post_filter(target: Pod, existing: list[Pod], groups: list[CoPodGroup], want: Status) -> None:
    pl, _, _ = plugin([target, *existing], groups)
    assert pl.post_filter(CycleState(), PodInfo(target), FitError(PodInfo(target), 1, Diagnosis())) == want


@pytest.mark.parametrize(("percentage", "assigned", "want"), [
    pytest.param(10, 9, NO_REJECT, id="default 10%: 9/10 assigned (10% gap) → no rejection"),
    pytest.param(10, 8, REJECT, id="default 10%: 8/10 assigned (20% gap) → rejection"),
    pytest.param(0, 9, REJECT, id="0%: 9/10 assigned (10% gap) → rejection (always reject)"),
    pytest.param(100, 0, NO_REJECT, id="100%: 0/10 assigned (100% gap) → no rejection (never reject)"),
    pytest.param(50, 6, NO_REJECT, id="50%: 6/10 assigned (40% gap) → no rejection"),
    pytest.param(50, 4, REJECT, id="50%: 4/10 assigned (60% gap) → rejection"),
])
def test_post_filter_reject_threshold(percentage: int, assigned: int, want: Status) -> None:
    target = pod("p", "pg1")
    existing = [pod(f"assigned-{i}", "pg1", node="node") for i in range(assigned)]
    pl, _, _ = plugin([target, *existing], [pg("pg1", 10)], reject_percentage=percentage)
    assert pl.post_filter(CycleState(), PodInfo(target), FitError(PodInfo(target), 1, Diagnosis())) == want


async def test_post_filter_rejects_the_waiting_siblings_and_backs_the_group_off() -> None:
    clock = Clock()
    members = [pod(f"p{i}", "pg1") for i in range(3)]
    pl, handle, _ = plugin(members, [pg("pg1", 3)], backoff=20, clock=clock)
    waiting = WaitingPod("p1", "ns/p1", {"Coscheduling": 30.0})
    handle.waiting_pods.add(waiting)
    assert pl.post_filter(CycleState(), PodInfo(members[0]), FitError(PodInfo(members[0]), 1, Diagnosis())) == Status(
        Code.UNSCHEDULABLE, "PodGroup ns/pg1 gets rejected due to Pod p0 is unschedulable even after PostFilter",
        plugin="Coscheduling")
    assert await waiting.wait() == Status(Code.UNSCHEDULABLE, "optimistic rejection in PostFilter",
                                          plugin="Coscheduling")
    assert pl.manager.pre_filter(members[2], []) == "podGroup ns/pg1 failed recently"
    clock.now += 21
    assert pl.manager.pre_filter(members[2], []) is None


@pytest.mark.parametrize(("raw", "want_errors"), [
    pytest.param({}, [], id="defaults"),
    pytest.param({"permitWaitingTimeSeconds": -1}, ["args.permitWaitingTimeSeconds: Invalid value: -1: must be "
                                                    "greater than 0"], id="negative permit wait"),
    pytest.param({"podGroupBackoffSeconds": -1}, ["args.podGroupBackoffSeconds: Invalid value: -1: must be "
                                                  "greater than 0"], id="negative backoff"),
    pytest.param({"podGroupRejectPercentage": 101}, ["args.podGroupRejectPercentage: Invalid value: 101: must be "
                                                     "between 0 and 100"], id="percentage over 100"),
])
def test_args(raw: dict[str, int], want_errors: list[str]) -> None:
    errs: list[object] = []
    parsed = parse_args(raw, "args", errs)  # type: ignore[arg-type]
    assert [str(x) for x in errs] == want_errors
    if not want_errors:
        assert parsed == {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0,
                          "podGroupRejectPercentage": 10}
