"""What plugins and the pod-group cycle read of pod groups (kube-scheduler's fwk.PodGroupManager,
without composite groups): the PodGroup objects and, per group, its member pods by state —
unscheduled (neither assumed nor bound), assumed (past Reserve) and assigned (bound)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kubesched.model.objects import Pod
from kubesched.model.workload import PodGroup


def pod_group_name(pod: Pod) -> str | None:
    """The PodGroup the pod names in spec.schedulingGroup, if any."""
    group = pod.spec.scheduling_group
    return None if group is None else group.pod_group_name


def pod_group_key(pod: Pod) -> str | None:
    """"namespace/name" of the pod's PodGroup, or None for a pod in no group."""
    name = pod_group_name(pod)
    return None if name is None else f"{pod.metadata.namespace}/{name}"


@dataclass(frozen=True)
class PodGroupState:
    """A group's member pods at one moment."""

    unscheduled: Sequence[Pod] = ()
    assumed: Sequence[Pod] = ()
    assigned: Sequence[Pod] = ()

    def all_pods_count(self) -> int:
        return len(self.unscheduled) + len(self.assumed) + len(self.assigned)

    def scheduled_pods_count(self) -> int:
        """Assumed or assigned."""
        return len(self.assumed) + len(self.assigned)

    def scheduled_pods(self) -> list[Pod]:
        return [*self.assumed, *self.assigned]


class PodGroupManager(Protocol):
    def pod_group(self, namespace: str, name: str) -> PodGroup | None: ...

    def state(self, namespace: str, name: str) -> PodGroupState: ...

    def members_count(self, namespace: str, name: str) -> int:
        """state(...).all_pods_count() without reading each member's state: PreEnqueue asks it for every
        gated member each time one more arrives."""
        ...


class NoPodGroups:
    """Without the GenericWorkload gate: no PodGroup is ever known."""

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return None

    def state(self, namespace: str, name: str) -> PodGroupState:
        return PodGroupState()

    def members_count(self, namespace: str, name: str) -> int:
        return 0
