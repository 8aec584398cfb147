"""The cache lifecycle (assume -> add -> forget/remove) and that it never lets a node overcommit."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.cache import Cache
from kubesched.framework import FitError, NodeCursor, PodInfo, schedule_pod
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import default_profile


def test_assume_counts_then_confirm_keeps_count() -> None:
    cache = Cache()
    cache.add_node(make_node("a").capacity(cpu="2").obj())
    pod = make_pod("p").req(cpu="1").obj()
    info = PodInfo(pod)
    cache.assume_pod(info, "a")
    snap = cache.snapshot()
    assert cache.is_assumed(info)
    assert snap.req_cpu[0] == 1000
    assert snap.pod_count[0] == 1
    pod.spec.node_name = "a"
    cache.add_pod(pod)
    assert not cache.is_assumed(info)
    assert snap.req_cpu[0] == 1000
    assert snap.pod_count[0] == 1
    cache.remove_pod(pod)
    assert snap.req_cpu[0] == 0
    assert snap.pod_count[0] == 0


def test_forget_releases() -> None:
    cache = Cache()
    cache.add_node(make_node("a").obj())
    info = PodInfo(make_pod("p").req(cpu="1", memory="1Gi").host_port(80).obj())
    cache.assume_pod(info, "a")
    cache.forget_pod(info)
    snap = cache.snapshot()
    assert (snap.req_cpu[0], snap.req_mem[0], snap.pod_count[0], bool(snap.has_ports[0])) == (0, 0, 0, False)
    assert cache.pod_count == 0


def test_pods_seen_before_their_node_count_when_it_arrives() -> None:
    cache = Cache()
    cache.add_pod(make_pod("p").node("a").req(cpu="1").obj())
    cache.add_node(make_node("a").obj())
    assert cache.snapshot().req_cpu[0] == 1000


def test_node_removed_and_readded_keeps_its_pods() -> None:
    cache = Cache()
    cache.add_node(make_node("a").obj())
    cache.add_pod(make_pod("p").node("a").req(cpu="1").obj())
    cache.remove_node("a")
    assert cache.snapshot().n == 0
    cache.add_node(make_node("a").obj())
    assert cache.snapshot().req_cpu[0] == 1000


def test_terminal_pod_releases() -> None:
    cache = Cache()
    cache.add_node(make_node("a").obj())
    cache.add_pod(make_pod("p").node("a").req(cpu="1").obj())
    cache.update_pod(make_pod("p").node("a").req(cpu="1").phase("Succeeded").obj())
    assert cache.snapshot().req_cpu[0] == 0


def test_node_update_refreshes_columns_in_place() -> None:
    cache = Cache()
    cache.add_node(make_node("a").obj())
    snap = cache.snapshot()
    cache.update_node(make_node("a").capacity(cpu="8").label("zone", "x").unschedulable().obj())
    assert cache.snapshot() is snap
    assert snap.alloc_cpu[0] == 8000
    assert bool(snap.unschedulable[0])
    assert snap.label_codes["zone"][0] == 0


def test_zones_interleave() -> None:
    cache = Cache()
    for name, zone in (("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"), ("c2", "c")):
        cache.add_node(make_node(name).zone(zone).obj())
    assert cache.node_order() == ["a1", "b1", "c1", "a2", "c2", "a3"]


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5)), min_size=1, max_size=6),
    pods=st.lists(st.tuples(st.integers(0, 2500), st.integers(0, 3), st.booleans()), min_size=1, max_size=40),
    seed=st.integers(0, 1000),
)
def test_schedule_and_assume_never_overcommit(nodes: list[tuple[int, int, int]],
                                              pods: list[tuple[int, int, bool]], seed: int) -> None:
    cache = Cache()
    for i, (cpu, mem, slots) in enumerate(nodes):
        cache.add_node(make_node(f"n{i}").capacity(cpu=str(cpu), memory=f"{mem}Gi", pods=str(slots)).obj())
    profile, cursor, rng = default_profile(), NodeCursor(), random.Random(seed)
    assumed: list[PodInfo] = []
    for j, (milli, gib, fail_bind) in enumerate(pods):
        info = PodInfo(make_pod(f"p{j}").req(cpu=f"{milli}m", memory=f"{gib}Gi").obj())
        result = schedule_pod(profile, cache.snapshot(), info, rng=rng, cursor=cursor)
        if isinstance(result, FitError):
            continue
        cache.assume_pod(info, result.suggested_host)
        if fail_bind:
            cache.forget_pod(info)
        else:
            assumed.append(info)
        snap = cache.snapshot()
        assert (snap.req_cpu <= snap.alloc_cpu).all()
        assert (snap.req_mem <= snap.alloc_mem).all()
        assert (snap.pod_count <= snap.alloc_pods).all()
    for ni in (cache.node_info(f"n{i}") for i in range(len(nodes))):
        assert ni is not None
        assert ni.requested.milli_cpu <= ni.allocatable.milli_cpu
        assert len(ni.pods) <= ni.allocatable.allowed_pod_number


def test_a_status_only_update_keeps_the_pod_info_and_a_real_change_replaces_it() -> None:
    import msgspec

    from kubesched.model.objects import PodCondition

    cache = Cache()
    cache.add_node(make_node("n1").capacity(cpu="4").obj())
    bound = make_pod("p").node("n1").req(cpu="1").label("app", "a").obj()
    cache.add_pod(bound)
    info = cache.node_info("n1").pods[bound.metadata.uid]  # type: ignore[union-attr]
    running = msgspec.structs.replace(bound, status=msgspec.structs.replace(
        bound.status, phase="Running", conditions=[PodCondition(type="Ready", status="True")]))
    cache.update_pod(running)
    assert cache.node_info("n1").pods[bound.metadata.uid] is info  # type: ignore[union-attr]
    relabelled = make_pod("p").node("n1").req(cpu="1").label("app", "b").obj()
    cache.update_pod(relabelled)
    replaced = cache.node_info("n1").pods[bound.metadata.uid]  # type: ignore[union-attr]
    assert replaced is not info
    assert replaced.pod.metadata.labels == {"app": "b"}
    resized = make_pod("p").node("n1").req(cpu="2").label("app", "b").obj()
    cache.update_pod(resized)
    assert cache.node_info("n1").requested.milli_cpu == 2000  # type: ignore[union-attr]


def test_the_snapshot_knows_which_nodes_hold_pods_with_affinity() -> None:
    cache = Cache()
    for name in ("n1", "n2"):
        cache.add_node(make_node(name).obj())
    snap = cache.snapshot()
    assert snap.nodes_with_affinity() == [] == snap.nodes_with_required_anti_affinity()
    anti = make_pod("p").node("n2").pod_affinity(anti=True, app="web").obj()
    cache.add_pod(anti)
    assert [ni.name for ni in snap.nodes_with_affinity()] == ["n2"]
    assert [ni.name for ni in snap.nodes_with_required_anti_affinity()] == ["n2"]
    cache.remove_pod(anti)
    assert snap.nodes_with_affinity() == [] == snap.nodes_with_required_anti_affinity()
