"""kubesched's in-tree plugins, one PluginSpec each (kube-scheduler's default profile restricted to
them is kubesched.config.kube_scheduler_default_plugins).

Each spec's extension points are read from its plugin class's methods; its args parser sits next to
the plugin.
"""

from __future__ import annotations

import functools

from kubesched.framework.handle import Lister
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.model.coscheduling import CoPodGroup
from kubesched.plugins import (
    default_binder,
    default_preemption,
    image_locality,
    inter_pod_affinity,
    node_name,
    node_ports,
    node_unschedulable,
    node_volume_limits,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    unsupported_fields,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from kubesched.plugins.coscheduling import plugin as coscheduling
from kubesched.plugins.coscheduling.args import parse_args as coscheduling_args
from kubesched.plugins.cronjob_pool import config as pool_config
from kubesched.plugins.cronjob_pool import plugin as cronjob_pool
from kubesched.plugins.cronjob_pool.ownership import JobLookup
from kubesched.plugins.default_preemption.pdb import PDBLister
from kubesched.plugins.dynamic_resources import plugin as dynamic_resources
from kubesched.plugins.dynamic_resources.extended_scoring import DeviceScoring
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.gang_scheduling import plugin as gang_scheduling
from kubesched.plugins.helper.storage_lister import StorageLister
from kubesched.plugins.inter_pod_affinity import NamespaceLister
from kubesched.plugins.node_affinity import args as node_affinity_args
from kubesched.plugins.node_affinity import plugin as node_affinity
from kubesched.plugins.node_declared_features import plugin as node_declared_features
from kubesched.plugins.node_resources import args as resource_args
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.plugins.pod_topology_spread import SelectorLister


def in_tree_registry(jobs: JobLookup | None = None, namespaces: NamespaceLister | None = None,
                     selectors: SelectorLister | None = None, storage: StorageLister | None = None,
                     pdbs: PDBLister | None = None, dra: DraManager | None = None,
                     co_pod_groups: Lister[CoPodGroup] | None = None) -> Registry:
    """Every plugin kubesched ships. The CronJob pool reads Jobs from `jobs` (the scheduler's Job
    informer); without it every owner Job counts as gone. InterPodAffinity reads namespace labels
    (for namespaceSelector) from `namespaces` (the scheduler's Namespace informer); without it no
    namespace is known. PodTopologySpread's default constraints read the selectors of a pod's
    Services and controller from `selectors` (the scheduler's Service / ReplicationController /
    ReplicaSet / StatefulSet informers); without it no default constraint ever applies. The volume
    plugins read PersistentVolumes, claims, StorageClasses and the CSI objects from `storage` (the
    scheduler's storage informers); without it none exists.
    DefaultPreemption reads PodDisruptionBudgets from `pdbs` (the scheduler's PDB informer); without
    it no victim breaks a budget. DynamicResources reads ResourceClaims, ResourceSlices and
    DeviceClasses from `dra` (fed by the scheduler's informers), NodeResourcesFit its DeviceClasses
    for extended resources backed by DRA, and both resource scores their devices; without it none
    exists.
    Coscheduling (off by default) reads scheduler-plugins' PodGroups from `co_pod_groups` (an
    informer the scheduler starts only when a profile enables it)."""
    # The resource scores count the devices behind DRA-backed extended resources, with a selector
    # cache of their own as upstream's scorers keep one.
    devices = DeviceScoring(dra) if dra is not None else None
    return Registry([
        PluginSpec(priority_sort.NAME, priority_sort.new),
        PluginSpec(scheduling_gates.NAME, scheduling_gates.new),
        PluginSpec(node_name.NAME, node_name.new),
        PluginSpec(node_unschedulable.NAME, node_unschedulable.new),
        PluginSpec(taint_toleration.NAME, taint_toleration.new),
        PluginSpec(node_affinity.NAME, node_affinity.new, args_parser=node_affinity_args.parse_node_affinity),
        PluginSpec(node_ports.NAME, node_ports.new),
        PluginSpec(node_resources_fit.NAME, functools.partial(
            node_resources_fit.new, classes=(lambda: dra.classes.list()) if dra is not None else None,
            devices=devices),
                   args_parser=resource_args.parse_node_resources_fit),
        PluginSpec(balanced_allocation.NAME, functools.partial(balanced_allocation.new, devices=devices),
                   args_parser=resource_args.parse_balanced_allocation),
        PluginSpec(volume_restrictions.NAME, functools.partial(volume_restrictions.new, storage=storage)),
        PluginSpec(node_volume_limits.NAME, functools.partial(node_volume_limits.new, storage=storage)),
        PluginSpec(volume_zone.NAME, functools.partial(volume_zone.new, storage=storage)),
        PluginSpec(pod_topology_spread.NAME, functools.partial(pod_topology_spread.new, selectors=selectors),
                   args_parser=pod_topology_spread.parse_args),
        PluginSpec(inter_pod_affinity.NAME, functools.partial(inter_pod_affinity.new, namespaces=namespaces),
                   args_parser=inter_pod_affinity.parse_args),
        PluginSpec(image_locality.NAME, image_locality.new),
        PluginSpec(dynamic_resources.NAME, functools.partial(dynamic_resources.new, dra=dra),
                   args_parser=dynamic_resources.parse_args),
        PluginSpec(default_preemption.NAME, functools.partial(default_preemption.new, pdbs=pdbs),
                   args_parser=default_preemption.parse_args),
        PluginSpec(default_binder.NAME, default_binder.new),
        PluginSpec(node_declared_features.NAME, node_declared_features.new),
        PluginSpec(gang_scheduling.NAME, gang_scheduling.new),
        PluginSpec(coscheduling.NAME, functools.partial(coscheduling.new, groups=co_pod_groups),
                   args_parser=coscheduling_args),
        PluginSpec(unsupported_fields.NAME, unsupported_fields.new, args_parser=unsupported_fields.parse_args),
        PluginSpec(volume_binding.NAME, functools.partial(volume_binding.new, storage=storage),
                   args_parser=volume_binding.parse_args),
        PluginSpec(cronjob_pool.NAME, functools.partial(cronjob_pool.new_cronjob_pool, jobs=jobs),
                   args_parser=pool_config.parse_args),
    ])
