"""`kubesched shadow`'s verdicts: the classifier on built snapshots, and the watcher's handlers (a bind
judged on the cache before the cache takes it in)."""

from __future__ import annotations

import io

import msgspec
import orjson
import pytest

from kubesched.api.client import ApiClient
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load, loads
from kubesched.framework import build_profile
from kubesched.metrics import ShadowMetrics
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.sources import KINDS, ClusterSources
from kubesched.tools.shadow.classify import DIFFERENT, SAME, TIE, UNSCHEDULABLE, Verdict, classify
from kubesched.tools.shadow.watch import Shadow, Tally
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.scheduling_helpers import default_profile, snapshot_with

MOST_ALLOCATED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: most
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""

BIG_SMALL = [make_node("big").capacity(cpu="8"), make_node("small").capacity(cpu="4")]


@pytest.mark.parametrize(("nodes", "pod", "bound_to", "verdict"), [
    pytest.param(BIG_SMALL, make_pod("p").req(cpu="2", memory="1Gi"), "big", SAME, id="same"),
    pytest.param([make_node("a"), make_node("b")], make_pod("p").req(cpu="1"), "b", TIE, id="tie"),
    pytest.param(BIG_SMALL, make_pod("p").req(cpu="2", memory="1Gi"), "small", DIFFERENT, id="different"),
    pytest.param([make_node("a").taint("k"), make_node("b")], make_pod("p"), "a", DIFFERENT, id="infeasible-to-us"),
    pytest.param(BIG_SMALL, make_pod("p").req(cpu="16"), "big", UNSCHEDULABLE, id="unschedulable"),
])
def test_classify(nodes: list[NodeBuilder], pod: PodBuilder, bound_to: str, verdict: str) -> None:
    bound = pod.node(bound_to).obj()
    v = classify(default_profile(), snapshot_with(list(nodes)), bound, bound_to)
    assert v.verdict == verdict
    assert v.pod == "default/p"
    assert v.node == bound_to
    if verdict == SAME:
        assert v.best == (bound_to,)
        assert v.node_total == v.best_total
    if verdict == TIE:
        assert set(v.best) == {"a", "b"}
        assert v.node_total == v.best_total
    if verdict == DIFFERENT and v.node_total is not None:
        assert v.best == ("big",)
        assert v.node_total < (v.best_total or 0)
    if v.verdict == UNSCHEDULABLE:
        assert v.message.startswith("0/2 nodes are available: 2 Insufficient cpu. preemption: ")
    if bound_to == "a" and verdict == DIFFERENT:  # the tainted node: kubesched gives it no total
        assert v.node_total is None
        assert v.best == ("b",)


def test_most_allocated_profile_disagrees() -> None:
    profiles = loads(MOST_ALLOCATED).profiles
    most = build_profile(profiles[0], in_tree_registry())
    bound = make_pod("p").req(cpu="2", memory="1Gi").node("big").obj()
    snap = snapshot_with(list(BIG_SMALL))
    assert classify(default_profile(), snap, bound, "big").verdict == SAME
    v = classify(most, snap, bound, "big")
    assert v.verdict == DIFFERENT
    assert v.best == ("small",)


def shadow(out: io.BytesIO | None = None) -> Shadow:
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    return Shadow(client, load(None), disagreements=out, metrics=ShadowMetrics(process=False))


def test_binds_are_judged_before_the_cache_takes_them() -> None:
    out = io.BytesIO()
    s = shadow(out)
    for n in (make_node("a").capacity(cpu="1"), make_node("b").capacity(cpu="1")):
        s._node_added(n.obj())
    s.ready.set()
    first = make_pod("one").req(cpu="1").obj()
    s._pod_updated(first, msgspec.structs.replace(first, spec=msgspec.structs.replace(first.spec, node_name="a")))
    second = make_pod("two").req(cpu="1").obj()
    s._pod_updated(second, msgspec.structs.replace(second, spec=msgspec.structs.replace(second.spec, node_name="a")))
    # The first found both nodes equal; the second saw the first on a, so a no longer fits it.
    assert s.tally.counts == {TIE: 1, DIFFERENT: 1}
    lines = [orjson.loads(line) for line in out.getvalue().splitlines()]
    assert [(d["pod"], d["verdict"], d["node"], d["nodeTotal"], d["best"]) for d in lines] == [
        ("default/two", DIFFERENT, "a", None, ["b"])]
    assert s.cache.node_of(first.metadata.uid) == "a"
    assert b'kubesched_shadow_decisions_total{scheduler="default-scheduler",verdict="tie"} 1.0' in (
        s.metrics.exposition())


def test_other_schedulers_and_early_binds_are_not_judged() -> None:
    s = shadow()
    s._node_added(make_node("a").obj())
    early = make_pod("early").obj()
    s._pod_updated(early, make_pod("early").node("a").obj())  # before every informer synced
    s.ready.set()
    mine = make_pod("mine").scheduler("kubesched").obj()
    s._pod_updated(mine, make_pod("mine").scheduler("kubesched").node("a").obj())
    assert s.tally.total == 0
    assert s.cache.pod_count == 2


def test_tally_summary() -> None:
    t = Tally()
    assert t.summary()["agreement"] is None
    for verdict in (SAME, TIE, TIE, DIFFERENT):
        t.add(Verdict("ns/p", "n", verdict))
    assert t.summary() == {"binds": 4, "same": 1, "tie": 2, "different": 1, "unschedulable": 0, "error": 0,
                           "agreement": 0.75}


def test_every_informer_has_a_kind() -> None:
    """A kind added to ClusterSources must be in KINDS too, so snapshot files carry it."""
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    sources = ClusterSources(client)
    assert sorted(i.resource.plural for i in sources.all) == sorted(KINDS)
    assert all(sources.store(plural).resource.plural == plural for plural in KINDS)


def test_health_names_a_failing_informer() -> None:
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    s = Shadow(client, load(None), metrics=ShadowMetrics(process=False), clock=lambda: 1000.0)
    assert s.health() is None
    s.sources.nodes.failing_fatally_since = 900.0
    s.sources.nodes.last_error = "ApiError: 403 forbidden"
    assert s.health() == "informer/nodes has failed for 100s: ApiError: 403 forbidden"
