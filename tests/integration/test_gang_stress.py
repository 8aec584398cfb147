"""The gang stress of issue 22, small: a few gangs arriving together with room for two at a time,
each gang's pods deleted a second after all are bound, watched throughout (bench/gang_stress.py):
no gang ever partly bound past the few milliseconds its binds take, every gang completes, no
deadlock — under kubesched and under the reference kube-scheduler (GenericWorkload on), one after
the other on the same nodes. The full run (50 gangs of 8, 100 nodes) is `kubesched chaos gangs`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from kubesched.api import ApiClient, load_config
from kubesched_dev.bench.gang_stress import GangPlan, GangRun, run_plan
from kubesched_dev.localcluster.topology import NodeSpec, Taint
from tests.integration.conftest import GATED_FEATURES, KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import DEFAULT, KUBESCHED, create_nodes, delete_nodes, node_manifest

KEY = "kubesched.io/gang-stress"
ROOM, SMALL = 6, 2  # nodes a gang pod fits on (one each), and nodes it fits on none of
PLAN = GangPlan(gangs=5, size=3, cpu="1", hold=1.0, settle=5.0, stall=40.0, timeout=90.0,
                node_selector={KEY: "true"},
                tolerations=({"key": KEY, "operator": "Equal", "value": "true", "effect": "NoSchedule"},))


@pytest.fixture(scope="module")
def stress_nodes(gated_plane: Kube) -> Iterator[list[str]]:
    """Nodes of their own (labelled and tainted), so the other tests' nodes and messages stay as they are."""
    specs = [NodeSpec(f"gang-stress-{i}", {KEY: "true"}, (Taint(KEY, "true", "NoSchedule"),),
                      {"cpu": "1" if i < ROOM else "500m", "memory": "8Gi", "pods": "110"})
             for i in range(ROOM + SMALL)]
    create_nodes(gated_plane, [node_manifest(s) for s in specs])
    names = [s.name for s in specs]
    try:
        yield names
    finally:
        delete_nodes(gated_plane, names)
        wait_for("the stress nodes gone", lambda: not any(
            n["metadata"]["name"] in names for n in gated_plane.get("/api/v1/nodes")["items"]), timeout=30)


@pytest.fixture(scope="module")
def stress_kubesched(gated_plane: Kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeschedProcess]:
    log = tmp_path_factory.mktemp("gang-stress") / "kubesched.log"
    proc = KubeschedProcess(gated_plane, [f"--feature-gates={GATED_FEATURES}"], log)
    try:
        yield proc
    finally:
        proc.stop()


async def _run(kube: Kube, namespace: str, scheduler: str) -> GangRun:
    async with ApiClient(load_config(kube.kubeconfig), qps=-1, burst=0, max_connections=20,
                         user_agent="kubesched-test-gang-stress") as client:
        return await run_plan(client, namespace, scheduler, PLAN)


@pytest.mark.timeout(240)
def test_gangs_competing_for_room_for_two_complete_whole_without_deadlock(
        gated_plane: Kube, stress_nodes: list[str], stress_kubesched: KubeschedProcess) -> None:
    runs = {scheduler: asyncio.run(_run(gated_plane, f"gang-stress-{'ref' if scheduler == DEFAULT else 'ks'}",
                                        scheduler))
            for scheduler in (DEFAULT, KUBESCHED)}
    for scheduler, run in runs.items():
        assert run.ok, (scheduler, run.summary(), stress_kubesched.log()[-3000:] if scheduler == KUBESCHED else "")
        assert (run.completed, run.max_partial, run.partial, run.deadlock) == (PLAN.gangs, 0, [], ""), run.summary()
        # Room for two gangs of three at once (six one-CPU nodes), never more.
        assert run.max_bound_pods <= ROOM, run.summary()
        assert run.max_gangs_at_once <= ROOM // PLAN.size, run.summary()
    print("\n".join(r.summary() for r in runs.values()))
