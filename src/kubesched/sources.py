"""The informers a scheduler reads and the registry built on them: one place, so `kubesched run`
and `kubesched explain` decide with the same plugins fed by the same objects."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kubesched.api import ApiClient, Handlers, Informer, job_informer, namespace_informer, node_informer, pod_informer
from kubesched.api.informer import (
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
    storage_informer,
)
from kubesched.framework.events import EventResource
from kubesched.framework.registry import PluginSpec, Registry
from kubesched.model.objects import (
    Job,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from kubesched.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.owner_selectors import OwnerSelectors
from kubesched.plugins.inter_pod_affinity import InformerNamespaces
from kubesched.plugins.pool_ownership import InformerJobs
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.storage_lister import InformerStorage

# kube-scheduler's pod informer leaves finished pods out: they hold no resources.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


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

    def __init__(self, client: ApiClient) -> None:
        self.pods: Informer[Pod] = pod_informer(client, Handlers(), POD_FIELD_SELECTOR)
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
                self.replica_sets, self.stateful_sets, *(i for _, i in self.storage_informers), self.pods)

    def registry(self, out_of_tree: Iterable[PluginSpec] = ()) -> Registry:
        """The plugins read Jobs, namespaces, owner selectors and storage objects from these
        informers, never from the API per pod."""
        return in_tree_registry(jobs=InformerJobs(self.jobs), namespaces=InformerNamespaces(self.namespaces),
                                selectors=self.owner_selectors, storage=self.storage).merged(out_of_tree)
