"""simulate applies what the apiserver changes in a pod it creates: matchLabelKeys /
mismatchLabelKeys merged into the labelSelectors of the pod (anti-)affinity terms and of the topology
spread constraints (pkg/registry/core/pod strategy, applyMatchLabelKeysAndMismatchLabelKeys,
applyMatchLabelKeys)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.config import load
from kubesched.tools.simulate.create import prepare_for_create
from kubesched.tools.simulate.expand import Expander
from kubesched.tools.simulate.run import simulate
from kubesched.tools.simulate.state import ClusterState
from tests.builders import make_node, make_pod

HOST = "kubernetes.io/hostname"
LABELS = {"app": "web", "ver": "1"}


def term(selector: dict[str, Any] | None = None, **keys: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": HOST, **keys}
    if selector is not None:
        out["labelSelector"] = selector
    return out


def required(t: dict[str, Any], group: str = "podAntiAffinity") -> dict[str, Any]:
    return {"affinity": {group: {"requiredDuringSchedulingIgnoredDuringExecution": [t]}}}


def preferred(t: dict[str, Any], group: str = "podAffinity") -> dict[str, Any]:
    return {"affinity": {group: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": t}]}}}


def spread(selector: dict[str, Any] | None, keys: list[str]) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
                         "matchLabelKeys": keys}
    if selector is not None:
        c["labelSelector"] = selector
    return {"topologySpreadConstraints": [c]}


def _selector(spec: dict[str, Any]) -> Any:
    if "topologySpreadConstraints" in spec:
        return spec["topologySpreadConstraints"][0].get("labelSelector")
    (group,) = spec["affinity"].values()
    (terms,) = group.values()
    t = terms[0].get("podAffinityTerm", terms[0])
    return t.get("labelSelector")


IN_VER_1 = {"key": "ver", "operator": "In", "values": ["1"]}


@pytest.mark.parametrize(("spec", "want"), [
    pytest.param(required(term({"matchLabels": {"app": "web"}}, matchLabelKeys=["ver"])),
                 {"matchLabels": {"app": "web"}, "matchExpressions": [IN_VER_1]},
                 id="matchLabelKeys: key In (value)"),
    pytest.param(required(term({}, mismatchLabelKeys=["ver"]), "podAffinity"),
                 {"matchExpressions": [{"key": "ver", "operator": "NotIn", "values": ["1"]}]},
                 id="mismatchLabelKeys: key NotIn (value)"),
    pytest.param(preferred(term({"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                                matchLabelKeys=["ver", "app"])),
                 {"matchExpressions": [{"key": "app", "operator": "Exists"}, IN_VER_1,
                                       {"key": "app", "operator": "In", "values": ["web"]}]},
                 id="preferred term, appended in the keys' order"),
    pytest.param(required(term({}, matchLabelKeys=["missing"])), {}, id="a key the pod has no label for"),
    pytest.param(required(term(None, matchLabelKeys=["ver"])), None, id="no labelSelector: left alone"),
    pytest.param(spread({}, ["ver"]), {"matchExpressions": [IN_VER_1]}, id="spread constraint matchLabelKeys"),
    pytest.param(spread(None, ["ver"]), None, id="spread constraint without labelSelector: left alone"),
])
def test_label_keys_merged_at_create(spec: dict[str, Any], want: dict[str, Any] | None) -> None:
    spec = {"containers": [{"name": "c", "image": "x"}], **copy.deepcopy(spec)}
    prepare_for_create(spec, LABELS)
    assert _selector(spec) == want


def _deployment(affinity: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}], **affinity}}}}


ANTI_OWN_REVISION = required(term({}, matchLabelKeys=["pod-template-hash"]))


def test_deployment_pods_carry_their_revision_in_the_selector() -> None:
    out = Expander("shop").expand([_deployment(ANTI_OWN_REVISION)])
    for p in out.pods:
        assert p.spec.affinity is not None
        assert p.spec.affinity.pod_anti_affinity is not None
        selector = p.spec.affinity.pod_anti_affinity.required[0].label_selector
        assert selector is not None
        (expr,) = selector.match_expressions
        assert (expr.key, expr.operator, expr.values) == (
            "pod-template-hash", "In", [p.metadata.labels["pod-template-hash"]])


def test_anti_affinity_to_own_revision_ignores_other_pods() -> None:
    """The selector {} with matchLabelKeys [pod-template-hash] keeps the replicas apart, not away
    from every pod of the namespace: the merged requirement is what InterPodAffinity reads."""
    nodes = [make_node(name).label(HOST, name) for name in ("a", "b")]
    others = [make_pod("other", "shop").labels(app="other").node("a")]
    cluster = ClusterState({"nodes": [n.obj() for n in nodes], "pods": [p.obj() for p in others]})
    sim = simulate(load(None), cluster, Expander("shop").expand([_deployment(ANTI_OWN_REVISION)]))
    assert sorted(p.node or "" for p in sim.placements) == ["a", "b"]
