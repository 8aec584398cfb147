"""One simulation, pure: a cluster state, the pods to place and the what-ifs in; placements and
what each node would hold out. The profiles come from the same config and registry as `kubesched
run` (sources.registry_of over in-memory stores); their handle keeps the default ports, which
refuse every write."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.cache.cache import Cache, filled
from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.config.types import SchedulerConfig
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import Profile
from kubesched.model.objects import Node
from kubesched.scheduler import profiles as scheduler_profiles
from kubesched.scheduler.profiles import read_only_handle
from kubesched.scheduler.sources import StaticSources, Store
from kubesched.tools.groups import GroupVerdict
from kubesched.tools.simulate.expand import GROUP_PLURALS, Expanded
from kubesched.tools.simulate.gangs import GroupPlacer
from kubesched.tools.simulate.place import Placement, Placer
from kubesched.tools.simulate.state import ClusterState
from kubesched.tools.simulate.whatif import drain


@dataclass
class NodeSummary:
    name: str
    pods: list[str]  # every pod on it afterwards (namespace/name)
    placed: list[str]  # the simulated pods among them
    cpu_requested_m: int
    cpu_allocatable_m: int
    memory_requested: int
    memory_allocatable: int
    added: bool = False
    drained: bool = False


@dataclass
class Simulation:
    placements: list[Placement]
    nodes: list[NodeSummary]
    added_nodes: list[str] = field(default_factory=list)
    drained_nodes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    groups: list[GroupVerdict] = field(default_factory=list)

    @property
    def unschedulable(self) -> list[Placement]:
        return [p for p in self.placements if p.node is None]


class SimulationError(ValueError):
    """Nothing to simulate with (no such profile); the message says what is valid."""


def build_profiles(config: SchedulerConfig, sources: StaticSources, cache: Cache,
                   out_of_tree: Iterable[PluginSpec] = (), pod_groups: PodGroupStates | None = None
                   ) -> dict[str, Profile]:
    """The profiles `kubesched run` builds (the one builder), over these stores; GangScheduling
    reads `pod_groups` (GenericWorkload on)."""
    handle = read_only_handle(cache.snapshot, sources)
    if pod_groups is not None:
        handle.pod_groups = pod_groups
    return scheduler_profiles.build_profiles(config, sources, handle, out_of_tree)


def simulate(config: SchedulerConfig, state: ClusterState, batch: Expanded, *, add_nodes: Sequence[Node] = (),
             drain_nodes: Sequence[str] = (), profile_name: str | None = None,
             out_of_tree: Iterable[PluginSpec] = (), seed: int = 0, generic_workload: bool = False) -> Simulation:
    objects: dict[str, list[Any]] = {k: list(v) for k, v in state.objects.items()}
    for plural, extra in batch.objects.items():
        objects.setdefault(plural, []).extend(extra)
    objects.setdefault("nodes", []).extend(add_nodes)
    groups = {plural: objects.pop(plural, []) for plural in GROUP_PLURALS}
    sources = StaticSources(objects)
    # scheduler-plugins' PodGroups, which Coscheduling reads (registry_of).
    sources.co_pod_groups = Store(groups["copodgroups"])
    cache = filled(sources.nodes.list(), sources.pods.list())
    pod_groups: PodGroupStates | None = None
    if generic_workload:
        pod_groups = PodGroupStates(cache, Store(groups["podgroups"]))
        for pod in [*sources.pods.list(), *batch.pods]:
            pod_groups.add_pod(pod)
    profiles = build_profiles(config, sources, cache, out_of_tree, pod_groups)
    if profile_name is not None and profile_name not in profiles:
        raise SimulationError(f"no profile {profile_name!r}; the profiles are: {', '.join(profiles)}")
    evicted_from: dict[str, str] = {}
    for name in drain_nodes:
        ni = cache.node_info(name)
        if ni is not None:
            evicted_from.update({uid: name for uid in ni.pods})
    replaced = drain(cache, drain_nodes)
    placer = Placer(profiles, cache, config.percentage_of_nodes_to_score, profile_name, random.Random(seed))
    cluster_pods = sources.pods.list()
    for pod in batch.pods:
        # As the pod informer's store would hold them once created.
        sources.pods.put(pod)
    grouped = GroupPlacer(placer, pod_groups, sources.co_pod_groups, cluster_pods)
    placements = grouped.place_all([*replaced, *batch.pods], evicted_from)
    sim = Simulation(placements, [], [n.metadata.name for n in add_nodes], list(drain_nodes), list(batch.notes),
                     grouped.verdicts)
    if not generic_workload and (groups["podgroups"] or any(p.spec.scheduling_group for p in batch.pods)):
        sim.notes.append("PodGroups of scheduling.k8s.io (spec.schedulingGroup) count only with "
                         "--feature-gates GenericWorkload=true, as in kube-scheduler: their pods were placed "
                         "one by one")
    sim.nodes = summarise(cache, placements, set(sim.added_nodes), set(drain_nodes))
    if profile_name is None and any(p.spec.scheduler_name not in profiles for p in [*replaced, *batch.pods]):
        sim.notes.append(f"pods whose schedulerName is no profile of this config were placed with the first "
                         f"profile, {next(iter(profiles))}")
    return sim


def summarise(cache: Cache, placements: Sequence[Placement], added: set[str], drained: set[str]) -> list[NodeSummary]:
    placed: dict[str, list[str]] = {}
    for p in placements:
        if p.node is not None:
            placed.setdefault(p.node, []).append(p.pod)
    out = []
    for name in sorted(cache.node_order()):
        ni = cache.node_info(name)
        assert ni is not None
        out.append(NodeSummary(name, sorted(p.key for p in ni.pods.values()), placed.get(name, []),
                               ni.requested.milli_cpu, ni.allocatable.milli_cpu, ni.requested.memory,
                               ni.allocatable.memory, name in added, name in drained))
    return out
