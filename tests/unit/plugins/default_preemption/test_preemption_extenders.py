"""DefaultPreemption with extenders: the candidates go through the extenders that support preemption
(preemption.go callExtenders) before one is chosen; kube-scheduler's TestPreempt extender cases."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import CycleState, FitError, PodInfo, Profile, build_profile
from kubesched.framework.extender import Victims
from kubesched.framework.fit_error import Diagnosis
from kubesched.framework.handle import Handle
from kubesched.framework.interface import NOMINATED_NODE_KEY
from kubesched.framework.runtime.framework import run_post_filter_async
from kubesched.framework.runtime.schedule import run_pre_filter
from kubesched.framework.status import Code, Status
from kubesched.plugins.default_preemption import DefaultPreemption
from kubesched.plugins.registry import in_tree_registry
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.fake_extender import FakeExtender, error_predicate, false_predicate, only, true_predicate
from tests.unit.scheduling_helpers import snapshot_with

LOW, MID, HIGH = 0, 100, 1000
SMALL, LARGE = ("100m", "100"), ("300m", "300")


def victim(name: str, node: str, prio: int, res: tuple[str, str]) -> PodBuilder:
    return make_pod(name).uid(name).node(node).priority(prio).req(cpu=res[0], memory=res[1])


async def preempt(names: list[str], pods: list[PodBuilder], extenders: list[FakeExtender],
                  cpu: str = "500m") -> tuple[Status | None, Any, list[str]]:
    """TestPreempt's set-up: every node Unschedulable for a preemptor asking for 500m / 500 on nodes of
    that size; (PostFilter status, nomination, victims deleted)."""
    nodes: list[Any] = [make_node(n).capacity(cpu="500m", memory="500") for n in names]
    snap = snapshot_with(nodes, list(pods))
    deleted: list[str] = []

    async def delete(pod: Any, message: str, preemptor: Any) -> Status | None:
        deleted.append(pod.metadata.name)
        return None

    async def disrupt(pod: Any, message: str) -> Status | None:
        return None

    spawned: list[Any] = []
    handle = Handle(snapshot=lambda: snap, spawn=lambda coro, name: spawned.append(coro), delete_victim=delete,
                    disrupt_victim=disrupt, extenders=extenders)
    profile: Profile = build_profile(ProfileConfig("s", kube_scheduler_default_plugins()), in_tree_registry(), handle)
    plugin = profile.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    plugin.offset = lambda n: 0
    pod = PodInfo(make_pod("p").uid("p").priority(HIGH).req(cpu=cpu, memory="100").obj())
    state = CycleState()
    run_pre_filter(profile, state, pod, snap)
    fit = FitError(pod, len(names), Diagnosis(node_to_status={n: Status(Code.UNSCHEDULABLE) for n in names}))
    status = await run_post_filter_async(profile, state, pod, fit)
    for coro in spawned:
        await coro
    return status, state.get(NOMINATED_NODE_KEY), sorted(deleted)


P11, P12 = victim("p1.1", "node1", MID, SMALL), victim("p1.2", "node1", LOW, SMALL)

CASES = [
    pytest.param(["node1", "node2", "node3"], [P11, P12, victim("p2.1", "node3", MID, LARGE)],
                 [FakeExtender("FakeExtender1", [true_predicate], preempts=True),
                  FakeExtender("FakeExtender2", [only("node1")], preempts=True)], "node1", ["p1.1", "p1.2"],
                 id="Scheduler extenders allow only node1, otherwise node3 would have been chosen"),
    pytest.param(["node1", "node2", "node3"], [P11, P12, victim("p2.1", "node2", MID, LARGE)],
                 [FakeExtender("FakeExtender1", [false_predicate], preempts=True)], None, [],
                 id="Scheduler extenders do not allow any preemption"),
    pytest.param(["node1", "node2", "node3"], [P11, P12, victim("p2.1", "node2", MID, LARGE)],
                 [FakeExtender("FakeExtender1", [error_predicate], preempts=True, ignorable=True),
                  FakeExtender("FakeExtender2", [only("node1")], preempts=True)], "node1", ["p1.1", "p1.2"],
                 id="One scheduler extender allows only node1, the other returns error but ignorable"),
    pytest.param(["node1", "node2"], [P11, P12, victim("p2.1", "node2", MID, LARGE)],
                 [FakeExtender("FakeExtender1", [only("node1")], preempts=True, uninterested=True),
                  FakeExtender("FakeExtender2", [true_predicate], preempts=True)], "node2", ["p2.1"],
                 id="One scheduler extender allows only node1, but it is not interested in given pod"),
    pytest.param(["node1", "node2", "node3"], [P11, P12, victim("p2.1", "node3", MID, LARGE)],
                 [FakeExtender("NotPreempting", [only("node1")])], "node3", ["p2.1"],
                 id="an extender without a preempt verb is not asked"),
]


@pytest.mark.parametrize(("names", "pods", "extenders", "nominated", "deleted"), CASES)
async def test_preempt_with_extenders(names: list[str], pods: list[PodBuilder], extenders: list[FakeExtender],
                                      nominated: str | None, deleted: list[str]) -> None:
    status, got_nomination, got_deleted = await preempt(names, pods, extenders)
    assert got_nomination == nominated
    assert got_deleted == deleted
    if nominated is None:
        assert status is not None
        assert (status.code, status.message()) == (Code.UNSCHEDULABLE, "preemption: no candidate node for preemption")


async def test_an_extender_error_ends_the_preemption_with_it() -> None:
    status, nomination, deleted = await preempt(["node1"], [P11, P12],
                                                [FakeExtender("E", [error_predicate], preempts=True)])
    assert status == Status(Code.ERROR, "preemption: some error", plugin="DefaultPreemption")
    assert status is not None
    assert (nomination, deleted) == (None, [])


async def test_victims_the_extender_adds_are_preempted() -> None:
    """The extender's victims replace the dry run's: it may ask for more pods to go. The dry run
    keeps p1.1 (the most important) for a preemptor of 400m; the extender wants it gone too."""
    seen: list[list[str]] = []

    def more(pod: Any, victims: Any) -> dict[str, Victims]:
        v = victims["node1"]
        seen.append(sorted(p.pod.metadata.name for p in v.pods))
        return {"node1": Victims([*v.pods, keep[0]], v.num_pdb_violations)}

    keep: list[Any] = []
    pods = [P11, P12, victim("p1.3", "node1", LOW, ("200m", "100"))]
    ext = FakeExtender("E", preempts=True, preemption=more)
    original = ext.process_preemption

    async def with_p11(pod: Any, victims: Any, snapshot: Any) -> dict[str, Victims]:
        node = snapshot.node_infos[snapshot.index["node1"]]
        keep.append(node.pods["p1.1"])
        return await original(pod, victims, snapshot)

    ext.process_preemption = with_p11  # type: ignore[method-assign]
    status, nomination, deleted = await preempt(["node1"], pods, [ext], cpu="400m")
    assert seen == [["p1.2", "p1.3"]]
    assert status is None
    assert (nomination, deleted) == ("node1", ["p1.1", "p1.2", "p1.3"])
