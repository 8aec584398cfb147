"""Table tests of each filter plugin's verdict and reason text, on one NodeInfo."""

from __future__ import annotations

import pytest

from kubesched.framework import Code, CycleState, NodeInfo, PodInfo, Status
from kubesched.plugins import node_name, node_ports, node_unschedulable, scheduling_gates, taint_toleration
from kubesched.plugins.node_affinity import plugin as node_affinity
from kubesched.plugins.node_resources import fit as node_resources_fit
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod, term
from tests.unit.scheduling_helpers import snapshot_with

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
UNSCHEDULABLE = Code.UNSCHEDULABLE


def run_filter(plugin: object, pod: PodBuilder, node: NodeBuilder, pods: tuple[PodBuilder, ...] = ()) -> Status | None:
    info = PodInfo(pod.obj())
    state = CycleState()
    pre = getattr(plugin, "pre_filter", None)
    if pre is not None:
        _, s = pre(state, info, snapshot_with([node]))
        if s is not None and s.is_skip():
            return None
    ni = NodeInfo(node.obj(), [p.obj() for p in pods])
    result: Status | None = plugin.filter(state, info, ni)  # type: ignore[attr-defined]
    return result


def verdict(status: Status | None) -> tuple[Code, tuple[str, ...]] | None:
    return None if status is None else (status.code, status.reasons)


# --- NodeName / NodeUnschedulable ---------------------------------------------------------------------

@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n1"), None, id="no-node-name"),
    pytest.param(make_pod("p").node("n1"), make_node("n1"), None, id="same-name"),
    pytest.param(make_pod("p").node("n2"), make_node("n1"),
                 (UNRESOLVABLE, ("node(s) didn't match the requested node name",)), id="other-name"),
])
def test_node_name(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(node_name.NodeName().filter(CycleState(), PodInfo(pod.obj()), NodeInfo(node.obj()))) == want


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n"), None, id="schedulable"),
    pytest.param(make_pod("p"), make_node("n").unschedulable(),
                 (UNRESOLVABLE, ("node(s) were unschedulable",)), id="cordoned"),
    pytest.param(make_pod("p").toleration("node.kubernetes.io/unschedulable", effect="NoSchedule",
                                          operator="Exists"), make_node("n").unschedulable(), None,
                 id="tolerates-cordon"),
    pytest.param(make_pod("p").toleration(operator="Exists"), make_node("n").unschedulable(), None,
                 id="tolerates-everything"),
])
def test_node_unschedulable(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(run_filter(node_unschedulable.NodeUnschedulable(), pod, node)) == want


# --- TaintToleration --------------------------------------------------------------------------------

TAINTED = (UNRESOLVABLE, ("node(s) had untolerated taint(s)",))


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), make_node("n"), None, id="no-taints"),
    pytest.param(make_pod("p"), make_node("n").taint("k", "v", "NoSchedule"), TAINTED, id="NoSchedule"),
    pytest.param(make_pod("p"), make_node("n").taint("k", "v", "NoExecute"), TAINTED, id="NoExecute"),
    pytest.param(make_pod("p"), make_node("n").taint("k", "v", "PreferNoSchedule"), None,
                 id="PreferNoSchedule-does-not-filter"),
    pytest.param(make_pod("p").toleration("k", "v", "NoSchedule"), make_node("n").taint("k", "v"), None,
                 id="Equal-matches"),
    pytest.param(make_pod("p").toleration("k", "other", "NoSchedule"), make_node("n").taint("k", "v"), TAINTED,
                 id="Equal-other-value"),
    pytest.param(make_pod("p").toleration("k", "v", "NoExecute"), make_node("n").taint("k", "v"), TAINTED,
                 id="other-effect"),
    pytest.param(make_pod("p").toleration("k", "v"), make_node("n").taint("k", "v", "NoExecute"), None,
                 id="empty-effect-matches-all-effects"),
    pytest.param(make_pod("p").toleration("k", operator="Exists"), make_node("n").taint("k", "v"), None,
                 id="Exists-any-value"),
    pytest.param(make_pod("p").toleration(operator="Exists"),
                 make_node("n").taint("a", "1").taint("b", "2", "NoExecute"), None, id="empty-key-Exists-all"),
    pytest.param(make_pod("p").toleration("a", "1"), make_node("n").taint("a", "1").taint("b", "2"), TAINTED,
                 id="one-of-two-untolerated"),
    pytest.param(make_pod("p").toleration("k", "5", operator="Gt"), make_node("n").taint("k", "7"), TAINTED,
                 id="Gt-off-by-default"),
])
def test_taint_toleration(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(run_filter(taint_toleration.TaintToleration(), pod, node)) == want


# --- NodeAffinity -----------------------------------------------------------------------------------

AFFINITY = (UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",))
ZONE_A = make_node("n1").label("zone", "a").label("gen", "5")


@pytest.mark.parametrize(("pod", "node", "want"), [
    pytest.param(make_pod("p"), ZONE_A, None, id="nothing-asked"),
    pytest.param(make_pod("p").node_selector(zone="a"), ZONE_A, None, id="selector-match"),
    pytest.param(make_pod("p").node_selector(zone="b"), ZONE_A, AFFINITY, id="selector-other-value"),
    pytest.param(make_pod("p").node_selector(rack="1"), ZONE_A, AFFINITY, id="selector-missing-label"),
    pytest.param(make_pod("p").required("zone", "In", "a", "b"), ZONE_A, None, id="In"),
    pytest.param(make_pod("p").required("zone", "In", "b"), ZONE_A, AFFINITY, id="In-no"),
    pytest.param(make_pod("p").required("zone", "NotIn", "b"), ZONE_A, None, id="NotIn"),
    pytest.param(make_pod("p").required("zone", "NotIn", "a"), ZONE_A, AFFINITY, id="NotIn-no"),
    pytest.param(make_pod("p").required("rack", "NotIn", "a"), ZONE_A, None, id="NotIn-missing-label"),
    pytest.param(make_pod("p").required("zone", "Exists"), ZONE_A, None, id="Exists"),
    pytest.param(make_pod("p").required("rack", "Exists"), ZONE_A, AFFINITY, id="Exists-no"),
    pytest.param(make_pod("p").required("rack", "DoesNotExist"), ZONE_A, None, id="DoesNotExist"),
    pytest.param(make_pod("p").required("zone", "DoesNotExist"), ZONE_A, AFFINITY, id="DoesNotExist-no"),
    pytest.param(make_pod("p").required("gen", "Gt", "4"), ZONE_A, None, id="Gt"),
    pytest.param(make_pod("p").required("gen", "Gt", "5"), ZONE_A, AFFINITY, id="Gt-equal-no"),
    pytest.param(make_pod("p").required("gen", "Lt", "6"), ZONE_A, None, id="Lt"),
    pytest.param(make_pod("p").required("zone", "Lt", "6"), ZONE_A, AFFINITY, id="Lt-non-integer-label"),
    pytest.param(make_pod("p").required("gen", "Gt", "x"), ZONE_A, AFFINITY, id="Gt-invalid-value"),
    pytest.param(make_pod("p").required("zone", "In"), ZONE_A, AFFINITY, id="In-without-values"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["b"])), term(("gen", "Exists", []))),
                 ZONE_A, None, id="terms-ORed"),
    pytest.param(make_pod("p").required_terms(term(("zone", "In", ["a"]), ("gen", "In", ["4"]))),
                 ZONE_A, AFFINITY, id="expressions-ANDed"),
    pytest.param(make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["n1"]),))),
                 ZONE_A, None, id="matchFields-In"),
    pytest.param(make_pod("p").required_terms(term(fields=(("metadata.name", "NotIn", ["n1"]),))),
                 ZONE_A, AFFINITY, id="matchFields-NotIn"),
    pytest.param(make_pod("p").required_terms(), ZONE_A, AFFINITY, id="no-terms-match-nothing"),
    pytest.param(make_pod("p").node_selector(zone="a").required("gen", "In", "4"), ZONE_A, AFFINITY,
                 id="selector-and-affinity-both-needed"),
])
def test_node_affinity(pod: PodBuilder, node: NodeBuilder, want: object) -> None:
    assert verdict(run_filter(node_affinity.NodeAffinity(), pod, node)) == want


def test_node_affinity_added_affinity() -> None:
    plugin = node_affinity.new({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}})
    assert verdict(run_filter(plugin, make_pod("p"), make_node("n"))) == (
        UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",))
    assert run_filter(plugin, make_pod("p"), make_node("n").label("pool", "batch")) is None


def test_node_affinity_pre_filter_conflict_and_names() -> None:
    plugin = node_affinity.NodeAffinity()
    snap = snapshot_with([make_node("n1")])
    pod = make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["a"]), ("metadata.name", "In", ["b"]))))
    _, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), snap)
    assert verdict(status) == (UNRESOLVABLE, ("pod affinity terms conflict",))
    pod = make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["n1"]),)))
    result, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), snap)
    assert status is None
    assert result is not None
    assert result.node_names == frozenset({"n1"})


# --- NodePorts --------------------------------------------------------------------------------------

PORTS = (UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",))


@pytest.mark.parametrize(("pod", "existing", "want"), [
    pytest.param(make_pod("p").host_port(80), (), None, id="free"),
    pytest.param(make_pod("p").host_port(80), (make_pod("q").host_port(80),), PORTS, id="same-port"),
    pytest.param(make_pod("p").host_port(80, "UDP"), (make_pod("q").host_port(80),), None, id="other-protocol"),
    pytest.param(make_pod("p").host_port(80, host_ip="10.0.0.1"), (make_pod("q").host_port(80, host_ip="10.0.0.2"),),
                 None, id="other-ip"),
    pytest.param(make_pod("p").host_port(80, host_ip="10.0.0.1"), (make_pod("q").host_port(80),), PORTS,
                 id="wildcard-used"),
    pytest.param(make_pod("p").host_port(80), (make_pod("q").host_port(80, host_ip="10.0.0.2"),), PORTS,
                 id="wildcard-wanted"),
    pytest.param(make_pod("p").host_port(81), (make_pod("q").host_port(80),), None, id="other-port"),
])
def test_node_ports(pod: PodBuilder, existing: tuple[PodBuilder, ...], want: object) -> None:
    assert verdict(run_filter(node_ports.NodePorts(), pod, make_node("n"), existing)) == want


# --- NodeResourcesFit -------------------------------------------------------------------------------

SMALL = make_node("n").capacity(cpu="1", memory="1Gi", pods="2", example_com__gpu="1")


@pytest.mark.parametrize(("pod", "existing", "want"), [
    pytest.param(make_pod("p").req(cpu="500m", memory="512Mi"), (), None, id="fits"),
    pytest.param(make_pod("p").req(cpu="2"), (), (UNRESOLVABLE, ("Insufficient cpu",)), id="cpu-over-allocatable"),
    pytest.param(make_pod("p").req(cpu="600m"), (make_pod("q").req(cpu="500m"),),
                 (UNSCHEDULABLE, ("Insufficient cpu",)), id="cpu-used"),
    pytest.param(make_pod("p").req(memory="2Gi"), (), (UNRESOLVABLE, ("Insufficient memory",)), id="memory"),
    pytest.param(make_pod("p").req(ephemeral_storage="1Gi"), (),
                 (UNRESOLVABLE, ("Insufficient ephemeral-storage",)), id="ephemeral-storage"),
    pytest.param(make_pod("p").req(example_com__gpu="2"), (), (UNRESOLVABLE, ("Insufficient example.com/gpu",)),
                 id="extended"),
    pytest.param(make_pod("p").req(example_com__tpu="1"), (), (UNRESOLVABLE, ("Insufficient example.com/tpu",)),
                 id="extended-absent-on-node"),
    pytest.param(make_pod("p"), (make_pod("a"), make_pod("b")), (UNSCHEDULABLE, ("Too many pods",)),
                 id="too-many-pods"),
    pytest.param(make_pod("p").req(cpu="2", memory="2Gi"), (make_pod("a"), make_pod("b")),
                 (UNRESOLVABLE, ("Too many pods", "Insufficient cpu", "Insufficient memory")),
                 id="all-reasons-in-order"),
    pytest.param(make_pod("p").req(cpu="1").init_req(cpu="2"), (), (UNRESOLVABLE, ("Insufficient cpu",)),
                 id="init-container-counts"),
    pytest.param(make_pod("p").req(cpu="900m").overhead(cpu="200m"), (), (UNRESOLVABLE, ("Insufficient cpu",)),
                 id="overhead-counts"),
])
def test_node_resources_fit(pod: PodBuilder, existing: tuple[PodBuilder, ...], want: object) -> None:
    assert verdict(run_filter(node_resources_fit.NodeResourcesFit(), pod, SMALL, existing)) == want


@pytest.mark.parametrize("args", [
    pytest.param({"ignoredResources": ["example.com/tpu"]}, id="ignoredResources"),
    pytest.param({"ignoredResourceGroups": ["example.com"]}, id="ignoredResourceGroups"),
])
def test_node_resources_fit_ignored(args: dict[str, list[str]]) -> None:
    plugin = node_resources_fit.new(args)
    assert run_filter(plugin, make_pod("p").req(example_com__tpu="1"), SMALL) is None


# --- SchedulingGates --------------------------------------------------------------------------------

def test_scheduling_gates() -> None:
    plugin = scheduling_gates.SchedulingGates()
    assert plugin.pre_enqueue(make_pod("p").obj()) is None
    status = plugin.pre_enqueue(make_pod("p").gate("a").gate("b").obj())
    assert verdict(status) == (UNRESOLVABLE, ("waiting for scheduling gates: [a b]",))
