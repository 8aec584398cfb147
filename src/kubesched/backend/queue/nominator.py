"""The pods nominated to nodes (kube-scheduler backend/queue/nominator.go).

A pod is nominated when preemption chose a node for it (the failure handler adds it at once, before
the status patch comes back through the informer) or when it arrives with status.nominatedNodeName
set; it stops being nominated when it is assumed, deleted, bound, or its nomination is cleared.
The scheduling cycle reads the nominations through the framework Handle's `nominator` port, so
lower-priority pods do not take the room a preemptor's victims free.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod


class PodLister(Protocol):
    def get(self, key: str) -> Pod | None: ...


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


class PodNominator:
    def __init__(self, pods: PodLister | None = None) -> None:
        # With a lister, a pod gone or already bound is never nominated (the informer is the truth).
        self.pods = pods
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._node_of)

    def nominated_nodes(self) -> Collection[str]:
        return self._by_node.keys()

    def nominated_pods_for_node(self, node: str) -> Sequence[PodInfo]:
        found = self._by_node.get(node)
        return list(found.values()) if found else []

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def add(self, pod: Pod, nominated: str | None = None) -> None:
        """addNominatedPod: `nominated` None keeps the pod's own status.nominatedNodeName (ModeNoop);
        a name overrides it; "" clears the nomination."""
        self.delete(pod)
        node = pod.status.nominated_node_name if nominated is None else nominated
        if not node:
            return
        if self.pods is not None:
            latest = self.pods.get(_key(pod))
            if latest is None or latest.spec.node_name:
                return
        uid = pod.metadata.uid
        self._node_of[uid] = node
        self._by_node.setdefault(node, {})[uid] = PodInfo(pod)

    def update(self, old: Pod, new: Pod) -> None:
        """UpdateNominatedPod: a nomination made in memory survives updates that do not carry it in
        the status yet."""
        nominated: str | None = None
        if not old.status.nominated_node_name and not new.status.nominated_node_name:
            nominated = self._node_of.get(old.metadata.uid)
        self.delete(old)
        self.add(new, nominated)

    def delete(self, pod: Pod) -> None:
        uid = pod.metadata.uid
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = self._by_node.get(node)
        if pods is not None:
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node]
