"""Shared helpers for the framework/plugin/cache unit tests."""

from __future__ import annotations

import random

from kubesched.backend.cache import Cache
from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import (
    FitError,
    NodeCursor,
    PodInfo,
    Profile,
    ScheduleResult,
    Snapshot,
    build_profile,
    schedule_pod,
)
from kubesched.model.objects import Node, Pod
from kubesched.plugins.registry import in_tree_registry
from tests.builders import NodeBuilder, PodBuilder


def pod_of(p: Pod | PodBuilder) -> Pod:
    return p.obj() if isinstance(p, PodBuilder) else p


def node_of(n: Node | NodeBuilder) -> Node:
    return n.obj() if isinstance(n, NodeBuilder) else n


def cache_with(nodes: list[Node | NodeBuilder], pods: list[Pod | PodBuilder] = ()) -> Cache:  # type: ignore[assignment]
    cache = Cache()
    for n in nodes:
        cache.add_node(node_of(n))
    for p in pods:
        cache.add_pod(pod_of(p))
    return cache


def snapshot_with(nodes: list[Node | NodeBuilder], pods: list[Pod | PodBuilder] = ()) -> Snapshot:  # type: ignore[assignment]
    return cache_with(nodes, pods).snapshot()


def default_profile(**args: dict[str, object]) -> Profile:
    config = ProfileConfig("kubesched", kube_scheduler_default_plugins(), plugin_args=dict(args))
    return build_profile(config, in_tree_registry())


def schedule(nodes: list[Node | NodeBuilder], pod: Pod | PodBuilder, pods: list[Pod | PodBuilder] = (),  # type: ignore[assignment]
             profile: Profile | None = None, seed: int = 0) -> ScheduleResult | FitError:
    return schedule_pod(profile or default_profile(), snapshot_with(nodes, pods), PodInfo(pod_of(pod)),
                        rng=random.Random(seed), cursor=NodeCursor())
