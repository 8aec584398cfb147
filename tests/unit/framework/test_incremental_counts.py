"""The snapshot's per-node memos (per_row, keys_per_row) and the spread / affinity counts built on
them: a long-lived snapshot whose memos saw every change answers as a fresh one does."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework import FitError, NodeCursor, PodInfo, schedule_pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.row_memos import MAX_ROW_MEMOS
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod
from kubesched.plugins.inter_pod_affinity import filtering as ipa_filtering
from kubesched.plugins.inter_pod_affinity import scoring as ipa_scoring
from kubesched.plugins.inter_pod_affinity.terms import NoNamespaces, TermCache
from kubesched.plugins.pod_topology_spread import filtering as pts_filtering
from kubesched.plugins.pod_topology_spread import scoring as pts_scoring
from kubesched.plugins.pod_topology_spread.common import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from kubesched.plugins.pod_topology_spread.plugin import PodTopologySpread
from tests.builders import label_selector, make_node, make_pod
from tests.unit.scheduling_helpers import cache_with, default_profile

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _nodes(n: int = 6) -> list[object]:
    return [make_node(f"n{i}").label(HOST, f"n{i}").label(ZONE, f"z{i % 3}") for i in range(n)]


def test_per_row_recounts_only_the_rows_whose_pods_changed() -> None:
    cache = cache_with(_nodes(), [make_pod("a").node("n1").labels(app="x")])  # type: ignore[arg-type]
    snap = cache.snapshot()
    calls: list[str] = []

    def count(ni: NodeInfo) -> int:
        calls.append(ni.name)
        return sum(1 for p in ni.pods.values() if p.pod.metadata.labels.get("app") == "x")

    first = dict(zip(snap.names, snap.per_row("k", count).tolist(), strict=True))
    assert first == {"n0": 0, "n1": 1, "n2": 0, "n3": 0, "n4": 0, "n5": 0}
    assert sorted(calls) == sorted(snap.names)
    calls.clear()
    assert snap.per_row("k", count) is not None
    assert calls == []  # nothing changed: no recount
    cache.add_pod(make_pod("b").node("n4").labels(app="x").obj())
    counts = dict(zip(snap.names, snap.per_row("k", count).tolist(), strict=True))
    assert calls == ["n4"]
    assert counts["n4"] == 1
    cache.remove_pod(make_pod("a").node("n1").labels(app="x").obj())
    calls.clear()
    counts = dict(zip(snap.names, snap.per_row("k", count).tolist(), strict=True))
    assert calls == ["n1"]
    assert counts == {"n0": 0, "n1": 0, "n2": 0, "n3": 0, "n4": 1, "n5": 0}


def test_memos_older_than_the_change_log_fall_back_to_the_version_compare() -> None:
    """The snapshot's log of changed rows is cut when it grows; a memo synced before the cut must
    still see every change since (and a memo synced after it only the rows logged since)."""
    cache = cache_with(_nodes(2), [])  # type: ignore[arg-type]
    snap = cache.snapshot()

    def count(ni: NodeInfo) -> int:
        return len(ni.pods)

    def keys(pi: PodInfo) -> tuple[str, ...]:
        return (pi.pod.metadata.labels.get("app", ""),)

    assert snap.per_row("old", count).tolist() == [0, 0]
    assert snap.keys_per_row("old-keys", keys) == {}
    for i in range(200):  # far past the log's cut (4 n + 64 changes)
        cache.add_pod(make_pod(f"p{i}").node(f"n{i % 2}").labels(app=f"a{i % 3}").obj())
        if i == 150:
            assert snap.per_row("recent", count).tolist() == [76, 75]
    expected = [len(ni.pods) for ni in snap.node_infos]
    assert expected == [100, 100]
    assert snap.per_row("old", count).tolist() == expected
    assert snap.per_row("recent", count).tolist() == expected
    assert snap.keys_per_row("old-keys", keys) == {"a0": 2, "a1": 2, "a2": 2}


def test_sums_by_label_follow_pod_changes_and_node_label_changes() -> None:
    nodes = [make_node(f"n{i}").label(HOST, f"n{i}").label("rack", f"r{i % 2}") for i in range(4)]
    cache = cache_with(nodes, [make_pod("a").node("n0").labels(app="x")])  # type: ignore[arg-type]
    snap = cache.snapshot()

    def count(ni: NodeInfo) -> int:
        return sum(1 for p in ni.pods.values() if p.pod.metadata.labels.get("app") == "x")

    def by_rack() -> dict[str, int]:
        sums = snap.sums_by_label("x", count, "rack")
        assert sums is not None
        return {v: int(sums[snap.label_code("rack", v)]) for v in snap.label_values["rack"]}

    assert by_rack() == {"r0": 1, "r1": 0}
    cache.add_pod(make_pod("b").node("n1").labels(app="x").obj())
    cache.add_pod(make_pod("c").node("n2").labels(app="x").obj())
    cache.remove_pod(make_pod("a").node("n0").labels(app="x").obj())
    assert by_rack() == {"r0": 1, "r1": 1}
    cache.update_node(make_node("n1").label(HOST, "n1").label("rack", "r7").obj())
    assert snap is cache.snapshot()
    sums = snap.sums_by_label("x", count, "rack")
    assert sums is not None
    assert {v: int(sums[snap.label_code("rack", v)]) for v in ("r0", "r1", "r7")} == {"r0": 1, "r1": 0, "r7": 1}
    assert snap.codes_present("rack") == sorted(snap.label_code("rack", v) for v in ("r0", "r1", "r7"))
    assert snap.sums_by_label("x", count, "no-such-label") is None
    assert snap.rows_with_label("rack").tolist() == [True] * 4


def test_per_row_keeps_a_bounded_number_of_memos() -> None:
    snap = cache_with(_nodes()).snapshot()  # type: ignore[arg-type]
    for i in range(MAX_ROW_MEMOS + 50):
        snap.per_row(("key", i), lambda ni: 0)
    assert len(snap.memos._row_memos) == MAX_ROW_MEMOS


def test_keys_per_row_follows_adds_and_removes() -> None:
    cache = cache_with(_nodes())  # type: ignore[arg-type]
    snap = cache.snapshot()

    def apps(pi: PodInfo) -> tuple[str, ...]:
        return (pi.pod.metadata.labels.get("app", ""),)

    assert snap.keys_per_row("apps", apps) == {}
    cache.add_pod(make_pod("a").node("n0").labels(app="x").obj())
    cache.add_pod(make_pod("b").node("n2").labels(app="x").obj())
    cache.add_pod(make_pod("c").node("n2").labels(app="y").obj())
    cache.add_pod(make_pod("d").node("n2").labels(app="y").obj())
    assert snap.keys_per_row("apps", apps) == {"x": 2, "y": 1}
    cache.remove_pod(make_pod("c").node("n2").obj())
    assert snap.keys_per_row("apps", apps) == {"x": 2, "y": 1}  # d still holds y on n2
    cache.remove_pod(make_pod("d").node("n2").obj())
    assert snap.keys_per_row("apps", apps) == {"x": 2}
    cache.update_pod(make_pod("b").node("n2").labels(app="z").obj())
    assert snap.keys_per_row("apps", apps) == {"x": 1, "z": 1}


# --- a long-lived snapshot against a fresh one --------------------------------------------------------

APPS = ["a", "b"]
op_st = st.tuples(st.sampled_from(["add", "remove", "relabel"]), st.integers(0, 5), st.sampled_from(APPS),
                  st.integers(0, 3))
incoming_st = st.tuples(st.sampled_from(APPS), st.sampled_from([ZONE, HOST]), st.booleans(), st.booleans(),
                        st.booleans(), st.booleans())


def _existing(i: int, node: int, app: str, kind: int) -> Pod:
    b = make_pod(f"p{i}").node(f"n{node}").labels(app=app).req(cpu="100m")
    if kind == 1:
        b.pod_affinity(anti=True, topology_key=HOST, app=app)
    elif kind == 2:
        b.pod_affinity(anti=True, topology_key=ZONE, app=app)
    elif kind == 3:
        b.pod_affinity(preferred=True, topology_key=ZONE, app=app)
    return b.obj()


def _incoming(app: str, key: str, hard: bool, soft: bool, affinity: bool, anti: bool) -> Pod:
    b = make_pod("incoming").labels(app=app).req(cpu="100m")
    if hard:
        b.spread(1, key, selector=label_selector(app=app))
    if soft:
        b.spread(1, key, "ScheduleAnyway", selector=label_selector(app=app))
    if affinity:
        b.pod_affinity(topology_key=ZONE, app=app)
    if anti:
        b.pod_affinity(anti=True, topology_key=key, app="b" if app == "a" else "a")
    return b.obj()


def _states(snap: object, pod: Pod) -> tuple[object, ...]:
    info = PodInfo(pod)
    plugin = PodTopologySpread()
    out: list[object] = []
    hard = plugin.constraints(info, DO_NOT_SCHEDULE)
    if hard:
        s = pts_filtering.compute_state(snap, info, hard)  # type: ignore[arg-type]
        out.append((s.tp_value_to_match_num, [p.nums[0] for p in s.critical_paths]))
    soft = plugin.constraints(info, SCHEDULE_ANYWAY)
    if soft:
        ps = pts_scoring.compute_state(snap, snap.all_rows, info, soft, True)  # type: ignore[attr-defined,arg-type]
        out.append((ps.counts, ps.weights, sorted(ps.ignored)))
    terms = TermCache()
    f, status = ipa_filtering.compute_pre_filter(info, snap, terms, NoNamespaces())  # type: ignore[arg-type]
    out.append(None if f is None else (f.existing_anti_affinity_counts, f.affinity_counts,
                                       f.anti_affinity_counts, status))
    sc, status = ipa_scoring.compute_pre_score(info, snap, terms, NoNamespaces(), 1, False)  # type: ignore[arg-type]
    out.append(None if sc is None else (sc.topology_score, status))
    return tuple(out)


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(op_st, min_size=1, max_size=25), incoming=st.lists(incoming_st, min_size=1, max_size=4))
def test_a_long_lived_snapshot_answers_as_a_fresh_one(ops: list[tuple[str, int, str, int]],
                                                      incoming: list[tuple[str, str, bool, bool, bool, bool]]) -> None:
    cache = cache_with(_nodes())  # type: ignore[arg-type]
    live = cache.snapshot()
    pods: dict[int, Pod] = {}
    profile = default_profile()
    for i, (op, node, app, kind) in enumerate(ops):
        if op == "remove" and pods:
            victim = sorted(pods)[i % len(pods)]
            cache.remove_pod(pods.pop(victim))
        elif op == "relabel" and pods:
            # An update of a bound pod (its labels): the cache replaces it on its node.
            j = sorted(pods)[i % len(pods)]
            old = pods[j]
            pods[j] = _existing(j, int(old.spec.node_name[1:]), app, kind)
            cache.update_pod(pods[j])
        else:
            pods[i] = _existing(i, node, app, kind)
            cache.add_pod(pods[i])
        for spec in incoming:
            pod = _incoming(*spec)
            fresh = cache_with(_nodes(), list(pods.values())).snapshot()  # type: ignore[arg-type]
            assert _states(live, pod) == _states(fresh, pod)
            got = [schedule_pod(profile, s, PodInfo(pod), rng=random.Random(0), cursor=NodeCursor(),
                                state=CycleState()) for s in (live, fresh)]
            if isinstance(got[0], FitError):
                assert isinstance(got[1], FitError)
                assert got[0].message() == got[1].message()
            else:
                assert not isinstance(got[1], FitError)
                assert got[0].suggested_host == got[1].suggested_host
                assert got[0].total_scores() == got[1].total_scores()


# --- what a new memo starts from -------------------------------------------------------------------

label_op_st = st.tuples(st.sampled_from(["add", "remove", "relabel", "refresh"]), st.integers(0, 5),
                        st.sampled_from(["ns1", "ns2"]), st.sampled_from(["a", "b", "c"]))


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(label_op_st, min_size=1, max_size=20))
def test_no_pod_matches_follows_every_pod_change(ops: list[tuple[str, int, str, str]]) -> None:
    """The (namespace, label) index a new memo reads to start at zeros agrees, after any changes,
    with a walk over the pods: the index is built at the first question and moved by each change."""
    cache = cache_with(_nodes())  # type: ignore[arg-type]
    snap = cache.snapshot()
    pods: dict[int, Pod] = {}
    for i, (op, node, ns, app) in enumerate(ops):
        if op == "remove" and pods:
            cache.remove_pod(pods.pop(sorted(pods)[i % len(pods)]))
        elif op == "relabel" and pods:
            j = sorted(pods)[i % len(pods)]
            old = pods[j]
            pods[j] = (make_pod(old.metadata.name, old.metadata.namespace).node(old.spec.node_name)
                       .labels(app=app, tier="t" if app == "c" else "u").obj())
            cache.update_pod(pods[j])
        elif op == "refresh":
            # a row refreshed without the pod that changed it (the cache does so when a node held
            # another copy of a pod): the index is built again
            snap.refresh_pods(node)
        else:
            pods[i] = make_pod(f"p{i}", ns).node(f"n{node}").labels(app=app, tier="t" if app == "c" else "u").obj()
            cache.add_pod(pods[i])
        # a second label key is asked about only from the second change on: the index grows to it
        for key, values in [("app", ["a"]), ("app", ["b", "c"])] + ([("tier", ["t"])] if i else []):
            for space in ("ns1", "ns2"):
                held = any(p.metadata.namespace == space and p.metadata.labels.get(key) in values
                           for p in pods.values())
                assert snap.no_pod_matches((space,), [(key, values)]) == (not held)


def test_a_memo_started_from_zeros_or_key_counts_moves_like_a_counted_one() -> None:
    cache = cache_with(_nodes())  # type: ignore[arg-type]
    snap = cache.snapshot()

    def count_pod(pi: PodInfo) -> int:
        return 1 if pi.pod.metadata.labels.get("app") == "x" else 0

    def count(ni: NodeInfo) -> int:
        return sum(count_pod(pi) for pi in ni.pods.values())

    started = snap.per_row("x-started", count, count_pod, snap.zeros_unless_labelled(("default",), [("app", ["x"])]))
    assert started.tolist() == [0] * 6
    cache.add_pod(make_pod("a").node("n1").labels(app="x").obj())
    cache.add_pod(make_pod("b").node("n1").labels(app="y").obj())
    assert snap.per_row("x-started", count, count_pod).tolist() == [0, 1, 0, 0, 0, 0]
    # labelled now: a new memo counts instead of starting at zeros
    assert snap.per_row("x-counted", count, count_pod,
                        snap.zeros_unless_labelled(("default",), [("app", ["x"])])).tolist() == [0, 1, 0, 0, 0, 0]

    def apps(pi: PodInfo) -> tuple[str, ...]:
        return (pi.pod.metadata.labels.get("app", ""),)

    snap.keys_per_row("apps", apps)
    assert snap.key_counts("apps", "y") is not None
    keyed = snap.per_row("y-keyed", lambda ni: 0, None, lambda: snap.key_counts("apps", "y"))
    assert keyed.tolist() == [0, 1, 0, 0, 0, 0]
    cache.add_pod(make_pod("c").node("n2").labels(app="y").obj())
    assert snap.key_counts("apps", "y") is None  # the keys memo has not seen the change yet


def test_sums_by_label_after_a_node_takes_a_new_value_and_then_a_pod() -> None:
    """A node relabelled to a value no node had, then a pod placed on it: the memo moves its row
    (its sums by label are stale and made again), where it used to raise IndexError every cycle."""
    cache = cache_with([make_node(f"n{i}").label("rack", f"r{i % 2}") for i in range(4)])
    snap = cache.snapshot()

    def count_pod(pi: PodInfo) -> int:
        return 1 if pi.pod.metadata.labels.get("app") == "x" else 0

    def count(ni: NodeInfo) -> int:
        return sum(count_pod(pi) for pi in ni.pods.values())

    cache.add_pod(make_pod("a").node("n0").labels(app="x").obj())
    sums = snap.sums_by_label("x", count, "rack", count_pod)
    assert sums is not None
    assert sums.tolist() == [1, 0]
    cache.update_node(make_node("n3").label("rack", "r9").obj())
    cache.add_pod(make_pod("b").node("n3").labels(app="x").obj())
    sums = snap.sums_by_label("x", count, "rack", count_pod)
    assert sums is not None
    assert dict(zip(snap.label_values["rack"], sums.tolist(), strict=True)) == {"r0": 1, "r1": 0, "r9": 1}
    assert snap.sums_total("x", "rack") == 2
