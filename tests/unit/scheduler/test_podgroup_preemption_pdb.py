"""PodDisruptionBudgets in pod-group preemption, from kube-scheduler's podgrouppreemption_test.go
(TestPodGroupEvaluator_SelectVictimsOnDomain, its "PDB:" cases): the victims whose eviction would
break a budget are reprieved first, then the others, each from the most important down; a PodGroup
victim (disruptionMode all) breaks a budget as a whole when any of its pods does."""

from __future__ import annotations

import pytest

from kubesched.model.objects import LabelSelector, ObjectMeta, Pod, PodDisruptionBudget
from kubesched.model.objects import PodDisruptionBudgetSpec as Spec
from kubesched.model.objects import PodDisruptionBudgetStatus as Status
from kubesched.model.workload import DisruptionMode, PodGroup
from kubesched.plugins.default_preemption.pdb import budgets, split_units_by_violation
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_pod, make_pod_group
from tests.unit.scheduler.test_schedule_one_podgroup import (
    add_group,
    add_pod,
    deleted,
    gated_scheduler,
    high,
    run_cycles,
)

LOW, MID = 0, 50


def victim(name: str, priority: int = LOW, group: str | None = None, foo: bool = False, cpu: str = "2") -> Pod:
    b = make_pod(name).uid(name).node("n0").priority(priority).req(cpu=cpu)
    if foo:
        b = b.label("app", "foo")
    return (b.pod_group(group) if group else b).obj()


def pdb(allowed: int = 0, disrupted: tuple[str, ...] = ()) -> PodDisruptionBudget:
    return PodDisruptionBudget(metadata=ObjectMeta(name="pdb", namespace="default"),
                               spec=Spec(selector=LabelSelector(match_labels={"app": "foo"})),
                               status=Status(disruptions_allowed=allowed, disrupted_pods=dict.fromkeys(disrupted, "t")))


def all_group(name: str) -> PodGroup:
    group = make_pod_group(name, min_count=2)
    group.spec.disruption_mode = DisruptionMode(all={})
    return group


async def preempt(node_cpu: str, victims: list[Pod], budgets_: list[PodDisruptionBudget],
                  groups: list[PodGroup] = (), preemptor_cpu: str = "2") -> list[str]:  # type: ignore[assignment]
    sched, client = gated_scheduler(node_cpu)
    _add_pdbs(sched, budgets_)
    for g in groups:
        add_group(sched, g)
    for v in victims:
        add_pod(sched, v)
    add_group(sched, make_pod_group("pg", min_count=1, priority=100))
    add_pod(sched, high("p", cpu=preemptor_cpu))
    await run_cycles(sched)
    return deleted(client)


def _add_pdbs(sched: Scheduler, items: list[PodDisruptionBudget]) -> None:
    for item in items:
        sched.sources.pdbs.store[f"{item.metadata.namespace}/{item.metadata.name}"] = item


@pytest.mark.parametrize(("victims", "budgets_", "groups", "node_cpu", "preemptor_cpu", "want"), [
    pytest.param([victim("victim-pdb", foo=True), victim("victim-no-pdb")], [pdb()], [], "4", "2",
                 ["victim-no-pdb"], id="PDB: Prefer non-violating victim"),
    pytest.param([victim("victim-pdb", foo=True), victim("victim-no-pdb", MID)], [pdb()], [], "4", "2",
                 ["victim-no-pdb"],
                 id="PDB: Prefer removing non-violating victim over lower priority violating victim"),
    pytest.param([victim("p1", foo=True), victim("p2", MID, foo=True)], [pdb()], [], "4", "2", ["p1"],
                 id="PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not "
                    "possible"),
    pytest.param([victim("victim-pdb", group="pg1", foo=True), victim("victim-no-pdb", group="pg1")], [pdb()], [],
                 "4", "2", ["victim-no-pdb"], id="PDB: Mixed groups"),
    pytest.param([victim("g1-1", group="pg1", foo=True, cpu="1"), victim("g1-2", group="pg1", cpu="1"),
                  victim("p1", cpu="1")], [pdb()], [all_group("pg1")], "3", "1", ["p1"],
                 id="PDB: Unit violation if any member violates"),
    # Beyond upstream's table: cases where the budget changes the outcome.
    pytest.param([victim("g1-1", group="pg1", foo=True, cpu="1"), victim("g1-2", group="pg1", cpu="1"),
                  victim("p1", MID, cpu="1")], [pdb()], [all_group("pg1")], "3", "1", ["p1"],
                 id="a violating group is reprieved before a more important pod"),
    pytest.param([victim("g1-1", group="pg1", foo=True, cpu="1"), victim("g1-2", group="pg1", cpu="1"),
                  victim("p1", MID, cpu="1")], [], [all_group("pg1")], "3", "1", ["g1-1", "g1-2"],
                 id="without the budget the more important pod is reprieved and the group goes whole"),
    pytest.param([victim("victim-pdb", MID, foo=True), victim("victim-no-pdb")], [pdb(allowed=1)], [], "4", "2",
                 ["victim-no-pdb"], id="a budget that allows the disruption leaves the order by importance"),
    pytest.param([victim("victim-pdb", foo=True), victim("victim-no-pdb", MID)], [pdb(disrupted=("victim-pdb",))],
                 [], "4", "2", ["victim-pdb"], id="a pod already in disruptedPods does not violate"),
])
async def test_pod_group_preemption_with_pod_disruption_budgets(
        victims: list[Pod], budgets_: list[PodDisruptionBudget], groups: list[PodGroup], node_cpu: str,
        preemptor_cpu: str, want: list[str]) -> None:
    assert await preempt(node_cpu, victims, budgets_, groups, preemptor_cpu) == want


@pytest.mark.parametrize(("units", "allowed", "want_violating", "want_non_violating"), [
    pytest.param([["a"], ["b"]], 1, [(["b"], 1)], [["a"]], id="one allowed: the first takes it, the second violates"),
    pytest.param([["a", "b"], ["c"]], 1, [(["a", "b"], 1), (["c"], 1)], [], id="a group with one pod over the budget"),
    pytest.param([["a", "b"], ["c"]], 2, [(["c"], 1)], [["a", "b"]], id="two allowed: the group takes both"),
    pytest.param([["a", "b"], ["c"]], 0, [(["a", "b"], 2), (["c"], 1)], [], id="nothing allowed: every pod counts"),
])
def test_a_victim_of_several_pods_violates_as_a_whole(units: list[list[str]], allowed: int,
                                                      want_violating: list[tuple[list[str], int]],
                                                      want_non_violating: list[list[str]]) -> None:
    from kubesched.framework.types import PodInfo
    infos = {n: PodInfo(make_pod(n).label("app", "foo").obj()) for unit in units for n in unit}
    violating, non_violating = split_units_by_violation(
        units, lambda unit: [infos[n] for n in unit], budgets([pdb(allowed)]))
    assert violating == want_violating
    assert non_violating == want_non_violating
