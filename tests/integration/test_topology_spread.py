"""PodTopologySpread side by side with the reference kube-scheduler, on a plane of three zones with
two nodes each: the pod's own constraints (hard and soft, minDomains, nodeAffinityPolicy), the
messages when they cannot be met, and the system default constraints spreading a Deployment.

Each scenario runs in a namespace of its own (spreading counts only the pod's namespace), with its
existing pods bound through spec.nodeName by no scheduler. Where the scenario forces the node or the
zone, kube-scheduler must choose it (the scenario is checked) and kubesched the same; where nothing
fits, kubesched must write kube-scheduler's message up to its ` preemption:` part.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import NodeSpec, Topology
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    compare_failure_message,
    container,
    create_nodes,
    create_pod,
    delete_nodes,
    delete_pod_now,
    node_manifest,
    own_plane,
    pod_manifest,
    wait_bound,
)

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = ("zone-a", "zone-b", "zone-c")
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
# a1, a2 in zone-a, b1, b2 in zone-b, c1, c2 in zone-c.
NODES = tuple(NodeSpec(f"{z[-1]}{i}", {ZONE: z}, (), dict(CAPACITY)) for z in ZONES for i in (1, 2))
ZONE_OF = {n.name: n.labels[ZONE] for n in NODES}
APP = {"app": "spread"}
NO_ZONE_NODE = "nozone"  # made by the missing-label scenario only


@dataclass(frozen=True)
class Case:
    constraints: tuple[dict[str, Any], ...]
    occupants: tuple[tuple[str, bool], ...]  # (node, matches the selector); each requests 100m / 128Mi
    expect_node: str | None = None  # the node kube-scheduler must choose
    expect_zone: str | None = None  # or only its zone (its two nodes tie)
    reasons: tuple[str, ...] = ()  # nothing fits: parts of kube-scheduler's message
    affinity_zones: tuple[str, ...] = ()  # a required node affinity to these zones
    node_selector: dict[str, str] | None = None
    extra_node: bool = False  # add a node without the zone label
    service: bool = False  # a Service selecting app=spread (for the default constraints)


def spread(key: str = ZONE, when: str = "DoNotSchedule", max_skew: int = 1, **fields: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": dict(APP)}, **fields}


def on(*nodes: str, match: bool = True) -> tuple[tuple[str, bool], ...]:
    return tuple((n, match) for n in nodes)


SPREAD_MISMATCH = "node(s) didn't match pod topology spread constraints"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"

CASES = [
    # zone-a and zone-b hold one replica each: only zone-c keeps the skew at 1.
    pytest.param(Case((spread(),), on("a1", "b2"), expect_zone="zone-c"), id="hard-zone-skew"),
    # every node but c2 holds one: only c2 keeps the hostname skew at 1.
    pytest.param(Case((spread(HOSTNAME),), on("a1", "a2", "b1", "b2", "c1"), expect_node="c2"),
                 id="hard-hostname-skew"),
    # Both constraints at once: zone-c by the zone skew, c1 by the hostname skew (c2 holds one).
    pytest.param(Case((spread(), spread(HOSTNAME)), on("a1", "a2", "b1", "b2", "c2"), expect_node="c1"),
                 id="hard-zone-and-hostname"),
    # Honor (the default): zone-c is not a domain of a pod restricted to zone-a/b, so the minimum is
    # zone-b's 1 and zone-b takes the pod.
    pytest.param(Case((spread(nodeAffinityPolicy="Honor"),), on("a1", "a2", "b1"), expect_zone="zone-b",
                      affinity_zones=("zone-a", "zone-b")), id="node-affinity-policy-honor"),
    # Ignore: empty zone-c counts, its minimum 0 makes zone-a (2+1) and zone-b (1+1) too skewed.
    pytest.param(Case((spread(nodeAffinityPolicy="Ignore"),), on("a1", "a2", "b1"),
                      reasons=(f"2 {AFFINITY_MISMATCH}", f"4 {SPREAD_MISMATCH}"),
                      affinity_zones=("zone-a", "zone-b")), id="node-affinity-policy-ignore"),
    # Fewer zones than minDomains: the global minimum is 0, and one replica per zone is already skew 1.
    pytest.param(Case((spread(minDomains=4),), on("a1", "b1", "c1"), reasons=(f"6 {SPREAD_MISMATCH}",)),
                 id="min-domains-unmet"),
    # As many zones as minDomains: the real minimum (zone-c's 0) counts, zone-c takes the pod.
    pytest.param(Case((spread(minDomains=3),), on("a1", "b1"), expect_zone="zone-c"), id="min-domains-met"),
    # A node without the zone label cannot take a pod spread over zones.
    pytest.param(Case((spread(),), (), reasons=(f"1 {SPREAD_MISMATCH} (missing required label)",
                                                f"6 {AFFINITY_MISMATCH}"),
                      node_selector={"spread-test/only": "nozone"}, extra_node=True),
                 id="missing-zone-label"),
    # Soft: zone-c holds none of the replicas; the other pods even out the nodes' requests, so the
    # spread score alone decides.
    pytest.param(Case((spread(when="ScheduleAnyway"),),
                      on("a1", "a2", "b1") + on("b2", "c1", "c2", match=False), expect_zone="zone-c"),
                 id="soft-zone-emptier"),
    # Soft over hostnames: b2 is the only node without a replica.
    pytest.param(Case((spread(HOSTNAME, when="ScheduleAnyway"),),
                      on("a1", "a2", "b1", "c1", "c2") + on("b2", match=False), expect_node="b2"),
                 id="soft-hostname-emptier"),
    # No constraints of its own, but a Service selects it: the system defaults (zone maxSkew 5,
    # hostname maxSkew 3, ScheduleAnyway) over the Service's pods pull it to zone-c, where none are.
    pytest.param(Case((), on("a1", "a2", "b1", "b2") + on("c1", "c2", match=False), expect_zone="zone-c",
                      service=True), id="default-constraints-from-a-service"),
]


@pytest.fixture(scope="module")
def zone_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    with own_plane("spread", Topology("three-zones", NODES)) as kube:
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("spread")) / "kubesched.log")
        try:
            yield kube
        finally:
            proc.stop()


def _spec(case: Case) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container(cpu="100m", memory="128Mi")]}
    if case.constraints:
        spec["topologySpreadConstraints"] = list(case.constraints)
    if case.affinity_zones:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": ZONE, "operator": "In", "values": list(case.affinity_zones)}]}]}}}
    if case.node_selector:
        spec["nodeSelector"] = dict(case.node_selector)
    return spec


def _delete_all_pods(kube: Kube, ns: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=30)


@pytest.mark.parametrize("case", CASES)
def test_spread_scenario(zone_plane: Kube, case: Case, request: pytest.FixtureRequest) -> None:
    kube = zone_plane
    sid: str = request.node.callspec.id
    ns = kube.namespace(f"ts-{sid}")
    if case.extra_node:
        create_nodes(kube, [node_manifest(NodeSpec(NO_ZONE_NODE, {"spread-test/only": "nozone"}, (),
                                                   dict(CAPACITY)))])
    try:
        for i, (node, match) in enumerate(case.occupants):
            create_pod(kube, ns, pod_manifest(f"occupant-{i}", "nobody", {
                "nodeName": node, "containers": [container(cpu="100m", memory="128Mi")]},
                labels=APP if match else {"app": "other"}))
        if case.service:
            kube.create(f"/api/v1/namespaces/{ns}/services", {
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": "spread"},
                "spec": {"selector": dict(APP), "ports": [{"port": 80}]}})
        # Both schedulers see the occupants (and the Service) before the pod comes.
        wait_for("occupants on their nodes", lambda: len(kube.pods(ns)) == len(case.occupants))
        time.sleep(0.5)
        spec = _spec(case)
        if case.reasons:
            compare_failure_message(kube, ns, pod_manifest("ref", None, spec, labels=APP),
                                    pod_manifest("ours", KUBESCHED, spec, labels=APP), case.reasons)
        else:
            _compare_choice(kube, ns, spec, case)
    finally:
        _delete_all_pods(kube, ns)
        if case.extra_node:
            delete_nodes(kube, [NO_ZONE_NODE])
            wait_for("the extra node gone",
                     lambda: kube.request("GET", f"/api/v1/nodes/{NO_ZONE_NODE}")[0] == 404)


def _compare_choice(kube: Kube, ns: str, spec: dict[str, Any], case: Case) -> None:
    create_pod(kube, ns, pod_manifest("ref", None, spec, labels=APP))
    ref_node = wait_bound(kube, ns, "ref")
    if case.expect_node is not None:
        assert ref_node == case.expect_node, f"scenario broken: kube-scheduler chose {ref_node}"
    else:
        assert ZONE_OF[ref_node] == case.expect_zone, f"scenario broken: kube-scheduler chose {ref_node}"
    delete_pod_now(kube, ns, "ref")
    create_pod(kube, ns, pod_manifest("ours", KUBESCHED, spec, labels=APP))
    our_node = wait_bound(kube, ns, "ours")
    if case.expect_node is not None:
        assert our_node == ref_node, f"kubesched chose {our_node}, kube-scheduler chose {ref_node}"
    else:
        assert ZONE_OF[our_node] == ZONE_OF[ref_node], f"kubesched chose {our_node}, kube-scheduler {ref_node}"


# --- the system default constraints: a Deployment's ReplicaSet -------------------------------------

def _deployment(name: str, scheduler: str | None, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    template_spec: dict[str, Any] = {"containers": [container()], "terminationGracePeriodSeconds": 0}
    if scheduler is not None:
        template_spec["schedulerName"] = scheduler
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": template_spec}}}


def _place_deployment(kube: Kube, ns: str, scheduler: str | None, replicas: int = 9) -> Counter[str]:
    kube.create(f"/apis/apps/v1/namespaces/{ns}/deployments", _deployment("web", scheduler, replicas))

    def bound() -> list[dict[str, Any]] | None:
        pods = [p for p in kube.pods(ns, "app=web") if p["spec"].get("nodeName")]
        return pods if len(pods) == replicas else None
    pods = wait_for(f"{replicas} replicas bound in {ns}", bound, timeout=60)
    for p in pods:
        owners = p["metadata"].get("ownerReferences") or []
        assert [o["kind"] for o in owners] == ["ReplicaSet"]
        assert not p["spec"].get("topologySpreadConstraints")
    return Counter(p["spec"]["nodeName"] for p in pods)


def _remove_deployment(kube: Kube, ns: str) -> None:
    # The ReplicaSet first, so that no replica is made again once the pods go.
    kube.delete(f"/apis/apps/v1/namespaces/{ns}/deployments/web?propagationPolicy=Background")
    wait_for("the ReplicaSet gone", lambda: not kube.get(f"/apis/apps/v1/namespaces/{ns}/replicasets")["items"],
             timeout=60)
    _delete_all_pods(kube, ns)


def test_deployment_is_spread_over_zones_by_the_default_constraints(zone_plane: Kube) -> None:
    kube = zone_plane
    per_node: dict[str, Counter[str]] = {}
    for who, scheduler in (("kube-scheduler", None), ("kubesched", KUBESCHED)):
        ns = kube.namespace(f"deploy-{'ref' if scheduler is None else 'ours'}")
        try:
            per_node[who] = _place_deployment(kube, ns, scheduler)
        finally:
            _remove_deployment(kube, ns)
    per_zone = {who: Counter({z: sum(n for node, n in c.items() if ZONE_OF[node] == z) for z in ZONES})
                for who, c in per_node.items()}
    print(f"replicas per node: {dict(per_node)}; per zone: {per_zone}")
    assert per_zone["kube-scheduler"] == Counter(dict.fromkeys(ZONES, 3)), per_node
    assert per_zone["kubesched"] == per_zone["kube-scheduler"], per_node
