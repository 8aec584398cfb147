"""Requests past int64: the apiserver only checks requests >= 0, so one bound pod may ask for 10P cpu.

kube-scheduler's int64 arithmetic would wrap or (for 10P cpu, whose MilliValue overflows) count 0;
kubesched saturates every amount at int64 max instead, so such a pod fills its node rather than
hiding, and no column, assume or snapshot rebuild can fail on it.
"""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.backend.cache import Cache
from kubesched.framework import FitError, NodeCursor, PodInfo, schedule_pod
from kubesched.framework.resources import Resource, milli_of, value_of
from kubesched.model.objects import Pod
from kubesched.model.quantity import INT64_MAX, milli_value, saturate_int64, value
from tests.builders import make_node, make_pod
from tests.unit.scheduling_helpers import default_profile

GPU = "example.com/gpu"


def _huge_pod(name: str = "huge", node: str = "big") -> Pod:
    return make_pod(name).node(node).req(cpu="10P", memory="100E", example_com__gpu="20E").obj()


def _cluster() -> Cache:
    cache = Cache()
    for name in ("big", "other"):
        cache.add_node(make_node(name).capacity(cpu="8", memory="32Gi", pods="110", example_com__gpu="4").obj())
    cache.add_pod(_huge_pod())
    return cache


def _schedule(cache: Cache, pod: Pod) -> str | None:
    result = schedule_pod(default_profile(), cache.snapshot(), PodInfo(pod), rng=random.Random(0),
                          cursor=NodeCursor())
    return None if isinstance(result, FitError) else result.suggested_host


@pytest.mark.parametrize(
    ("text", "milli", "units"),
    [
        pytest.param("10P", INT64_MAX, 10**16, id="10P-milli-overflows"),
        pytest.param("100E", INT64_MAX, INT64_MAX, id="100E-both-overflow"),
        pytest.param("9223372036854775807", INT64_MAX, INT64_MAX, id="max-int64"),
        pytest.param("9223372036854775808", INT64_MAX, INT64_MAX, id="max-int64-plus-one"),
        pytest.param("9223372036854775m", 9223372036854775, 9223372036855, id="milli-near-max"),
        pytest.param("16Ei", INT64_MAX, INT64_MAX, id="binary-past-max"),
    ],
)
def test_amounts_saturate_at_int64_max(text: str, milli: int, units: int) -> None:
    assert (milli_value(text), value(text)) == (milli, units)


def test_huge_bound_pod_fills_its_node_and_nothing_fails() -> None:
    cache = _cluster()
    snap = cache.snapshot()
    i = snap.index["big"]
    assert (int(snap.req_cpu[i]), int(snap.req_mem[i])) == (INT64_MAX, INT64_MAX)
    scalar = snap.scalar_requested(GPU)
    assert scalar is not None
    assert int(scalar[i]) == INT64_MAX
    # Every later pod asking for cpu, memory or gpus lands on the other node.
    for n, kind in enumerate(({"cpu": "1"}, {"memory": "1Gi"}, {"example_com__gpu": "1"})):
        pod = make_pod(f"p{n}").req(**kind).obj()
        assert _schedule(cache, pod) == "other", kind
        cache.assume_pod(PodInfo(pod), "other")
    # Assuming onto the full node (what a racing scheduler could bind) must not raise either.
    cache.assume_pod(PodInfo(make_pod("extra").req(cpu="1").obj()), "big")
    cache.add_pod(_huge_pod("huge2"))


def test_snapshot_rebuild_with_a_huge_pod() -> None:
    cache = _cluster()
    cache.add_pod(_huge_pod("huge2"))
    cache.add_node(make_node("new").capacity(cpu="8").obj())  # forces a rebuild
    snap = cache.snapshot()
    assert int(snap.req_cpu[snap.index["big"]]) == INT64_MAX
    assert _schedule(cache, make_pod("p").req(cpu="1").obj()) in ("other", "new")


def test_removing_the_huge_pods_frees_the_node_exactly() -> None:
    cache = _cluster()
    second = _huge_pod("huge2")
    cache.add_pod(second)
    cache.add_pod(make_pod("small").node("big").req(cpu="500m").obj())
    cache.remove_pod(second)
    cache.remove_pod(_huge_pod())
    snap = cache.snapshot()
    assert int(snap.req_cpu[snap.index["big"]]) == 500
    assert int(snap.req_mem[snap.index["big"]]) == 0


_near_limit = st.one_of(
    st.integers(min_value=0, max_value=2**70),
    st.integers(min_value=INT64_MAX - 2000, max_value=INT64_MAX + 2000),
    st.integers(min_value=INT64_MAX // 1000 - 2000, max_value=INT64_MAX // 1000 + 2000),
)
_suffix = st.sampled_from(["", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"])


@settings(max_examples=300, deadline=None)
@given(amounts=st.lists(st.tuples(_near_limit, _suffix), min_size=1, max_size=6))
def test_any_quantities_near_int64_limits_never_break_the_node(amounts: list[tuple[int, str]]) -> None:
    cache = Cache()
    cache.add_node(make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj())
    pods = []
    for j, (number, suffix) in enumerate(amounts):
        text = f"{number}{suffix}"
        assert 0 <= milli_value(text) <= INT64_MAX
        assert 0 <= value(text) <= INT64_MAX
        d = Decimal(milli_value(text))
        assert milli_of(d / 1000) == saturate_int64(milli_value(text))
        pod = make_pod(f"p{j}").node("n").req(cpu=text, memory=text).obj()
        cache.add_pod(pod)
        pods.append(pod)
    snap = cache.snapshot()
    exact = Resource()
    for pod in pods:
        exact.add(PodInfo(pod).requests)
    assert int(snap.req_cpu[0]) == min(exact.milli_cpu, INT64_MAX)
    assert int(snap.req_mem[0]) == min(exact.memory, INT64_MAX)
    # The node is full exactly when the exact sum says so, and a cycle never fails.
    fits = exact.milli_cpu + 1000 <= 4000 and exact.memory + 1 <= 8 * 2**30
    assert (_schedule(cache, make_pod("next").req(cpu="1", memory="1").obj()) == "n") == fits
    cache.assume_pod(PodInfo(make_pod("next").req(cpu="1").obj()), "n")
    cache.add_node(make_node("m").obj())
    assert cache.snapshot().n == 2
    for pod in pods:
        cache.remove_pod(pod)
    assert value_of(Decimal(0)) == 0
