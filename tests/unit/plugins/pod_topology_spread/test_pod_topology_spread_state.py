"""PodTopologySpread's PreFilter state and its AddPod / RemovePod (preemption), ported from
kube-scheduler's TestPreFilterStateAddPod / TestPreFilterStateRemovePod / TestPreFilterState; the
args parser's validation (validation_pluginargs.go); the model's decoding of the constraint."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubesched.framework import CycleState, PodInfo, Snapshot
from kubesched.framework.field_errors import FieldError
from kubesched.model.decode import TolerantDecoder
from kubesched.model.objects import Pod
from kubesched.plugins.pod_topology_spread import InMemorySelectors, PodTopologySpread, new, parse_args
from kubesched.plugins.pod_topology_spread.filtering import (
    PRE_FILTER_KEY,
    CriticalPaths,
    PreFilterState,
    _critical_paths,
)
from tests.builders import PodBuilder
from tests.unit.pts_helpers import BAR, FOO, FOUR_NODES, HOST, P, nodes_of, pods_of, pre_filtered

TWO = ("node-a zone=zone1 node=node-a", "node-b zone=zone1 node=node-b")


def _state(pod: PodBuilder, nodes: tuple[str, ...],
           pods: str) -> tuple[PodTopologySpread, PodInfo, tuple[CycleState, Snapshot], PreFilterState]:
    plugin = new({"defaultingType": "List"})
    state, info, snapshot = pre_filtered(plugin, pod, nodes_of(nodes), pods_of(pods))
    s = state.read(PRE_FILTER_KEY)
    assert isinstance(s, PreFilterState)
    return plugin, info, (state, snapshot), s


NODE_C = P("p foo").spread(1, "node", selector=FOO)
ZONE_NODE = P("p foo").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO)
ZONE_FOO_NODE_BAR = P("p foo bar").spread(1, "zone", selector=FOO).spread(1, "node", selector=BAR)
THREE = ("node-a zone=zone1 node=node-a", "node-b zone=zone1 node=node-b", "node-x zone=zone2 node=node-x")


@pytest.mark.parametrize(("pod", "nodes", "pods", "added", "delta", "paths", "counts"), [
    pytest.param(NODE_C, TWO, "", "p-a1@node-a foo", 1, [[("node-b", 0), ("node-a", 1)]],
                 [{"node-a": 1, "node-b": 0}], id="node a and b both impact current min match"),
    pytest.param(NODE_C, TWO, "p-b1@node-b foo", "p-a1@node-a foo", 1, [[("node-a", 1), ("node-b", 1)]],
                 [{"node-a": 1, "node-b": 1}], id="only node a impacts current min match"),
    pytest.param(NODE_C, TWO, "p-b1@node-b foo", "ns1/p-a1@node-a foo", 1, [[("node-a", 0), ("node-b", 1)]],
                 [{"node-a": 0, "node-b": 1}],
                 id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap"),
    pytest.param(NODE_C, TWO, "p-b1@node-b foo", "p-b2@node-b foo", 1, [[("node-a", 0), ("node-b", 2)]],
                 [{"node-a": 0, "node-b": 2}], id="add pod on non-critical node won't trigger re-calculation"),
    pytest.param(ZONE_NODE, FOUR_NODES, "p-a1@node-a foo, p-b1@node-b foo, p-x1@node-x foo", "p-x2@node-x foo", 1,
                 [[("zone1", 2), ("zone2", 2)], [("node-y", 0), ("node-a", 1)]],
                 [{"zone1": 2, "zone2": 2}, {"node-a": 1, "node-b": 1, "node-x": 2, "node-y": 0}],
                 id="node x impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(NODE_C, TWO, "p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo", "p-a1@node-a foo", -1,
                 [[("node-b", 1), ("node-a", 1)]], [{"node-a": 1, "node-b": 1}],
                 id="one spreadConstraint on node, topologyKeyToMinPodsMap changed"),
    pytest.param(NODE_C, TWO, "p-a1@node-a foo, p-b1@node-b foo", "p-a9@node-a bar", -1,
                 [[("node-a", 1), ("node-b", 1)]], [{"node-a": 1, "node-b": 1}],
                 id="delete an irrelevant pod won't help"),
    pytest.param(ZONE_FOO_NODE_BAR, THREE, "p-b1@node-b foo bar, p-x1@node-x foo bar, p-x2@node-x bar",
                 "p-a1@node-a foo", 1, [[("zone2", 1), ("zone1", 2)], [("node-a", 0), ("node-b", 1)]],
                 [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
                 id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(ZONE_FOO_NODE_BAR, THREE, "p-b1@node-b bar, p-x1@node-x foo bar, p-x2@node-x bar",
                 "p-a1@node-a foo bar", 1, [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-b", 1)]],
                 [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
                 id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone "
                    "and node"),
    # Not in filtering_test.go: the added pod matches only the second constraint's selector, which
    # updateWithPod still counts (the first constraint's mismatch skips that constraint alone):
    # zone (foo) stays 1/1, node (bar) a goes 0 -> 1.
    pytest.param(ZONE_FOO_NODE_BAR, THREE, "p-b1@node-b foo bar, p-x1@node-x foo bar, p-x2@node-x bar",
                 "p-a1@node-a bar", 1, [[("zone1", 1), ("zone2", 1)], [("node-a", 1), ("node-b", 1)]],
                 [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
                 id="added pod matches only the second constraint's selector"),
])
def test_add_remove_pod(pod: PodBuilder, nodes: tuple[str, ...], pods: str, added: str, delta: int,
                        paths: list[list[tuple[str, int]]], counts: list[dict[str, int]]) -> None:
    plugin, info, (state, snapshot), s = _state(pod, nodes, pods)
    before = s.clone()
    other = P(added)
    node_info = snapshot.get(other.obj().spec.node_name)
    assert node_info is not None
    method = plugin.add_pod if delta > 0 else plugin.remove_pod
    assert method(state, info, PodInfo(other.obj()), node_info) is None
    assert s.tp_value_to_match_num == counts
    assert [sorted(p.pairs()) for p in s.critical_paths] == [sorted(x) for x in paths]
    assert [p.nums[0] for p in s.critical_paths] == [min(x[1] for x in ps) for ps in paths]
    assert before.tp_value_to_match_num is not s.tp_value_to_match_num  # clone() copied the counts


# matchNodeInclusionPolicies in updateWithPod takes the preemptor's tolerations: with
# nodeTaintsPolicy Honor, a pod added on a node whose NoSchedule taint the preemptor does not
# tolerate is not counted (that node is no domain); tolerated, it is. Nodes: node-a (zone1) tainted
# node.kubernetes.io/unschedulable:NoSchedule, node-b (zone2); pods p-a1@node-a, p-b2@node-b; add
# p-a2@node-a. (filtering_test.go's taint cases use the default policy, Ignore.)
@pytest.mark.parametrize(("pod", "counts_before", "counts_after", "paths_after"), [
    pytest.param(P("p foo").spread(1, "zone", selector=FOO, node_taints_policy="Honor"), {"zone2": 1}, {"zone2": 1},
                 [("zone2", 1), ("", 2**31 - 1)], id="taint not tolerated, node-a not counted"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO, node_taints_policy="Honor")
                 .toleration("node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
                 {"zone1": 1, "zone2": 1}, {"zone1": 2, "zone2": 1}, [("zone2", 1), ("zone1", 2)],
                 id="taint tolerated, node-a counted"),
])
def test_add_pod_honours_the_preemptors_tolerations(pod: PodBuilder, counts_before: dict[str, int],
                                                   counts_after: dict[str, int],
                                                   paths_after: list[tuple[str, int]]) -> None:
    plugin = new({"defaultingType": "List"})
    nodes = nodes_of(("node-a zone=zone1 node=node-a", "node-b zone=zone2 node=node-b"), tainted=("node-a",))
    state, info, snapshot = pre_filtered(plugin, pod, nodes, pods_of("p-a1@node-a foo, p-b2@node-b foo"))
    s = state.read(PRE_FILTER_KEY)
    assert isinstance(s, PreFilterState)
    assert s.tp_value_to_match_num == [counts_before]
    node_a = snapshot.get("node-a")
    assert node_a is not None
    assert plugin.add_pod(state, info, PodInfo(P("p-a2@node-a foo").obj()), node_a) is None
    assert s.tp_value_to_match_num == [counts_after]
    assert s.critical_paths[0].pairs() == paths_after


def test_nominated_pod_counts_on_a_clone_of_the_state_only() -> None:
    """RunFilterPluginsWithNominatedPods: AddPod on a clone of the cycle state (addGENominatedPods),
    Filter on the clone, the original untouched. Nodes node-a/b/c by hostname, p-a1@node-a, pod
    maxSkew 1: counts 1/0/0, min 0, node-b fits (0 + 1 - 0 = 1). With a pod nominated to node-b
    added to the clone: 1/1/0, min 0 (node-c), node-b 1 + 1 - 0 = 2 > 1 is rejected, node-c fits."""
    plugin = new({"defaultingType": "List"})
    pod = P("p foo").spread(1, HOST, selector=FOO)
    hosts = ("node-a host=node-a", "node-b host=node-b", "node-c host=node-c")
    state, info, snapshot = pre_filtered(plugin, pod, nodes_of(hosts), pods_of("p-a1@node-a foo"))
    node_b, node_c = snapshot.get("node-b"), snapshot.get("node-c")
    assert node_b is not None
    assert node_c is not None
    clone = state.clone()
    nominated = node_b.clone()
    nominated_pod = PodInfo(P("p-n1@node-b foo").obj())
    nominated.add_pod(nominated_pod)
    assert plugin.add_pod(clone, info, nominated_pod, nominated) is None
    rejected = plugin.filter(clone, info, nominated)
    assert rejected is not None
    assert rejected.reasons == ("node(s) didn't match pod topology spread constraints",)
    assert plugin.filter(clone, info, node_c) is None
    assert plugin.filter(state, info, node_b) is None  # the original state still counts 1/0/0
    original = state.read(PRE_FILTER_KEY)
    assert isinstance(original, PreFilterState)
    assert original.tp_value_to_match_num == [{"node-a": 1, "node-b": 0, "node-c": 0}]
    assert sorted(original.critical_paths[0].pairs()) == [("node-b", 0), ("node-c", 0)]


@pytest.mark.parametrize(("pod", "pods", "counts", "mins"), [
    pytest.param(P("p foo").spread(5, "zone", selector=FOO), "", [{"zone1": 0, "zone2": 0}], [0],
                 id="clean cluster with one spreadConstraint"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO),
                 "p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-y1@node-y foo, p-y2@node-y foo",
                 [{"zone1": 3, "zone2": 2}], [2], id="normal case with one spreadConstraint"),
    pytest.param(P("p foo").spread(1, "zone", selector=None), "p-a1@node-a foo, p-y1@node-y foo",
                 [{"zone1": 0, "zone2": 0}], [0], id="normal case with null label selector"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO), "ns1/p-a1@node-a foo, p-y1@node-y foo",
                 [{"zone1": 0, "zone2": 1}], [0], id="namespace mismatch doesn't count"),
    pytest.param(P("p foo").spread(1, "zone", selector=FOO).spread(1, "node", selector=FOO)
                 .spread(1, "zone", "ScheduleAnyway", FOO), "p-a1@node-a foo, p-x1@node-x foo, p-x2@node-x foo",
                 [{"zone1": 1, "zone2": 2}, {"node-a": 1, "node-b": 0, "node-x": 2, "node-y": 0}], [1, 0],
                 id="soft spreadConstraints should be bypassed"),
])
def test_pre_filter_state(pod: PodBuilder, pods: str, counts: list[dict[str, int]], mins: list[int]) -> None:
    _, _, _, s = _state(pod, FOUR_NODES, pods)
    assert s.tp_value_to_match_num == counts
    assert [p.nums[0] for p in s.critical_paths] == mins


def test_default_constraints_and_a_service() -> None:
    """TestPreFilterState "default constraints and a service": the service's selector is used."""
    plugin = new({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 5, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]},
        selectors=InMemorySelectors(services=[("default", {"foo": "bar"})]))
    state, _, _ = pre_filtered(plugin, P("p foo=bar"), nodes_of(FOUR_NODES), [])
    s = state.read(PRE_FILTER_KEY)
    assert [(c.topology_key, c.max_skew) for c in s.constraints] == [("node", 3), ("rack", 2)]
    assert s.constraints[0].selector.matches({"foo": "bar"})
    assert not s.constraints[0].selector.matches({"foo": "baz"})


def test_controller_selectors() -> None:
    from kubesched.model.objects import LabelSelector
    rs = LabelSelector(match_labels={"app": "a"})
    lister = InMemorySelectors(controllers={("default", "ReplicaSet", "rs"): rs})
    assert lister.selectors_for(P("p app=a").owner("ReplicaSet", "rs").obj()) == [rs]
    assert lister.selectors_for(P("p app=a").owner("ReplicaSet", "rs", api_version="v1").obj()) == []


def _errors(raw: dict[str, object]) -> list[str]:
    errs: list[FieldError] = []
    parse_args(raw, "args", errs)
    return [str(e) for e in errs]


@pytest.mark.parametrize(("raw", "want"), [
    pytest.param({}, [], id="defaults"),
    pytest.param({"defaultingType": "List"}, [], id="list-empty"),
    pytest.param({"defaultingType": "Foo"},
                 ['args.defaultingType: Unsupported value: "Foo": supported values: "System", "List"'], id="bad-type"),
    pytest.param({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
                 ['args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
                 id="system-with-constraints"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": "",
                                                                    "whenUnsatisfiable": "Foo"}]},
                 ["args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
                  "args.defaultConstraints[0].topologyKey: Required value: can not be empty",
                  'args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Foo": supported values: '
                  '"DoNotSchedule", "ScheduleAnyway"'], id="bad-fields"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
                 ["args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, "
                  "as they deduced for each pod",
                  'args.defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"'], id="selector-and-dup"),
])
def test_args(raw: dict[str, object], want: list[str]) -> None:
    assert _errors(raw) == want


def test_args_parse_idempotent() -> None:
    raw = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}]}
    once = parse_args(raw, "", [])
    assert parse_args(once, "", []) == once


@pytest.mark.parametrize("constraint", [
    pytest.param(b'{"topologyKey": "zone"}', id="absent"),
    pytest.param(b'{"topologyKey": "zone", "labelSelector": null, "minDomains": null, "matchLabelKeys": null,'
                 b' "nodeAffinityPolicy": null, "nodeTaintsPolicy": null}', id="null"),
    pytest.param(b'{"topologyKey": "zone", "labelSelector": {}, "matchLabelKeys": []}', id="empty"),
])
def test_constraint_decodes(constraint: bytes) -> None:
    raw = b'{"metadata": {"name": "p"}, "spec": {"topologySpreadConstraints": [' + constraint + b"]}}"
    pod = TolerantDecoder(Pod).decode(raw)
    c = pod.spec.topology_spread_constraints[0]
    assert (c.topology_key, c.min_domains, c.node_affinity_policy, c.match_label_keys) == ("zone", None, None, [])
    assert msgspec.json.decode(msgspec.json.encode(pod), type=Pod) == pod


# Few domains (the sort in Python) and more than 64 (the numpy argsort), with many equal counts.
_DOMAIN_COUNTS = (st.dictionaries(st.sampled_from(["", "a", "b", "c", "d", "z1", "z2"]), st.integers(0, 5), max_size=7)
                  | st.dictionaries(st.integers(0, 299).map(lambda i: f"d{i}"), st.integers(0, 5),
                                    min_size=65, max_size=200))


@settings(deadline=None)  # a loaded CI machine must not turn slowness into a failure
@given(_DOMAIN_COUNTS)
@example({f"d{i}": 3 - (i % 3 == 2) for i in range(100)})  # 100 domains, the smallest count 33 times
def test_critical_paths_of_every_domain_as_the_update_loop_leaves_them(counts: dict[str, int]) -> None:
    """PreFilter keeps the two smallest domains directly; criticalPaths.update over every domain, in
    order, ends with the same two (the first of equal counts first)."""
    values, nums = list(counts), list(counts.values())
    looped = CriticalPaths()
    for value, num in zip(values, nums, strict=True):
        looped.update(value, num)
    got = _critical_paths(values, nums)
    assert (got.values, got.nums) == (looped.values, looped.nums)
