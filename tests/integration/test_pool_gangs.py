"""CronJob pools x gangs on the gated plane (GenericWorkload on): a CronJob's Job whose pods join a
PodGroup lands whole on the pool's nodes, or none of its pods is bound; never one outside the pool,
though the general nodes have room, with `fallback: general` too.

The Jobs carry the CronJob's controller reference, as the CronJob controller writes it, so the real
Job controller makes the pods at once (no wait for a minute boundary). Two pool nodes of this
module's own are added to the plane, tainted so no other scheduler uses them, and removed at the end.
kube-scheduler has no pool: beside it, the same gang with the pool's nodeSelector and toleration
written into the pods ends the same way (pods bound, PodGroup condition); only the messages differ.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched_dev.localcluster.topology import NodeSpec, Taint
from tests.integration.conftest import GATED_FEATURES, KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import DEFAULT, bound_pods, container, create_nodes, delete_nodes, node_manifest

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).parents[2] / "examples" / "coscheduling"
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
CO_PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
POOL_KEY = "kubesched.io/pool"
POOL = "gangs"
TAINT = {"key": POOL_KEY, "value": POOL, "effect": "NoSchedule"}
NEVER, GENERAL = "ks-pool-never", "ks-pool-general"  # the two profiles of the Workload API kubesched
COPOOL = "ks-copool"
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
_names = itertools.count()


def pool_node(name: str) -> NodeSpec:
    return NodeSpec(name, {POOL_KEY: POOL}, (Taint(POOL_KEY, POOL, "NoSchedule"),), dict(CAPACITY))


def pool_args(fallback: str) -> dict[str, Any]:
    return {"name": "CronJobPool", "args": {"pools": [{
        "name": POOL, "pods": {"ownerKinds": ["Job", "CronJob"]}, "nodes": {"matchLabels": {POOL_KEY: POOL}},
        "taint": TAINT, "fallback": fallback}]}}


def profile(name: str, fallback: str) -> dict[str, Any]:
    return {"schedulerName": name, "pluginConfig": [pool_args(fallback)]}


@pytest.fixture(scope="module")
def pool(gated_plane: Kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, KubeschedProcess]]:
    tmp = tmp_path_factory.mktemp("pool-gangs")
    gated_plane.kubectl("apply", "-f", str(EXAMPLES / "crd.yaml"))
    wait_for("the PodGroup CRD served", lambda: gated_plane.request(
        "GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups")[0] == 200, timeout=30)
    gang_config = tmp / "gang.yaml"
    gang_config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [profile(NEVER, "never"), profile(GENERAL, "general")]}))
    co = yaml.safe_load((EXAMPLES / "scheduler-config.yaml").read_text())
    co["profiles"][0]["schedulerName"] = COPOOL
    co["profiles"][0]["pluginConfig"].append(pool_args("general"))
    co_config = tmp / "copool.yaml"
    co_config.write_text(yaml.safe_dump(co))
    create_nodes(gated_plane, [node_manifest(pool_node(f"gpool-{i}")) for i in (1, 2)])
    procs: dict[str, KubeschedProcess] = {}
    try:
        procs["gang"] = KubeschedProcess(gated_plane, [f"--feature-gates={GATED_FEATURES}", f"--config={gang_config}"],
                                         tmp / "gang.log")
        procs["co"] = KubeschedProcess(gated_plane, [f"--config={co_config}"], tmp / "copool.log")
        yield procs
    finally:
        for proc in procs.values():
            proc.stop()
        delete_nodes(gated_plane, ["gpool-1", "gpool-2"])


# --- objects ---------------------------------------------------------------------------------------

def suspended_cronjob(kube: Kube, ns: str) -> dict[str, Any]:
    body: dict[str, Any] = kube.create(f"/apis/batch/v1/namespaces/{ns}/cronjobs", {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "suspend": True, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [container()]}}}}}})
    return body


def gang_job(kube: Kube, ns: str, owner: dict[str, Any], scheduler: str, count: int, cpu: str, *,
             group: str | None = None, co_group: str | None = None, pinned: bool = False) -> None:
    """A Job of `count` pods of the CronJob `owner`, joining PodGroup `group` (Workload API) or
    `co_group` (Coscheduling's label); `pinned`: the pool's nodeSelector and toleration written in."""
    spec: dict[str, Any] = {"restartPolicy": "Never", "schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
                            "containers": [container(cpu=cpu)]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    if pinned:
        spec["nodeSelector"] = {POOL_KEY: POOL}
        spec["tolerations"] = [{**TAINT, "operator": "Equal"}]
    meta = {"labels": {"scheduling.x-k8s.io/pod-group": co_group}} if co_group else {}
    kube.create(f"/apis/batch/v1/namespaces/{ns}/jobs", {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "CronJob", "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"parallelism": count, "completions": count, "backoffLimit": 0,
                 "template": {"metadata": meta, "spec": spec}}})


def pod_group(kube: Kube, ns: str, min_count: int) -> None:
    kube.create(PODGROUPS.format(ns=ns), {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                          "metadata": {"name": "g"},
                                          "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}})


def condition(kube: Kube, ns: str) -> tuple[str, str]:
    pg = kube.get(f"{PODGROUPS.format(ns=ns)}/g")
    for c in (pg.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodGroupInitiallyScheduled":
            return c["status"], c["reason"]
    return "", ""


def where(kube: Kube, ns: str) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in bound_pods(kube, ns)}


def never_partial(kube: Kube, ns: str, seconds: float, log: str) -> None:
    """For `seconds`, no pod of the gang bound at all (the pool has room for part of it only)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert not where(kube, ns), (where(kube, ns), log[-3000:])
        time.sleep(0.5)


def all_pending_told(kube: Kube, ns: str, count: int) -> bool:
    pods = kube.pods(ns)
    return len(pods) == count and all(
        any(c.get("type") == "PodScheduled" and c.get("message") for c in p["status"].get("conditions") or [])
        for p in pods)


def clear(kube: Kube, ns: str) -> None:
    """The Job and its pods gone (not only terminating), so the pool's room is free for the next test."""
    kube.delete(f"/apis/batch/v1/namespaces/{ns}/jobs/train?propagationPolicy=Background")
    for p in kube.pods(ns):
        kube.delete(f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}?gracePeriodSeconds=0")
    wait_for(f"the pods of {ns} to be gone", lambda: not kube.pods(ns), timeout=30)


def in_pool(nodes: dict[str, str]) -> bool:
    return all(n.startswith("gpool-") for n in nodes.values())


# --- the Workload API -----------------------------------------------------------------------------

@pytest.mark.parametrize("scheduler", [NEVER, GENERAL, DEFAULT])
def test_a_cronjob_gang_with_room_in_the_pool_lands_whole_there(gated_plane: Kube, pool: dict[str, KubeschedProcess],
                                                                scheduler: str) -> None:
    kube = gated_plane
    ns = kube.namespace(f"pool-gang-fits-{next(_names)}")
    owner = suspended_cronjob(kube, ns)
    pod_group(kube, ns, 4)
    # 2 CPUs each: two per pool node; the general workers have room too.
    gang_job(kube, ns, owner, scheduler, 4, "2", group="g", pinned=scheduler == DEFAULT)
    placed = wait_for(f"{scheduler}: the gang bound", lambda: (w if len(w := where(kube, ns)) == 4 else None),
                      timeout=60)
    assert in_pool(placed), placed
    wait_for("the PodGroup scheduled", lambda: condition(kube, ns) == ("True", "Scheduled"), timeout=20)
    clear(kube, ns)


@pytest.mark.parametrize("scheduler", [NEVER, GENERAL, DEFAULT])
def test_a_cronjob_gang_too_big_for_its_pool_waits_whole_until_the_pool_grows(
        gated_plane: Kube, pool: dict[str, KubeschedProcess], scheduler: str) -> None:
    kube = gated_plane
    ns = kube.namespace(f"pool-gang-waits-{next(_names)}")
    owner = suspended_cronjob(kube, ns)
    pod_group(kube, ns, 4)
    # 3 CPUs each: one per pool node, so room for 2 of 4; the three general workers could take 3 more.
    gang_job(kube, ns, owner, scheduler, 4, "3", group="g", pinned=scheduler == DEFAULT)
    wait_for(f"{scheduler}: every pod told why", lambda: all_pending_told(kube, ns, 4), timeout=60)
    never_partial(kube, ns, 5, pool["gang"].log())
    assert condition(kube, ns) == ("False", "Unschedulable")
    extra = [pool_node(f"gpool-x{next(_names)}") for _ in range(2)]
    create_nodes(kube, [node_manifest(n) for n in extra])
    try:
        placed = wait_for(f"{scheduler}: all four bound once the pool grows",
                          lambda: (w if len(w := where(kube, ns)) == 4 else None), timeout=90)
        assert in_pool(placed), placed
        wait_for("the PodGroup scheduled", lambda: condition(kube, ns) == ("True", "Scheduled"), timeout=20)
    finally:
        clear(kube, ns)
        delete_nodes(kube, [n.name for n in extra])


# --- Coscheduling (kube-scheduler has no such plugin) ---------------------------------------------

def test_a_coscheduling_cronjob_gang_waits_whole_then_lands_whole_in_its_pool(
        gated_plane: Kube, pool: dict[str, KubeschedProcess]) -> None:
    kube = gated_plane
    ns = kube.namespace(f"pool-cogang-{next(_names)}")
    owner = suspended_cronjob(kube, ns)
    kube.create(CO_PODGROUPS.format(ns=ns), {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                             "metadata": {"name": "g"}, "spec": {"minMember": 4}})
    gang_job(kube, ns, owner, COPOOL, 4, "3", co_group="g")
    # Permit holds placed pods at most permitWaitingTimeSeconds (10 s): watch past it.
    never_partial(kube, ns, 15, pool["co"].log())
    extra = [pool_node(f"gpool-x{next(_names)}") for _ in range(2)]
    create_nodes(kube, [node_manifest(n) for n in extra])
    try:
        placed = wait_for("all four bound once the pool grows",
                          lambda: (w if len(w := where(kube, ns)) == 4 else None), timeout=120)
        assert in_pool(placed), (placed, pool["co"].log()[-3000:])
    finally:
        clear(kube, ns)
        delete_nodes(kube, [n.name for n in extra])
