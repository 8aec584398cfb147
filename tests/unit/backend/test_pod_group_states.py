"""A pod group's members by state, read from the cache when asked."""

from __future__ import annotations

from kubesched.backend.cache.cache import Cache
from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.framework.types import PodInfo
from kubesched.scheduler.sources import Store
from tests.builders import make_node, make_pod, make_pod_group


def test_members_are_unscheduled_assumed_or_assigned() -> None:
    cache = Cache()
    cache.add_node(make_node("n").capacity(cpu="4").obj())
    states = PodGroupStates(cache, Store([make_pod_group("pg", min_count=3)]))
    bound = make_pod("b").pod_group("pg").node("n").obj()
    assumed = make_pod("a").pod_group("pg").obj()
    waiting = make_pod("w").pod_group("pg").obj()
    other = make_pod("o").pod_group("other").obj()
    for pod in (bound, assumed, waiting, other, make_pod("none").obj()):
        states.add_pod(pod)
    cache.add_pod(bound)
    cache.assume_pod(PodInfo(assumed), "n")
    state = states.state("default", "pg")
    assert ([p.metadata.name for p in state.unscheduled], [p.metadata.name for p in state.assumed],
            [p.metadata.name for p in state.assigned]) == (["w"], ["a"], ["b"])
    assert (state.all_pods_count(), state.scheduled_pods_count()) == (3, 2)
    assert states.members_count("default", "pg") == 3
    states.remove_pod(waiting)
    assert states.state("default", "pg").all_pods_count() == states.members_count("default", "pg") == 2
    assert states.pod_group("default", "pg") is not None
    assert states.pod_group("default", "missing") is None
    assert states.state("default", "missing").all_pods_count() == states.members_count("default", "missing") == 0
