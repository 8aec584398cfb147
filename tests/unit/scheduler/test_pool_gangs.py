"""CronJob pools x gangs, in the pod-group cycle without I/O: a CronJob's Job whose pods join one
PodGroup lands whole on the pool's nodes, or none of its pods is bound (none spills onto general
nodes), with `fallback: never` and `fallback: general` alike."""

from __future__ import annotations

from typing import Any, cast

import pytest

from kubesched.api import ApiClient
from kubesched.config.load import from_dict
from kubesched.model.objects import Job, ObjectMeta, OwnerReference, Pod
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod, make_pod_group
from tests.unit.scheduler.test_schedule_one_podgroup import (
    GATED,
    add_group,
    add_pod,
    answer,
    bound,
    group_conditions,
    run_cycles,
)
from tests.unit.scheduler.test_scheduler_binding import ScriptedClient

POOL = "kubesched.io/pool"
OLD = "2020-01-01T00:00:00Z"


def pool_scheduler(fallback: str, pool_cpus: tuple[str, ...]) -> tuple[Scheduler, ScriptedClient]:
    """Two 8-CPU general nodes and pool nodes of `pool_cpus`; the CronJob `cj` and its Job `j`."""
    raw: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "kubesched", "pluginConfig": [
            {"name": "CronJobPool", "args": {"pools": [{"name": "cronjob", "fallback": fallback}]}}]}]}
    client = ScriptedClient(answer)
    sched = Scheduler(cast(ApiClient, client), from_dict(raw, source="test", gates=GATED.default_plugin_gates()),
                      features=GATED)
    for name in ("general-1", "general-2"):
        sched.cache.add_node(make_node(name).capacity(cpu="8").obj())
    for i, cpu in enumerate(pool_cpus):
        sched.cache.add_node(make_node(f"pool-{i}").capacity(cpu=cpu).label(POOL, "cronjob")
                             .taint(POOL, "cronjob").obj())
    job = Job(metadata=ObjectMeta(name="j", namespace="default", uid="uid-j", owner_references=[
        OwnerReference(api_version="batch/v1", kind="CronJob", name="cj", uid="uid-cj", controller=True)]))
    sched.jobs.store[f"default/{job.metadata.name}"] = job
    return sched, client


def job_member(name: str, cpu: str = "1") -> Pod:
    pod = make_pod(name).uid(name).scheduler("kubesched").pod_group("pg").req(cpu=cpu).obj()
    pod.metadata.owner_references = [OwnerReference(api_version="batch/v1", kind="Job", name="j", uid="uid-j",
                                                    controller=True)]
    pod.metadata.creation_timestamp = OLD
    return pod


def placements(sched: Scheduler) -> dict[str, str]:
    return {p.pod.metadata.name: node for p in sched.cache.assumed_pods()
            if (node := sched.cache.node_of(p.pod.metadata.uid)) is not None}


OUTSIDE = "node(s) were outside the pod's cronjob pool"


@pytest.mark.parametrize("fallback", ["never", "general"])
@pytest.mark.parametrize(("pool_cpus", "want_bound"), [
    pytest.param(("2", "2"), ["p0", "p1", "p2", "p3"], id="pool-has-room-for-the-gang"),
    pytest.param(("2", "1"), [], id="pool-has-room-for-3-of-4"),
    pytest.param((), [], id="no-pool-nodes"),
])
async def test_a_cronjob_gang_lands_whole_in_its_pool_or_waits_whole(
        fallback: str, pool_cpus: tuple[str, ...], want_bound: list[str]) -> None:
    sched, client = pool_scheduler(fallback, pool_cpus)
    add_group(sched, make_pod_group("pg", min_count=4))
    for i in range(4):
        add_pod(sched, job_member(f"p{i}"))
    await run_cycles(sched)
    assert bound(client) == want_bound
    where = placements(sched)
    assert sorted(where) == want_bound
    assert all(node.startswith("pool-") for node in where.values()), where
    condition = group_conditions(client)[-1]
    if want_bound:
        assert condition["status"] == "True"
    else:
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
        messages = [m for _, m, _, _ in sched.conditions._pending.values() if m]
        assert any(OUTSIDE in m for m in messages), messages


async def test_a_gang_of_plain_pods_is_kept_off_the_pool() -> None:
    """The other side of an exclusive pool: a gang of no CronJob fits only on general nodes."""
    sched, client = pool_scheduler("never", ("8", "8"))
    add_group(sched, make_pod_group("pg", min_count=3))
    for i in range(3):
        add_pod(sched, make_pod(f"p{i}").uid(f"p{i}").scheduler("kubesched").pod_group("pg").req(cpu="5").obj())
    await run_cycles(sched)
    assert bound(client) == []
    assert group_conditions(client)[-1]["status"] == "False"
