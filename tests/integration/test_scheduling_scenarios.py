"""Small scheduling scenarios, each decided by kubesched and by the reference kube-scheduler on the
same nodes: where one node scores best, both must choose it; where nothing fits, kubesched must write
kube-scheduler's whole message, its ` preemption:` part included.

The scenarios run one after another on a plane of their own: each creates its nodes, decides, and
deletes everything again, so that `0/N nodes` counts exactly the scenario's nodes. Every scenario
also names the node it expects (or the reasons it expects): that checks the scenario itself, i.e.
that its best score really is unique, and not only that both schedulers agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import NodeSpec, Taint, parse
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
    latest_event,
    node_manifest,
    own_plane,
    pod_manifest,
    wait_bound,
)


@dataclass(frozen=True)
class N:
    """A scenario node; its real name is `<scenario id>-<short>`."""

    short: str
    cpu: str = "4"
    memory: str = "8Gi"
    pods: str = "110"
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)
    cordoned: bool = False
    features: tuple[str, ...] = ()  # status.declaredFeatures, as a kubelet would publish them


@dataclass(frozen=True)
class Occupant:
    """A pod already running on a node (bound through spec.nodeName, by no scheduler)."""

    node: str
    spec: dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    nodes: tuple[N, ...]
    pod: dict[str, Any]  # pod spec fields; a string "node:<short>" stands for that node's real name
    expect: str | None  # the short name of the only best node, or None when nothing fits
    occupants: tuple[Occupant, ...] = ()
    reasons: tuple[str, ...] = ()  # parts the unschedulable message must contain


def requests(cpu: str = "2", memory: str = "1Gi", **fields: Any) -> dict[str, Any]:
    return {"containers": [container(cpu=cpu, memory=memory, **fields)]}


def tolerate(*tolerations: dict[str, str], cpu: str = "2") -> dict[str, Any]:
    return {**requests(cpu), "tolerations": list(tolerations)}


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {**requests("1"), "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return {"matchExpressions": [e]}


def host_port(port: int, protocol: str = "TCP", cpu: str = "1", memory: str = "256Mi") -> dict[str, Any]:
    return {"containers": [container(cpu=cpu, memory=memory,
                                     ports=[{"containerPort": port, "hostPort": port, "protocol": protocol}])]}


def with_init(init: list[dict[str, Any]], main_cpu: str) -> dict[str, Any]:
    return {"initContainers": init, "containers": [container(cpu=main_cpu, memory="256Mi")]}


def sidecar(name: str, cpu: str) -> dict[str, Any]:
    return container(name, cpu=cpu, memory="64Mi", restartPolicy="Always")


RESTART_ALL = "RestartAllContainersOnContainerExits"


def restart_all(cpu: str = "1") -> dict[str, Any]:
    """A container whose exit with code 42 restarts the whole pod: NodeDeclaredFeatures infers that
    the pod needs a node declaring RestartAllContainersOnContainerExits (beta and on in v1.37, so
    the apiserver takes the rule)."""
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    return {"containers": [container(cpu=cpu, memory="256Mi", restartPolicy="Never", restartPolicyRules=[rule])]}


TAINT = Taint("example.com/dedicated", "team-a", "NoSchedule")
# With the pod's 2 cpu / 1Gi, `big` (8 cpu) outscores `small` (4 cpu) by ~25 points of
# LeastAllocated + BalancedAllocation: the taint alone must decide when `big` loses.
TAINT_PAIR = (N("big", cpu="8", taints=(TAINT,)), N("small"))
# cpu decides the ranking for a 1-cpu pod: b (8) > c (6) > a (4).
ZONES = (N("a", cpu="4", labels={"zone": "z1", "cores": "4", "rank": "3", "disk": "ssd"}),
         N("b", cpu="8", labels={"zone": "z2", "cores": "8", "rank": "1"}),
         N("c", cpu="6", labels={"zone": "z3", "cores": "6", "rank": "2", "disk": "hdd"}))
# `crowded` has room for 3 cpu; `tight` (2 cpu, empty) would win if a pod's init or sidecar cpu
# were not counted, since it would then be less allocated than `crowded`.
INIT_PAIR = (N("tight", cpu="2"), N("crowded", cpu="8"))
CROWD = (Occupant("crowded", requests("5", "256Mi")),)
GPU = "example.com/gpu"
MIXED_SELECTOR = {"pool": "mixed"}

SCENARIOS = [
    # --- taints and tolerations ---
    pytest.param(Scenario(TAINT_PAIR, requests(), "small"), id="taint-noschedule-avoided"),
    pytest.param(Scenario((N("big", cpu="8", taints=(Taint("example.com/evict", "", "NoExecute"),)), N("small")),
                          requests(), "small"), id="taint-noexecute-avoided"),
    pytest.param(Scenario(TAINT_PAIR, tolerate({"key": "example.com/dedicated", "operator": "Equal",
                                                "value": "team-a", "effect": "NoSchedule"}), "big"),
                 id="toleration-equal"),
    pytest.param(Scenario(TAINT_PAIR, tolerate({"key": "example.com/dedicated", "operator": "Equal",
                                                "value": "team-b"}), "small"), id="toleration-equal-other-value"),
    pytest.param(Scenario(TAINT_PAIR, tolerate({"key": "example.com/dedicated", "operator": "Exists"}), "big"),
                 id="toleration-exists"),
    pytest.param(Scenario((N("big", cpu="8", taints=(TAINT, Taint("example.com/evict", "x", "NoExecute"))), N("small")),
                          tolerate({"operator": "Exists"}), "big"), id="toleration-empty-key-exists"),
    pytest.param(Scenario(TAINT_PAIR, tolerate({"key": "example.com/dedicated", "operator": "Equal",
                                                "value": "team-a", "effect": "NoExecute"}), "small"),
                 id="toleration-other-effect"),
    pytest.param(Scenario((N("big", cpu="8", taints=(Taint("example.com/soft", "", "PreferNoSchedule"),)), N("small")),
                          requests(), "small"), id="prefer-no-schedule-scores-lower"),
    pytest.param(Scenario((N("big", cpu="8", taints=(Taint("example.com/soft", "", "PreferNoSchedule"),)), N("small")),
                          tolerate({"key": "example.com/soft", "operator": "Exists"}), "big"),
                 id="prefer-no-schedule-tolerated"),
    pytest.param(Scenario((N("a", taints=(TAINT,)), N("b", taints=(Taint("example.com/evict", "", "NoExecute"),)),
                           N("c", taints=(Taint("example.com/soft", "", "PreferNoSchedule"), TAINT))),
                          requests(), None, reasons=("3 node(s) had untolerated taint(s)",)),
                 id="taints-nothing-tolerated"),
    # --- node affinity and nodeSelector ---
    pytest.param(Scenario(ZONES, required(expr("zone", "In", "z1", "z3")), "c"), id="affinity-in"),
    pytest.param(Scenario(ZONES, required(expr("zone", "NotIn", "z2")), "c"), id="affinity-notin"),
    pytest.param(Scenario(ZONES, required(expr("disk", "Exists")), "c"), id="affinity-exists"),
    pytest.param(Scenario(ZONES, required(expr("disk", "DoesNotExist")), "b"), id="affinity-does-not-exist"),
    pytest.param(Scenario(ZONES, required(expr("rank", "Gt", "1")), "c"), id="affinity-gt"),
    pytest.param(Scenario(ZONES, required(expr("cores", "Lt", "8")), "c"), id="affinity-lt"),
    pytest.param(Scenario(ZONES, required({"matchFields": [{"key": "metadata.name", "operator": "In",
                                                           "values": ["node:a"]}]}), "a"),
                 id="affinity-match-fields-name"),
    pytest.param(Scenario(ZONES, required(expr("zone", "In", "z1"), expr("cores", "Gt", "5")), "b"),
                 id="affinity-terms-ored"),
    pytest.param(Scenario(ZONES, {**requests("1"), "nodeSelector": {"zone": "z1"}}, "a"), id="node-selector"),
    pytest.param(Scenario(ZONES, {**requests("1"), "affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": expr("zone", "In", "z1")}]}}}, "a"), id="affinity-preferred"),
    pytest.param(Scenario(ZONES, {**required(expr("zone", "In", "z3")), "nodeSelector": {"zone": "z1"}}, None,
                          reasons=("3 node(s) didn't match Pod's node affinity/selector",)),
                 id="selector-and-affinity-disagree"),
    pytest.param(Scenario(ZONES, required(expr("cores", "Gt", "9"), expr("zone", "DoesNotExist")), None,
                          reasons=("3 node(s) didn't match Pod's node affinity/selector",)),
                 id="affinity-nothing-matches"),
    # --- host ports ---
    pytest.param(Scenario((N("big", cpu="8"), N("small")), host_port(8080), "small",
                          occupants=(Occupant("big", host_port(8080, cpu="100m")),)), id="host-port-taken"),
    pytest.param(Scenario((N("big", cpu="8"), N("small")), host_port(8080, "UDP"), "big",
                          occupants=(Occupant("big", host_port(8080, cpu="100m")),)), id="host-port-other-protocol"),
    pytest.param(Scenario((N("big", cpu="8"), N("small")), host_port(8080), None,
                          occupants=(Occupant("big", host_port(8080, cpu="100m")),
                                     Occupant("small", host_port(8080, cpu="100m"))),
                          reasons=("2 node(s) didn't have free ports for the requested pod ports",)),
                 id="host-port-none-free"),
    # --- init containers and restartable sidecars ---
    pytest.param(Scenario(INIT_PAIR, with_init([container("init", cpu="2500m", memory="64Mi")], "1"), "crowded",
                          occupants=CROWD), id="init-container-counted"),
    pytest.param(Scenario(INIT_PAIR, with_init([sidecar("side", "1500m")], "1"), "crowded", occupants=CROWD),
                 id="sidecar-counted"),
    pytest.param(Scenario(INIT_PAIR, with_init([sidecar("side", "1"), container("init", cpu="1500m", memory="64Mi")],
                                               "500m"), "crowded", occupants=CROWD), id="sidecar-then-init"),
    pytest.param(Scenario((N("a", cpu="2"), N("b", cpu="2")),
                          with_init([container("init", cpu="3", memory="64Mi")], "100m"), None,
                          reasons=("2 Insufficient cpu",)), id="init-container-too-big"),
    # --- extended resources and pod count ---
    pytest.param(Scenario((N("gpu", extra={GPU: "2"}), N("plain", cpu="8")),
                          {"containers": [container(cpu="1", memory="1Gi", extra={GPU: "1"})]}, "gpu"),
                 id="extended-resource-fits"),
    pytest.param(Scenario((N("gpu", extra={GPU: "2"}), N("plain", cpu="8")),
                          {"containers": [container(cpu="1", memory="1Gi", extra={GPU: "4"})]}, None,
                          reasons=(f"2 Insufficient {GPU}",)), id="extended-resource-insufficient"),
    pytest.param(Scenario((N("full", cpu="8", pods="1"), N("free")), requests(), "free",
                          occupants=(Occupant("full", requests("100m", "64Mi")),)), id="too-many-pods-avoided"),
    pytest.param(Scenario((N("a"), N("b")), requests("1", "12Gi"), None, reasons=("2 Insufficient memory",)),
                 id="memory-insufficient"),
    pytest.param(Scenario((N("a"), N("b")), {"containers": [container(cpu="1", memory="1Gi",
                                                                      extra={"ephemeral-storage": "1Gi"})]}, None,
                          reasons=("2 Insufficient ephemeral-storage",)), id="ephemeral-storage-none-allocatable"),
    # --- pod overhead (RuntimeClass, see the module fixture) ---
    pytest.param(Scenario(INIT_PAIR, {**requests("1", "256Mi"), "runtimeClassName": "overhead"}, "crowded",
                          occupants=CROWD), id="overhead-counted"),
    pytest.param(Scenario((N("a", cpu="2"), N("b", cpu="2")), {**requests("1500m", "256Mi"),
                                                              "runtimeClassName": "overhead"}, None,
                          reasons=("2 Insufficient cpu",)), id="overhead-too-big"),
    # --- PreFilter narrowing the nodes, and no nodes at all ---
    pytest.param(Scenario(ZONES, {**required({"matchFields": [{"key": "metadata.name", "operator": "In",
                                                              "values": ["node:a"]}]}),
                                  "containers": [container(cpu="6")]}, None, reasons=("1 Insufficient cpu",)),
                 id="match-fields-node-too-small"),
    pytest.param(Scenario(ZONES, required({"matchFields": [{"key": "metadata.name", "operator": "In",
                                                           "values": ["no-such-node"]}]}), None),
                 id="match-fields-no-such-node"),
    pytest.param(Scenario((), requests(), None), id="no-nodes"),
    # --- mixed reasons ---
    pytest.param(Scenario(
        (N("cordoned", cpu="8", labels=MIXED_SELECTOR, cordoned=True),
         N("tainted", labels=MIXED_SELECTOR, taints=(TAINT,)),
         N("unlabelled"),
         N("small", cpu="1", labels=MIXED_SELECTOR),
         N("tiny", cpu="1", memory="512Mi", labels=MIXED_SELECTOR),
         N("full", pods="1", labels=MIXED_SELECTOR),
         N("port", labels=MIXED_SELECTOR)),
        {**host_port(9090, cpu="2", memory="1Gi"), "nodeSelector": MIXED_SELECTOR}, None,
        occupants=(Occupant("full", requests("100m", "64Mi")), Occupant("port", host_port(9090, cpu="100m"))),
        reasons=("1 node(s) were unschedulable", "1 node(s) had untolerated taint(s)",
                 "1 node(s) didn't match Pod's node affinity/selector", "Insufficient cpu", "Insufficient memory",
                 "1 Too many pods", "1 node(s) didn't have free ports for the requested pod ports")),
        id="mixed-reasons"),
    # --- features the node must declare (NodeDeclaredFeatures) ---
    # Without the plugin `big` would win on its free cpu.
    pytest.param(Scenario((N("big", cpu="8"), N("small", features=(RESTART_ALL,))), restart_all(), "small"),
                 id="declared-feature-required"),
    pytest.param(Scenario((N("a", features=("DRAOptionalNodeOperations",)), N("b")), restart_all(), None,
                          reasons=("2 node(s) didn't match Pod's required features",)),
                 id="declared-feature-nowhere"),
    # The taint is the first filter to fail on `tainted`, so that is what its node counts for.
    pytest.param(Scenario((N("tainted", taints=(TAINT,)), N("plain")), restart_all(), None,
                          reasons=("1 node(s) had untolerated taint(s)",
                                   "1 node(s) didn't match Pod's required features")),
                 id="declared-feature-and-taint"),
]


@pytest.fixture(scope="module")
def scenario_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    # A plane needs one node to start; it is removed so that scenarios count only their own nodes.
    with own_plane("scenarios", parse({"nodes": [{"name": "scenario-base"}]}, "scenarios")) as kube:
        kube.delete("/api/v1/nodes/scenario-base")
        wait_for("the base node gone", lambda: not kube.get("/api/v1/nodes")["items"])
        # The RuntimeClass admission plugin copies this overhead into the pods that name it.
        kube.create("/apis/node.k8s.io/v1/runtimeclasses", {
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "overhead"},
            "handler": "runc", "overhead": {"podFixed": {"cpu": "1500m", "memory": "64Mi"}}})
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("scenarios")) / "kubesched.log")
        try:
            yield kube
        finally:
            proc.stop()


def _resolve(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("node:"):
        return names[value.removeprefix("node:")]
    if isinstance(value, dict):
        return {k: _resolve(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, names) for v in value]
    return value


def _node_manifest(n: N, name: str) -> dict[str, Any]:
    capacity = {"cpu": n.cpu, "memory": n.memory, "pods": n.pods, **n.extra}
    manifest = node_manifest(NodeSpec(name, dict(n.labels), n.taints, capacity), unschedulable=n.cordoned)
    if n.features:
        manifest["status"]["declaredFeatures"] = sorted(n.features)
    return manifest


def declare_features(kube: Kube, name: str, features: tuple[str, ...]) -> None:
    """status.declaredFeatures of a node, as a kubelet publishes them (kwok, which plays the kubelet
    here, knows nothing of them): PATCHed through the status subresource and read back."""
    want = sorted(features)
    status, body = kube.request("PATCH", f"/api/v1/nodes/{name}/status", {"status": {"declaredFeatures": want}},
                                content_type="application/merge-patch+json")
    assert status == 200, f"PATCH {name}/status: {status} {body}"
    wait_for(f"{name} declaring {want}",
             lambda: kube.get(f"/api/v1/nodes/{name}")["status"].get("declaredFeatures") == want, timeout=10)


def _delete_all_pods(kube: Kube, ns: str) -> None:
    # Pending leftovers would be retried, and could land on a later scenario's nodes.
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=30)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(scenario_plane: Kube, scenario: Scenario, request: pytest.FixtureRequest) -> None:
    kube = scenario_plane
    sid: str = request.node.callspec.id
    ns = kube.namespace(f"sc-{sid}")
    names = {n.short: f"{sid}-{n.short}" for n in scenario.nodes}
    create_nodes(kube, [_node_manifest(n, names[n.short]) for n in scenario.nodes])
    for n in scenario.nodes:
        if n.features:
            declare_features(kube, names[n.short], n.features)
    try:
        for i, occ in enumerate(scenario.occupants):
            create_pod(kube, ns, pod_manifest(f"occupant-{i}", "nobody",
                                              {**occ.spec, "nodeName": names[occ.node]}))
        spec = _resolve(scenario.pod, names)
        if scenario.expect is not None:
            _compare_choice(kube, ns, spec, names, scenario.expect)
        else:
            compare_failure_message(kube, ns, pod_manifest("ref", None, spec),
                                    pod_manifest("ours", KUBESCHED, spec), scenario.reasons)
    finally:
        _delete_all_pods(kube, ns)
        delete_nodes(kube, list(names.values()))


def _compare_choice(kube: Kube, ns: str, spec: dict[str, Any], names: dict[str, str], expect: str) -> None:
    # One after the other, the reference's pod deleted first: a bound pod changes the next one's scores.
    create_pod(kube, ns, pod_manifest("ref", None, spec))
    ref_node = wait_bound(kube, ns, "ref")
    assert ref_node == names[expect], (
        f"scenario broken: kube-scheduler chose {ref_node}, the scenario expects {names[expect]} as the only best")
    delete_pod_now(kube, ns, "ref")
    create_pod(kube, ns, pod_manifest("ours", KUBESCHED, spec))
    our_node = wait_bound(kube, ns, "ours")
    assert our_node == ref_node, f"kubesched chose {our_node}, kube-scheduler chose {ref_node}"
    scheduled = wait_for("kubesched's Scheduled event", lambda: latest_event(kube, ns, "ours", "Scheduled"))
    assert scheduled["reportingController"] == KUBESCHED
    assert scheduled["note"] == f"Successfully assigned {ns}/ours to {our_node}"




def test_declared_feature_requeues(scenario_plane: Kube) -> None:
    """A pod no node can run yet waits; once a node declares the feature it needs, both schedulers
    retry it (NodeDeclaredFeatures registered the node's UpdateNodeDeclaredFeature) and bind it
    there, long before the 5 minutes after which an unschedulable pod is retried anyway."""
    kube = scenario_plane
    ns = kube.namespace("sc-declared-feature-requeues")
    name = "declared-feature-requeues-n"
    create_nodes(kube, [_node_manifest(N("n"), name)])
    try:
        spec = restart_all()
        compare_failure_message(kube, ns, pod_manifest("ref", None, spec), pod_manifest("ours", KUBESCHED, spec),
                                ("1 node(s) didn't match Pod's required features",))
        declare_features(kube, name, (RESTART_ALL,))
        assert wait_bound(kube, ns, "ref", timeout=30) == name
        assert wait_bound(kube, ns, "ours", timeout=30) == name
    finally:
        _delete_all_pods(kube, ns)
        delete_nodes(kube, [name])
