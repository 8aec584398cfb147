"""Informer events to the cache and the queue. Each handler reports kube-scheduler's cluster
events; the queue moves only the pods that a plugin which rejected them registered the event for."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Protocol

from kubesched.backend.cache.cache import Cache
from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.backend.queue import SchedulingQueue, eligible
from kubesched.framework import events
from kubesched.model.objects import Job, Node, Pod
from kubesched.model.workload import PodGroup

POD_GROUP_ADD = events.ClusterEvent(events.EventResource.POD_GROUP, events.ActionType.ADD)
POD_GROUP_UPDATE = events.ClusterEvent(events.EventResource.POD_GROUP, events.ActionType.UPDATE)
CO_POD_GROUP_ADD = events.ClusterEvent(events.EventResource.COSCHEDULING_POD_GROUP, events.ActionType.ADD)
CO_POD_GROUP_UPDATE = events.ClusterEvent(events.EventResource.COSCHEDULING_POD_GROUP, events.ActionType.UPDATE)


class ClusterEventHandlers:
    def __init__(self, cache: Cache, queue: SchedulingQueue, names: Collection[str]) -> None:
        self.cache = cache
        self.queue = queue
        self.names = names
        # Pod groups' members (GenericWorkload), kept before the queue hears of a pod.
        self.pod_groups: PodGroupStates | None = None


    def pod_added(self, pod: Pod) -> None:
        if self.pod_groups is not None:
            self.pod_groups.add_pod(pod)
        if pod.spec.node_name:
            self.cache.add_pod(pod)
            # With the pod, as kube-scheduler's addPodToCache: the rejecting plugins' hints decide.
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, pod))
        elif eligible(pod, self.names):
            self.queue.add(pod)
            if self.pod_groups is not None and pod.spec.scheduling_group is not None:
                # One more member may complete a gang its others wait for (GangScheduling's hint).
                self.queue.move_all_to_active_or_backoff(events.UNSCHEDULED_POD_ADD, objects=(None, pod))

    def pod_updated(self, old: Pod, new: Pod) -> None:
        if self.pod_groups is not None:
            self.pod_groups.update_pod(old, new)
        if new.spec.node_name:
            if not old.spec.node_name:
                self.queue.delete(new)  # bound, by us or by someone else
                self.cache.add_pod(new)
                self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD, objects=(None, new))
            else:
                self.cache.update_pod(new)
                # A resize that lowered its requests frees room (AssignedPodUpdate / UpdatePodScaleDown);
                # a relabelling may satisfy pod affinity or spreading. With both objects, as
                # kube-scheduler's updatePodInCache, for the rejecting plugins' hints.
                for event in events.assigned_pod_update_events(old, new):
                    self.queue.move_all_to_active_or_backoff(event, objects=(old, new))
        else:
            if eligible(new, self.names):
                if self.cache.is_assumed(new):
                    # As kube-scheduler: its binding cycle has the pod, and the nomination that cycle
                    # writes must not nominate it again on top of the room it holds assumed.
                    return
                self.queue.update(old, new)
            else:
                self.queue.delete(new)  # terminating, finished, or handed to another scheduler
            if (_nomination_changed(old, new) and old.spec.scheduler_name in self.names
                    and not self.cache.is_assumed(new)):
                self._nominated_pod_gone(old)

    def pod_deleted(self, pod: Pod) -> None:
        if self.pod_groups is not None:
            self.pod_groups.remove_pod(pod)
        self.queue.delete(pod)
        if pod.spec.node_name or self.cache.is_assumed(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE, objects=(pod, None))
        elif pod.status.nominated_node_name and pod.spec.scheduler_name in self.names:
            self._nominated_pod_gone(pod)

    def _nominated_pod_gone(self, pod: Pod) -> None:
        """A pod nominated to a node is deleted or nominated elsewhere: pods of lower or equal
        priority counted it as if it were on that node, so to them the room it held is free now
        (kube-scheduler's AssignedPodDelete with getLEPriorityPreCheck, from
        deletePodFromSchedulingQueue and updatePodInSchedulingQueue)."""
        priority = pod.spec.priority
        self.queue.move_all_to_active_or_backoff(
            events.ASSIGNED_POD_DELETE, pre_check=lambda p: p.spec.priority <= priority, objects=(pod, None))

    def pod_group_added(self, group: PodGroup) -> None:
        self.queue.move_all_to_active_or_backoff(POD_GROUP_ADD, objects=(None, group))

    def pod_group_updated(self, old: PodGroup, new: PodGroup) -> None:
        self.queue.move_all_to_active_or_backoff(POD_GROUP_UPDATE, objects=(old, new))

    def pod_group_deleted(self, group: PodGroup) -> None:
        # Its pods stay where they are; the next cycle of theirs finds the group gone.
        return

    def co_pod_group_added(self, group: Any) -> None:
        self.queue.move_all_to_active_or_backoff(CO_POD_GROUP_ADD, objects=(None, group))

    def co_pod_group_updated(self, old: Any, new: Any) -> None:
        self.queue.move_all_to_active_or_backoff(CO_POD_GROUP_UPDATE, objects=(old, new))

    def co_pod_group_deleted(self, group: Any) -> None:
        return

    def node_added(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(events.NODE_ADD, objects=(None, node))

    def node_updated(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        # Only what can make a pod fit is an event: not a heartbeat, nor an image list.
        for event in events.node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, objects=(old, new))

    def node_deleted(self, node: Node) -> None:
        # With the node, as kube-scheduler's deleteNodeFromCache: PodTopologySpread's hint reads it.
        self.queue.move_all_to_active_or_backoff(events.NODE_DELETE, objects=(node, None))
        self.cache.remove_node(node.metadata.name)

    def job_changed(self, job: Job) -> None:
        # Pods a plugin held back until their owner Job was known (the CronJob pool) can be decided
        # now; its queueing hint tells which.
        self.queue.move_all_to_active_or_backoff(events.JOB_ADD, objects=(None, job))

    def job_updated(self, old: Job, new: Job) -> None:
        if old.metadata.owner_references != new.metadata.owner_references:
            self.job_changed(new)

    def job_deleted(self, job: Job) -> None:
        # Nothing waits on a Job's deletion: its pods are judged when they come up for scheduling.
        return None

    def storage_handlers(self, resource: events.EventResource) -> StorageHandlers:
        """A storage informer's events to the queue: Add, Update and Delete of `resource`, each
        moving the pods a plugin that rejected them registered it for."""
        return StorageHandlers(self.queue.move_all_to_active_or_backoff, resource)

    def changes(self, resource: events.EventResource) -> Callable[[Any, Any], None]:
        """The same for a tracker that reports each change as (old, new) (DynamicResources' claims
        and slices): old None is an Add, new None a Delete."""
        h = StorageHandlers(self.queue.move_all_to_active_or_backoff, resource)

        def changed(old: Any, new: Any) -> None:
            if old is None:
                h.on_add(new)
            elif new is None:
                h.on_delete(old)
            else:
                h.on_update(old, new)
        return changed


def _nomination_changed(old: Pod, new: Pod) -> bool:
    """kube-scheduler hasNominatedNodeNameChanged: the pod had a nominated node, and has another or none."""
    return bool(old.status.nominated_node_name) and old.status.nominated_node_name != new.status.nominated_node_name


class Move(Protocol):
    def __call__(self, event: events.ClusterEvent, pre_check: Callable[[Pod], bool] | None = None,
                 objects: tuple[Any, Any] | None = None) -> int: ...


class StorageHandlers:
    """kube-scheduler's buildEvtResHandler: each event with its (old, new) objects, for the plugins'
    queueing hints (old None for an Add, new None for a Delete); the plugins read the objects from
    the informers' stores, already updated when this is called."""

    __slots__ = ("_add", "_delete", "_move", "_update")

    def __init__(self, move: Move, resource: events.EventResource) -> None:
        self._move = move
        self._add = events.ClusterEvent(resource, events.ActionType.ADD)
        self._update = events.ClusterEvent(resource, events.ActionType.UPDATE)
        self._delete = events.ClusterEvent(resource, events.ActionType.DELETE)

    def on_add(self, obj: Any) -> None:
        self._move(self._add, objects=(None, obj))

    def on_update(self, old: Any, new: Any) -> None:
        self._move(self._update, objects=(old, new))

    def on_delete(self, obj: Any) -> None:
        self._move(self._delete, objects=(obj, None))
