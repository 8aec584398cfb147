"""The NodeAffinity score of preferred terms, worked out from kube-scheduler's int64 arithmetic."""

from __future__ import annotations

import pytest

from kubesched.framework import Code, CycleState, PodInfo
from kubesched.plugins.node_affinity import plugin as node_affinity
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.plugins.score_helpers import scores
from tests.unit.scheduling_helpers import snapshot_with


def test_node_affinity_preferred_score() -> None:
    nodes = [make_node("a").label("zone", "a"), make_node("b").label("zone", "b").label("ssd", "1")]
    pod = make_pod("p").preferred(5, ("zone", "In", ["b"])).preferred(3, ("ssd", "Exists", []))
    plugin = node_affinity.NodeAffinity()
    assert scores(plugin, pod, nodes) == [0, 8]


HOST_1 = make_node("host_1").label("label_1", "label_1_val")
HOST_2 = make_node("host_2").label("label_1", "label_1_val")
HOST_3 = make_node("host_3")


@pytest.mark.parametrize(("pod", "want"), [
    # TestPreferredSchedulingTermsScore "first and third term match": 5 + 11 = 16 on host_1; by hand,
    # host_2 fails the metadata.name term (11) and host_3 has no label_1 (0).
    pytest.param(make_pod("p").preferred(5, fields=(("metadata.name", "In", ["host_1"]),))
                 .preferred(7, ("unknown_label", "In", ["unknown_label_val"]))
                 .preferred(11, ("label_1", "In", ["label_1_val"])),
                 [16, 11, 0], id="first and third term match"),
    # TestPreferredSchedulingTermsScore "invalid field selector but no weight, error not reported":
    # a weight-0 term is not parsed; the weight-1 term after it still counts (by hand: 1, 1, 0).
    pytest.param(make_pod("p").preferred(0, fields=(("metadata.name", "In", ["host_1", "host_2"]),))
                 .preferred(1, ("label_1", "Exists", [])),
                 [1, 1, 0], id="invalid field selector but no weight, error not reported"),
    # isEmptyNodeSelectorTerm: an empty preference is skipped whatever its weight (by hand: 3, 3, 0).
    pytest.param(make_pod("p").preferred(5).preferred(3, ("label_1", "Exists", [])),
                 [3, 3, 0], id="empty preference skipped"),
])
def test_preferred_scheduling_terms_score(pod: PodBuilder, want: list[int]) -> None:
    plugin = node_affinity.NodeAffinity()
    snap = snapshot_with([HOST_1, HOST_2, HOST_3])
    assert plugin.pre_score(CycleState(), PodInfo(pod.obj()), snap, snap.all_rows) is None
    assert scores(plugin, pod, [HOST_1, HOST_2, HOST_3]) == want


def test_preferred_scheduling_terms_invalid_with_weight() -> None:
    """TestPreferredSchedulingTermsScore "invalid field selector and label selector": with a weight,
    two values under matchFields In fail to parse, and PreScore fails with an error."""
    pod = make_pod("p").preferred(1, fields=(("metadata.name", "In", ["host_1", "host_2"]),))
    snap = snapshot_with([HOST_1])
    status = node_affinity.NodeAffinity().pre_score(CycleState(), PodInfo(pod.obj()), snap, snap.all_rows)
    assert status is not None
    assert status.code == Code.ERROR


def test_preferred_scheduling_term_with_a_value_that_is_no_label_value() -> None:
    """The apiserver admits any value in a preferred term (ValidatePreferredSchedulingTerms allows
    invalid label values), but labels.NewRequirement rejects "-1" (validateLabelValue), so
    NewPreferredSchedulingTerms fails and so does PreScore, with an error."""
    pod = make_pod("p").preferred(1, ("gen", "Gt", ["-1"]))
    snap = snapshot_with([HOST_1, HOST_2])
    status = node_affinity.NodeAffinity().pre_score(CycleState(), PodInfo(pod.obj()), snap, snap.all_rows)
    assert status is not None
    assert status.code == Code.ERROR
