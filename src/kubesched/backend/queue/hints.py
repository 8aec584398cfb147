"""The queueing hints the queue asks about an event (kube-scheduler queueingHintMap and
isPodWorthRequeuing's loop over it)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.framework.events import ClusterEvent, QueueingHint, QueueingHintFn, Registration, hint_of

log = logging.getLogger(__name__)

# profile -> plugin -> the hints of its registrations that match one event (None: no hint, QUEUE)
Hints = dict[str, dict[str, tuple[QueueingHintFn | None, ...]]]


def matching_hints(plugin_events: Mapping[str, Mapping[str, Sequence[Registration]]], event: ClusterEvent) -> Hints:
    return {profile: {name: hints for name, registrations in plugins.items()
                      if (hints := tuple(hint_of(r) for r in registrations if r.matches(event)))}
            for profile, plugins in plugin_events.items()}


def hinted(info: QueuedPodInfo, hints: Hints, objects: tuple[Any, Any] | None) -> bool:
    """The queueing hints of the plugins that rejected the pod, for the event's objects: True when
    one says QUEUE (kube-scheduler isPodWorthRequeuing; a hint's error counts as QUEUE)."""
    rejectors = info.unschedulable_plugins | info.pending_plugins
    by_plugin = hints.get(info.pod.spec.scheduler_name)
    if objects is None or not rejectors or by_plugin is None:
        return True
    old, new = objects
    for name in rejectors:
        for hint in by_plugin.get(name, ()):
            if hint is None:
                return True
            try:
                if hint(info.pod, old, new) is QueueingHint.QUEUE:
                    return True
            except Exception:  # kube-scheduler: an error from a hint means Queue
                log.exception("queueing hint of %s failed for pod %s; requeuing it", name, info.key)
                return True
    return False
