"""`kubesched explain`'s evaluation on built snapshots: every filter's verdict on every node, the
reported one, scores, and agreement with schedule_pod's decision and message."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import Code, FitError, NodeCursor, PodInfo, ScheduleResult, build_profile, schedule_pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.runtime.framework import run_post_filter
from kubesched.plugins.registry import in_tree_registry
from kubesched.tools.explain.cluster import ExplainError, choose_profile, pending_view
from kubesched.tools.explain.evaluate import explain
from kubesched.tools.explain.model import PRE_FILTER, Explanation, NodeExplanation
from kubesched.tools.explain.render import render_json, render_table, render_yaml, to_dict
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod, term
from tests.unit.scheduling_helpers import default_profile, node_of, pod_of, snapshot_with


def run(nodes: list[NodeBuilder], pod: PodBuilder, existing: list[PodBuilder] = ()) -> Explanation:  # type: ignore[assignment]
    return explain(default_profile(), snapshot_with(list(nodes), list(existing)), PodInfo(pod_of(pod)))


def by_name(e: Explanation) -> dict[str, NodeExplanation]:
    return {n.name: n for n in e.nodes}


def failing(n: NodeExplanation) -> list[tuple[str, tuple[str, ...], bool]]:
    return [(v.plugin, v.reasons, v.reported) for v in n.filters if v.failed]


TAINT = "node(s) had untolerated taint(s)"


@pytest.mark.parametrize(("nodes", "existing", "pod", "want"), [
    pytest.param([make_node("a").taint("x").capacity(cpu="1"), make_node("b").capacity(cpu="1"), make_node("c")], [],
                 make_pod("p").req(cpu="2"),
                 {"a": [("TaintToleration", (TAINT,), True), ("NodeResourcesFit", ("Insufficient cpu",), False)],
                  "b": [("NodeResourcesFit", ("Insufficient cpu",), True)], "c": []},
                 id="every-failing-filter-listed-first-reported"),
    pytest.param([make_node("a").unschedulable().label("zone", "x").taint("t"), make_node("b").label("zone", "y")], [],
                 make_pod("p").node_selector(zone="y"),
                 {"a": [("NodeUnschedulable", ("node(s) were unschedulable",), True),
                        ("TaintToleration", (TAINT,), False),
                        ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",), False)], "b": []},
                 id="three-filters-on-one-node"),
    pytest.param([make_node("a").capacity(pods="1"), make_node("b")], [make_pod("q").node("a")],
                 make_pod("p").host_port(80),
                 {"a": [("NodeResourcesFit", ("Too many pods",), True)], "b": []}, id="pods"),
    pytest.param([make_node("a"), make_node("b")], [make_pod("q").node("a").host_port(80)],
                 make_pod("p").host_port(80),
                 {"a": [("NodePorts", ("node(s) didn't have free ports for the requested pod ports",), True)],
                  "b": []}, id="ports"),
])
def test_filter_verdicts(nodes: list[NodeBuilder], existing: list[PodBuilder], pod: PodBuilder,
                         want: dict[str, list[tuple[str, tuple[str, ...], bool]]]) -> None:
    e = run(nodes, pod, existing)
    got = {name: failing(n) for name, n in by_name(e).items()}
    assert got == want
    for n in e.nodes:
        assert n.feasible == (not want[n.name])
        # Every filter plugin of the profile has its say on every node.
        assert [v.plugin for v in n.filters] == [pl.name for pl in default_profile().filter]


def test_skipped_filter_shown_as_skip() -> None:
    e = run([make_node("a")], make_pod("p"))
    ports = next(v for v in e.nodes[0].filters if v.plugin == "NodePorts")
    assert ports.code == Code.SKIP
    assert not ports.failed


SCHEDULE_CASES = [
    pytest.param([make_node("a"), make_node("b")], [make_pod("q").node("a").req(cpu="2")], make_pod("p").req(cpu="1"),
                 id="least-allocated"),
    pytest.param([make_node("a").taint("x", effect="PreferNoSchedule"), make_node("b")], [], make_pod("p"),
                 id="prefer-no-schedule"),
    pytest.param([make_node("a").label("disk", "ssd"), make_node("b"), make_node("c").taint("t")], [],
                 make_pod("p").preferred(5, ("disk", "In", ["ssd"])), id="preferred-affinity"),
    pytest.param([make_node("a").image(500_000_000, "big:1"), make_node("b"), make_node("c").capacity(cpu="1")], [],
                 make_pod("p").image("big:1").req(cpu="2"), id="image-locality"),
    pytest.param([make_node("a").capacity(cpu="8"), make_node("b").capacity(cpu="2")], [],
                 make_pod("p").req(cpu="1", memory="1Gi"), id="bigger-node"),
]


@pytest.mark.parametrize(("nodes", "existing", "pod"), SCHEDULE_CASES)
def test_selected_is_schedule_pods_choice(nodes: list[NodeBuilder], existing: list[PodBuilder],
                                          pod: PodBuilder) -> None:
    profile = default_profile()
    snapshot = snapshot_with(list(nodes), list(existing))
    result = schedule_pod(profile, snapshot, PodInfo(pod_of(pod)), rng=random.Random(0), cursor=NodeCursor())
    e = explain(profile, snapshot, PodInfo(pod_of(pod)))
    assert isinstance(result, ScheduleResult)
    assert e.selected == [result.suggested_host]
    assert e.cycle_pick == result.suggested_host
    assert e.message == ""
    # Totals and normalised scores are the cycle's (all nodes are scored below 100 nodes).
    feasible = {n.name: n for n in e.feasible}
    assert {k: feasible[k].total for k in result.total_scores()} == result.total_scores()
    for plugin, per_node in result.plugin_scores().items():
        for name, score in per_node.items():
            assert next(s.normalized for s in feasible[name].scores if s.plugin == plugin) == score
    for n in e.feasible:
        assert n.total == sum(s.normalized * s.weight for s in n.scores)


def test_raw_score_before_normalisation() -> None:
    e = run([make_node("a").label("disk", "ssd"), make_node("b")], make_pod("p").preferred(5, ("disk", "In", ["ssd"])))
    aff = {n.name: next(s for s in n.scores if s.plugin == "NodeAffinity") for n in e.nodes}
    assert (aff["a"].raw, aff["a"].normalized, aff["a"].weight) == (5, 100, 2)
    assert (aff["b"].raw, aff["b"].normalized) == (0, 0)


def test_ties_all_selected() -> None:
    e = run([make_node("a"), make_node("b"), make_node("c").taint("t")], make_pod("p"))
    assert e.selected == ["a", "b"]


FIT_ERROR_CASES = [
    pytest.param([make_node("a").taint("x"), make_node("b").taint("y"), make_node("c").taint("z")], [],
                 make_pod("p"), id="taints"),
    pytest.param([make_node("a").capacity(cpu="1"), make_node("b").capacity(memory="1Gi"),
                  make_node("c").capacity(pods="1")], [make_pod("q").node("c")],
                 make_pod("p").req(cpu="2", memory="2Gi"), id="resources"),
    pytest.param([make_node("a").unschedulable(), make_node("b").label("zone", "x"), make_node("c").label("zone", "y"),
                  make_node("d").taint("t"), make_node("e").taint("t")], [],
                 make_pod("p").node_selector(zone="z"), id="mixed"),
    pytest.param([make_node("a")], [], make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["b"]),))),
                 id="prefilter-names-empty"),
    pytest.param([make_node("a"), make_node("b").taint("t")], [],
                 make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["b"]),))),
                 id="prefilter-names-then-taint"),
    pytest.param([make_node("a"), make_node("b")], [], make_pod("p").pod_affinity(app="x"), id="prefilter-rejects"),
    pytest.param([], [], make_pod("p"), id="no-nodes"),
]


@pytest.mark.parametrize(("nodes", "existing", "pod"), FIT_ERROR_CASES)
def test_message_is_schedule_pods(nodes: list[NodeBuilder], existing: list[PodBuilder], pod: PodBuilder) -> None:
    snapshot = snapshot_with(list(nodes), list(existing))
    profile = build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(),
                            Handle(snapshot=lambda: snapshot))
    state = CycleState()
    info = PodInfo(pod_of(pod))
    result = schedule_pod(profile, snapshot, info, rng=random.Random(0), cursor=NodeCursor(), state=state)
    e = explain(profile, snapshot, PodInfo(pod_of(pod)))
    assert isinstance(result, FitError)
    # The whole message the cycle writes, PostFilter's (preemption's dry run) included.
    run_post_filter(profile, state, info, result)
    assert e.message == result.message()
    assert (" preemption: " in e.message) == bool(nodes)
    assert e.selected == []
    assert len(e.nodes) == len(nodes)
    for n in e.nodes:
        assert not n.feasible
        reported = n.reported
        assert reported is not None
        # The reported verdict is the status the cycle's diagnosis recorded for the node, if any.
        recorded = result.diagnosis.node_to_status.get(n.name)
        if recorded is not None:
            assert (reported.plugin, reported.reasons) == (recorded.plugin, recorded.reasons)
        else:
            assert reported.stage == PRE_FILTER


def test_prefilter_exclusion_then_filters() -> None:
    e = run([make_node("a"), make_node("b").taint("t")],
            make_pod("p").required_terms(term(fields=(("metadata.name", "In", ["b"]),))))
    a, b = by_name(e)["a"], by_name(e)["b"]
    assert a.reported is not None
    assert a.reported.stage == PRE_FILTER
    assert a.reported.reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)
    # The node the PreFilterResult left out still shows what each filter says of it.
    assert ("NodeAffinity", ("node(s) didn't match Pod's node affinity/selector",), False) in failing(a)
    assert failing(b) == [("TaintToleration", (TAINT,), True)]
    names = next(v for v in e.pre_filter if v.plugin == "NodeAffinity").node_names
    assert names == ("b",)


def test_prefilter_rejection_on_every_node() -> None:
    e = run([make_node("a"), make_node("b")], make_pod("p").volume("data", ephemeral=True))
    for n in e.nodes:
        assert n.reported is not None
        # An ephemeral volume whose claim is not created yet: VolumeBinding's PreFilter rejects the
        # pod on every node.
        assert (n.reported.plugin, n.reported.stage) == ("VolumeBinding", PRE_FILTER)
        assert n.reported.reasons == ('waiting for ephemeral volume controller to create the persistentvolumeclaim '
                                      '"p-data"',)
    assert any("no Filter plugin runs" in note for note in e.notes)


def test_sampling_marks_the_cycles_search() -> None:
    nodes = [make_node(f"n{i:03d}") for i in range(300)]
    profile = default_profile()
    snapshot = snapshot_with(list(nodes))
    pod = make_pod("p").req(cpu="1")
    result = schedule_pod(profile, snapshot, PodInfo(pod_of(pod)), rng=random.Random(0), cursor=NodeCursor())
    e = explain(profile, snapshot, PodInfo(pod_of(pod)))
    assert isinstance(result, ScheduleResult)
    assert e.nodes_to_find == result.feasible_nodes == 144
    assert {n.name for n in e.nodes if n.sampled} == set(result.total_scores())
    assert len(e.feasible) == 300  # all scored for the explanation
    assert any("percentageOfNodesToScore" in note for note in e.notes)


def test_pending_view_frees_a_bound_pods_room() -> None:
    bound = make_pod("p").req(cpu="3").node("a")
    other = make_pod("q").node("a").req(cpu="1")
    cache, pending = pending_view([node_of(make_node("a"))], [pod_of(bound), pod_of(other)], pod_of(bound))
    assert pending.spec.node_name == ""
    info = cache.node_info("a")
    assert info is not None
    assert info.requested.milli_cpu == 1000
    e = explain(default_profile(), cache.snapshot(), PodInfo(pending))
    assert e.selected == ["a"]


def test_choose_profile() -> None:
    a = build_profile(ProfileConfig("a", kube_scheduler_default_plugins()), in_tree_registry())
    b = build_profile(ProfileConfig("b", kube_scheduler_default_plugins()), in_tree_registry())
    profiles = {"a": a, "b": b}
    assert choose_profile(profiles, pod_of(make_pod("p").scheduler("b")), None) is b
    assert choose_profile(profiles, pod_of(make_pod("p").scheduler("nobody")), None) is a
    assert choose_profile(profiles, pod_of(make_pod("p")), "b") is b
    with pytest.raises(ExplainError, match=r"no profile 'c'; the profiles are: a, b"):
        choose_profile(profiles, pod_of(make_pod("p")), "c")


def test_json_and_yaml_documents() -> None:
    e = run([make_node("a").taint("x"), make_node("b")], make_pod("p").req(cpu="1"))
    doc = json.loads(render_json(e))
    assert doc == yaml.safe_load(render_yaml(e)) == to_dict(e)
    assert {"pod", "profile", "nodes", "selected", "message"} <= set(doc)
    assert doc["pod"] == "default/p"
    assert doc["selected"] == ["b"]
    a, b = doc["nodes"]
    assert set(a) >= {"name", "feasible", "filters", "scores", "total"}
    assert {"plugin", "code", "reasons"} <= set(a["filters"][0])
    assert {"plugin", "raw", "normalized", "weight"} <= set(b["scores"][0])
    taint = next(f for f in a["filters"] if f["plugin"] == "TaintToleration")
    assert taint["code"] == "UnschedulableAndUnresolvable"
    assert taint["reported"] is True
    assert a["scores"] == []
    assert a["total"] is None


def test_table_groups_a_thousand_nodes() -> None:
    nodes = ([make_node(f"w{i:04d}") for i in range(900)] + [make_node(f"t{i:03d}").taint("x") for i in range(90)]
             + [make_node(f"s{i}").capacity(cpu="1") for i in range(10)])
    e = run(nodes, make_pod("p").req(cpu="2"))
    table = render_table(e)
    assert len(table.splitlines()) < 25
    assert "TaintToleration: node(s) had untolerated taint(s)" in table
    assert "NodeResourcesFit: Insufficient cpu" in table
    # 900 feasible nodes in two groups: those a search from the first node examines, and the rest.
    assert "420    w0000 w0001 w0002 +417 more" in table
    assert "selected: w0000 w0001 w0002 +897 more, tied" in table
    every = render_table(e, show_all=True)
    assert all(n.name in every for n in e.nodes)


def test_table_message() -> None:
    e = run([make_node("a").taint("x")], make_pod("p"))
    assert f"message: 0/1 nodes are available: 1 {TAINT}." in render_table(e)
