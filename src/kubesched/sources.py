"""The informers a scheduler reads and the registry built on them: one place, so `kubesched run`
and `kubesched explain` decide with the same plugins fed by the same objects."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kubesched.api import ApiClient, Handlers, Informer, job_informer, namespace_informer, node_informer, pod_informer
from kubesched.api.informer import (
    POD_DISRUPTION_BUDGETS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
)
from kubesched.framework.registry import PluginSpec, Registry
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
from kubesched.owner_selectors import OwnerSelectors
from kubesched.plugins.inter_pod_affinity import InformerNamespaces
from kubesched.plugins.pool_ownership import InformerJobs
from kubesched.plugins.registry import in_tree_registry

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
        # DefaultPreemption's PodDisruptionBudgets; kube-scheduler requeues no pod on their changes.
        self.pdbs: Informer[PodDisruptionBudget] = Informer(
            client, POD_DISRUPTION_BUDGETS, PodDisruptionBudget, Handlers())
        self.owner_selectors = InformerSelectors(OwnerSelectors(
            self.services, self.replication_controllers, self.replica_sets, self.stateful_sets))

    @property
    def all(self) -> tuple[Informer[Any], ...]:
        """Nodes first and pods last, so a pod's node is known when the pod arrives."""
        return (self.nodes, self.jobs, self.namespaces, self.services, self.replication_controllers,
                self.replica_sets, self.stateful_sets, self.pdbs, self.pods)

    def registry(self, out_of_tree: Iterable[PluginSpec] = ()) -> Registry:
        """The plugins read Jobs, namespaces and owner selectors from these informers, never from
        the API per pod."""
        return in_tree_registry(jobs=InformerJobs(self.jobs), namespaces=InformerNamespaces(self.namespaces),
                                selectors=self.owner_selectors, pdbs=self.pdbs).merged(out_of_tree)
