"""The NodeAffinity score of preferred terms, worked out from kube-scheduler's int64 arithmetic."""

from __future__ import annotations

from kubesched.plugins.node_affinity import plugin as node_affinity
from tests.builders import make_node, make_pod
from tests.unit.plugins.score_helpers import scores


def test_node_affinity_preferred_score() -> None:
    nodes = [make_node("a").label("zone", "a"), make_node("b").label("zone", "b").label("ssd", "1")]
    pod = make_pod("p").preferred(5, ("zone", "In", ["b"])).preferred(3, ("ssd", "Exists", []))
    plugin = node_affinity.NodeAffinity()
    assert scores(plugin, pod, nodes) == [0, 8]
