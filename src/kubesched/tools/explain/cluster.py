"""Read what `kubesched explain` needs from the cluster, once: every informer `kubesched run` has
(ClusterSources: Pods, Nodes, Jobs, Namespaces and the pods' owners), listed once with no watch, into
a cache and profiles built from the same registry. Nothing is written: the profiles' handle keeps its
default ports, which refuse every write."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

from kubesched.api import ApiClient, ApiError
from kubesched.backend.cache.cache import Cache, filled
from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.config.types import SchedulerConfig
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.snapshot import Snapshot
from kubesched.model.objects import Node, Pod
from kubesched.scheduler.profiles import build_profiles, read_only_handle
from kubesched.scheduler.sources import ClusterSources
from kubesched.tools.explain.group import GroupView


class ExplainError(Exception):
    """Why there is nothing to explain (the pod is missing, the profile unknown); the message says."""


@dataclass
class ClusterView:
    pod: Pod  # as if pending: without its node
    snapshot: Snapshot
    profiles: dict[str, Profile]
    group: GroupView | None = None


async def read_cluster(client: ApiClient, config: SchedulerConfig, namespace: str, name: str,
                       out_of_tree: Iterable[PluginSpec] = (), *, generic_workload: bool = False) -> ClusterView:
    coscheduling = any(ref.name == "Coscheduling" for profile in config.profiles
                       for refs in profile.plugins.values() for ref in refs)
    sources = ClusterSources(client, generic_workload=generic_workload, coscheduling=coscheduling)
    # One list each, as the scheduler's informers start; the watch that would follow never runs.
    await sources.list_once()
    pod = sources.pods.get(f"{namespace}/{name}")
    if pod is None:
        raise ExplainError(await _why_missing(client, namespace, name))
    cache, pending = pending_view(sources.nodes.list(), sources.pods.list(), pod)
    pods = [pending if p.metadata.uid == pod.metadata.uid else p for p in sources.pods.list()]
    handle = read_only_handle(cache.snapshot, sources)
    states: PodGroupStates | None = None
    if sources.pod_groups is not None:
        states = handle.pod_groups = PodGroupStates(cache, sources.pod_groups)
        for p in pods:
            states.add_pod(p)
    profiles = build_profiles(config, sources, handle, out_of_tree)
    return ClusterView(pending, cache.snapshot(), profiles, GroupView(cache, pods, states, sources.co_pod_groups))


def pending_view(nodes: Iterable[Node], pods: Iterable[Pod], pod: Pod) -> tuple[Cache, Pod]:
    """The cache the scheduler's informer handlers would fill from these lists, and the pod as if it
    were pending: a bound pod leaves its node (its room is free to it) and loses spec.nodeName."""
    cache = filled(nodes, pods)
    cache.remove_pod(pod)
    return cache, msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=""))


def choose_profile(profiles: dict[str, Profile], pod: Pod, wanted: str | None) -> Profile:
    """--profile, else the pod's schedulerName when it is a profile, else the first profile."""
    if wanted is not None:
        found = profiles.get(wanted)
        if found is None:
            raise ExplainError(f"no profile {wanted!r}; the profiles are: {', '.join(profiles)}")
        return found
    return profiles.get(pod.spec.scheduler_name) or next(iter(profiles.values()))


async def _why_missing(client: ApiClient, namespace: str, name: str) -> str:
    """The list leaves finished pods out, as the scheduler's does: tell those from absent ones."""
    try:
        await client.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
    except ApiError as e:
        if e.status == 404:
            return f'pod "{name}" not found in namespace "{namespace}"'
        raise
    return (f'pod "{name}" in namespace "{namespace}" has finished (Succeeded or Failed): '
            "the scheduler does not consider it")
