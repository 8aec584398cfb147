"""The vectorised filter/score paths agree with the one-node paths on random clusters."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework import CycleState, PodInfo
from kubesched.framework.handle import Handle
from kubesched.framework.status import Status
from kubesched.plugins.registry import in_tree_registry
from tests.builders import make_node, make_pod, term
from tests.unit.scheduling_helpers import snapshot_with

KEYS = ["zone", "gen", "pool"]
VALUES = ["a", "b", "1", "5", "9"]
OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
TAINTS = [("k1", "v", "NoSchedule"), ("k2", "", "NoExecute"), ("k3", "v", "PreferNoSchedule"),
          ("k1", "w", "PreferNoSchedule")]

node_st = st.tuples(
    st.integers(1, 8), st.integers(1, 16), st.integers(1, 4), st.integers(0, 2),
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3),
    st.lists(st.sampled_from(TAINTS), max_size=2, unique=True), st.booleans(),
    st.lists(st.integers(0, 2500), max_size=3), st.booleans())
pod_st = st.tuples(
    st.integers(0, 4000), st.integers(0, 4), st.integers(0, 1),
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=1),
    st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(OPS), st.lists(st.sampled_from(VALUES), max_size=2)),
             max_size=2),
    st.lists(st.tuples(st.integers(1, 10), st.sampled_from(KEYS), st.sampled_from(OPS),
                       st.lists(st.sampled_from(VALUES), max_size=2)), max_size=2),
    st.lists(st.sampled_from([("k1", "v", ""), ("k2", "", ""), ("k3", "v", "PreferNoSchedule"), ("", "", "")]),
             max_size=2),
    st.booleans())


def _skips(status: Status | None) -> bool:
    return status is not None and status.is_skip()


# The incoming pod's pod (anti-)affinity terms: (anti, preferred, topology key, app it selects).
terms_st = st.lists(st.tuples(st.booleans(), st.booleans(), st.sampled_from([*KEYS, "kubernetes.io/hostname"]),
                              st.sampled_from(["a", "b"])), max_size=2)


@settings(max_examples=60, deadline=None)
@given(nodes=st.lists(node_st, min_size=1, max_size=8), pod=pod_st, pod_terms=terms_st,
       existing_anti=st.booleans())
def test_batch_paths_agree(nodes: list[tuple], pod: tuple,  # type: ignore[type-arg]
                           pod_terms: list[tuple[bool, bool, str, str]], existing_anti: bool) -> None:
    builders, existing = [], []
    for i, (cpu, mem, slots, gpu, labels, taints, cordoned, used, with_port) in enumerate(nodes):
        b = make_node(f"n{i}").capacity(cpu=str(cpu), memory=f"{mem}Gi", pods=str(slots),
                                        example_com__gpu=str(gpu)).unschedulable(cordoned)
        for k, v in labels.items():
            b.label(k, v)
        for k, v, e in taints:
            b.taint(k, v, e)
        if i % 2:
            b.image(300 * 1024 * 1024, "app:latest")
        builders.append(b)
        for j, milli in enumerate(used):
            p = make_pod(f"e{i}-{j}").node(f"n{i}").req(cpu=f"{milli}m").labels(app="ab"[j % 2])
            if existing_anti and i == 0 and j == 0:
                p.pod_affinity(anti=True, topology_key="zone", app="a")
            existing.append(p.host_port(80) if with_port and j == 0 else p)
    milli, gib, gpu, selector, required, preferred, tolerations, port = pod
    pb = make_pod("p").req(cpu=f"{milli}m", memory=f"{gib}Gi", example_com__gpu=str(gpu)).image("app")
    pb.node_selector(**selector)
    if required:
        pb.required_terms(*[term((k, op, vs)) for k, op, vs in required])
    for w, k, op, vs in preferred:
        pb.preferred(w, (k, op, vs))
    for k, v, e in tolerations:
        pb.toleration(k, v, e, operator="Exists" if not v else "Equal")
    if port:
        pb.host_port(80)
    pb.labels(app="a")
    for anti, preferred_term, key, app in pod_terms:
        pb.pod_affinity(anti=anti, preferred=preferred_term, topology_key=key, app=app)
    snap = snapshot_with(list(builders), list(existing))
    info = PodInfo(pb.obj())
    rows = snap.all_rows
    for name, spec in in_tree_registry().items():
        plugin: Any = spec.new({}, Handle())
        state = CycleState()
        pre = getattr(plugin, "pre_filter", None)
        # A PreFilter that says Skip is not asked to filter (nor a PreScore that says Skip to
        # score), as in the framework: InterPodAffinity skips a pod without pod affinity, PodTopologySpread
        # one without constraints (of its own or by default).
        skip_filter = pre is not None and _skips(pre(state, info, snap)[1])
        if hasattr(plugin, "filter_batch") and not skip_filter:
            scalar = [plugin.filter(state, info, ni) for ni in snap.node_infos]
            mask = plugin.filter_batch(state, info, snap, rows)
            passed = [True] * snap.n if mask is None else mask.tolist()
            assert passed == [s is None for s in scalar], name
            failing = rows[[i for i, ok in enumerate(passed) if not ok]]
            if len(failing):
                batch = plugin.filter_statuses(state, info, snap, failing)
                assert batch == [scalar[i] for i in failing.tolist()], name
        if hasattr(plugin, "score_batch"):
            pre_score = getattr(plugin, "pre_score", None)
            if pre_score is not None and _skips(pre_score(state, info, snap, rows)):
                continue
            scalar_scores = [plugin.score(state, info, ni, snap) for ni in snap.node_infos]
            assert plugin.score_batch(state, info, snap, rows).tolist() == scalar_scores, name
