"""kube-scheduler's PriorityQueue, for single pods.

Three places a pending pod can wait, plus "in flight" while a cycle works on it:

    add ──► activeQ ──pop──► in flight ──done──► (gone: bound)
               ▲                 │
               │                 └─add_unschedulable_if_not_present─┐
               │                                                    ▼
               ├──backoff complete── backoffQ ◄──event during cycle / error──┤
               │                        ▲                                     │
               └──────── cluster event / 5 min flush ── unschedulablePods ◄───┘

- activeQ is ordered like PrioritySort: higher priority first, then older timestamp.
- backoffQ holds pods until `initial * 2**(attempts-1)` (capped at max) has passed since their last
  failed attempt; rejected pods and pods that hit an error are kept in separate heaps, as
  kube-scheduler does, and only the former may be popped early (SchedulerPopFromBackoffQ, on by
  default since 1.33): when activeQ is empty, pop takes the head of backoffQ instead of idling.
- unschedulablePods wait for a cluster event (node added or changed, pod deleted) or for the
  periodic flush after `max_in_unschedulable` seconds.

A cluster event moves an unschedulable pod only when one of the plugins that rejected it
registered a matching event (`plugin_events`, from each plugin's `events_to_register`, as
kube-scheduler's EventsToRegister): an assigned pod's deletion wakes the pods NodeResourcesFit
rejected, not those waiting for a taint to go. A pod that failed with an error (no rejecting plugin)
moves on any event. Then, when the caller gives the event's objects, each rejecting plugin's hints
for the event are asked (kube-scheduler isPodWorthRequeuing): a registration without a hint, a hint
that says QUEUE or one that raises moves the pod; all saying QUEUE_SKIP leave it where it is. An
event reported without its objects moves the pod on interest alone (kube-scheduler reports every
event but its wildcards with one; here a failed binding cycle's forgotten pod has none). Without
`plugin_events` every event matches.
Which plugins care about an event, their hints and narrowings: interest.py.

An update of a queued pod is classified as kube-scheduler's PodSchedulingPropertiesChange does
(TargetPod/UpdatePodLabel, UpdatePodScaleDown, UpdatePodToleration...; the general Update for
anything else, an annotation say) and moves an unschedulable pod only as such an event would: the
pod object is replaced either way. A gated pod is asked its PreEnqueue plugins again by the 5-minute
flush, as kube-scheduler's wildcard flush re-evaluates every pod. `activate` (the framework
Handle's Activate) moves a pod to activeQ on a plugin's word.

A pod rejected after a cluster event came during its cycle is asked about that event as if it had
waited in unschedulablePods: when a rejecting plugin registered it and its hint says QUEUE for the
event's objects, the pod goes to backoffQ rather than unschedulablePods, so an event that raced with
the cycle is not lost. The pod's own updates meanwhile, and its activation, count the same way.
Which events are kept for that, and for how long: in_flight.py.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubesched.backend.queue.clock import Clock, MonotonicClock
from kubesched.backend.queue.heap import KeyedHeap
from kubesched.backend.queue.hints import hinted
from kubesched.backend.queue.in_flight import InFlightPods
from kubesched.backend.queue.interest import EventInterest, PluginEvents, worth_requeuing
from kubesched.backend.queue.nominator import PodNominator
from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.backend.queue.unschedulable import UnschedulablePods
from kubesched.framework.events import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    UNSCHEDULED_POD_ADD,
    ClusterEvent,
    EventNarrowing,
    pod_scheduling_properties_change,
)
from kubesched.framework.interface import PreEnqueuePlugin, QueueSortPlugin
from kubesched.framework.plugin_metrics import PluginRecorder, sampled, timed
from kubesched.framework.status import Code
from kubesched.model.objects import Pod

log = logging.getLogger(__name__)

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
# kube-scheduler flushes backoffQ every second (aligned to its 1 s ordering window) and looks for
# leftover unschedulable pods every 30 s.
BACKOFF_FLUSH_INTERVAL = 1.0
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0


BACKOFF_COMPLETE = "BackoffComplete"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"



class _Strategy(enum.Enum):
    SKIP = 0
    AFTER_BACKOFF = 1


def _active_key(info: QueuedPodInfo) -> tuple[int, float]:
    return (-info.priority, info.timestamp)


def _sort_key(plugin: QueueSortPlugin | None) -> Callable[[QueuedPodInfo], Any]:
    """activeQ's order from the QueueSort plugin: its `sort_key` when it has one (PrioritySort),
    else its `less`, compared pairwise."""
    if plugin is None:
        return _active_key
    key = getattr(plugin, "sort_key", None)
    if key is not None:
        return lambda info: key(info.priority, info.timestamp)
    less = plugin.less

    def compare(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
        return -1 if less(a, b) else (1 if less(b, a) else 0)

    return functools.cmp_to_key(compare)


class SchedulingQueue:
    def __init__(
        self,
        clock: Clock | None = None,
        *,
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
        max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        pop_from_backoff: bool = True,
        plugin_events: PluginEvents | None = None,
        pre_enqueue: Mapping[str, Sequence[PreEnqueuePlugin]] | None = None,
        queue_sort: QueueSortPlugin | None = None,
        nominator: PodNominator | None = None,
    ) -> None:
        self._clock: Clock = clock or MonotonicClock()
        # The pods nominated by preemption, kept with the queue as kube-scheduler keeps them.
        self.nominator = nominator if nominator is not None else PodNominator()
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._max_in_unschedulable = max_in_unschedulable
        self._pop_from_backoff = pop_from_backoff

        self._pre_enqueue = {profile: tuple(plugins) for profile, plugins in (pre_enqueue or {}).items()}
        # (profile, gating plugin) -> the profile's PreEnqueue plugins, that one first.
        self._gate_orders: dict[tuple[str, str], tuple[PreEnqueuePlugin, ...]] = {}
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(_sort_key(queue_sort))
        self._backoff: KeyedHeap[QueuedPodInfo] = KeyedHeap(self._backoff_key)
        self._error_backoff: KeyedHeap[QueuedPodInfo] = KeyedHeap(self._error_backoff_key)
        # Pods popped and not done, and the events that came meanwhile (in_flight.py).
        self._in_flight = InFlightPods()

        self._events = EventInterest(plugin_events)
        registered = self._events.plugin_events
        self._unschedulable = UnschedulablePods(
            self._events.narrowings(), None if registered is None else registered.keys())

        self._scheduling_cycle = 0
        self._wakeup = asyncio.Event()
        self._closed = False
        # Told (queue, event) on every move into activeQ, backoffQ or unschedulablePods, for
        # scheduler_queue_incoming_pods_total; kept free of prometheus here.
        self.on_incoming: Callable[[str, str], None] | None = None
        # scheduler_plugin_execution_duration_seconds of PreEnqueue, sampled per run as kube-scheduler
        # does (its own draw, in the queue); None: untimed.
        self.plugin_recorder: PluginRecorder | None = None
        self.sample_rng = random.Random()

    # --- introspection ---------------------------------------------------------------------------

    @property
    def scheduling_cycle(self) -> int:
        return self._scheduling_cycle

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff) + len(self._error_backoff) + len(self._unschedulable)

    def __contains__(self, uid: str) -> bool:
        return self._where(uid) is not None

    def where(self, uid: str) -> str | None:
        """`active`, `backoff`, `unschedulable`, `in-flight` or None."""
        if uid in self._in_flight:
            return "in-flight"
        return self._where(uid)

    def in_flight_uids(self) -> list[str]:
        """Pods popped and not yet done (their cycle or binding runs)."""
        return self._in_flight.uids()

    def internal_sizes(self) -> dict[str, int]:
        """Every map the queue keeps, for the debug page: flat over a long run, or something leaks."""
        return {"active": len(self._active), "backoff": len(self._backoff), "error_backoff": len(self._error_backoff),
                "unschedulable": len(self._unschedulable), "in_flight": len(self._in_flight),
                "in_flight_events": self._in_flight.event_count(), "event_interest": len(self._events)}

    def pending_counts(self) -> dict[str, int]:
        """For scheduler_pending_pods{queue}."""
        gated = sum(1 for info in self._unschedulable.values() if info.gated)
        return {
            "active": len(self._active),
            "backoff": len(self._backoff) + len(self._error_backoff),
            "unschedulable": len(self._unschedulable) - gated,
            "gated": gated,
        }

    @property
    def clock(self) -> Clock:
        return self._clock

    def unschedulable_reasons(self) -> dict[tuple[str, str], int]:
        """For scheduler_unschedulable_pods{plugin,profile}: queued pods by each plugin that rejected
        (or gated) them. kube-scheduler counts a pod from its failed attempt until it is popped again,
        so pods moved to activeQ or backoffQ still count."""
        counts: dict[tuple[str, str], int] = {}
        for info in self.pending_pods():
            if info.unschedulable_plugins or info.pending_plugins:
                profile = info.pod.spec.scheduler_name
                for plugin in info.unschedulable_plugins | info.pending_plugins:
                    counts[(plugin, profile)] = counts.get((plugin, profile), 0) + 1
        return counts

    def pending_pods(self) -> list[QueuedPodInfo]:
        return [
            *self._active.items(),
            *self._backoff.items(),
            *self._error_backoff.items(),
            *self._unschedulable.values(),
        ]

    def in_flight(self) -> list[QueuedPodInfo]:
        return [f.info for f in self._in_flight.flights()]

    # --- informer-driven changes -----------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        uid = pod.metadata.uid
        if uid in self._in_flight or self._where(uid) is not None:
            self.update(None, pod)
            return
        # Even a gated pod's nomination counts (kube-scheduler records it before PreEnqueue).
        self.nominator.add(pod)
        info = QueuedPodInfo(pod=pod, timestamp=self._clock.now())
        self._add_active(info, UNSCHEDULED_POD_ADD.label)

    def update(self, old: Pod | None, new: Pod) -> None:
        """Refresh a queued pod; a pod not queued yet is added. An unschedulable pod moves only when
        its update is an event (kube-scheduler PodSchedulingPropertiesChange, on TargetPod) whose
        hints, asked of the plugins that rejected it, say QUEUE: an annotation added to a pod that
        NodeResourcesFit rejected leaves it where it is, with the new object."""
        uid = new.metadata.uid
        flight = self._in_flight.get(uid)
        if flight is not None or self._where(uid) is not None:
            if old is None:
                self.nominator.add(new)
            else:
                self.nominator.update(old, new)
        if flight is not None:
            # kube-scheduler addEventsIfPodInFlight: whether or not a plugin is interested.
            before = old or flight.latest or flight.info.pod
            flight.latest = new
            for event in pod_scheduling_properties_change(new, before, target=True):
                self._in_flight.record(self._scheduling_cycle, event, (before, new))
            return
        for heap in (self._active, self._backoff, self._error_backoff):
            info = heap.get(uid)
            if info is not None:
                info.pod = new
                heap.push(uid, info)
                return
        info = self._unschedulable.get(uid)
        if info is not None:
            before = old or info.pod
            info.pod = new
            self._unschedulable.refresh(uid)
            for event in pod_scheduling_properties_change(new, before, target=True):
                if not self._events.worth(info, event, (before, new)):
                    continue
                # Gated by a PreEnqueue plugin on the way, it stays and the next event is tried.
                if self._requeue(info, _Strategy.AFTER_BACKOFF, event.label) != "unschedulable":
                    break
            return
        self.add(new)

    def delete(self, pod: Pod) -> None:
        """The pod leaves the queue wherever it is; an in-flight pod will not be requeued."""
        uid = pod.metadata.uid
        self.nominator.delete(pod)
        flight = self._in_flight.get(uid)
        if flight is not None:
            flight.deleted = True
        for heap in (self._active, self._backoff, self._error_backoff):
            if heap.remove(uid) is not None:
                return
        self._unschedulable.pop(uid, None)

    def move_all_to_active_or_backoff(
        self, event: ClusterEvent, pre_check: Callable[[Pod], bool] | None = None,
        objects: tuple[Any, Any] | None = None,
    ) -> int:
        """A cluster event that may make unschedulable pods fit: moves those a plugin that rejected
        them registered it for (and that pass pre_check, and whose plugins' hints say QUEUE for
        `objects`, (old, new), when given); returns how many moved."""
        interest = self._events.interested(event)
        if interest is not None and not any(interest.values()):
            return 0  # no plugin cares (kube-scheduler isEventOfInterest)
        # Whatever pre_check says: the pods in flight are asked about it when they come back.
        self._in_flight.record(self._scheduling_cycle, event, objects)
        if not self._unschedulable:
            return 0
        hints = None if objects is None or interest is None else self._events.hints(event)
        asked = self._unschedulable.values() if objects is None or hints is None else self._asked(event, objects)
        moving = [i for i in asked
                  if (pre_check is None or pre_check(i.pod)) and worth_requeuing(i, interest)
                  and (hints is None or hinted(i, hints, objects))]
        return self._requeue_all(moving, event.label)

    def activate(self, pods: Iterable[Pod]) -> None:
        """kube-scheduler Activate: each pod waiting in unschedulablePods or backoffQ goes to activeQ
        now (its PreEnqueue plugins asked again, unless it comes from backoffQ while pods pop from
        there); an in-flight one comes back after backoff whatever rejected it; others stay."""
        for pod in pods:
            uid = pod.metadata.uid
            from_backoff = False
            info = self._unschedulable.pop(uid, None)
            if info is None:
                info = self._backoff.remove(uid) or self._error_backoff.remove(uid)
                from_backoff = info is not None
            if info is not None:
                self._add_active(info, FORCE_ACTIVATE.label, gate=not (self._pop_from_backoff and from_backoff))
                continue
            if uid in self._in_flight:
                # A wildcard naming the pod: it alone comes back after backoff, whatever rejected it.
                self._in_flight.record(self._scheduling_cycle, FORCE_ACTIVATE, (None, pod))

    def _asked(self, event: ClusterEvent, objects: tuple[Any, Any]) -> Iterable[QueuedPodInfo]:
        """The unschedulable pods an event's hints must be asked about: those a plugin interested
        in it rejected (of a plugin whose registrations narrow it, those under the event's keys),
        and those every event asks; the rest would not move (worth_requeuing, hinted)."""
        plans = self._events.plans(event)
        keys: dict[EventNarrowing, frozenset[Any] | None] = {}
        for _, _, narrowing in plans:
            if narrowing is not None and narrowing not in keys:
                try:
                    keys[narrowing] = narrowing.event_keys(*objects)
                except Exception:  # as a hint's error: its plugin's pods are all asked
                    log.exception("event narrowing %s failed for %s; asking every pod", narrowing.name, event.label)
                    keys[narrowing] = None
        return self._unschedulable.asked(
            (profile, plugin, narrowing, None if narrowing is None else keys[narrowing])
            for profile, plugin, narrowing in plans)

    # --- the scheduling loop ---------------------------------------------------------------------

    def pop_nowait(self) -> QueuedPodInfo | None:
        info = self._active.pop()
        if info is None and self._pop_from_backoff:
            info = self._backoff.pop()
        if info is None:
            return None
        info.attempts += 1
        self._scheduling_cycle += 1
        info.scheduling_cycle = self._scheduling_cycle
        self._in_flight.add(info, self._scheduling_cycle)
        return info

    def pop_members(self, member: Callable[[Pod], bool], cycle: int) -> list[QueuedPodInfo]:
        """Take out of every sub-queue the pods `member` selects, for the pod-group cycle `cycle`
        (the one its first pod was popped in): a pod group is scheduled as one entry, whichever of
        its pods came up. A pod still gated by a PreEnqueue plugin stays."""
        taken: list[QueuedPodInfo] = []
        for heap in (self._active, self._backoff, self._error_backoff):
            for info in [i for i in heap.items() if member(i.pod)]:
                heap.remove(info.uid)
                taken.append(info)
        for info in [i for i in self._unschedulable.values() if member(i.pod)]:
            if info.gated and self._gate(info):
                continue
            del self._unschedulable[info.uid]
            taken.append(info)
        for info in taken:
            info.attempts += 1
            info.scheduling_cycle = cycle
            if info.initial_attempt_timestamp is None:
                info.initial_attempt_timestamp = self._clock.now()
            self._in_flight.add(info, cycle)
        return taken

    async def pop(self) -> QueuedPodInfo | None:
        """Wait for the next pod; None once the queue is closed."""
        while not self._closed:
            info = self.pop_nowait()
            if info is not None:
                return info
            self._wakeup.clear()
            await self._wakeup.wait()
        return None

    def done(self, uid: str) -> None:
        """The cycle (and binding, if any) for a popped pod is over."""
        self._in_flight.done(uid)

    def add_unschedulable_if_not_present(
        self, info: QueuedPodInfo, scheduling_cycle: int | None = None
    ) -> bool:
        """Requeue a pod whose attempt failed: with `unschedulable_plugins`/`pending_plugins` set it
        was rejected, with both empty it hit an error (error backoff). Also does `done`.
        `scheduling_cycle` is only logged, as kube-scheduler's podSchedulingCycle: the events the pod
        may have missed are those since it was popped.

        Returns False when the pod is not requeued: deleted meanwhile, or already queued."""
        uid = info.uid
        flight = self._in_flight.get(uid)
        try:
            if flight is not None:
                if flight.deleted:
                    return False
                if flight.latest is not None:
                    info.pod = flight.latest
            if self._where(uid) is not None:
                log.warning("pod %s is already queued (%s); not requeued", info.key, self._where(uid))
                return False

            rejected = info.rejected()
            if rejected:
                info.unschedulable_count += 1
                info.consecutive_errors_count = 0
            else:
                info.consecutive_errors_count += 1
            info.timestamp = self._clock.now()
            info.backoff_expiration = None
            info.was_flushed_from_unschedulable = False
            info.flush_timestamp = None

            if not rejected:
                strategy = _Strategy.AFTER_BACKOFF
            elif flight is None:
                # kube-scheduler's clusterEventsForPod fails for a pod never popped (a bug): retried.
                log.warning("pod %s was not in flight; requeued after backoff", info.key)
                strategy = _Strategy.AFTER_BACKOFF
            else:
                missed = self._in_flight.missed(info, flight, self._events)
                strategy = _Strategy.AFTER_BACKOFF if missed else _Strategy.SKIP
            where = self._requeue(info, strategy, SCHEDULE_ATTEMPT_FAILURE)
            log.debug("pod %s moved to %s after a failed attempt (cycle %s)", info.key, where,
                      info.scheduling_cycle if scheduling_cycle is None else scheduling_cycle)
            return True
        finally:
            # After the pod's events were read: done may drop them.
            self._in_flight.done(uid)

    # --- time-driven moves -----------------------------------------------------------------------

    def flush_backoff_completed(self) -> int:
        moved = 0
        for heap in (self._backoff, self._error_backoff):
            while True:
                head = heap.peek()
                if head is None or self._is_backing_off(head):
                    break
                heap.pop()
                # With popping from backoffQ, PreEnqueue ran when the pod went in (kube-scheduler's
                # moveToActiveQ with movesFromBackoffQ).
                self._add_active(head, BACKOFF_COMPLETE, gate=not self._pop_from_backoff)
                moved += 1
        return moved

    def flush_unschedulable_leftover(self) -> int:
        now = self._clock.now()
        moving = []
        # Gated pods too: their PreEnqueue plugins are asked again on the way (kube-scheduler's
        # wildcard flush re-evaluates every entity, so a pod a plugin gated by mistake is not stuck).
        for info in self._unschedulable.values():
            last = info.timestamp
            if info.flush_timestamp is not None and info.flush_timestamp > last:
                last = info.flush_timestamp
            if now - last > self._max_in_unschedulable:
                info.was_flushed_from_unschedulable = True
                info.flush_timestamp = now
                moving.append(info)
        if not moving:
            return 0
        # kube-scheduler moves them with the wildcard UnschedulableTimeout, kept like any event
        # while pods are in flight: each of those that comes back rejected is retried.
        self._in_flight.record(self._scheduling_cycle, UNSCHEDULABLE_TIMEOUT, None)
        return self._requeue_all(moving, UNSCHEDULABLE_TIMEOUT.label)

    async def run(self) -> None:
        """The periodic flushes; run as a named background task for the scheduler's lifetime."""
        ticks_per_leftover_flush = round(UNSCHEDULABLE_FLUSH_INTERVAL / BACKOFF_FLUSH_INTERVAL)
        tick = 0
        while not self._closed:
            await asyncio.sleep(BACKOFF_FLUSH_INTERVAL)
            self.flush_backoff_completed()
            tick += 1
            if tick % ticks_per_leftover_flush == 0:
                self.flush_unschedulable_leftover()

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    # --- internals -------------------------------------------------------------------------------

    def _where(self, uid: str) -> str | None:
        if uid in self._active:
            return "active"
        if uid in self._backoff or uid in self._error_backoff:
            return "backoff"
        if uid in self._unschedulable:
            return "unschedulable"
        return None

    def _requeue_all(self, infos: Sequence[QueuedPodInfo], event: str) -> int:
        """Unschedulable pods out after backoff (each gated again stays); how many left."""
        moved = 0
        for info in infos:
            if info.gated and not self._is_backing_off(info):
                # On its way to activeQ PreEnqueue runs, the gating plugin first: still gated, the
                # pod stays where it is, as kube-scheduler's addOrUpdate keeps it, counted as
                # incoming nowhere. Every member of a gang below minCount is asked at each
                # member's arrival, so this path is the common one.
                before = info.unschedulable_plugins, info.pending_plugins
                if self._gate(info):
                    info.was_flushed_from_unschedulable = False
                    if (info.unschedulable_plugins, info.pending_plugins) != before:
                        self._unschedulable.refresh(info.uid)  # held by another plugin now
                    continue
                del self._unschedulable[info.uid]
                moved += self._requeue(info, _Strategy.AFTER_BACKOFF, event, gate=False) != "unschedulable"
                continue
            del self._unschedulable[info.uid]
            moved += self._requeue(info, _Strategy.AFTER_BACKOFF, event) != "unschedulable"
        return moved

    def _park(self, info: QueuedPodInfo, event: str) -> str:
        """Into unschedulablePods (counted as incoming only when it was not there yet)."""
        fresh = info.uid not in self._unschedulable
        self._unschedulable[info.uid] = info
        if fresh and self.on_incoming is not None:
            self.on_incoming("unschedulable", event)
        return "unschedulable"

    def _requeue(self, info: QueuedPodInfo, strategy: _Strategy, event: str, gate: bool = True) -> str:
        """`gate` False: PreEnqueue has just passed it."""
        if strategy is _Strategy.SKIP:
            return self._park(info, event)
        if self._is_backing_off(info):
            heap = self._backoff if info.rejected() else self._error_backoff
            if gate and self._pop_from_backoff and self._gate(info):
                # kube-scheduler's moveToBackoffQ: a pod may leave backoffQ straight for a cycle, so
                # PreEnqueue runs on the way in (a preemptor whose victims are still going stays out).
                info.was_flushed_from_unschedulable = False
                return self._park(info, event)
            self._unschedulable.pop(info.uid, None)
            heap.push(info.uid, info)
            if self.on_incoming is not None:
                self.on_incoming("backoff", event)
            if self._pop_from_backoff:
                self._wakeup.set()
            return "backoff"
        return "active" if self._add_active(info, event, gate=gate) else "unschedulable"

    def _add_active(self, info: QueuedPodInfo, event: str, gate: bool = True) -> bool:
        """Into activeQ, unless a PreEnqueue plugin gates it (then unschedulablePods): whether it went."""
        if gate and self._gate(info):
            # Never attempted meanwhile: the flag must not outlive this move (moveToActiveQ).
            info.was_flushed_from_unschedulable = False
            self._park(info, event)
            return False
        self._unschedulable.pop(info.uid, None)
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self._clock.now()
        self._active.push(info.uid, info)
        if self.on_incoming is not None:
            self.on_incoming("active", event)
        self._wakeup.set()
        return True

    def _gate(self, info: QueuedPodInfo) -> bool:
        """Run the profile's PreEnqueue plugins, as kube-scheduler does before every move to
        activeQ; a rejection keeps the pod gated until an event its plugin registered."""
        profile = info.pod.spec.scheduler_name
        plugins = self._pre_enqueue.get(profile, ())
        rec = sampled(self.plugin_recorder, self.sample_rng) if plugins and self.plugin_recorder else None
        if info.gated and len(plugins) > 1 and len(info.unschedulable_plugins) == 1:
            # runPreEnqueuePluginsForPod: the plugin that gated the pod runs first, so a pod
            # still held by it stays held by it, whatever the plugins before it would say now.
            [gating] = info.unschedulable_plugins
            order = self._gate_orders.get((profile, gating))
            if order is None:
                order = self._gate_orders[(profile, gating)] = (
                    *(pl for pl in plugins if pl.name == gating), *(pl for pl in plugins if pl.name != gating))
            plugins = order
        for pl in plugins:
            status = pl.pre_enqueue(info.pod) if rec is None else timed(
                rec, pl.name, "PreEnqueue", pl.pre_enqueue, info.pod)
            if status is not None and status.code != Code.SUCCESS:
                info.gated = True
                info.unschedulable_plugins = {pl.name}
                info.pending_plugins = frozenset()
                if log.isEnabledFor(logging.DEBUG):
                    log.debug("pod %s gated by %s: %s", info.key, pl.name, status.message())
                return True
        if info.gated:
            info.gated = False
            info.unschedulable_plugins = frozenset()
        return False

    # Backoff ends are truncated to whole seconds when popping from backoffQ is on, as
    # kube-scheduler does, so a whole 1 s window of pods becomes ready together and keeps its
    # priority order.
    def _align(self, t: float) -> float:
        return math.floor(t) if self._pop_from_backoff else t

    def backoff_duration(self, count: int) -> float:
        if count <= 0:
            return 0.0
        shift = min(count - 1, 62)
        if self._initial_backoff > self._max_backoff / (1 << shift):
            return self._max_backoff
        return self._initial_backoff * (1 << shift)

    def _backoff_time(self, info: QueuedPodInfo) -> float:
        if self._max_backoff == 0:
            return -math.inf
        count = info.consecutive_errors_count or info.unschedulable_count
        if count == 0:
            return -math.inf
        if info.backoff_expiration is None:
            info.backoff_expiration = self._align(info.timestamp + self.backoff_duration(count))
        return info.backoff_expiration

    def _is_backing_off(self, info: QueuedPodInfo) -> bool:
        expires = self._backoff_time(info)
        return expires != -math.inf and expires >= self._align(self._clock.now())

    def _backoff_key(self, info: QueuedPodInfo) -> tuple[float, int, float]:
        return (self._backoff_time(info), -info.priority, info.timestamp)

    def _error_backoff_key(self, info: QueuedPodInfo) -> tuple[float]:
        return (self._backoff_time(info),)

