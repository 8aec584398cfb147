"""The member pods of each pod group (kube-scheduler backend/cache's podGroupState, without
composite groups): fed by the pod informer's events, each member's state read from the cache at
the moment it is asked (assumed there, bound, or neither), so an assume or a forget in a cycle is
seen at once."""

from __future__ import annotations

from kubesched.backend.cache.cache import Cache
from kubesched.framework.handle import Lister
from kubesched.framework.pod_groups import PodGroupState, pod_group_key
from kubesched.model.objects import Pod
from kubesched.model.workload import PodGroup


class PodGroupStates:
    def __init__(self, cache: Cache, groups: Lister[PodGroup]) -> None:
        self.cache = cache
        self.groups = groups
        self._members: dict[str, dict[str, Pod]] = {}

    def add_pod(self, pod: Pod) -> None:
        key = pod_group_key(pod)
        if key is not None:
            self._members.setdefault(key, {})[pod.metadata.uid] = pod

    def update_pod(self, old: Pod, new: Pod) -> None:
        # spec.schedulingGroup is immutable; a re-list may still bring another object under a name.
        if pod_group_key(old) != pod_group_key(new):
            self.remove_pod(old)
        self.add_pod(new)

    def remove_pod(self, pod: Pod) -> None:
        key = pod_group_key(pod)
        if key is None:
            return
        members = self._members.get(key)
        if members is not None:
            members.pop(pod.metadata.uid, None)
            if not members:
                del self._members[key]

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.groups.get(f"{namespace}/{name}")

    def members_count(self, namespace: str, name: str) -> int:
        return len(self._members.get(f"{namespace}/{name}", ()))

    def state(self, namespace: str, name: str) -> PodGroupState:
        unscheduled: list[Pod] = []
        assumed: list[Pod] = []
        assigned: list[Pod] = []
        for uid, pod in self._members.get(f"{namespace}/{name}", {}).items():
            if self.cache.is_assumed_uid(uid):
                assumed.append(pod)
            elif pod.spec.node_name or self.cache.node_of(uid) is not None:
                assigned.append(pod)
            else:
                unscheduled.append(pod)
        return PodGroupState(unscheduled, assumed, assigned)
