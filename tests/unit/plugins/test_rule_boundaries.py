"""Rules at their edges, each against an answer worked out by hand from kube-scheduler v1.37.2's
code or tables, so that a change of the rule (a dropped clause, `<` for `<=`, `>` for `>=`) fails."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.backend.queue import FakeClock, SchedulingQueue
from kubesched.framework import Code, CycleState, PodInfo
from kubesched.plugins import taint_toleration
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.backend.test_queue import make_pod as queue_pod
from tests.unit.backend.test_queue import reject
from tests.unit.plugins.pod_topology_spread.test_pod_topology_spread_filter import HOSTS3, codes
from tests.unit.pts_helpers import FOO, FOUR_NODES, P
from tests.unit.scheduling_helpers import snapshot_with

S, U = Code.SUCCESS, Code.UNSCHEDULABLE


# --- TaintToleration's score: getAllTolerationPreferNoSchedule (taint_toleration.go:148) keeps
# tolerations whose effect is PreferNoSchedule or empty ("empty effect means all effects").
# Node a has one PreferNoSchedule taint foo=bar, node b none; raw score: untolerated
# PreferNoSchedule taints; normalized: DefaultNormalizeScore reversed (max raw 0: every node 100;
# else 100 - 100 * raw / max).
@pytest.mark.parametrize(("pod", "raw", "normalized"), [
    pytest.param(make_pod("p").toleration("foo", "bar", effect=""), [0, 0], [100, 100],
                 id="empty-effect-tolerates-prefer-no-schedule"),
    pytest.param(make_pod("p").toleration("foo", "bar", effect="PreferNoSchedule"), [0, 0], [100, 100],
                 id="prefer-no-schedule-effect"),
    pytest.param(make_pod("p").toleration("foo", operator="Exists"), [0, 0], [100, 100],
                 id="exists-empty-effect"),
    pytest.param(make_pod("p").toleration("foo", "bar", effect="NoSchedule"), [1, 0], [0, 100],
                 id="no-schedule-effect-does-not-count"),
    pytest.param(make_pod("p"), [1, 0], [0, 100], id="no-toleration"),
])
def test_taint_toleration_score_keeps_empty_effect(pod: PodBuilder, raw: list[int], normalized: list[int]) -> None:
    plugin = taint_toleration.TaintToleration()
    snap = snapshot_with([make_node("a").taint("foo", "bar", effect="PreferNoSchedule"), make_node("b")])
    info, state = PodInfo(pod.obj()), CycleState()
    plugin.pre_score(state, info, snap, snap.all_rows)
    one = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]
    batch = plugin.score_batch(state, info, snap, snap.all_rows).tolist()
    assert one == batch == raw
    assert plugin.normalize_scores(state, info, np.array(raw, dtype=np.int64)).tolist() == normalized


# --- PodTopologySpread's global minimum: minMatchNum (podtopologyspread/filtering.go:62) takes 0
# only when the domains number strictly fewer than minDomains. kube-scheduler's filtering_test.go
# has cases with fewer and with more domains than minDomains; these take its nodes and pods with
# minDomains equal to the number of domains, so the minimum is the true one, above 0.
@pytest.mark.parametrize(("pod", "nodes", "pods", "want"), [
    # Nodes 2/2/1, maxSkew 2, minDomains 3 = 3 domains: min 1; node-a 2 + 1 - 1 = 2 <= 2 fits
    # (with min 0: 3 > 2, rejected).
    pytest.param(P("p foo").spread(2, "node", selector=FOO, min_domains=3), HOSTS3,
                 "p-a1@node-a foo, p-a2@node-a foo, p-b1@node-b foo, p-b2@node-b foo, p-c1@node-c foo",
                 {"node-a": S, "node-b": S, "node-c": S}, id="nodes-2-2-1-min-domains-equal"),
    # Zones 2/1, maxSkew 2, minDomains 2 = 2 domains: min 1; zone1 2 + 1 - 1 = 2 fits.
    pytest.param(P("p foo").spread(2, "zone", selector=FOO, min_domains=2), FOUR_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo",
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": S}, id="zones-2-1-max-skew-2"),
    # Zones 2/1, maxSkew 1, minDomains 2: min 1; zone1 2 + 1 - 1 = 2 > 1 rejected, zone2
    # 1 + 1 - 1 = 1 fits (with min 0: 2 > 1, every node rejected).
    pytest.param(P("p foo").spread(1, "zone", selector=FOO, min_domains=2), FOUR_NODES,
                 "p-b1@node-a foo, p-b2@node-b foo, p-y1@node-y foo",
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": S}, id="zones-2-1-max-skew-1"),
])
def test_spread_min_domains_equal_to_domains(pod: PodBuilder, nodes: tuple[str, ...], pods: str,
                                            want: dict[str, Code]) -> None:
    assert codes(pod, nodes, pods) == want


# --- The unschedulable pods' flush: flushUnschedulableEntitiesLeftover (backend/queue/
# scheduling_queue.go:1318) moves a pod when now - its timestamp > podMaxInUnschedulablePodsDuration
# (5 minutes), strictly: at exactly 300 s it stays.
@pytest.mark.parametrize(("after", "moved"), [
    pytest.param(299.999, 0, id="just-before"),
    pytest.param(300.0, 0, id="exactly-five-minutes-stays"),
    pytest.param(300.001, 1, id="just-after"),
])
def test_unschedulable_flush_at_five_minutes(after: float, moved: int) -> None:
    clock = FakeClock(1000.0)
    q = SchedulingQueue(clock)
    q.add(queue_pod("a"))
    info = q.pop_nowait()
    assert info is not None
    reject(q, info)
    assert q.where(info.uid) == "unschedulable"
    clock.set(info.timestamp + after)
    assert q.flush_unschedulable_leftover() == moved
    assert q.where(info.uid) == ("unschedulable" if moved == 0 else "active")
