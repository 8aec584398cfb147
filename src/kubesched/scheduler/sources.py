"""The informers a scheduler reads and the registry built on them: one place, so `kubesched run`,
`explain`, `simulate` and `shadow` decide with the same plugins fed by the same objects.

KINDS names every kind the plugins read (by its API plural) and its slim type; ClusterSources holds
an informer for each, StaticSources an in-memory store for each (a `kubesched snapshot` file, or a
simulation's overlay), and `registry_of` wires the plugins to either. A new kind is one entry in
KINDS, one informer in ClusterSources and its use in `registry_of`: snapshot files carry it then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from kubesched.api import ApiClient, Handlers, Informer, job_informer, namespace_informer, node_informer, pod_informer
from kubesched.api.informer import (
    CO_POD_GROUPS,
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    JOBS,
    NAMESPACES,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    POD_DISRUPTION_BUDGETS,
    POD_GROUPS,
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    SERVICES,
    STATEFUL_SETS,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
    WORKLOADS,
    storage_informer,
)
from kubesched.framework.events import EventResource
from kubesched.framework.handle import Lister
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.model.coscheduling import CoPodGroup
from kubesched.model.objects import (
    Job,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from kubesched.model.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from kubesched.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.model.workload import PodGroup, Workload
from kubesched.plugins.cronjob_pool.ownership import InformerJobs
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.dynamic_resources.slice_tracker import SliceTracker
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker
from kubesched.plugins.helper.storage_lister import InformerStorage
from kubesched.plugins.inter_pod_affinity import InformerNamespaces
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.owner_selectors import OwnerSelectors

# kube-scheduler's pod informer leaves finished pods out: they hold no resources.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"

# API plural -> slim type, in the order a cache is filled (nodes first, pods last).
KINDS: dict[str, type[Any]] = {
    NODES.plural: Node,
    JOBS.plural: Job,
    NAMESPACES.plural: Namespace,
    SERVICES.plural: Service,
    REPLICATION_CONTROLLERS.plural: ReplicationController,
    REPLICA_SETS.plural: ReplicaSet,
    STATEFUL_SETS.plural: StatefulSet,
    PERSISTENT_VOLUMES.plural: PersistentVolume,
    PERSISTENT_VOLUME_CLAIMS.plural: PersistentVolumeClaim,
    STORAGE_CLASSES.plural: StorageClass,
    CSI_NODES.plural: CSINode,
    CSI_DRIVERS.plural: CSIDriver,
    CSI_STORAGE_CAPACITIES.plural: CSIStorageCapacity,
    VOLUME_ATTACHMENTS.plural: VolumeAttachment,
    POD_DISRUPTION_BUDGETS.plural: PodDisruptionBudget,
    DEVICE_CLASSES.plural: DeviceClass,
    DEVICE_TAINT_RULES.plural: DeviceTaintRule,
    RESOURCE_SLICES.plural: ResourceSlice,
    RESOURCE_CLAIMS.plural: ResourceClaim,
    PODS.plural: Pod,
}

T = TypeVar("T")


class Sources(Protocol):
    """Stores of every kind in KINDS, by plural (an informer's or an in-memory one), the owner
    selectors PodTopologySpread reads from them, and the DRA objects DynamicResources reads."""

    owner_selectors: InformerSelectors
    dra: DraManager

    def store(self, plural: str) -> Lister[Any]: ...


def owner_selectors_of(store: Callable[[str], Lister[Any]]) -> InformerSelectors:
    return InformerSelectors(OwnerSelectors(store(SERVICES.plural), store(REPLICATION_CONTROLLERS.plural),
                                            store(REPLICA_SETS.plural), store(STATEFUL_SETS.plural)))


def object_key(obj: Any) -> str:
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else str(meta.name)


class Store(Generic[T]):
    """An in-memory store with an informer's read side (get, list, has_synced), always synced."""

    has_synced = True

    def __init__(self, objects: Iterable[T] = ()) -> None:
        self.store: dict[str, T] = {object_key(o): o for o in objects}

    def get(self, key: str) -> T | None:
        return self.store.get(key)

    def list(self) -> list[T]:
        return list(self.store.values())

    def put(self, obj: T) -> None:
        self.store[object_key(obj)] = obj

    def remove(self, obj: T) -> None:
        self.store.pop(object_key(obj), None)


class StaticSources:
    """One Store per kind, from lists of objects (a snapshot file, or lists read once)."""

    def __init__(self, objects: Mapping[str, Iterable[Any]] | None = None) -> None:
        given = objects or {}
        unknown = sorted(set(given) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}")
        self.stores: dict[str, Store[Any]] = {plural: Store(given.get(plural, ())) for plural in KINDS}
        # scheduler-plugins' PodGroups (Coscheduling), when the caller has them.
        self.co_pod_groups: Store[CoPodGroup] | None = None
        self.owner_selectors = owner_selectors_of(self.store)
        self.dra = DraManager.of(*(self.stores[r.plural].list() for r in (
            RESOURCE_CLAIMS, RESOURCE_SLICES, DEVICE_CLASSES, DEVICE_TAINT_RULES)))

    def store(self, plural: str) -> Store[Any]:
        return self.stores[plural]

    @property
    def pods(self) -> Store[Pod]:
        return self.stores[PODS.plural]

    @property
    def nodes(self) -> Store[Node]:
        return self.stores[NODES.plural]

    @property
    def jobs(self) -> Store[Job]:
        return self.stores[JOBS.plural]

    def registry(self, out_of_tree: Iterable[PluginSpec] = ()) -> Registry:
        return registry_of(self, out_of_tree)


def storage_of(store: Callable[[str], Lister[Any]]) -> InformerStorage:
    return InformerStorage(*(store(r.plural) for r in (  # type: ignore[arg-type]
        PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS, STORAGE_CLASSES, CSI_NODES, CSI_DRIVERS,
        CSI_STORAGE_CAPACITIES, VOLUME_ATTACHMENTS)))


def registry_of(sources: Sources, out_of_tree: Iterable[PluginSpec] = ()) -> Registry:
    """The plugins read Jobs, namespaces, owner selectors, storage objects, PodDisruptionBudgets and
    the DRA objects from these stores, never from the API per pod."""
    return in_tree_registry(jobs=InformerJobs(sources.store(JOBS.plural)),  # type: ignore[arg-type]
                            namespaces=InformerNamespaces(sources.store(NAMESPACES.plural)),
                            selectors=sources.owner_selectors,
                            storage=storage_of(sources.store),
                            pdbs=sources.store(POD_DISRUPTION_BUDGETS.plural),
                            dra=sources.dra,
                            co_pod_groups=getattr(sources, "co_pod_groups", None)).merged(out_of_tree)


class InformerSelectors:
    """PodTopologySpread's SelectorLister over the informers' stores: helper.DefaultSelector's one
    merged selector, or none when nothing owns the pod (then no default constraint applies)."""

    def __init__(self, owners: OwnerSelectors) -> None:
        self.owners = owners

    def selectors_for(self, pod: Pod) -> Sequence[LabelSelector]:
        selector = self.owners.selector_for(pod)
        if not selector.match_labels and not selector.match_expressions:
            return []
        return [selector]


class ClusterSources:
    """Every informer, with no handlers yet (the scheduler sets them once its queue exists)."""

    def __init__(self, client: ApiClient, *, generic_workload: bool = False, coscheduling: bool = False) -> None:
        self.pods: Informer[Pod] = pod_informer(client, Handlers(), POD_FIELD_SELECTOR)
        # The Workload API, only with the GenericWorkload gate (its v1beta1 is not served by default).
        self.pod_groups: Informer[PodGroup] | None = None
        self.workloads: Informer[Workload] | None = None
        if generic_workload:
            self.pod_groups = Informer(client, POD_GROUPS, PodGroup, Handlers())
            self.workloads = Informer(client, WORKLOADS, Workload, Handlers())
        # scheduler-plugins' PodGroup CRD, only when a profile enables Coscheduling.
        self.co_pod_groups: Informer[CoPodGroup] | None = None
        if coscheduling:
            self.co_pod_groups = Informer(client, CO_POD_GROUPS, CoPodGroup, Handlers())
        self.nodes: Informer[Node] = node_informer(client, Handlers())
        self.jobs: Informer[Job] = job_informer(client, Handlers())
        # Namespace labels, for pod affinity's namespaceSelector. kube-scheduler registers no cluster
        # event for a namespace (InterPodAffinity's EventsToRegister has none), so neither does this.
        self.namespaces: Informer[Namespace] = namespace_informer(client, Handlers())
        # PodTopologySpread's default constraints select the pods of a pod's Services and controller.
        # kube-scheduler requeues no pod on their changes, so their informers only fill stores.
        self.services: Informer[Service] = Informer(client, SERVICES, Service, Handlers())
        self.replication_controllers: Informer[ReplicationController] = Informer(
            client, REPLICATION_CONTROLLERS, ReplicationController, Handlers())
        self.replica_sets: Informer[ReplicaSet] = Informer(client, REPLICA_SETS, ReplicaSet, Handlers())
        self.stateful_sets: Informer[StatefulSet] = Informer(client, STATEFUL_SETS, StatefulSet, Handlers())
        # DefaultPreemption's PodDisruptionBudgets; kube-scheduler requeues no pod on their changes.
        self.pdbs: Informer[PodDisruptionBudget] = Informer(
            client, POD_DISRUPTION_BUDGETS, PodDisruptionBudget, Handlers())
        self.owner_selectors = InformerSelectors(OwnerSelectors(
            self.services, self.replication_controllers, self.replica_sets, self.stateful_sets))
        # Storage, for the volume plugins; the scheduler gives each its queue events.
        self.persistent_volumes: Informer[PersistentVolume] = storage_informer(
            client, PERSISTENT_VOLUMES, PersistentVolume)
        self.persistent_volume_claims: Informer[PersistentVolumeClaim] = storage_informer(
            client, PERSISTENT_VOLUME_CLAIMS, PersistentVolumeClaim)
        self.storage_classes: Informer[StorageClass] = storage_informer(client, STORAGE_CLASSES, StorageClass)
        self.csi_nodes: Informer[CSINode] = storage_informer(client, CSI_NODES, CSINode)
        self.csi_drivers: Informer[CSIDriver] = storage_informer(client, CSI_DRIVERS, CSIDriver)
        self.csi_storage_capacities: Informer[CSIStorageCapacity] = storage_informer(
            client, CSI_STORAGE_CAPACITIES, CSIStorageCapacity)
        self.volume_attachments: Informer[VolumeAttachment] = storage_informer(
            client, VOLUME_ATTACHMENTS, VolumeAttachment)
        self.storage = InformerStorage(self.persistent_volumes, self.persistent_volume_claims,
                                       self.storage_classes, self.csi_nodes, self.csi_drivers,
                                       self.csi_storage_capacities, self.volume_attachments)
        # DRA: the claims and the slices (with the taint rules applied) go through DynamicResources'
        # trackers, whose changes the scheduler forwards to its queue; classes are read as they are.
        self.dra = DraManager(ClaimTracker(), SliceTracker(), None)
        claims, slices = self.dra.claims, self.dra.slices
        self.resource_claims: Informer[ResourceClaim] = Informer(
            client, RESOURCE_CLAIMS, ResourceClaim, Handlers(claims.add, claims.update, claims.delete))
        self.resource_slices: Informer[ResourceSlice] = Informer(
            client, RESOURCE_SLICES, ResourceSlice,
            Handlers(slices.add_slice, slices.update_slice, slices.delete_slice))
        self.device_taint_rules: Informer[DeviceTaintRule] = Informer(
            client, DEVICE_TAINT_RULES, DeviceTaintRule,
            Handlers(slices.add_rule, slices.update_rule, slices.delete_rule))
        self.device_classes: Informer[DeviceClass] = Informer(client, DEVICE_CLASSES, DeviceClass, Handlers())
        self.dra.classes = self.device_classes

    @property
    def storage_informers(self) -> tuple[tuple[EventResource, Informer[Any]], ...]:
        """Each storage informer with the event resource its changes are reported as."""
        return ((EventResource.PERSISTENT_VOLUME, self.persistent_volumes),
                (EventResource.PERSISTENT_VOLUME_CLAIM, self.persistent_volume_claims),
                (EventResource.STORAGE_CLASS, self.storage_classes),
                (EventResource.CSI_NODE, self.csi_nodes),
                (EventResource.CSI_DRIVER, self.csi_drivers),
                (EventResource.CSI_STORAGE_CAPACITY, self.csi_storage_capacities),
                (EventResource.VOLUME_ATTACHMENT, self.volume_attachments))

    @property
    def all(self) -> tuple[Informer[Any], ...]:
        """Nodes first and pods last, so a pod's node is known when the pod arrives."""
        return (self.nodes, self.jobs, self.namespaces, self.services, self.replication_controllers,
                self.replica_sets, self.stateful_sets, self.pdbs, *(i for _, i in self.storage_informers),
                self.device_classes, self.device_taint_rules, self.resource_slices, self.resource_claims,
                *(i for i in (self.pod_groups, self.workloads, self.co_pod_groups) if i is not None), self.pods)

    def store(self, plural: str) -> Informer[Any]:
        for informer in self.all:
            if informer.resource.plural == plural:
                return informer
        raise KeyError(plural)

    def objects(self) -> dict[str, list[Any]]:
        """Every store's objects by plural (what `kubesched snapshot` writes)."""
        return {plural: self.store(plural).list() for plural in KINDS}

    async def list_once(self) -> None:
        """One list each, as the informers start; the watch that would follow never runs (explain,
        snapshot, simulate: a read of the cluster at one moment)."""
        await asyncio.gather(*(i._list_and_sync() for i in self.all))

    def registry(self, out_of_tree: Iterable[PluginSpec] = ()) -> Registry:
        return registry_of(self, out_of_tree)
