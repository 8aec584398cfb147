"""InterPodAffinity PreScore/Score/NormalizeScore, ported from kube-scheduler's
interpodaffinity/scoring_test.go (TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight),
plus the args parser, the events and the batch/one-node agreement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.fields import Errors
from kubesched.framework.status import Code, Status
from kubesched.plugins.inter_pod_affinity import StaticNamespaces, new, parse_args
from tests.builders import NodeBuilder, PodBuilder, affinity_term, label_selector, make_node, make_pod
from tests.unit.scheduling_helpers import pod_of, snapshot_with

SKIP = Status(Code.SKIP)
CHINA, INDIA, AZ1 = {"region": "China"}, {"region": "India"}, {"az": "az1"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1, S2 = {"security": "S1"}, {"security": "S2"}

_n = iter(range(10**6))


def pod(labels: dict[str, str] | None = None, node: str = "", ns: str = "") -> PodBuilder:
    b = make_pod(f"p{next(_n)}", ns).labels(**(labels or {}))
    return b.node(node) if node else b


def nodes(*labels: dict[str, str]) -> list[NodeBuilder]:
    out = []
    for i, ls in enumerate(labels, 1):
        b = make_node(f"node{i}")
        for k, v in ls.items():
            b.label(k, v)
        out.append(b)
    return out


def stay_with_s1_in_region(b: PodBuilder) -> PodBuilder:
    return b.affinity_term(affinity_term(("security", "In", ["S1"]), topology_key="region"), weight=5)


def stay_with_s2_in_region(b: PodBuilder) -> PodBuilder:
    return b.affinity_term(affinity_term(("security", "In", ["S2"]), topology_key="region"), weight=6)


def away_from_s1_in_az(b: PodBuilder) -> PodBuilder:
    return b.affinity_term(affinity_term(("security", "In", ["S1"]), topology_key="az"), anti=True, weight=5)


def away_from_s2_in_az(b: PodBuilder) -> PodBuilder:
    return b.affinity_term(affinity_term(("security", "In", ["S2"]), topology_key="az"), anti=True, weight=5)


def hard_affinity(b: PodBuilder) -> PodBuilder:
    return b.affinity_term(affinity_term(("security", "In", ["S1", "value2"]), topology_key="region")).affinity_term(
        affinity_term(("security", "Exists", []), ("wrongkey", "DoesNotExist", []), topology_key="region"))


def affinity3(b: PodBuilder) -> PodBuilder:
    b.affinity_term(affinity_term(("security", "NotIn", ["S1"]), ("security", "In", ["S2"]), topology_key="region"),
                    weight=8)
    b.affinity_term(affinity_term(("security", "Exists", []), ("wrongkey", "DoesNotExist", []), topology_key="region"),
                    weight=2)
    return b


def run_score(incoming: PodBuilder, pods: list[PodBuilder], node_list: list[NodeBuilder],
              args: dict[str, Any] | None = None,
              namespaces: dict[str, dict[str, str]] | None = None) -> tuple[Status | None, list[int]]:
    snap = snapshot_with(node_list, pods)  # type: ignore[arg-type]
    pl = new(args or {}, namespaces=StaticNamespaces(namespaces))
    state = CycleState()
    pi = PodInfo(pod_of(incoming))
    status = pl.pre_score(state, pi, snap, snap.all_rows)
    if status is not None:
        return status, []
    raw = [pl.score(state, pi, ni, snap) for ni in snap.node_infos]
    assert pl.score_batch(state, pi, snap, snap.all_rows).tolist() == raw
    scores = pl.normalize_scores(state, pi, np.array(raw, dtype=np.int64)).tolist()
    by_name = dict(zip(snap.names, scores, strict=True))
    return None, [by_name[n.obj().metadata.name] for n in node_list]


PREFERRED = [
    pytest.param(pod(S1), [], nodes(CHINA, INDIA, AZ1), {}, SKIP, [],
                 id="all nodes are same priority as Affinity is nil"),
    pytest.param(stay_with_s1_in_region(pod(S1)),
                 [pod(S1, "node1"), pod(S2, "node2"), pod(S1, "node3")], nodes(CHINA, INDIA, AZ1), {}, None,
                 [100, 0, 0], id="affinity: topology key and matching pods score high"),
    pytest.param(stay_with_s1_in_region(pod()), [pod(S1, "node1")], nodes(CHINA, CHINA_AZ1, INDIA), {}, None,
                 [100, 100, 0], id="same topology value as a matching pod, same score"),
    pytest.param(stay_with_s2_in_region(pod(S1)),
                 [pod(S2, "node1"), pod(S2, "node1"), pod(S2, "node2"), pod(S2, "node3"), pod(S2, "node4"),
                  pod(S2, "node5")],
                 nodes(CHINA, INDIA, CHINA, CHINA, INDIA), {}, None, [100, 0, 100, 100, 0],
                 id="region with more matching pods scores higher"),
    pytest.param(affinity3(pod(S1)), [pod(S1, "node1"), pod(S2, "node2"), pod(S1, "node3")],
                 nodes(CHINA, INDIA, AZ1), {}, None, [20, 100, 0],
                 id="different label operators including some match failures"),
    pytest.param(pod(S1), [hard_affinity(pod(S1, "node1")), hard_affinity(pod(S2, "node2"))],
                 nodes(CHINA, INDIA, AZ1), {}, None, [100, 100, 0],
                 id="affinity symmetry: required affinity of existing pods"),
    pytest.param(away_from_s1_in_az(pod(S1)), [pod(S1, "node1"), pod(S2, "node2")], nodes(AZ1, CHINA), {}, None,
                 [0, 100], id="anti affinity: pod that does not match existing pods scores high"),
    pytest.param(away_from_s1_in_az(pod(S1)), [pod(S1, "node1"), pod(S1, "node2")], nodes(AZ1, CHINA), {}, None,
                 [0, 100], id="anti affinity: node without the topology key scores higher"),
    pytest.param(away_from_s1_in_az(pod(S1)), [pod(S1, "node1"), pod(S1, "node1"), pod(S2, "node2")],
                 nodes(AZ1, INDIA), {}, None, [0, 100], id="anti affinity: more unmatched scores high"),
    pytest.param(pod(S2), [away_from_s2_in_az(pod(S1, "node1")), pod(S2, "node2")], nodes(AZ1, {"az": "az2"}), {},
                 None, [0, 100], id="anti affinity symmetry"),
    pytest.param(pod(S2), [away_from_s2_in_az(stay_with_s1_in_region(pod(S1, "node1"))),
                           stay_with_s2_in_region(pod(S2, "node2"))],
                 nodes(CHINA, INDIA), {"ignorePreferredTermsOfExistingPods": True}, SKIP, [],
                 id="ignore preferred terms of existing pods"),
    pytest.param(pod(S2), [away_from_s2_in_az(stay_with_s1_in_region(pod(S1, "node1"))),
                           stay_with_s2_in_region(pod(S2, "node2"))],
                 nodes(CHINA, INDIA), {}, None, [0, 100], id="do not ignore preferred terms of existing pods"),
    pytest.param(pod(S2), [], [], {}, SKIP, [], id="no nodes to score"),
    pytest.param(pod(S1).affinity_term(affinity_term(("security", "In", ["{{.bad-value.}}"]), topology_key="region"),
                                       weight=8), [pod(S1, "node1")], nodes(CHINA), {},
                 Status(Code.ERROR, "failed to parse pod: preferredAffinityTerms: values[0][security]: Invalid value: "
                        "\"{{.bad-value.}}\": a valid label must be an empty string or consist of alphanumeric "
                        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"), [],
                 id="invalid Affinity fails PreScore"),
]


@pytest.mark.parametrize(("incoming", "pods", "node_list", "args", "want_status", "want"), PREFERRED)
def test_preferred_affinity(incoming: PodBuilder, pods: list[PodBuilder], node_list: list[NodeBuilder],
                            args: dict[str, Any], want_status: Status | None, want: list[int]) -> None:
    status, got = run_score(incoming, pods, node_list, args)
    assert status == want_status
    assert got == want


def hard_pod_affinity(b: PodBuilder) -> PodBuilder:
    return b.affinity_term(affinity_term(("service", "In", ["S1"]), topology_key="region",
                                         namespaces=("", "subteam2.team2"),
                                         namespace_selector=label_selector(("team", "In", ["team1"]))))


@pytest.mark.parametrize(("ns", "weight", "want_status", "want"), [
    pytest.param("", 1, None, [100, 100, 0], id="with default weight"),
    pytest.param("", 0, SKIP, [], id="with zero weight"),
    pytest.param("subteam1.team2", 1, SKIP, [], id="with no matching namespace"),
    pytest.param("subteam1.team1", 1, None, [100, 100, 0], id="with matching NamespaceSelector"),
    pytest.param("subteam2.team2", 1, None, [100, 100, 0], id="with matching Namespaces"),
])
def test_hard_pod_affinity_symmetric_weight(ns: str, weight: int, want_status: Status | None,
                                            want: list[int]) -> None:
    existing = [hard_pod_affinity(pod(node="node1")), hard_pod_affinity(pod(node="node2"))]
    status, got = run_score(pod({"service": "S1"}, ns=ns), existing, nodes(CHINA, INDIA, AZ1),
                            {"hardPodAffinityWeight": weight},
                            {"subteam1.team1": {"team": "team1"}, "subteam1.team2": {"team": "team2"}})
    assert status == want_status
    assert got == want


def test_normalize_truncates_like_go() -> None:
    incoming = pod(S1).affinity_term(affinity_term(("security", "In", ["S1"]), topology_key="region"), weight=1)
    incoming.affinity_term(affinity_term(("security", "In", ["S1"]), topology_key="region"), anti=True, weight=3)
    pods = [pod(S1, "node1"), pod({"security": "S1"}, "node3"), pod(S1, "node3")]
    status, got = run_score(incoming, pods, nodes(CHINA, {"region": "X"}, INDIA))
    assert status is None
    # raw scores -2, 0, -4: (s - min) / (max - min) * 100 truncated
    assert got == [50, 100, 0]


# --- args and events ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "want", "errors"), [
    pytest.param({}, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}, [], id="defaults"),
    pytest.param({"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True},
                 {"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True}, [], id="max"),
    pytest.param({"hardPodAffinityWeight": 0},
                 {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False}, [], id="zero"),
    pytest.param({"hardPodAffinityWeight": 101}, None,
                 ["args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"], id="too-big"),
    pytest.param({"hardPodAffinityWeight": -1}, None,
                 ["args.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"], id="negative"),
    pytest.param({"hardPodAffinityWeight": "1"}, None,
                 ['args.hardPodAffinityWeight: Invalid value: "1": must be an integer'], id="wrong-type"),
    pytest.param({"hardPodAfinityWeight": 1}, None,
                 ["args.hardPodAfinityWeight: Unknown field (did you mean hardPodAffinityWeight?): valid fields "
                  "here are: hardPodAffinityWeight, ignorePreferredTermsOfExistingPods"], id="unknown-field"),
])
def test_parse_args(raw: dict[str, Any], want: dict[str, Any] | None, errors: list[str]) -> None:
    errs: Errors = []
    got = parse_args(raw, "args", errs)
    assert [str(x) for x in errs] == errors
    if want is not None:
        assert got == want
        assert parse_args(got, "args", []) == got
    else:
        with pytest.raises(ValueError, match="InterPodAffinity args"):
            new(raw)


def test_events_to_register() -> None:
    """kube-scheduler's EventsToRegister, each event with its queueing hint."""
    events = new({}).events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
        ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]
    assert all(e.hint is not None for e in events)
