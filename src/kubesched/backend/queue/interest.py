"""Which plugins care about a cluster event, per profile (kube-scheduler's isEventOfInterest and
isPodWorthRequeuing), and the queueing hints and narrowings they registered for it; each worked
out once per event and kept, as the registrations never change while the queue lives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.backend.queue.hints import Hints, hinted, matching_hints
from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.framework.events import ClusterEvent, EventNarrowing, Registration, narrowing_of

# profile (scheduler name) -> plugin name -> the events that plugin registered
PluginEvents = Mapping[str, Mapping[str, Sequence[Registration]]]
# profile -> the plugins interested in one event; None: every plugin is
Interest = dict[str, frozenset[str]] | None
# (profile, plugin, its narrowing of the event or None)
Plan = tuple[str, str, EventNarrowing | None]


class EventInterest:
    """The registrations of every profile's plugins (None: every plugin cares about every event)."""

    def __init__(self, plugin_events: PluginEvents | None) -> None:
        self.plugin_events = (None if plugin_events is None else
                              {profile: dict(plugins) for profile, plugins in plugin_events.items()})
        self._interest: dict[ClusterEvent, Interest] = {}
        self._hints: dict[ClusterEvent, Hints] = {}
        self._plans: dict[ClusterEvent, tuple[Plan, ...]] = {}

    def __len__(self) -> int:
        return len(self._interest)

    def narrowings(self) -> set[EventNarrowing]:
        return {n for plugins in (self.plugin_events or {}).values() for events in plugins.values()
                for r in events if (n := narrowing_of(r)) is not None}

    def interested(self, event: ClusterEvent) -> Interest:
        if self.plugin_events is None or event.is_wildcard:
            return None
        if event not in self._interest:
            self._interest[event] = {
                profile: frozenset(name for name, events in plugins.items()
                                   if any(registered.matches(event) for registered in events))
                for profile, plugins in self.plugin_events.items()}
        return self._interest[event]

    def plans(self, event: ClusterEvent) -> tuple[Plan, ...]:
        """Each plugin interested in the event, with its narrowing of it: a plugin narrows an
        event when each of its registrations matching it has the same one."""
        found = self._plans.get(event)
        if found is None:
            assert self.plugin_events is not None
            plans = []
            for profile, plugins in self.plugin_events.items():
                for name, registrations in plugins.items():
                    narrowings = {narrowing_of(r) for r in registrations if r.matches(event)}
                    if narrowings:
                        plans.append((profile, name, narrowings.pop() if len(narrowings) == 1 else None))
            found = self._plans[event] = tuple(plans)
        return found

    def hints(self, event: ClusterEvent) -> Hints:
        found = self._hints.get(event)
        if found is None:
            assert self.plugin_events is not None
            found = self._hints[event] = matching_hints(self.plugin_events, event)
        return found

    def worth(self, info: QueuedPodInfo, event: ClusterEvent, objects: tuple[Any, Any] | None) -> bool:
        """kube-scheduler isPodWorthRequeuing for one event with its objects: a plugin that rejected
        the pod registered it, and one of its hints says QUEUE (or it has none); an event given
        without its objects (None) is decided by that interest alone."""
        interest = self.interested(event)
        if not worth_requeuing(info, interest):
            return False
        return interest is None or hinted(info, self.hints(event), objects)


def worth_requeuing(info: QueuedPodInfo, interest: Interest) -> bool:
    """kube-scheduler isPodWorthRequeuing without queueing hints: a pod that failed with an error
    always; a rejected pod when a plugin that rejected it cares about the event."""
    if interest is None or not (info.unschedulable_plugins or info.pending_plugins):
        return True
    plugins = interest.get(info.pod.spec.scheduler_name)
    if plugins is None:
        return True  # a profile the queue was not told about: never strand its pods
    return not (plugins.isdisjoint(info.unschedulable_plugins) and plugins.isdisjoint(info.pending_plugins))
