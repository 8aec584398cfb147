"""unschedulablePods (kube-scheduler's UnschedulablePods), indexed by the plugins that rejected
each pod and by each event narrowing's keys.

A cluster event asks every waiting pod whether it may now fit; with thousands waiting and an event
per claim change, that is most of a cycle's time. Only a plugin that rejected a pod can queue it
(isPodWorthRequeuing), so an event asks the pods rejected by a plugin interested in it; and a
plugin whose hint can only queue the pods an event's object names (DynamicResources: the pods that
reference a claim; GangScheduling: the pods of a group) says so with an EventNarrowing, and of its
pods the queue asks only those indexed under the event's keys. Pods no plugin's hint can decide for
(rejected by none, or of a profile the queue does not know) are asked by every event.
kube-scheduler v1.37 has the same idea behind its alpha SchedulerPreQueueingHints gate (off by
default: a PreQueueingHintFn names the pods an event concerns); kubesched's is on, and changes no
decision (tests/unit/backend/test_unschedulable_narrowing.py checks the moves against asking all).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.framework.events import EventNarrowing


class UnschedulablePods:
    def __init__(self, narrowings: Collection[EventNarrowing] = (), profiles: Collection[str] | None = None) -> None:
        self._pods: dict[str, QueuedPodInfo] = {}
        self._narrowings = tuple(narrowings)
        self._profiles = None if profiles is None else frozenset(profiles)
        # narrowing -> key -> uids; and each pod's keys per narrowing, to take it out again
        self._index: dict[EventNarrowing, dict[Any, set[str]]] = {n: {} for n in self._narrowings}
        self._keys: dict[str, tuple[frozenset[Any], ...]] = {}
        # Pods every event must ask (see the module's docstring).
        self._always: set[str] = set()
        # (profile, plugin) -> uids of the pods it rejected (unschedulable or pending plugins)
        self._by_rejector: dict[tuple[str, str], set[str]] = {}
        self._rejectors: dict[str, tuple[tuple[str, str], ...]] = {}
        # Insertion order, as the dict keeps it, so narrowed moves go in the order a full scan would.
        self._order: dict[str, int] = {}
        self._next = 0

    def __len__(self) -> int:
        return len(self._pods)

    def __bool__(self) -> bool:
        return bool(self._pods)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def values(self) -> Collection[QueuedPodInfo]:
        return self._pods.values()

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._pods.get(uid)

    def __setitem__(self, uid: str, info: QueuedPodInfo) -> None:
        if uid in self._pods:
            self._unindex(uid)
        else:
            self._order[uid] = self._next
            self._next += 1
        self._pods[uid] = info
        self._reindex(uid, info)

    def __delitem__(self, uid: str) -> None:
        del self._pods[uid]
        self._unindex(uid)
        del self._order[uid]

    def pop(self, uid: str, default: QueuedPodInfo | None = None) -> QueuedPodInfo | None:
        info = self._pods.get(uid)
        if info is None:
            return default
        del self[uid]
        return info

    def refresh(self, uid: str) -> None:
        """The pod object of a waiting pod changed: its keys may have."""
        info = self._pods.get(uid)
        if info is not None:
            self._unindex(uid)
            self._reindex(uid, info)

    def asked(self, plans: Iterable[tuple[str, str, EventNarrowing | None, frozenset[Any] | None]],
              ) -> list[QueuedPodInfo]:
        """The pods an event must ask, in the order they were parked: for each (profile, plugin
        interested in it, the plugin's narrowing of it, the event's keys under that narrowing),
        the pods that plugin rejected (only those under the keys, when it narrows and the event
        has keys); and those every event asks."""
        uids = set(self._always)
        for profile, plugin, narrowing, keys in plans:
            members = self._by_rejector.get((profile, plugin))
            if not members:
                continue
            if narrowing is None or keys is None:
                uids |= members
                continue
            index = self._index[narrowing]
            for key in keys:
                keyed = index.get(key)
                if keyed:
                    uids.update(keyed & members)
        return [self._pods[uid] for uid in sorted(uids, key=self._order.__getitem__)]

    def _reindex(self, uid: str, info: QueuedPodInfo) -> None:
        profile = info.pod.spec.scheduler_name
        if not info.rejected() or (self._profiles is not None and profile not in self._profiles):
            self._always.add(uid)
        else:
            rejectors = tuple((profile, name) for name in info.unschedulable_plugins | info.pending_plugins)
            self._rejectors[uid] = rejectors
            for key in rejectors:
                self._by_rejector.setdefault(key, set()).add(uid)
        if not self._narrowings:
            return
        keys = tuple(n.pod_keys(info.pod) for n in self._narrowings)
        if not any(keys):
            return
        self._keys[uid] = keys
        for narrowing, pod_keys in zip(self._narrowings, keys, strict=True):
            index = self._index[narrowing]
            for key in pod_keys:
                index.setdefault(key, set()).add(uid)

    def _unindex(self, uid: str) -> None:
        self._always.discard(uid)
        for key in self._rejectors.pop(uid, ()):
            members = self._by_rejector[key]
            members.discard(uid)
            if not members:
                del self._by_rejector[key]
        keys = self._keys.pop(uid, None)
        if keys is None:
            return
        for narrowing, pod_keys in zip(self._narrowings, keys, strict=True):
            index = self._index[narrowing]
            for key in pod_keys:
                uids = index.get(key)
                if uids is not None:
                    uids.discard(uid)
                    if not uids:
                        del index[key]
