"""PodTopologySpread's PreScore / Score / NormalizeScore, table tests ported from kube-scheduler's
scoring_test.go (TestPodTopologySpreadScore: every case but the feature-gate-disabled one, gates
being on in v1.37), on the one-node and the batch paths. `failed` nodes are in the snapshot but did
not pass Filter (kube-scheduler's failedNodes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.model.objects import Node, Pod
from kubesched.plugins.pod_topology_spread import InMemorySelectors, new
from kubesched.plugins.pod_topology_spread.scoring import PRE_SCORE_KEY, PreScoreState, go_round
from tests.builders import NodeBuilder, PodBuilder, label_selector
from tests.unit.pts_helpers import BAR, FOO, HOST, P, nodes_of, pods_of
from tests.unit.scheduling_helpers import snapshot_with

CASES = [
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b'),
        (),
        '',
        (), False, {'node-a': 100, 'node-b': 100},
        id='one constraint on node, no existing pods'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a',),
        ('node-b host=node-b',),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo',
        (), False, {'node-a': 100},
        id='one constraint on node, only one node is candidate'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b'),
        (),
        'p-a1@node-a foo, p-b1@node-b foo',
        (), False, {'node-a': 100, 'node-b': 100},
        id='one constraint on node, all nodes have the same number of matching pods'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b', 'node-c host=node-c', 'node-d host=node-d'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-d1@node-d foo, p-d2@node-d foo, '
        'p-d3@node-d foo',
        (), False, {'node-a': 20, 'node-b': 60, 'node-c': 100, 'node-d': 0},
        id='one constraint on node, all 4 nodes are candidates'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', None),
        ('node-a host=node-a', 'node-b host=node-b', 'node-c host=node-c', 'node-d host=node-d'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-d1@node-d foo, p-d2@node-d foo, '
        'p-d3@node-d foo',
        (), False, {'node-a': 100, 'node-b': 100, 'node-c': 100, 'node-d': 100},
        id='one constraint on node, null selector'),
    pytest.param(
        P("p foo")
        .spread(2, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b', 'node-c host=node-c', 'node-d host=node-d'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-d1@node-d foo, p-d2@node-d foo, '
        'p-d3@node-d foo',
        (), False, {'node-a': 33, 'node-b': 66, 'node-c': 100, 'node-d': 16},
        id='one constraint on node, all 4 nodes are candidates, maxSkew=2'),
    pytest.param(
        P("p foo")
        .spread(3, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b', 'node-c host=node-c', 'node-d host=node-d'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-a3@node-a foo, p-a4@node-a foo, p-b1@node-b foo, '
        'p-b2@node-b foo, p-b3@node-b foo, p-c1@node-c foo, p-c2@node-c foo, p-d1@node-d foo',
        (), False, {'node-a': 44, 'node-b': 66, 'node-c': 77, 'node-d': 100},
        id='one constraint on node, all 4 nodes are candidates, maxSkew=3'),
    pytest.param(
        P("p foo"),
        ('node-a host=node-a', 'node-b host=node-b', 'node-c host=node-c', 'node-d host=node-d'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-a3@node-a foo, p-a4@node-a foo, p-b1@node-b foo, '
        'p-b2@node-b foo, p-b3@node-b foo, p-c1@node-c foo, p-c2@node-c foo, p-d1@node-d foo',
        (), True, {'node-a': 44, 'node-b': 66, 'node-c': 77, 'node-d': 100},
        id="system defaulting, nodes don't have zone, pods match service"),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b', 'node-x host=node-x'),
        ('node-y host=node-y',),
        'p-a1@node-a foo, p-a2@node-a foo, p-a3@node-a foo, p-a4@node-a foo, p-b1@node-b foo, '
        'p-b2@node-b foo, p-x1@node-x foo, p-y1@node-y foo, p-y2@node-y foo, p-y3@node-y foo',
        (), False, {'node-a': 33, 'node-b': 83, 'node-x': 100},
        id='one constraint on node, 3 out of 4 nodes are candidates'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b n=node-b', 'node-x host=node-x'),
        ('node-y host=node-y',),
        'p-a1@node-a foo, p-a2@node-a foo, p-a3@node-a foo, p-a4@node-a foo, p-b1@node-b foo, '
        'p-b2@node-b foo, p-x1@node-x foo, p-y1@node-y foo, p-y2@node-y foo, p-y3@node-y foo',
        (), False, {'node-a': 16, 'node-b': 0, 'node-x': 100},
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key"),
    pytest.param(
        P("p foo")
        .spread(1, 'zone', 'ScheduleAnyway', FOO),
        ('node-a zone=zone1 host=node-a', 'node-b zone=zone1 host=node-b', 'node-x zone=zone2 host=node-x'),
        ('node-y zone=zone2 host=node-y',),
        'p-a1@node-a foo, p-a2@node-a foo, p-a3@node-a foo, p-a4@node-a foo, p-b1@node-b foo, '
        'p-b2@node-b foo, p-x1@node-x foo, p-y1@node-y foo, p-y2@node-y foo, p-y3@node-y foo',
        (), False, {'node-a': 75, 'node-b': 75, 'node-x': 100},
        id='one constraint on zone, 3 out of 4 nodes are candidates'),
    pytest.param(
        P("p foo")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a zone=zone1 host=node-a', 'node-x zone=zone2 host=node-x'),
        ('node-b zone=zone1 host=node-b', 'node-y zone=zone2 host=node-y'),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-x1@node-x foo, p-x2@node-x foo, '
        'p-y1@node-y foo, p-y2@node-y foo, p-y3@node-y foo, p-y4@node-y foo',
        (), False, {'node-a': 100, 'node-x': 63},
        id='two Constraints on zone and node, 2 out of 4 nodes are candidates'),
    pytest.param(
        P("p foo bar")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, 'zone', 'ScheduleAnyway', BAR),
        ('node-a zone=zone1', 'node-x zone=zone2'),
        ('node-b zone=zone1', 'node-y zone=zone2'),
        'p-a1@node-a foo bar, p-a2@node-a foo, p-b1@node-b foo bar, p-y1@node-y foo, p-y2@node-y foo bar, '
        'p-y3@node-y foo',
        (), False, {'node-a': 85, 'node-x': 100},
        id='two Constraints on zone, 2 out of 4 nodes are candidates'),
    pytest.param(
        P("p foo bar")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, HOST, 'ScheduleAnyway', BAR),
        ('node-a zone=zone1 host=node-a',
         'node-b zone=zone1 host=node-b',
         'node-x zone=zone2 host=node-x',
         'node-y zone=zone2 host=node-y'),
        (),
        'p-a1@node-a foo, p-b1@node-b foo bar, p-y1@node-y foo, p-y2@node-y bar',
        (), False, {'node-a': 60, 'node-b': 20, 'node-x': 100, 'node-y': 60},
        id='two Constraints on zone and node, with different labelSelectors'),
    pytest.param(
        P("p foo bar")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, HOST, 'ScheduleAnyway', BAR),
        ('node-a zone=zone1 host=node-a',
         'node-b zone=zone1 host=node-b',
         'node-x zone=zone2 host=node-x',
         'node-y zone=zone2 host=node-y'),
        (),
        'p-b1@node-b bar, p-x1@node-x foo, p-y1@node-y foo bar',
        (), False, {'node-a': 100, 'node-b': 60, 'node-x': 40, 'node-y': 0},
        id='two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods'),
    pytest.param(
        P("p foo bar")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, HOST, 'ScheduleAnyway', BAR),
        ('node-a zone=zone1 host=node-a', 'node-b zone=zone1 host=node-b', 'node-x zone=zone2 host=node-x'),
        ('node-y zone=zone2 host=node-y',),
        'p-a1@node-a foo, p-b1@node-b foo bar, p-y1@node-y foo, p-y2@node-y bar',
        (), False, {'node-a': 50, 'node-b': 25, 'node-x': 100},
        id='two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b'),
        (),
        'ns1/p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-b2@node-b foo',
        (), False, {'node-a': 100, 'node-b': 33},
        id='existing pods in a different namespace do not count'),
    pytest.param(
        P("p foo")
        .spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a host=node-a', 'node-b host=node-b'),
        (),
        'p-a@node-a foo !, p-b@node-b foo',
        (), False, {'node-a': 100, 'node-b': 0},
        id='terminating Pods should be excluded'),
    pytest.param(
        P("p foo")
        .spread(2, 'node', 'ScheduleAnyway', FOO, min_domains=10),
        ('node-a node=node-a', 'node-b node=node-b', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-b2@node-b foo, p-c1@node-c foo',
        (), False, {'node-a': 75, 'node-b': 75, 'node-c': 100},
        id='minDomains has no effect when ScheduleAnyway'),
    pytest.param(
        P("p foo").node_selector(**{'foo': ''})
        .spread(1, 'node', 'ScheduleAnyway', FOO),
        ('node-a node=node-a foo', 'node-b node=node-b foo', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-c1@node-c foo',
        (), False, {'node-a': 0, 'node-b': 33, 'node-c': 100},
        id='NodeAffinityPolicy honoed with labelSelectors'),
    pytest.param(
        P("p foo").node_selector(**{'foo': ''})
        .spread(1, 'node', 'ScheduleAnyway', FOO, node_affinity_policy="Ignore"),
        ('node-a node=node-a foo', 'node-b node=node-b foo', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-c1@node-c foo',
        (), False, {'node-a': 66, 'node-b': 100, 'node-c': 100},
        id='NodeAffinityPolicy ignored with labelSelectors'),
    pytest.param(
        P("p foo").required("foo", "In", '')
        .spread(1, 'node', 'ScheduleAnyway', FOO),
        ('node-a node=node-a foo', 'node-b node=node-b foo', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-c1@node-c foo',
        (), False, {'node-a': 0, 'node-b': 33, 'node-c': 100},
        id='NodeAffinityPolicy honoed with nodeAffinity'),
    pytest.param(
        P("p foo").required("foo", "In", '')
        .spread(1, 'node', 'ScheduleAnyway', FOO, node_affinity_policy="Ignore"),
        ('node-a node=node-a foo', 'node-b node=node-b foo', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-c1@node-c foo',
        (), False, {'node-a': 66, 'node-b': 100, 'node-c': 100},
        id='NodeAffinityPolicy ignored with nodeAffinity'),
    pytest.param(
        P("p foo")
        .spread(1, 'node', 'ScheduleAnyway', FOO, node_taints_policy="Honor"),
        ('node-a node=node-a', 'node-b node=node-b', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-c1@node-c foo',
        ('node-c',), False, {'node-a': 0, 'node-b': 33, 'node-c': 100},
        id='NodeTaintsPolicy honored'),
    pytest.param(
        P("p foo")
        .spread(1, 'node', 'ScheduleAnyway', FOO),
        ('node-a node=node-a', 'node-b node=node-b', 'node-c node=node-c'),
        (),
        'p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-c1@node-c foo',
        ('node-c',), False, {'node-a': 66, 'node-b': 100, 'node-c': 100},
        id='NodeTaintsPolicy ignored'),
    pytest.param(
        P("p foo bar")
        .spread(1, 'zone', 'ScheduleAnyway', label_selector(), match_label_keys=('foo',))
        .spread(1, HOST, 'ScheduleAnyway', label_selector(), match_label_keys=('bar',)),
        ('node-a zone=zone1 host=node-a',
         'node-b zone=zone1 host=node-b',
         'node-c zone=zone2 host=node-c',
         'node-d zone=zone2 host=node-d'),
        (),
        'p-a1@node-a foo, p-b1@node-b foo bar, p-y1@node-c foo, p-y2@node-c bar',
        (), False, {'node-a': 60, 'node-b': 20, 'node-c': 60, 'node-d': 100},
        id='matchLabelKeys ANDed with LabelSelector when LabelSelector is empty'),
    pytest.param(
        P("p foo bar baz")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, HOST, 'ScheduleAnyway', BAR, match_label_keys=('baz',)),
        ('node-a zone=zone1 host=node-a',
         'node-b zone=zone1 host=node-b',
         'node-c zone=zone2 host=node-c',
         'node-d zone=zone2 host=node-d'),
        (),
        'p-a1@node-a foo, p-b1@node-b foo bar baz, p-c1@node-c foo, p-c2@node-c bar, p-d3@node-c bar baz',
        (), False, {'node-a': 60, 'node-b': 20, 'node-c': 60, 'node-d': 100},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
    # Not upstream's, by hand from Score/NormalizeScore. System defaulting (hostname maxSkew 3, then
    # zone maxSkew 5) does not require every key: node-b has no hostname label, so only its zone
    # counts. Weights: hostname log(2 + 2), zone log(1 + 2); zone1 holds 3 matching pods.
    # node-a: (1 * log 4 + 2) + (3 * log 3 + 4) = 10.68 -> 11; node-b: 3 * log 3 + 4 = 7.30 -> 7;
    # normalized 100 * (11 + 7 - s) / 11: node-a 63, node-b 100.
    pytest.param(
        P("p foo"),
        ('node-a topology.kubernetes.io/zone=zone1 host=node-a', 'node-b topology.kubernetes.io/zone=zone1'),
        (),
        'p-a1@node-a foo, p-b1@node-b foo, p-b2@node-b foo',
        (), True, {'node-a': 63, 'node-b': 100},
        id="system defaulting, a node without hostname label still spreads on zone (by hand)"),
    # By hand: explicit constraints require every key; no candidate has zone, so all are in
    # IgnoredNodes, NormalizeScore gives each invalidScore and then 0.
    pytest.param(
        P("p foo")
        .spread(1, 'zone', 'ScheduleAnyway', FOO),
        ('node-x host=node-x', 'node-y host=node-y'),
        ('node-a zone=zone1 host=node-a',),
        'p-a1@node-a foo, p-x1@node-x foo',
        (), False, {'node-x': 0, 'node-y': 0},
        id="one constraint on zone, no candidate node has zone (by hand)"),
    # By hand: node-x has a zone but no rack, so it is ignored and its zone2 is no domain; node-a
    # alone counts: zone1 1 pod, rack1 1 pod, each weight log(1 + 2): 2 * log 3 = 2.20 -> 2,
    # normalized 100 * (2 + 2 - 2) / 2 = 100.
    pytest.param(
        P("p foo")
        .spread(1, 'zone', 'ScheduleAnyway', FOO)
        .spread(1, 'rack', 'ScheduleAnyway', FOO),
        ('node-a zone=zone1 rack=rack1', 'node-x zone=zone2'),
        (),
        'p-a1@node-a foo, p-x1@node-x foo',
        (), False, {'node-a': 100, 'node-x': 0},
        id="two Constraints on zone and rack, node-x without rack is ignored (by hand)"),
]


@pytest.mark.parametrize(("pod", "nodes", "failed", "pods", "tainted", "service", "want"), CASES)
def test_score(pod: PodBuilder, nodes: tuple[str, ...], failed: tuple[str, ...], pods: str,
               tainted: tuple[str, ...], service: bool, want: dict[str, int]) -> None:
    selectors = InMemorySelectors(services=[("default", {"foo": ""})]) if service else None
    # kube-scheduler's test runs the plugin with System defaulting.
    plugin = new({}, selectors=selectors)
    all_nodes: list[Node | NodeBuilder] = [*nodes_of(nodes + failed, tainted)]
    existing: list[Pod | PodBuilder] = [*pods_of(pods)]
    snapshot = snapshot_with(all_nodes, existing)
    info = PodInfo(pod.obj())
    rows = np.array(sorted(snapshot.index[n.split()[0]] for n in nodes), dtype=np.intp)
    state = CycleState()
    assert plugin.pre_score(state, info, snapshot, rows) is None
    scalar = np.array([plugin.score(state, info, snapshot.node_infos[r], snapshot) for r in rows.tolist()],
                      dtype=np.int64)
    batch = plugin.score_batch(state, info, snapshot, rows)
    assert batch.tolist() == scalar.tolist()
    got = plugin.normalize_scores(state, info, scalar)
    assert dict(zip([snapshot.names[r] for r in rows.tolist()], got.tolist(), strict=True)) == want


@pytest.mark.parametrize(("pod", "defaulting", "service", "skip"), [
    pytest.param(P("p foo").spread(1, "zone", "DoNotSchedule", FOO), "System", False, True,
                 id="the pod doesn't have soft topology spread Constraints"),
    pytest.param(P("p foo"), "System", False, True, id="system defaults and no selector"),
    pytest.param(P("p foo"), "System", True, False, id="system defaults and a service"),
    pytest.param(P("p foo"), "List", True, True, id="List defaulting with no defaultConstraints"),
])
def test_pre_score_skip(pod: PodBuilder, defaulting: str, service: bool, skip: bool) -> None:
    """TestPreScoreSkip."""
    selectors = InMemorySelectors(services=[("default", {"foo": ""})]) if service else None
    plugin = new({"defaultingType": defaulting}, selectors=selectors)
    snapshot = snapshot_with(list(nodes_of(("node-a zone=zone1 kubernetes.io/hostname=node-a",))))
    status = plugin.pre_score(CycleState(), PodInfo(pod.obj()), snapshot, snapshot.all_rows)
    assert (status is not None and status.is_skip()) == skip


def test_nodes_missing_a_key_score_zero_with_explicit_constraints() -> None:
    """kube-scheduler's "node-x doesn't have label zone" (TestPreScoreStateEmptyNodes): ignored."""
    plugin = new({})
    snapshot = snapshot_with(list(nodes_of(("node-a zone=zone1 kubernetes.io/hostname=node-a",
                                            "node-x kubernetes.io/hostname=node-x"))),
                             list(pods_of("p-a1@node-a foo, p-a2@node-a foo")))
    info = PodInfo(P("p foo").spread(1, "zone", "ScheduleAnyway", FOO).obj())
    state = CycleState()
    assert plugin.pre_score(state, info, snapshot, snapshot.all_rows) is None
    raw = plugin.score_batch(state, info, snapshot, snapshot.all_rows)
    got = dict(zip(snapshot.names, plugin.normalize_scores(state, info, raw).tolist(), strict=True))
    assert got == {"node-a": 100, "node-x": 0}





def _weight(size: int) -> float:
    """kube-scheduler's topologyNormalizingWeight."""
    return math.log(size + 2)


ZONE = "topology.kubernetes.io/zone"
LIST = {"defaultingType": "List"}
RS_FOO = InMemorySelectors(controllers={("default", "ReplicaSet", "rs1"): FOO})


@pytest.mark.parametrize(("pod", "nodes", "pods", "args", "selectors", "want_constraints", "want_ignored",
                          "want_counts", "want_sizes"), [
    # TestPreScoreStateEmptyNodes (upstream's cases without node inclusion policies): the state's
    # constraints, IgnoredNodes, TopologyValueToPodCounts ({} for hostname constraints, counted at
    # Score) and the sizes whose topologyNormalizingWeight is TopologyNormalizingWeight.
    pytest.param(
        P("p foo").spread(1, 'zone', 'ScheduleAnyway', FOO).spread(1, HOST, 'ScheduleAnyway', FOO),
        ('node-a zone=zone1 host=node-a', 'node-b zone=zone1 host=node-b', 'node-x zone=zone2 host=node-x'), '',
        LIST, None, [('zone', 1), (HOST, 1)], set(), [{'zone1': 0, 'zone2': 0}, {}], [2, 3],
        id="normal case"),
    pytest.param(
        P("p foo").spread(1, 'zone', 'ScheduleAnyway', None),
        ('node-a zone=zone1 host=node-a', 'node-b zone=zone1 host=node-b', 'node-x zone=zone2 host=node-x'), '',
        LIST, None, [('zone', 1)], set(), [{'zone1': 0, 'zone2': 0}], [2],
        id="null selector"),
    pytest.param(
        P("p foo").spread(1, 'zone', 'ScheduleAnyway', FOO).spread(1, HOST, 'ScheduleAnyway', BAR),
        ('node-a zone=zone1 host=node-a', 'node-b zone=zone1 host=node-b', 'node-x host=node-x'), '',
        LIST, None, [('zone', 1), (HOST, 1)], {'node-x'}, [{'zone1': 0}, {}], [1, 2],
        id="node-x doesn't have label zone"),
    pytest.param(
        P("p foo=tar baz=sup").owner("ReplicaSet", "rs1"),
        (f'node-a host=node-a {ZONE}=mars', f'node-b host=node-b {ZONE}=mars', 'node-c host=node-c',
         'node-d host=node-d'), '',
        {}, RS_FOO, [(HOST, 3), (ZONE, 5)], set(), [{}, {'mars': 0, '': 0}], [4, 2],
        id="system default constraints and a replicaset"),
    pytest.param(
        P("p foo=tar baz=sup").owner("ReplicaSet", "rs1"),
        ('node-a rack=rack1 host=node-a planet=mars',), '',
        {"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]},
        RS_FOO, [(HOST, 1), ('planet', 2)], set(), [{}, {'mars': 0}], [1, 1],
        id="default constraints and a replicaset"),
    # By hand from initPreScoreState/PreScore, beside "system default constraints and a replicaset":
    # a node whose zone label is "" and a node without one are the same domain, Go's map read of a
    # missing label being "". node-a (zone "", first, so "" is the zone's first value) and node-c
    # (no zone) put 1 + 2 matching pods in "", node-b 1 in mars; two domains, weight log(2 + 2).
    pytest.param(
        P("p foo=tar").owner("ReplicaSet", "rs1"),
        (f'node-a host=node-a {ZONE}=', f'node-b host=node-b {ZONE}=mars', 'node-c host=node-c'),
        'p-a1@node-a foo, p-b1@node-b foo, p-c1@node-c foo, p-c2@node-c foo',
        {}, RS_FOO, [(HOST, 3), (ZONE, 5)], set(), [{}, {'': 3, 'mars': 1}], [3, 2],
        id="system default constraints, an empty zone value and a missing zone share one domain (by hand)"),
])
def test_pre_score_state(pod: PodBuilder, nodes: tuple[str, ...], pods: str, args: dict[str, object],
                         selectors: InMemorySelectors | None, want_constraints: list[tuple[str, int]],
                         want_ignored: set[str], want_counts: list[dict[str, int]], want_sizes: list[int]) -> None:
    plugin = new(args, selectors=selectors)
    existing: list[Pod | PodBuilder] = [*pods_of(pods)]
    snapshot = snapshot_with([*nodes_of(nodes)], existing)
    state = CycleState()
    assert plugin.pre_score(state, PodInfo(pod.obj()), snapshot, snapshot.all_rows) is None
    got = state.read(PRE_SCORE_KEY)
    assert isinstance(got, PreScoreState)
    assert [(c.topology_key, c.max_skew) for c in got.constraints] == want_constraints
    assert got.ignored == want_ignored
    assert got.counts == want_counts
    assert got.weights == [_weight(n) for n in want_sizes]


@pytest.mark.parametrize(("x", "want"), [
    # Go's math.Round ("half away from zero"), as go1.26.8 prints it for these float64s.
    pytest.param(0.5, 1, id="0.5"),
    pytest.param(1.5, 2, id="1.5"),
    pytest.param(2.5, 3, id="2.5"),
    pytest.param(2.4999999999999996, 2, id="just below 2.5"),
    pytest.param(3.5000000000000004, 4, id="just above 3.5"),
    pytest.param(0.49999999999999994, 0, id="just below 0.5"),
    pytest.param(7.0, 7, id="7"),
])
def test_go_round_is_math_round(x: float, want: int) -> None:
    """Score's int64(math.Round(score))."""
    assert go_round(x) == want
