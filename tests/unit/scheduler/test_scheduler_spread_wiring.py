"""The scheduler wires PodTopologySpread's default constraints to its Service / ReplicationController /
ReplicaSet / StatefulSet informers: synced before scheduling, read per pod, never requeueing."""

from __future__ import annotations

from typing import Any

from kubesched.api.client import ApiClient
from kubesched.api.informer import REPLICA_SETS, REPLICATION_CONTROLLERS, SERVICES, STATEFUL_SETS
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load
from kubesched.framework import ScheduleResult
from kubesched.model.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    ObjectMeta,
    ReplicaSet,
    SelectorSpec,
    Service,
    ServiceSpec,
)
from kubesched.plugins.pod_topology_spread import PodTopologySpread
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import NodeBuilder, make_node, make_pod
from tests.unit.scheduling_helpers import schedule

ZONE = "topology.kubernetes.io/zone"


def _scheduler() -> Scheduler:
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    return Scheduler(client, load(None))


def _spread_plugin(sched: Scheduler) -> PodTopologySpread:
    found: list[Any] = [p for p in sched.profiles["kubesched"].pre_filter if p.name == "PodTopologySpread"]
    assert len(found) == 1
    plugin = found[0]
    assert isinstance(plugin, PodTopologySpread)
    return plugin


def test_owner_informers_are_synced_before_scheduling() -> None:
    sched = _scheduler()
    resources = [i.resource for i in sched._informers]
    for resource in (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS):
        assert resource in resources
    # All namespaces, no selectors: helper.DefaultSelector looks at every Service of the pod's namespace.
    assert sched.sources.services.resource.path == "/api/v1/services"
    assert sched.sources.replica_sets.resource.path == "/apis/apps/v1/replicasets"


def test_the_default_profile_reads_selectors_from_the_informers() -> None:
    sched = _scheduler()
    assert _spread_plugin(sched).selectors is sched.sources.owner_selectors
    rs_selector = LabelSelector(match_labels={"app": "web", "pod-template-hash": "abc"})
    sched.sources.replica_sets.store["default/web-abc"] = ReplicaSet(
        metadata=ObjectMeta(name="web-abc", namespace="default"), spec=SelectorSpec(selector=rs_selector))
    sched.sources.services.store["default/web"] = Service(metadata=ObjectMeta(name="web", namespace="default"),
                                                  spec=ServiceSpec(selector={"app": "web"}))
    owned = make_pod("web-1").label("app", "web").label("pod-template-hash", "abc").owner("ReplicaSet", "web-abc")
    assert sched.sources.owner_selectors.selectors_for(owned.obj()) == [LabelSelector(
        match_labels={"app": "web"},
        match_expressions=[LabelSelectorRequirement(key="app", operator="In", values=["web"]),
                           LabelSelectorRequirement(key="pod-template-hash", operator="In", values=["abc"])])]
    # Nothing owns it: no selector at all, so no default constraint applies.
    assert sched.sources.owner_selectors.selectors_for(make_pod("lonely").label("x", "y").obj()) == []
    # An owner the informer has not seen, and no Service: the same.
    stray = make_pod("stray").label("app", "db").owner("ReplicaSet", "db-123")
    assert sched.sources.owner_selectors.selectors_for(stray.obj()) == []


def test_system_default_constraints_spread_a_replica_set() -> None:
    sched = _scheduler()
    sched.sources.replica_sets.store["default/web-abc"] = ReplicaSet(
        metadata=ObjectMeta(name="web-abc", namespace="default"),
        spec=SelectorSpec(selector=LabelSelector(match_labels={"app": "web"})))
    nodes: list[Node | NodeBuilder] = [make_node(f"{z}{i}").label(ZONE, z).capacity(cpu="8", memory="16Gi", pods="110")
             for z in "ab" for i in range(2)]

    def replica(name: str) -> Any:
        return make_pod(name).label("app", "web").owner("ReplicaSet", "web-abc")

    # Four replicas on a0/a1 and four other pods on b0/b1, so resources score every node alike: the
    # soft zone and hostname defaults pull the next replica to b, whatever the tie-break.
    existing = [replica(f"w{i}").node(f"a{i % 2}") for i in range(4)]
    existing += [make_pod(f"o{i}").label("app", "other").node(f"b{i % 2}") for i in range(4)]
    profile = sched.profiles["kubesched"]
    hosts = set()
    for seed in range(8):
        result = schedule(nodes, replica("next"), existing, profile=profile, seed=seed)
        assert isinstance(result, ScheduleResult)
        hosts.add(result.suggested_host)
    assert hosts <= {"b0", "b1"}
    # The same pod without an owner has no default constraints: every node ties.
    plain = make_pod("plain").label("app", "web")
    plain_hosts = set()
    for seed in range(16):
        result = schedule(nodes, plain, existing, profile=profile, seed=seed)
        assert isinstance(result, ScheduleResult)
        plain_hosts.add(result.suggested_host)
    assert plain_hosts & {"a0", "a1"}


def test_owner_changes_requeue_nothing() -> None:
    # kube-scheduler's PodTopologySpread registers no Service / ReplicaSet events: the informers only
    # fill their stores.
    sched = _scheduler()
    src = sched.sources
    for informer in (src.services, src.replication_controllers, src.replica_sets, src.stateful_sets):
        handler: Any = informer.handler
        assert (handler.add, handler.update, handler.delete) == (None, None, None)
