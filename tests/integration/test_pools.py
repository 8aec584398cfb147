"""The CronJob pool (issue 5) against real planes: the real CronJob and Job controllers, the real
kube-scheduler beside kubesched, real kubectl, and `kubesched run` / `kubesched pool` as subprocesses.

Three planes of this module's own, so nothing here touches the session plane or its kubesched:
- seed: the seed's kind topology, kubesched with devtools/examples/config/seed.yaml, the seed's manifests;
- pool: two general nodes and `pool-1`, made a pool node with `kubectl label` and `kubesched pool taint`;
- full (class TestPoolFull): a pool node that is nearly full, a second kubesched with fallback general.

CronJobs fire on the minute boundary, so the seed and pool planes start together and every CronJob
that must really fire is created at once in the module fixture; the tests that wait for them come
last, so the wait overlaps the rest of the module.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched_dev.localcluster import plane as planes
from kubesched_dev.localcluster.topology import NodeSpec, Taint, Topology, parse, seed_kind
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for

REPO = Path(__file__).resolve().parents[2]
SEED_CONFIG = REPO / "devtools" / "examples" / "config" / "seed.yaml"
DEFAULT_CONFIG = REPO / "examples" / "config" / "default.yaml"
SEED_MANIFESTS = REPO / "devtools" / "examples" / "seed"

SEED_SCHEDULER = "my-custom-scheduler"  # the profile's schedulerName in devtools/examples/config/seed.yaml
KUBESCHED = "kubesched"
GENERAL_SCHEDULER = "kubesched-general"  # the fallback-general profile of TestPoolFull

POOL_KEY = "kubesched.io/pool"
POOL_TAINT = {"key": POOL_KEY, "value": "cronjob", "effect": "NoSchedule"}
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
SEED_WORKERS = {"kind-worker", "kind-worker2"}
GENERAL = {"general-1", "general-2"}
EVERY_MINUTE = "* * * * *"
# kwok finishes a Job's pods at once, so the first firing is over within seconds; this bounds the
# wait for it from any point in the minute, with room for a slow controller-manager.
CRON_TIMEOUT = 100.0


def _progress(message: str) -> None:
    print(f"[plane] {message}", file=sys.stderr, flush=True)


def _general_and_pool_topology(pool_labels: dict[str, str], pool_taints: list[dict[str, str]]) -> Topology:
    nodes: list[dict[str, Any]] = [{"name": n, "capacity": CAPACITY} for n in sorted(GENERAL)]
    nodes.append({"name": "pool-1", "labels": pool_labels, "taints": pool_taints, "capacity": CAPACITY})
    return parse({"nodes": nodes}, "test_pools")


# --- object builders ------------------------------------------------------------------------------

def _container(cpu: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": "busybox:1.36", "command": ["sleep", "20"]}
    if cpu:
        c["resources"] = {"requests": {"cpu": cpu}}
    return c


def _pod_template(scheduler: str | None, cpu: str | None = None, restart: str = "Never") -> dict[str, Any]:
    spec: dict[str, Any] = {"restartPolicy": restart, "containers": [_container(cpu)]}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"spec": spec}


def cronjob(name: str, scheduler: str, *, schedule: str = EVERY_MINUTE, suspend: bool = False) -> dict[str, Any]:
    # No nodeSelector, no toleration: the pool must come from ownership alone.
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "suspend": suspend,
                     "jobTemplate": {"spec": {"template": _pod_template(scheduler)}}}}


def job(name: str, scheduler: str, *, cpu: str | None = None, owner: dict[str, Any] | None = None,
        completions: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if owner is not None:
        # What the CronJob controller writes on the Jobs it makes; the real Job controller then makes
        # the pods at once, so ownership is tested without waiting for a minute boundary.
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "CronJob", "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True,
                                    "blockOwnerDeletion": True}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"completions": completions, "parallelism": completions, "backoffLimit": 0,
                     "template": _pod_template(scheduler, cpu)}}


def deployment(name: str, scheduler: str | None, replicas: int,
               tolerations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def pod(name: str, scheduler: str, *, cpu: str | None = None, annotations: dict[str, str] | None = None,
        node_selector: dict[str, str] | None = None, tolerations: list[dict[str, str]] | None = None
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [_container(cpu)]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
            "spec": spec}


# --- reading the plane ------------------------------------------------------------------------------

def node_of(p: dict[str, Any]) -> str | None:
    name: str | None = p["spec"].get("nodeName")
    return name


def controller(obj: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")), None)


def placements(pods: list[dict[str, Any]]) -> dict[str, str | None]:
    return {p["metadata"]["name"]: node_of(p) for p in pods}


def all_bound(kube: Kube, ns: str, selector: str, count: int) -> dict[str, str] | None:
    """The placements of the `count` pods matching `selector`, once there are that many, all bound."""
    found = placements(kube.pods(ns, selector))
    if len(found) != count or any(n is None for n in found.values()):
        return None
    return {k: v for k, v in found.items() if v is not None}


def job_pods(kube: Kube, ns: str, job_name: str) -> list[dict[str, Any]]:
    return kube.pods(ns, f"batch.kubernetes.io/job-name={job_name}")


def scheduled_condition(p: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in p.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"), None)


def failed_scheduling_notes(kube: Kube, ns: str, pod_name: str) -> list[tuple[str, str]]:
    events = kube.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    return [(e.get("reportingController", ""), e.get("note", "")) for e in events
            if e["regarding"].get("name") == pod_name and e["reason"] == "FailedScheduling"]


def node_ready_and_untainted(node: dict[str, Any]) -> bool:
    """Ready, and the lifecycle controller has lifted the not-ready taint the apiserver put on at creation."""
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", []))
    taints = node.get("spec", {}).get("taints") or []
    return ready and not any(t["key"].startswith("node.kubernetes.io/") for t in taints)


def kubesched_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched", *args], capture_output=True, text=True, timeout=120)


# --- planes ---------------------------------------------------------------------------------------

@dataclass
class Fleet:
    seed: Kube
    pool: Kube
    taint_cli: subprocess.CompletedProcess[str]  # the first `kubesched pool taint` on the pool plane


_instances = itertools.count()


def _start_kubesched(kube: Kube, tmp: Path, *args: str) -> KubeschedProcess:
    return KubeschedProcess(kube, list(args), tmp / f"kubesched-{next(_instances)}.log")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """The seed and pool planes, their kubesched, and every CronJob that must fire for real."""
    tmp = tmp_path_factory.mktemp("pools")
    names = (f"kubesched-test-pools-seed-{os.getpid()}", f"kubesched-test-pools-{os.getpid()}")
    started: list[KubeschedProcess] = []
    try:
        # The pool node starts as a plain node: `kubectl label` and `kubesched pool taint` make it one.
        with ThreadPoolExecutor(2) as ex:
            seed_up = ex.submit(planes.up, names[0], seed_kind(), progress=_progress)
            pool_up = ex.submit(planes.up, names[1], _general_and_pool_topology({}, []), progress=_progress)
            seed, pool = Kube(seed_up.result()), Kube(pool_up.result())

        pool.kubectl("label", "node", "pool-1", f"{POOL_KEY}=cronjob")
        taint_cli = kubesched_cli("pool", "taint", f"--kubeconfig={pool.kubeconfig}")
        assert taint_cli.returncode == 0, taint_cli.stderr

        started.append(_start_kubesched(seed, tmp, f"--config={SEED_CONFIG}"))
        started.append(_start_kubesched(pool, tmp))

        # The seed's CronJobs fire every two minutes; every minute halves the wait and changes nothing
        # else about their pods. `no-selector` is one more, without the seed's nodeSelector, so the
        # seed config is seen to recognise CronJob pods by ownership too.
        seed.namespace("seed")
        manifests = (SEED_MANIFESTS / "cronjobs.yaml").read_text()
        assert manifests.count('schedule: "*/2 * * * *"') == 3, "devtools/examples/seed/cronjobs.yaml changed"
        seed.kubectl("apply", "-n", "seed", "-f", "-",
                     input=manifests.replace('schedule: "*/2 * * * *"', f'schedule: "{EVERY_MINUTE}"'))
        seed.create("/apis/batch/v1/namespaces/seed/cronjobs", cronjob("no-selector", SEED_SCHEDULER))

        pool.namespace("cron")
        pool.create("/apis/batch/v1/namespaces/cron/cronjobs", cronjob("tick", KUBESCHED))
        yield Fleet(seed, pool, taint_cli)
    finally:
        for proc in started:
            proc.stop()
        for name in names:
            planes.down(name, _progress)


# --- seed plane: devtools/examples/config/seed.yaml and the seed's manifests ----------------------

def test_seed_nginx_never_on_the_pool_or_control_node_also_at_10_replicas(fleet: Fleet) -> None:
    seed = fleet.seed
    seed.kubectl("apply", "-n", "seed", "-f", str(SEED_MANIFESTS / "nginx-deployment.yaml"))
    three = wait_for("3 nginx pods bound", lambda: all_bound(seed, "seed", "app=nginx", 3), timeout=30)
    assert set(three.values()) <= SEED_WORKERS, f"nginx outside the general workers: {three}"

    seed.kubectl("scale", "-n", "seed", "deployment/nginx", "--replicas=10")
    ten = wait_for("10 nginx pods bound", lambda: all_bound(seed, "seed", "app=nginx", 10), timeout=30)
    assert set(ten.values()) <= SEED_WORKERS, f"nginx outside the general workers: {ten}"
    assert set(three.items()) <= set(ten.items()), "a scaled-up Deployment should keep its first pods"


# --- pool plane: default config, pool-1 labelled and tainted by the CLI --------------------------

def test_pool_taint_cli_taints_the_labelled_node_only_and_is_idempotent(fleet: Fleet) -> None:
    pool = fleet.pool
    assert fleet.taint_cli.stdout == "node/pool-1 tainted (kubesched.io/pool=cronjob:NoSchedule)\n"
    assert fleet.taint_cli.stderr == "1 node(s) changed\n"
    taints = {n["metadata"]["name"]: n["spec"].get("taints") or [] for n in pool.get("/api/v1/nodes")["items"]}
    assert taints == {"general-1": [], "general-2": [], "pool-1": [POOL_TAINT]}

    again = kubesched_cli("pool", "taint", f"--kubeconfig={pool.kubeconfig}")
    assert (again.returncode, again.stdout, again.stderr) == (
        0, "node/pool-1 unchanged (kubesched.io/pool=cronjob:NoSchedule)\n", "0 node(s) changed\n")
    dry = kubesched_cli("pool", "untaint", "--dry-run", f"--kubeconfig={pool.kubeconfig}")
    assert (dry.returncode, dry.stdout, dry.stderr) == (
        0, "node/pool-1 untainted (kubesched.io/pool=cronjob:NoSchedule) (dry run)\n", "1 node(s) would change\n")
    assert pool.get("/api/v1/nodes/pool-1")["spec"]["taints"] == [POOL_TAINT]


def test_kube_scheduler_beside_kubesched_never_uses_the_pool_node(fleet: Fleet) -> None:
    pool = fleet.pool
    ns = pool.namespace("default-scheduler")
    # 8 replicas on 3 empty nodes: spreading alone would put some on pool-1; only its taint keeps them off.
    pool.create(f"/apis/apps/v1/namespaces/{ns}/deployments", deployment("web", None, 8))
    placed = wait_for("8 default-scheduler pods bound", lambda: all_bound(pool, ns, "app=web", 8), timeout=30)
    assert set(placed.values()) <= GENERAL, f"kube-scheduler used the pool node: {placed}"


def test_plain_job_pods_stay_off_the_pool(fleet: Fleet) -> None:
    pool = fleet.pool
    ns = pool.namespace("plain-job")
    pool.create(f"/apis/batch/v1/namespaces/{ns}/jobs", job("plain", KUBESCHED, completions=4))
    placed = wait_for("4 plain Job pods bound", lambda: all_bound(pool, ns, "batch.kubernetes.io/job-name=plain", 4),
                      timeout=30)
    assert set(placed.values()) <= GENERAL, f"a plain Job's pods went to the pool: {placed}"


def test_kubectl_create_job_from_cronjob_pods_are_pool_pods(fleet: Fleet) -> None:
    pool = fleet.pool
    ns = pool.namespace("manual")
    pool.create(f"/apis/batch/v1/namespaces/{ns}/cronjobs", cronjob("nightly", KUBESCHED, suspend=True))
    pool.kubectl("create", "job", "by-hand", "--from=cronjob/nightly", "-n", ns)

    made = pool.get(f"/apis/batch/v1/namespaces/{ns}/jobs/by-hand")
    # kubectl v1.37 marks the Job both ways; the pool honours either (see pool_ownership).
    assert made["metadata"]["annotations"].get("cronjob.kubernetes.io/instantiate") == "manual"
    ref = controller(made) or {}
    assert (ref.get("kind"), ref.get("name")) == ("CronJob", "nightly"), made["metadata"]
    placed = wait_for("the by-hand Job's pod bound", lambda: all_bound(
        pool, ns, "batch.kubernetes.io/job-name=by-hand", 1), timeout=30)
    assert set(placed.values()) == {"pool-1"}, f"kubectl create job --from=cronjob/nightly: {placed}"


@pytest.mark.parametrize("toleration", [
    pytest.param(None, id="no-toleration"),
    # Tolerating every taint, as DaemonSets do, gets past the pool taint: only exclusive keeps it off.
    pytest.param({"operator": "Exists"}, id="tolerates-everything"),
])
def test_kubesched_non_pool_pods_never_on_the_pool_node(fleet: Fleet, toleration: dict[str, str] | None) -> None:
    pool = fleet.pool
    tolerations = [toleration] if toleration else None
    ns = pool.namespace(f"exclusive-{'tolerant' if toleration else 'plain'}")
    pool.create(f"/apis/apps/v1/namespaces/{ns}/deployments", deployment("web", KUBESCHED, 8, tolerations))
    placed = wait_for("8 kubesched pods bound", lambda: all_bound(pool, ns, "app=web", 8), timeout=30)
    assert set(placed.values()) <= GENERAL, f"kubesched put non-pool pods on the pool node: {placed}"

    # A non-pool pod that asks for the pool node by name is told why it cannot have it.
    pool.create(f"/api/v1/namespaces/{ns}/pods", pod("pinned", KUBESCHED, tolerations=tolerations,
                                                     node_selector={"kubernetes.io/hostname": "pool-1"}))
    reserved = ("0/3 nodes are available: 1 node(s) were reserved for the cronjob pool, "
                "2 node(s) didn't match Pod's node affinity/selector. "
                "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    cond = wait_for("the pinned pod's PodScheduled condition", lambda: (
        c if (c := scheduled_condition(pool.get(f"/api/v1/namespaces/{ns}/pods/pinned"))) else None), timeout=20)
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", reserved)
    assert node_of(pool.get(f"/api/v1/namespaces/{ns}/pods/pinned")) is None


# --- a full pool: fallback never, a second pool node, fallback general --------------------------

@dataclass
class FullPool:
    kube: Kube
    owner: dict[str, Any]  # a suspended CronJob that the tests' Jobs name as their controller
    ns: str


FILLER_CPU = "3500m"  # of pool-1's 4 CPUs: a pool pod asking for 1 CPU no longer fits


@pytest.fixture(scope="class")
def full_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FullPool]:
    tmp = tmp_path_factory.mktemp("full-pool")
    name = f"kubesched-test-pools-full-{os.getpid()}"
    started: list[KubeschedProcess] = []
    try:
        kube = Kube(planes.up(name, _general_and_pool_topology({POOL_KEY: "cronjob"}, [POOL_TAINT]),
                              progress=_progress))
        general = yaml.safe_load(DEFAULT_CONFIG.read_text())
        profile = general["profiles"][0]
        profile["schedulerName"] = GENERAL_SCHEDULER
        pool_args = next(c for c in profile["pluginConfig"] if c["name"] == "CronJobPool")["args"]
        pool_args["pools"][0]["fallback"] = "general"
        general_config = tmp / "fallback-general.yaml"
        general_config.write_text(yaml.safe_dump(general))
        started.append(_start_kubesched(kube, tmp))
        started.append(_start_kubesched(kube, tmp, f"--config={general_config}"))

        ns = kube.namespace("full")
        owner = kube.create(f"/apis/batch/v1/namespaces/{ns}/cronjobs", cronjob("hourly", KUBESCHED, suspend=True))
        # A plain pod opted into the pool by annotation: it stays Running (kwok ends Job pods at
        # once), so it keeps the pool full.
        kube.create(f"/api/v1/namespaces/{ns}/pods", pod("filler", KUBESCHED, cpu=FILLER_CPU,
                                                         annotations={POOL_KEY: "cronjob"}))
        filler = wait_for("the filler bound", lambda: node_of(kube.get(f"/api/v1/namespaces/{ns}/pods/filler")),
                          timeout=30)
        assert filler == "pool-1", f"the pool-annotated filler pod went to {filler}"
        yield FullPool(kube, owner, ns)
    finally:
        for proc in started:
            proc.stop()
        planes.down(name, _progress)


class TestPoolFull:
    @pytest.mark.parametrize(("cpu", "where"), [
        pytest.param("1", GENERAL, id="no-room-in-pool-uses-general-node"),
        pytest.param("100m", {"pool-1"}, id="room-in-pool-stays-in-pool"),
    ])
    def test_fallback_general(self, full_pool: FullPool, cpu: str, where: set[str]) -> None:
        kube, ns = full_pool.kube, full_pool.ns
        name = f"general-{cpu.lower()}"
        kube.create(f"/apis/batch/v1/namespaces/{ns}/jobs", job(name, GENERAL_SCHEDULER, cpu=cpu,
                                                                owner=full_pool.owner))
        placed = wait_for(f"the {name} Job's pod bound",
                          lambda: all_bound(kube, ns, f"batch.kubernetes.io/job-name={name}", 1), timeout=30)
        assert set(placed.values()) <= where, f"fallback general, {cpu} CPU with {FILLER_CPU} used in the pool: " \
                                              f"{placed}"

    def test_fallback_never_stays_pending_until_a_second_pool_node_is_ready(self, full_pool: FullPool) -> None:
        kube, ns = full_pool.kube, full_pool.ns
        kube.create(f"/apis/batch/v1/namespaces/{ns}/jobs", job("stuck", KUBESCHED, cpu="1", owner=full_pool.owner))
        pending = wait_for("the stuck Job's pod", lambda: job_pods(kube, ns, "stuck"), timeout=20)[0]
        name = pending["metadata"]["name"]
        path = f"/api/v1/namespaces/{ns}/pods/{name}"
        message = ("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were outside the pod's cronjob pool. "
                   "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
                   "2 Preemption is not helpful for scheduling.")

        # The first attempt may still wait for the Job informer; the condition settles on the message.
        cond = wait_for(f"PodScheduled of {name} to carry the full-pool message", lambda: (
            c if (c := scheduled_condition(kube.get(path))) and c.get("message") == message else None), timeout=20)
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        notes = wait_for(f"a FailedScheduling event for {name}",
                         lambda: [n for n in failed_scheduling_notes(kube, ns, name) if n[1] == message], timeout=10)
        assert notes[0] == (KUBESCHED, message)
        assert node_of(kube.get(path)) is None

        node = NodeSpec("pool-2", {POOL_KEY: "cronjob"}, (Taint(POOL_KEY, "cronjob", "NoSchedule"),), dict(CAPACITY))
        kube.create("/api/v1/nodes", node.manifest())
        ready_at: float | None = None
        bound: str | None = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and bound is None:
            if ready_at is None and node_ready_and_untainted(kube.get("/api/v1/nodes/pool-2")):
                ready_at = time.monotonic()
            bound = node_of(kube.get(path))
            time.sleep(0.1)
        bound_at = time.monotonic()
        assert bound == "pool-2", f"{name} after pool-2 joined: bound to {bound!r}"
        # Bound before the poll saw pool-2 ready counts as no delay at all.
        delay = bound_at - (ready_at if ready_at is not None else bound_at)
        print(f"\n{name}: bound {delay:.2f} s after pool-2 was Ready and untainted", file=sys.stderr)
        assert delay < 5.0, f"{name} was bound {delay:.1f} s after pool-2 was Ready and untainted"


# --- CronJobs that really fire (created in the fleet fixture) -----------------------------------

def cron_placements(kube: Kube, ns: str, cronjobs: set[str]) -> dict[str, str | None] | None:
    """The placements of every pod of the CronJobs' Jobs, once each CronJob has fired and each of its
    Jobs has a pod, all bound."""
    jobs = kube.get(f"/apis/batch/v1/namespaces/{ns}/jobs")["items"]
    made_by = {j["metadata"]["name"]: ref["name"] for j in jobs
               if (ref := controller(j)) is not None and ref["kind"] == "CronJob"}
    pods = [p for p in kube.pods(ns) if (ref := controller(p)) is not None and ref["name"] in made_by]
    with_pods = {ref["name"] for p in pods if (ref := controller(p)) is not None}
    found = placements(pods)
    if not cronjobs <= set(made_by.values()) or set(made_by) - with_pods or None in found.values():
        return None
    return found


def test_cronjob_pods_go_to_the_pool_node_with_no_selector_or_toleration(fleet: Fleet) -> None:
    pool = fleet.pool
    placed = wait_for("the tick CronJob to fire and its pod to be bound",
                      lambda: cron_placements(pool, "cron", {"tick"}), timeout=CRON_TIMEOUT, interval=1)
    assert set(placed.values()) == {"pool-1"}, f"CronJob pods off the pool: {placed}"
    for p in pool.pods("cron"):
        assert not p["spec"].get("nodeSelector"), p["spec"]
        assert not [t for t in p["spec"].get("tolerations", []) if t.get("key") == POOL_KEY], \
            f"kubesched must not write the pool toleration into the pod: {p['spec']['tolerations']}"


def test_seed_cronjob_pods_all_land_on_kind_worker3(fleet: Fleet) -> None:
    seed = fleet.seed
    placed = wait_for("the seed's CronJobs to fire and their pods to be bound",
                      lambda: cron_placements(seed, "seed", {"cronjob-1", "cronjob-2", "cronjob-3", "no-selector"}),
                      timeout=CRON_TIMEOUT, interval=1)
    assert set(placed.values()) == {"kind-worker3"}, f"seed CronJob pods off kind-worker3: {placed}"
    everywhere = seed.get("/api/v1/pods")["items"]
    on_control = [p["metadata"]["name"] for p in everywhere if node_of(p) == "kind-control-plane"]
    assert on_control == [], f"pods on kind-control-plane: {on_control}"
    nginx_on_pool = [p["metadata"]["name"] for p in seed.pods("seed", "app=nginx") if node_of(p) == "kind-worker3"]
    assert nginx_on_pool == [], f"nginx pods on kind-worker3: {nginx_on_pool}"
