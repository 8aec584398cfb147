"""The cluster cache: nodes, the pods bound or assumed onto them, and the snapshot cycles read.

A pod's life in the cache (kube-scheduler backend/cache/interface.go), driven by the scheduling
cycle (assume, forget) and by the pod informer (add, update, remove)::

                         assume_pod                 add_pod (informer: bound)
        Initial ------------------------> Assumed ---------------------------> Added
           |                                 |                                 |  ^
           |        forget_pod (bind failed) |                      update_pod |  |
           |<--------------------------------+                                 +--+
           |                                 | remove_pod                      |
           |  add_pod (seen bound first:     v                                 | remove_pod
           |  e.g. after a restart)       Deleted <----------------------------+
           +-------------------------------------------------------------> Added

An assumed pod counts against its node at once, so the next cycle cannot overcommit the node while
the binding is in flight; it is confirmed when the informer reports it bound (add_pod), or
released by forget_pod when binding fails. Assumed pods do not expire: the binder reports the
outcome of every bind. Pods on a node the cache has not seen yet are kept and counted when it
arrives. Terminal pods (Succeeded/Failed) hold no resources and are dropped, as kube-scheduler's
informer filters them out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubesched.framework.events import same_for_scheduling
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Node, Pod

_ZONE_LABELS = ("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
_REGION_LABELS = ("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region")


def zone_key(node: Node) -> str:
    """component-helpers GetZoneKey: region and zone, the beta labels winning over the GA ones."""
    labels = node.metadata.labels

    def first(keys: tuple[str, str]) -> str:
        for k in keys:
            if k in labels:
                return labels[k]
        return ""

    zone, region = first(_ZONE_LABELS), first(_REGION_LABELS)
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


@dataclass(slots=True)
class _PodState:
    info: PodInfo
    node_name: str
    assumed: bool


class CacheError(ValueError):
    pass


def filled(nodes: Iterable[Node], pods: Iterable[Pod]) -> Cache:
    """The cache the scheduler's informer handlers fill from these lists: every node, every bound
    pod (explain, simulate: a cluster read once)."""
    cache = Cache()
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        if pod.spec.node_name:
            cache.add_pod(pod)
    return cache


class Cache:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._zones: dict[str, list[str]] = {}  # zone -> node names in arrival order
        self._pods: dict[str, _PodState] = {}  # by uid
        self._orphans: dict[str, dict[str, PodInfo]] = {}  # node name -> pods on a node not seen yet
        self._snapshot: Snapshot | None = None

    # --- nodes ----------------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        name = node.metadata.name
        if name in self._nodes:
            self.update_node(node)
            return
        ni = NodeInfo(node, self._orphans.pop(name, {}).values())
        self._nodes[name] = ni
        self._zones.setdefault(zone_key(node), []).append(name)
        self._snapshot = None

    def update_node(self, node: Node) -> None:
        name = node.metadata.name
        ni = self._nodes.get(name)
        if ni is None:
            self.add_node(node)
            return
        old = ni.node
        ni.set_node(node)
        old_zone, new_zone = zone_key(old), zone_key(node)
        if old_zone != new_zone:
            self._remove_from_zone(old_zone, name)
            self._zones.setdefault(new_zone, []).append(name)
            self._snapshot = None
            return
        snap = self._snapshot
        if snap is not None:
            labels_changed = old.metadata.labels != node.metadata.labels
            images_changed = old.status.images != node.status.images
            snap.refresh_node(snap.index[name], labels_changed, images_changed)

    def remove_node(self, name: str) -> None:
        ni = self._nodes.pop(name, None)
        if ni is None:
            return
        self._remove_from_zone(zone_key(ni.node), name)
        if ni.pods:
            self._orphans[name] = dict(ni.pods)
        self._snapshot = None

    def _remove_from_zone(self, zone: str, name: str) -> None:
        names = self._zones.get(zone)
        if names is not None and name in names:
            names.remove(name)
            if not names:
                del self._zones[zone]

    def node_order(self) -> list[str]:
        """kube-scheduler's nodeTree order: one node from each zone in turn."""
        zones = list(self._zones.values())
        order: list[str] = []
        i = 0
        while zones:
            zones = [z for z in zones if i < len(z)]
            order.extend(z[i] for z in zones)
            i += 1
        return order

    # --- pods -----------------------------------------------------------------------------------

    def assume_pod(self, pod: PodInfo, node_name: str) -> None:
        """Count pod against node_name now, before its binding completes."""
        if pod.uid in self._pods:
            raise CacheError(f"pod {pod.key} is already in the cache; it cannot be assumed")
        self._pods[pod.uid] = _PodState(pod, node_name, assumed=True)
        self._place(pod, node_name)

    def forget_pod(self, pod: PodInfo) -> None:
        """Release an assumed pod whose binding failed."""
        state = self._pods.get(pod.uid)
        if state is None:
            return
        if not state.assumed:
            raise CacheError(f"pod {pod.key} was confirmed bound to {state.node_name}; it cannot be forgotten")
        del self._pods[pod.uid]
        self._unplace(state.info, state.node_name)

    def add_pod(self, pod: Pod) -> None:
        """The informer reports pod bound to pod.spec.nodeName (new to it, or newly bound)."""
        if not pod.spec.node_name:
            return
        if pod.status.phase in ("Succeeded", "Failed"):
            self.remove_pod(pod)
            return
        info = PodInfo(pod)
        state = self._pods.get(info.uid)
        if state is not None:
            # An assumed pod confirmed, or an update seen as an add after a re-list.
            self._unplace(state.info, state.node_name)
        self._pods[info.uid] = _PodState(info, pod.spec.node_name, assumed=False)
        self._place(info, pod.spec.node_name)

    def update_pod(self, pod: Pod) -> None:
        uid = pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"
        state = self._pods.get(uid)
        if (state is not None and not state.assumed and state.node_name == pod.spec.node_name
                and same_for_scheduling(state.info.pod, pod)):
            # Most updates of a bound pod are its phase and conditions: nothing a plugin reads.
            return
        self.add_pod(pod)

    def remove_pod(self, pod: Pod) -> None:
        uid = pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"
        state = self._pods.pop(uid, None)
        if state is not None:
            self._unplace(state.info, state.node_name)

    def set_aside(self, uid: str) -> object | None:
        """Take a pod out of its node for a what-if (pod-group preemption's victims), synchronously
        and only until `put_back`; None when the cache does not hold it."""
        state = self._pods.pop(uid, None)
        if state is not None:
            self._unplace(state.info, state.node_name)
        return state

    def put_back(self, token: object) -> None:
        """Undo a `set_aside`, the pod as it was (assumed or bound)."""
        assert isinstance(token, _PodState)
        self._pods[token.info.uid] = token
        self._place(token.info, token.node_name)

    def is_assumed(self, pod: PodInfo | Pod) -> bool:
        uid = pod.uid if isinstance(pod, PodInfo) else (
            pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}")
        state = self._pods.get(uid)
        return state is not None and state.assumed

    def node_of(self, uid: str) -> str | None:
        state = self._pods.get(uid)
        return state.node_name if state is not None else None

    def _place(self, pod: PodInfo, node_name: str) -> None:
        ni = self._nodes.get(node_name)
        if ni is None:
            self._orphans.setdefault(node_name, {})[pod.uid] = pod
            return
        # The snapshot's memos move by this pod's share, unless the node held another copy of it.
        replaced = pod.uid in ni.pods
        ni.add_pod(pod)
        self._refresh(node_name, None if replaced else pod, 1)

    def _unplace(self, pod: PodInfo, node_name: str) -> None:
        ni = self._nodes.get(node_name)
        if ni is None:
            orphans = self._orphans.get(node_name)
            if orphans is not None:
                orphans.pop(pod.uid, None)
                if not orphans:
                    del self._orphans[node_name]
            return
        same = ni.pods.get(pod.uid) is pod
        ni.remove_pod(pod)
        self._refresh(node_name, pod if same else None, -1)

    def _refresh(self, node_name: str, pod: PodInfo | None = None, sign: int = 0) -> None:
        snap = self._snapshot
        if snap is not None:
            snap.refresh_pods(snap.index[node_name], pod, sign)

    # --- reads ----------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The columnar view a cycle reads; rebuilt only after nodes were added or removed."""
        if self._snapshot is None:
            self._snapshot = Snapshot([self._nodes[name] for name in self.node_order()])
        return self._snapshot

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    @property
    def node_count(self) -> int:
        return len(self._nodes)

    @property
    def pod_count(self) -> int:
        return len(self._pods)

    def assumed_pods(self) -> list[PodInfo]:
        return [s.info for s in self._pods.values() if s.assumed]

    # For the cache comparer and the debug page (kubesched.scheduler.debugger), never the scheduling path.

    def node_names(self) -> list[str]:
        return list(self._nodes)

    def pod_nodes(self) -> dict[str, str]:
        """Every pod the cache holds, assumed or bound: uid -> node name."""
        return {uid: s.node_name for uid, s in self._pods.items()}

    def is_assumed_uid(self, uid: str) -> bool:
        state = self._pods.get(uid)
        return state is not None and state.assumed

    @property
    def orphan_nodes(self) -> int:
        """Node names that hold pods but are not (or no longer) in the cache."""
        return len(self._orphans)
