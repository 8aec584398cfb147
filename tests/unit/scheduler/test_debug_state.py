"""The cache comparer (kube-scheduler's debugger/comparer.go): what the cache and the queue hold
against the informers' objects, each kind of staleness named."""

from __future__ import annotations

from kubesched.backend.cache.cache import Cache
from kubesched.backend.queue import SchedulingQueue
from kubesched.backend.queue.clock import FakeClock
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Node, Pod
from kubesched.scheduler.debugger import Comparison, compare
from tests.builders import make_node, make_pod

NAMES = frozenset({"kubesched"})


def _pending(name: str) -> Pod:
    return make_pod(name).scheduler("kubesched").obj()


def _bound(name: str, node: str) -> Pod:
    return make_pod(name).scheduler("kubesched").node(node).obj()


def _setup() -> tuple[Cache, SchedulingQueue, list[Pod], list[Node]]:
    cache, queue = Cache(), SchedulingQueue(FakeClock())
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    for n in nodes:
        cache.add_node(n)
    pods = [_bound("a", "n1"), _bound("b", "n2"), _pending("c")]
    for p in pods[:2]:
        cache.add_pod(p)
    queue.add(pods[2])
    return cache, queue, pods, nodes


def _counts(c: Comparison) -> dict[str, int]:
    return {k: v["count"] for k, v in c.as_dict().items() if isinstance(v, dict) and v["count"]}


def test_agreeing_cache_and_queue_compare_ok() -> None:
    cache, queue, pods, nodes = _setup()
    result = compare(cache, queue, pods, nodes, NAMES)
    assert result.ok, result
    assert _counts(result) == {}


def test_every_kind_of_staleness_is_named() -> None:
    cache, queue, pods, nodes = _setup()
    # The informer lost node n2 and pod b (deleted), saw pod a move, and has a new pending pod d.
    informer_nodes = [nodes[0], make_node("n3").obj()]
    informer_pods = [_bound("a", "n3"), pods[2], _pending("d")]
    queue.add(_pending("gone"))
    result = compare(cache, queue, informer_pods, informer_nodes, NAMES)
    assert not result.ok
    assert _counts(result) == {"missed_nodes": 1, "redundant_nodes": 1, "missed_pods": 1, "redundant_pods": 1,
                               "missed_queued": 1, "redundant_queued": 1}
    assert result.missed_nodes.examples == ["n3"]
    assert result.redundant_nodes.examples == ["n2"]
    assert result.missed_pods.examples == ["default/a"]  # on n1 in the cache, on n3 in the informer
    assert result.redundant_pods.examples == ["uid-default-b"]  # the informer no longer knows its name
    assert result.missed_queued.examples == ["default/d"]
    assert result.redundant_queued.examples == ["uid-default-gone"]


def test_a_pod_being_bound_is_neither_missed_nor_redundant() -> None:
    cache, queue, pods, nodes = _setup()
    popped = queue.pop_nowait()
    assert popped is not None
    cache.assume_pod(PodInfo(popped.pod), "n1")
    # Still pending in the informer while its bind is in flight: assumed in the cache, out of the queue.
    assert compare(cache, queue, pods, nodes, NAMES).ok
    queue.done(popped.uid)
    assert compare(cache, queue, pods, nodes, NAMES).ok


def test_a_pod_of_another_scheduler_is_not_expected_in_the_queue() -> None:
    cache, queue, pods, nodes = _setup()
    other = make_pod("x").scheduler("default-scheduler").obj()
    assert compare(cache, queue, [*pods, other], nodes, NAMES).ok
