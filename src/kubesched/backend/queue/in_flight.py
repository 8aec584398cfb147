"""The pods popped and not yet done, and the cluster events that came meanwhile (kube-scheduler
activeQueue's inFlightPods and inFlightEvents).

A pod rejected at the end of its cycle may have missed an event that would have moved it had it
waited in unschedulablePods. So every event some plugin is interested in is kept, with its
objects, while any pod is in flight; the rejected pod is then asked about each one that came
during its cycle, as kube-scheduler's determineSchedulingHintForInFlightPod asks
isPodWorthRequeuing: the plugins that rejected it must have registered the event and one of their
queueing hints must say QUEUE for its objects. The pod's own updates and its activation meanwhile
are events like any other (kube-scheduler's addEventsIfPodInFlight puts them in the same list), so
another pod in flight sees them too; a targeted activation (a wildcard event naming a pod) counts
only for its own pod.

Events are stamped with the scheduling cycle they came in: a pod popped in cycle c missed those
stamped c or later. Those older than every pod still in flight can concern no one and are dropped
when the oldest pod is done, as kube-scheduler drops the events before the first pod left in its
list; a pod that is scheduled walks no events.
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubesched.backend.queue.interest import EventInterest
from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.framework.events import ClusterEvent
from kubesched.model.objects import Pod


@dataclass(slots=True)
class InFlight:
    info: QueuedPodInfo
    # The scheduling cycle it was popped in (its group's, for a pod-group member's).
    cycle: int
    latest: Pod | None = None
    deleted: bool = False


# (the scheduling cycle it came in, the event, its (old, new) objects or None when not given)
Seen = tuple[int, ClusterEvent, tuple[Any, Any] | None]


def _cycle_of(seen: Seen) -> int:
    return seen[0]


class InFlightPods:
    def __init__(self) -> None:
        self._pods: dict[str, InFlight] = {}
        self._events: deque[Seen] = deque()
        # cycle -> how many of the pods popped in it are in flight; and those cycles, oldest first,
        # some of them done already (dropped once they reach the front).
        self._cycles: dict[int, int] = {}
        self._order: deque[int] = deque()

    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, uid: str) -> bool:
        return uid in self._pods

    def get(self, uid: str) -> InFlight | None:
        return self._pods.get(uid)

    def uids(self) -> list[str]:
        return list(self._pods)

    def flights(self) -> Iterable[InFlight]:
        return self._pods.values()

    def event_count(self) -> int:
        return len(self._events)

    def add(self, info: QueuedPodInfo, cycle: int) -> None:
        if info.uid in self._pods:
            self.done(info.uid)  # popped twice: its first entry must not pin the events for good
        self._pods[info.uid] = InFlight(info, cycle)
        count = self._cycles.get(cycle, 0)
        self._cycles[cycle] = count + 1
        if count:
            return
        order = self._order
        if not order or cycle > order[-1]:
            order.append(cycle)
        elif cycle not in order:
            # A pod group's members taken for a cycle none of whose pods is in flight any more.
            bisect.insort(order, cycle)

    def done(self, uid: str) -> InFlight | None:
        """The pod is no longer in flight; the events no pod left can have missed are dropped."""
        flight = self._pods.pop(uid, None)
        if flight is None:
            return None
        count = self._cycles[flight.cycle] - 1
        if count:
            self._cycles[flight.cycle] = count
            return flight
        del self._cycles[flight.cycle]
        if not self._pods:
            self._order.clear()
            self._events.clear()
            return flight
        # The front of the order is always a cycle with pods in flight: only its end moves it.
        order = self._order
        if order[0] != flight.cycle:
            return flight
        order.popleft()
        while order[0] not in self._cycles:
            order.popleft()
        events = self._events
        while events and events[0][0] < order[0]:
            events.popleft()
        return flight

    def record(self, cycle: int, event: ClusterEvent, objects: tuple[Any, Any] | None) -> None:
        """An event that came in `cycle`, kept only while some pod is in flight (kube-scheduler
        addEventIfAnyInFlight, addEventsIfPodInFlight)."""
        if self._pods:
            self._events.append((cycle, event, objects))

    def missed(self, info: QueuedPodInfo, flight: InFlight, interest: EventInterest) -> bool:
        """kube-scheduler determineSchedulingHintForInFlightPod for a rejected pod: whether an event
        of its cycle may make it schedulable (isPodWorthRequeuing with the event's objects; one
        given without them is judged on the rejecting plugins' interest alone)."""
        events = self._events
        start = bisect.bisect_left(events, flight.cycle, key=_cycle_of)
        for _, event, objects in itertools.islice(events, start, None):
            if event.is_wildcard:
                # A wildcard naming a pod (ForceActivate) is for that pod only.
                new = None if objects is None else objects[1]
                if new is None or (isinstance(new, Pod) and new.metadata.uid == info.uid):
                    return True
                continue
            if interest.worth(info, event, objects):
                return True
        return False
