"""CronJobPool: owner-chain resolution, the pod annotation, filter verdicts and reason texts, fallback."""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import random
from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.config import PluginRef, ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import (
    CycleState,
    FitError,
    NodeCursor,
    PluginSpec,
    PodInfo,
    Profile,
    Registry,
    ScheduleResult,
    build_profile,
    schedule_pod,
)
from kubesched.framework.events import JOB_ADD, ClusterEventWithHint, QueueingHint
from kubesched.framework.field_errors import ConfigError
from kubesched.model.objects import Job, ObjectMeta, OwnerReference, Pod
from kubesched.plugins.cronjob_pool.ownership import InformerJobs, StaticJobs, Waiting, owner_chain
from kubesched.plugins.cronjob_pool.plugin import (
    CronJobPool,
    UnknownPool,
    after_job_added,
    new,
    new_cronjob_pool,
    tolerate_in_cycle,
)
from kubesched.plugins.registry import in_tree_registry
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

NOW = 1_800_000_000.0
OLD = "2020-01-01T00:00:00Z"  # long before NOW: a missing Job is gone
YOUNG = dt.datetime.fromtimestamp(NOW - 5, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # within ownerWaitSeconds
SEED_ARGS: dict[str, Any] = {
    "excludedNodes": {"matchLabels": {"tier": "control"}},
    "pools": [{"name": "cronjob", "pods": {"ownerKinds": ["Job", "CronJob"], "nodeSelector": {"tier": "cronjob"}},
               "nodes": {"matchLabels": {"tier": "cronjob"}}, "taint": None}],
}


def clock() -> float:
    return NOW


# --- objects ---------------------------------------------------------------------------------------

def ref(kind: str, name: str, uid: str = "", controller: bool = True) -> OwnerReference:
    return OwnerReference(kind=kind, name=name, uid=uid or f"uid-{name}", api_version="batch/v1",
                          controller=controller)


def job(name: str, parent: str | None = "CronJob", *, uid: str = "", manual: bool = False,
        namespace: str = "default") -> Job:
    annotations = {"cronjob.kubernetes.io/instantiate": "manual"} if manual else {}
    owners = [ref(parent, "cj")] if parent else []
    return Job(metadata=ObjectMeta(name=name, namespace=namespace, uid=uid or f"uid-{name}",
                                   annotations=annotations, owner_references=owners))


def pod(name: str = "p", *, owner: OwnerReference | None = None, created: str | None = OLD,
        labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
        builder: PodBuilder | None = None) -> Pod:
    p = (builder or make_pod(name)).obj()
    p.metadata.creation_timestamp = created
    p.metadata.owner_references = [owner] if owner else []
    p.metadata.labels = labels or {}
    p.metadata.annotations = annotations or {}
    return p


def cronjob_pod(name: str = "cj-pod", builder: PodBuilder | None = None, **kw: Any) -> Pod:
    return pod(name, owner=ref("Job", "j"), builder=builder, **kw)


CRON_JOBS = StaticJobs([job("j")])


def plugin(args: dict[str, Any] | None = None, jobs: Any = CRON_JOBS) -> CronJobPool:
    return new_cronjob_pool(args or {}, jobs, clock=clock)


class UnsyncedJobs(StaticJobs):
    @property
    def has_synced(self) -> bool:
        return False


# --- owner chain (every case of the ownership decisions) -------------------------------------------

OWNER_CASES = [
    pytest.param(ref("Job", "j"), [job("j")], OLD, ("Job", "CronJob"), id="cronjob-job"),
    pytest.param(ref("Job", "j"), [job("j", manual=True)], OLD, ("Job", "CronJob"),
                 id="create-job-from-cronjob-kubectl-1.37-with-owner-ref"),
    pytest.param(ref("Job", "j"), [job("j", None, manual=True)], OLD, ("Job", "CronJob"),
                 id="create-job-from-cronjob-annotation-only"),
    pytest.param(ref("Job", "j"), [job("j", None)], OLD, ("Job",), id="plain-job"),
    pytest.param(ref("Job", "j"), [job("j", "Workflow")], OLD, ("Job", "Workflow"), id="job-of-another-kind"),
    pytest.param(ref("Job", "j"), [], OLD, ("Job",), id="job-gone-after-the-wait"),
    pytest.param(ref("Job", "j"), [], None, ("Job",), id="job-gone-pod-without-creation-time"),
    pytest.param(ref("Job", "j"), [], YOUNG, Waiting("default", "j"), id="job-not-seen-yet"),
    pytest.param(ref("Job", "j"), [job("j", uid="other")], YOUNG, ("Job",), id="namesake-job-replaced-it"),
    pytest.param(ref("ReplicaSet", "rs"), [], YOUNG, ("ReplicaSet",), id="replicaset-pod"),
    pytest.param(ref("Job", "j", controller=False), [job("j")], OLD, (), id="not-a-controller-ref"),
    pytest.param(None, [job("j")], OLD, (), id="no-owner"),
]


@pytest.mark.parametrize(("owner", "jobs", "created", "want"), OWNER_CASES)
def test_owner_chain(owner: OwnerReference | None, jobs: list[Job], created: str | None, want: Any) -> None:
    p = pod(owner=owner, created=created)
    assert owner_chain(p, StaticJobs(jobs), depth=2, wait_seconds=30, clock=clock) == want


def test_owner_chain_waits_until_the_job_informer_synced() -> None:
    p = pod(owner=ref("Job", "j"), created=OLD)
    assert owner_chain(p, UnsyncedJobs(), depth=2, wait_seconds=30, clock=clock) == Waiting("default", "j")


def test_owner_chain_depth_one_needs_no_lookup() -> None:
    p = pod(owner=ref("Job", "j"), created=YOUNG)
    assert owner_chain(p, UnsyncedJobs(), depth=1, wait_seconds=30, clock=clock) == ("Job",)


def test_informer_jobs_reads_the_store_by_key() -> None:
    class Store:
        has_synced = True

        def __init__(self) -> None:
            self.store = {"ns/j": job("j", namespace="ns")}

        def get(self, key: str) -> Job | None:
            return self.store.get(key)

    store = Store()
    lookup = InformerJobs(store)
    assert lookup.get("ns", "j") is store.store["ns/j"]
    assert lookup.get("default", "j") is None
    assert lookup.has_synced


CLASSIFY_CASES = [
    pytest.param(cronjob_pod(), 0, id="cronjob-pod"),
    pytest.param(pod(owner=ref("Job", "plain")), -1, id="plain-job-pod"),
    pytest.param(pod(owner=ref("ReplicaSet", "rs")), -1, id="deployment-pod"),
    pytest.param(pod(), -1, id="bare-pod"),
    pytest.param(pod(owner=ref("Job", "late"), created=YOUNG), Waiting("default", "late"), id="job-not-seen-yet"),
    pytest.param(pod(owner=ref("Job", "gone")), -1, id="job-gone"),
    pytest.param(pod(annotations={"kubesched.io/pool": "cronjob"}), 0, id="annotation-opts-in"),
    pytest.param(cronjob_pod(annotations={"kubesched.io/pool": "none"}), -1, id="annotation-opts-out"),
    pytest.param(pod(owner=ref("Job", "late"), created=YOUNG, annotations={"kubesched.io/pool": "none"}), -1,
                 id="annotation-decides-before-waiting"),
    pytest.param(pod(annotations={"kubesched.io/pool": "batch"}), UnknownPool("batch"), id="annotation-unknown-pool"),
]


@pytest.mark.parametrize(("p", "want"), CLASSIFY_CASES)
def test_classify_default_pool(p: Pod, want: Any) -> None:
    jobs = StaticJobs([job("j"), job("plain", None)])
    assert plugin(jobs=jobs).classify(p) == want


SEED_CLASSIFY_CASES = [
    pytest.param(pod(builder=make_pod("p").node_selector(tier="cronjob")), 0, id="seed-nodeselector-pod"),
    pytest.param(pod(builder=make_pod("p").node_selector(tier="cronjob", disk="ssd")), 0,
                 id="nodeselector-superset"),
    pytest.param(pod(builder=make_pod("p").node_selector(tier="normal")), -1, id="other-nodeselector"),
    pytest.param(cronjob_pod(), 0, id="cronjob-pod-without-nodeselector"),
]


@pytest.mark.parametrize(("p", "want"), SEED_CLASSIFY_CASES)
def test_classify_seed_pool(p: Pod, want: int) -> None:
    assert plugin(SEED_ARGS).classify(p) == want


def test_classify_several_pools_first_match_wins() -> None:
    args = {"pools": [
        {"name": "cronjob"},
        {"name": "gpu", "pods": {"selector": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}},
        {"name": "jobs", "pods": {"ownerKinds": ["Job"]}},
    ]}
    pl = plugin(args, StaticJobs([job("j"), job("plain", None)]))
    assert pl.classify(cronjob_pod(labels={"gpu": "1"})) == 0
    assert pl.classify(pod(labels={"gpu": "1"})) == 1
    assert pl.classify(pod(owner=ref("Job", "plain"))) == 2
    # A Job not seen yet: it may be a CronJob's, so the cronjob pool cannot be ruled out.
    assert pl.classify(pod(owner=ref("Job", "late"), created=YOUNG)) == Waiting("default", "late")
    assert pl.classify(pod(owner=ref("Job", "late"), created=YOUNG, labels={"gpu": "1"})) == Waiting("default", "late")


def test_one_kind_pool_decides_a_waiting_job_pod() -> None:
    pl = plugin({"pools": [{"name": "jobs", "pods": {"ownerKinds": ["Job"]}}]}, UnsyncedJobs())
    assert pl.classify(pod(owner=ref("Job", "late"), created=YOUNG)) == 0


def test_job_add_hint_queues_only_the_pods_of_that_job() -> None:
    other_ns = pod(owner=ref("Job", "late"))
    other_ns.metadata.namespace = "ns2"
    late = job("late")
    assert after_job_added(pod(owner=ref("Job", "late")), late) is QueueingHint.QUEUE
    assert after_job_added(pod(owner=ref("Job", "other")), late) is QueueingHint.QUEUE_SKIP
    assert after_job_added(pod(owner=ref("ReplicaSet", "late")), late) is QueueingHint.QUEUE_SKIP
    assert after_job_added(other_ns, late) is QueueingHint.QUEUE_SKIP
    assert after_job_added(pod(owner=ref("Job", "late")), None) is QueueingHint.QUEUE_SKIP


def test_job_add_is_registered_with_its_hint() -> None:
    pl = plugin({"pools": [{"name": "jobs", "pods": {"ownerKinds": ["Job"]}}]}, UnsyncedJobs())
    [registration] = [r for r in pl.events_to_register() if isinstance(r, ClusterEventWithHint)]
    assert registration.event == JOB_ADD
    assert registration.hint is not None
    assert registration.hint(pod(owner=ref("Job", "late")), None, job("late")) is QueueingHint.QUEUE


# --- filter verdicts -------------------------------------------------------------------------------

POOL_NODE = "pool"
GENERAL = "general"
EXCLUDED = "control"


def nodes_default() -> list[NodeBuilder]:
    return [make_node(POOL_NODE).label("kubesched.io/pool", "cronjob").taint("kubesched.io/pool", "cronjob"),
            make_node(GENERAL), make_node(EXCLUDED).label("tier", "control")]


DEFAULT_WITH_EXCLUDED = {"excludedNodes": {"matchLabels": {"tier": "control"}}}
RESERVED = "node(s) were reserved for the cronjob pool"
OUTSIDE = "node(s) were outside the pod's cronjob pool"
EXCLUDED_REASON = "node(s) were excluded from scheduling"

FILTER_CASES = [
    # (args, pod, {node: reason or None})
    pytest.param(DEFAULT_WITH_EXCLUDED, cronjob_pod(), {POOL_NODE: None, GENERAL: OUTSIDE, EXCLUDED: EXCLUDED_REASON},
                 id="pool-pod-fallback-never"),
    pytest.param(DEFAULT_WITH_EXCLUDED, pod(), {POOL_NODE: RESERVED, GENERAL: None, EXCLUDED: EXCLUDED_REASON},
                 id="non-pool-pod-exclusive"),
    pytest.param({**DEFAULT_WITH_EXCLUDED, "pools": [{"name": "cronjob", "exclusive": False}]}, pod(),
                 {POOL_NODE: None, GENERAL: None, EXCLUDED: EXCLUDED_REASON}, id="non-pool-pod-not-exclusive"),
    pytest.param({"pools": [{"name": "cronjob", "fallback": "general"}]}, cronjob_pod(),
                 {POOL_NODE: None, GENERAL: OUTSIDE, EXCLUDED: OUTSIDE}, id="pool-pod-fallback-general-pool-has-room"),
    pytest.param({}, pod(annotations={"kubesched.io/pool": "cronjob"}),
                 {POOL_NODE: None, GENERAL: OUTSIDE, EXCLUDED: OUTSIDE}, id="annotation-opt-in"),
    pytest.param({}, cronjob_pod(annotations={"kubesched.io/pool": "none"}),
                 {POOL_NODE: RESERVED, GENERAL: None, EXCLUDED: None}, id="annotation-opt-out"),
    pytest.param({}, pod(owner=ref("Job", "plain")), {POOL_NODE: RESERVED, GENERAL: None, EXCLUDED: None},
                 id="plain-job-pod"),
]


def _state_after_pre_filter(pl: CronJobPool, info: PodInfo, nodes: list[NodeBuilder]) -> CycleState:
    state = CycleState()
    _, status = pl.pre_filter(state, info, snapshot_with(list(nodes)))
    if status is not None and status.is_skip():
        state.skip_filter_plugins.add(pl.name)
    return state


@pytest.mark.parametrize(("args", "p", "want"), FILTER_CASES)
def test_filter_scalar_and_batch_agree(args: dict[str, Any], p: Pod, want: dict[str, str | None]) -> None:
    jobs = StaticJobs([job("j"), job("plain", None)])
    pl = plugin(args, jobs)
    nodes = nodes_default()
    snapshot = snapshot_with(list(nodes))
    info = PodInfo(p)
    state = _state_after_pre_filter(pl, info, nodes)
    if pl.name in state.skip_filter_plugins:
        assert all(v is None for v in want.values())
        return
    scalar = {}
    for ni in snapshot.node_infos:
        s = pl.filter(state, info, ni)
        scalar[ni.name] = None if s is None else s.message()
    assert scalar == want
    mask = pl.filter_batch(state, info, snapshot, snapshot.all_rows)
    passing = [True] * snapshot.n if mask is None else mask.tolist()
    assert dict(zip(snapshot.names, passing, strict=True)) == {n: r is None for n, r in want.items()}
    rejected = snapshot.all_rows[[not ok for ok in passing]]
    statuses = pl.filter_statuses(state, info, snapshot, rejected)
    assert {snapshot.names[r]: s.message() for r, s in zip(rejected.tolist(), statuses, strict=True)} == {
        n: r for n, r in want.items() if r is not None}


def test_batch_mask_kept_per_kind_of_pod_follows_node_label_changes() -> None:
    """The batch Filter keeps its mask over every row until a node's labels change: a node joining
    the pool is then reserved for it, and a pool pod goes there, in the next cycle."""
    from kubesched.backend.cache import Cache
    pl = plugin(DEFAULT_WITH_EXCLUDED)
    cache = Cache()
    for b in nodes_default():
        cache.add_node(b.obj())
    cache.add_node(make_node("joining").obj())
    plain, pool_pod = PodInfo(pod()), PodInfo(cronjob_pod())

    def passing(info: PodInfo) -> dict[str, bool]:
        snapshot = cache.snapshot()
        state = CycleState()
        pl.pre_filter(state, info, snapshot)
        mask = pl.filter_batch(state, info, snapshot, snapshot.all_rows)
        return dict(zip(snapshot.names, [True] * snapshot.n if mask is None else mask.tolist(), strict=True))

    for _ in range(2):  # the second read is the kept mask
        assert passing(plain) == {POOL_NODE: False, GENERAL: True, EXCLUDED: False, "joining": True}
        assert passing(pool_pod) == {POOL_NODE: True, GENERAL: False, EXCLUDED: False, "joining": False}
    cache.update_node(make_node("joining").label("kubesched.io/pool", "cronjob").obj())
    assert passing(plain) == {POOL_NODE: False, GENERAL: True, EXCLUDED: False, "joining": False}
    assert passing(pool_pod) == {POOL_NODE: True, GENERAL: False, EXCLUDED: False, "joining": True}


def test_every_rejection_is_unresolvable() -> None:
    pl = plugin(DEFAULT_WITH_EXCLUDED)
    nodes = nodes_default()
    snapshot = snapshot_with(list(nodes))
    for p in (cronjob_pod(), pod()):
        info = PodInfo(p)
        state = _state_after_pre_filter(pl, info, nodes)
        for ni in snapshot.node_infos:
            s = pl.filter(state, info, ni)
            assert s is None or s.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE"


def test_overlapping_pools_name_the_first_and_let_each_pool_in() -> None:
    args = {"pools": [{"name": "a", "nodes": {"matchLabels": {"a": "1"}}},
                      {"name": "b", "nodes": {"matchLabels": {"b": "1"}},
                       "pods": {"selector": {"matchLabels": {"b": "1"}}}}]}
    pl = plugin(args)
    nodes = [make_node("ab").label("a", "1").label("b", "1"), make_node("b-only").label("b", "1"), make_node("g")]
    snapshot = snapshot_with(list(nodes))
    cases: list[tuple[Pod, dict[str, str | None]]] = [
        (pod(), {"ab": "node(s) were reserved for the a pool", "b-only": "node(s) were reserved for the b pool",
                 "g": None}),
        (pod(labels={"b": "1"}), {"ab": None, "b-only": None, "g": "node(s) were outside the pod's b pool"}),
    ]
    for p, want in cases:
        info = PodInfo(p)
        state = _state_after_pre_filter(pl, info, nodes)
        got = {ni.name: (s.message() if (s := pl.filter(state, info, ni)) else None) for ni in snapshot.node_infos}
        assert got == want
        statuses = pl.filter_statuses(state, info, snapshot, snapshot.all_rows)
        batch = {n: (s.message() if s.reasons else None) for n, s in zip(snapshot.names, statuses, strict=True)}
        assert batch == want


def test_non_pool_pod_skips_when_nothing_is_reserved() -> None:
    pl = plugin({"pools": [{"name": "cronjob", "exclusive": False}]})
    _, status = pl.pre_filter(CycleState(), PodInfo(pod()), snapshot_with([make_node("n")]))
    assert status is not None
    assert status.is_skip()


def test_pre_filter_waiting_and_unknown_pool() -> None:
    pl = plugin()
    snapshot = snapshot_with([make_node("n")])
    _, status = pl.pre_filter(CycleState(), PodInfo(pod(owner=ref("Job", "late"), created=YOUNG)), snapshot)
    assert status is not None
    assert status.code.name == "UNSCHEDULABLE"
    assert status.message() == "waiting for the pod's owner Job default/late"
    _, status = pl.pre_filter(CycleState(), PodInfo(pod(annotations={"kubesched.io/pool": "gpu"})), snapshot)
    assert status is not None
    assert status.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE"
    assert status.message() == 'pod annotation kubesched.io/pool names no configured pool: "gpu"'


def test_tolerate_in_cycle_copies_the_pod() -> None:
    original = cronjob_pod()
    info = PodInfo(original)
    taint = plugin().pools[0].taint
    assert taint is not None
    tolerate_in_cycle(info, taint)
    assert original.spec.tolerations == []
    assert [(t.key, t.value, t.effect) for t in info.tolerations] == [("kubesched.io/pool", "cronjob", "NoSchedule")]
    again = info.pod
    tolerate_in_cycle(info, taint)  # idempotent: already tolerated
    assert info.pod is again


def test_registry_factory_without_jobs_and_bad_args() -> None:
    assert isinstance(new({}), CronJobPool)
    with pytest.raises(ConfigError, match=r"CronJobPool args: args\.pools\[0\]\.fallback: Unsupported value"):
        new({"pools": [{"name": "x", "fallback": "sometimes"}]})
    with pytest.raises(ConfigError, match=r"CronJobPool args: args\.pools\[0\]\.name: Required value"):
        new({"pools": [{"name": None}]})


# --- whole scheduling cycles -----------------------------------------------------------------------

def profile(args: dict[str, Any], jobs: Any = CRON_JOBS) -> Profile:
    points = {k: list(v) for k, v in kube_scheduler_default_plugins().items()}
    points["preFilter"].insert(0, PluginRef("CronJobPool"))
    points["filter"].insert(2, PluginRef("CronJobPool"))  # after NodeName, NodeUnschedulable
    pool = PluginSpec("CronJobPool", functools.partial(new_cronjob_pool, jobs=jobs, clock=clock))
    registry = Registry([*(s for s in in_tree_registry().values() if s.name != "CronJobPool"), pool])
    config = ProfileConfig("kubesched", {k: tuple(v) for k, v in points.items()}, plugin_args={"CronJobPool": args})
    return build_profile(config, registry)


def run(args: dict[str, Any], nodes: list[NodeBuilder], p: Pod, pods: Sequence[Pod] = (),
        jobs: Any = CRON_JOBS) -> ScheduleResult | FitError:
    return schedule_pod(profile(args, jobs), snapshot_with(list(nodes), list(pods)), PodInfo(p),
                        rng=random.Random(0), cursor=NodeCursor())


def host(r: ScheduleResult | FitError) -> str:
    assert isinstance(r, ScheduleResult), r
    return r.suggested_host


def message(r: ScheduleResult | FitError) -> str:
    assert isinstance(r, FitError), r
    return r.message()


def seed_nodes() -> list[NodeBuilder]:
    """The seed's kind cluster: a tainted control plane (tier=control), two tier=normal workers and
    kind-worker3 (tier=cronjob), 1 CPU each here so that tests can fill them."""
    return [make_node("kind-control-plane").capacity(cpu="1").label("tier", "control")
            .taint("node-role.kubernetes.io/control-plane"),
            make_node("kind-worker").capacity(cpu="1").label("tier", "normal"),
            make_node("kind-worker2").capacity(cpu="1").label("tier", "normal"),
            make_node("kind-worker3").capacity(cpu="1").label("tier", "cronjob")]


def default_nodes(pool_cpu: str = "1") -> list[NodeBuilder]:
    return [make_node("general-1").capacity(cpu="1"), make_node("general-2").capacity(cpu="1"),
            make_node("pool-1").capacity(cpu=pool_cpu).label("kubesched.io/pool", "cronjob")
            .taint("kubesched.io/pool", "cronjob")]


def test_seed_cronjob_pods_land_on_worker3_and_nginx_never() -> None:
    for i in range(5):
        r = run(SEED_ARGS, seed_nodes(), cronjob_pod(f"c{i}", builder=make_pod(f"c{i}").req(cpu="10m")))
        assert host(r) == "kind-worker3"
        r = run(SEED_ARGS, seed_nodes(), pod(f"s{i}", builder=make_pod(f"s{i}").node_selector(tier="cronjob")))
        assert host(r) == "kind-worker3"
    placed = set()
    for i in range(10):
        r = run(SEED_ARGS, seed_nodes(), pod(f"nginx-{i}", owner=ref("ReplicaSet", "nginx-abc")), )
        placed.add(host(r))
    assert placed <= {"kind-worker", "kind-worker2"}


def test_seed_message_for_a_pod_that_fits_nowhere() -> None:
    r = run(SEED_ARGS, seed_nodes(), pod("big", builder=make_pod("big").req(cpu="2")))
    assert message(r) == ("0/4 nodes are available: 1 node(s) were excluded from scheduling, "
                           "1 node(s) were reserved for the cronjob pool, 2 Insufficient cpu.")


def test_default_pool_tolerates_its_taint_for_cronjob_pods_only() -> None:
    r = run({}, default_nodes(), cronjob_pod(builder=make_pod("c").req(cpu="100m")))
    assert host(r) == "pool-1"
    r = run({}, default_nodes(), pod(owner=ref("Job", "plain")), jobs=StaticJobs([job("plain", None)]))
    assert host(r).startswith("general-")


def test_pool_full_fallback_never_stays_pending_with_the_message() -> None:
    busy = pod("busy", builder=make_pod("busy").req(cpu="1").node("pool-1"))
    r = run({}, default_nodes(), cronjob_pod(builder=make_pod("c").req(cpu="500m")), [busy])
    assert message(r) == "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were outside the pod's cronjob pool."
    # a second pool node is added: it goes there
    more = [*default_nodes(), make_node("pool-2").capacity(cpu="1").label("kubesched.io/pool", "cronjob")
            .taint("kubesched.io/pool", "cronjob")]
    r = run({}, more, cronjob_pod(builder=make_pod("c").req(cpu="500m")), [busy])
    assert host(r) == "pool-2"


def test_no_pool_nodes_fallback_never() -> None:
    r = run({}, default_nodes()[:2], cronjob_pod())
    assert message(r) == "0/2 nodes are available: 2 node(s) were outside the pod's cronjob pool."


GENERAL_ARGS = {"pools": [{"name": "cronjob", "fallback": "general"}]}


@pytest.mark.parametrize(("nodes", "busy", "cpu", "want"), [
    pytest.param(default_nodes, "", "500m", {"pool-1"}, id="pool-has-room"),
    pytest.param(default_nodes, "1", "500m", {"general-1", "general-2"}, id="pool-full-cpu"),
    pytest.param(lambda: default_nodes()[:2], "", "500m", {"general-1", "general-2"}, id="no-pool-nodes"),
    pytest.param(lambda: [*default_nodes()[:2], default_nodes()[2].unschedulable()], "", "500m",
                 {"general-1", "general-2"}, id="pool-node-cordoned"),
])
def test_fallback_general(nodes: Any, busy: str, cpu: str, want: set[str]) -> None:
    pods = [pod("busy", builder=make_pod("busy").req(cpu=busy).node("pool-1"))] if busy else []
    r = run(GENERAL_ARGS, nodes(), cronjob_pod(builder=make_pod("c").req(cpu=cpu)), pods)
    assert host(r) in want


@pytest.mark.parametrize(("group", "labels", "falls_back"), [
    pytest.param(None, None, True, id="no-gang-falls-back"),
    pytest.param("pg", None, False, id="workload-api-gang-keeps-to-its-pool"),
    pytest.param(None, {"scheduling.x-k8s.io/pod-group": "pg"}, False, id="coscheduling-gang-keeps-to-its-pool"),
])
def test_fallback_general_a_gang_member_never_falls_back(group: str | None, labels: dict[str, str] | None,
                                                         falls_back: bool) -> None:
    """A per-pod fallback would split a gang between the pool and general nodes."""
    busy = pod("busy", builder=make_pod("busy").req(cpu="1").node("pool-1"))
    builder = make_pod("c").req(cpu="500m")
    member = cronjob_pod(builder=builder.pod_group(group) if group else builder, labels=labels)
    r = run(GENERAL_ARGS, default_nodes(), member, [busy])
    if falls_back:
        assert host(r).startswith("general-")
    else:
        assert message(r) == ("0/3 nodes are available: 1 Insufficient cpu, "
                              "2 node(s) were outside the pod's cronjob pool.")


def test_fallback_general_pool_pod_count_full() -> None:
    nodes = [make_node("general-1"), make_node("pool-1").capacity(pods="1").label("kubesched.io/pool", "cronjob")]
    busy = pod("busy", builder=make_pod("busy").node("pool-1"))
    r = run(GENERAL_ARGS, nodes, cronjob_pod(), [busy])
    assert host(r) == "general-1"


def test_fallback_general_never_enters_another_exclusive_pool() -> None:
    args = {"pools": [{"name": "cronjob", "fallback": "general"},
                      {"name": "gpu", "pods": {"selector": {"matchLabels": {"gpu": "1"}}}}]}
    nodes = [make_node("gpu-1").label("kubesched.io/pool", "gpu")]
    r = run(args, nodes, cronjob_pod())
    assert message(r) == "0/1 nodes are available: 1 node(s) were reserved for the gpu pool."


def test_waiting_pod_message() -> None:
    r = run({}, default_nodes(), pod(owner=ref("Job", "late"), created=YOUNG))
    assert message(r) == "0/3 nodes are available: waiting for the pod's owner Job default/late."
    jobs = StaticJobs([job("late")])  # the Job's Add event: the next attempt places it in the pool
    r = run({}, default_nodes(), pod(owner=ref("Job", "late"), created=YOUNG), jobs=jobs)
    assert host(r) == "pool-1"


@pytest.mark.parametrize(("annotation", "want"), [
    ("cronjob", {"pool-1"}), ("none", {"general-1", "general-2"}),
])
def test_annotation_in_a_cycle(annotation: str, want: set[str]) -> None:
    owner = ref("ReplicaSet", "rs") if annotation == "cronjob" else ref("Job", "j")
    r = run({}, default_nodes(), pod(owner=owner, annotations={"kubesched.io/pool": annotation}))
    assert host(r) in want


def test_many_pods_never_cross_the_pool_boundary() -> None:
    nodes = default_nodes(pool_cpu="4")
    for i, (kind, ann) in enumerate(itertools.product(("cron", "rs", "plain"), ("", "cronjob", "none"))):
        owner = {"cron": ref("Job", "j"), "rs": ref("ReplicaSet", "rs"), "plain": ref("Job", "plain")}[kind]
        p = pod(f"p{i}", owner=owner, annotations={"kubesched.io/pool": ann} if ann else None)
        r = run({}, nodes, p, jobs=StaticJobs([job("j"), job("plain", None)]))
        in_pool = (ann == "cronjob") or (kind == "cron" and ann != "none")
        assert (host(r) == "pool-1") == in_pool, (kind, ann)
