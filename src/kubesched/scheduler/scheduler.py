"""The scheduler: informers feed the cache and the queue; one pod at a time goes through a
scheduling cycle on the cache's snapshot; the chosen node is assumed at once and bound in the
background, as kube-scheduler does — which is why it never overcommits a node while binds are in
flight.

A cycle is synchronous code between two awaits, so nothing changes the cache while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import random
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from kubesched.api import (
    ApiClient,
    Binder,
    ConditionWriter,
    EventRecorder,
    Handlers,
    Informer,
    TaskSet,
)
from kubesched.api.events import EVENT_WORKERS, senders
from kubesched.api.leaderelection import LeaderElector
from kubesched.api.pod_group_status import write_pod_group_condition
from kubesched.api.protobuf import PROTOBUF
from kubesched.backend.cache.cache import Cache
from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.backend.queue import (
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    PodNominator,
    QueuedPodInfo,
    SchedulingQueue,
    eligible,
)
from kubesched.config.features import FeatureGates
from kubesched.config.types import SchedulerConfig
from kubesched.framework.events import WILDCARD, EventResource, Registration
from kubesched.framework.extender import EXTENDER_NAME, Extender, ordered
from kubesched.framework.handle import Handle
from kubesched.framework.interface import QueueSortPlugin
from kubesched.framework.pod_groups import NoPodGroups
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import Profile, ProfileError
from kubesched.metrics import Metrics
from kubesched.scheduler.debugger import Comparison, DebugState, compare
from kubesched.scheduler.eventhandlers import ClusterEventHandlers
from kubesched.scheduler.memory import heap_sizes, trim_forever
from kubesched.scheduler.profiles import build_profiles
from kubesched.scheduler.schedule_one import Cycles
from kubesched.scheduler.schedule_one_cogroup import CoGroupCycles
from kubesched.scheduler.schedule_one_podgroup import PodGroupCycles, is_pod_group_member
from kubesched.scheduler.sources import ClusterSources
from kubesched.scheduler.writes import ApiWrites

log = logging.getLogger("kubesched")
W = TypeVar("W")



# How long credentials or an informer may fail with errors that waiting will not mend before the
# scheduler gives up and exits non-zero (its restart re-reads the kubeconfig and service account).
DEFAULT_FAILURE_LIMIT = 60.0

# The `name` label of leader_election_master_status, as kube-scheduler labels its own "kube-scheduler".
LEADER_METRIC_NAME = "kubesched"


def requeue_after_bug(queue: SchedulingQueue, info: QueuedPodInfo) -> None:
    """A cycle that raised: the pod backs off as an error, whatever rejected it in an earlier
    attempt. One the failure handler requeued before the exception keeps its entry as it is."""
    if queue.where(info.uid) in (None, "in-flight"):
        info.unschedulable_plugins = info.pending_plugins = frozenset()
        queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)


class SchedulerFailed(Exception):
    """The scheduler stopped because it cannot do its work; the message says why."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off while the informers list. What they list is acyclic and lives on,
    yet each full collection walks all of it again: at 50,000 pods that was ~40 % of the list's
    CPU (bench/list_decode.py). Refcounting still frees everything meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Scheduler:
    def __init__(self, client: ApiClient, config: SchedulerConfig, *, rng: random.Random | None = None,
                 max_binds_in_flight: int = 64, out_of_tree: Iterable[PluginSpec] = (),
                 failure_limit: float = DEFAULT_FAILURE_LIMIT, clock: Callable[[], float] = time.monotonic,
                 elector: LeaderElector | None = None, features: FeatureGates | None = None,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 extenders: Sequence[Extender] = (), event_client: ApiClient | None = None) -> None:
        # `features` are read here and in the components this builds, which get plain booleans.
        features = features or FeatureGates()
        self.client = client
        self.config = config
        self.cache = Cache()
        # The informers' handlers come once the queue exists: the queue needs the profiles, whose
        # plugins read the informers.
        coscheduling = any(ref.name == "Coscheduling" for profile in config.profiles
                           for refs in profile.plugins.values() for ref in refs)
        self.sources = sources = ClusterSources(client, generic_workload=features.generic_workload,
                                                coscheduling=coscheduling)
        self.pods, self.nodes, self.jobs = sources.pods, sources.nodes, sources.jobs
        self.namespaces = sources.namespaces
        # One handle for every profile: plugins reach the cache's snapshot, the clock, the pods waiting
        # at Permit and the binding port through it, never the API client itself.
        use_protobuf = config.client_connection.content_type == PROTOBUF
        self.binder = Binder(client, max_in_flight=max_binds_in_flight, use_protobuf=use_protobuf)
        # Events go through a client of their own where one is given, as kube-scheduler's eventClient:
        # its own QPS and burst, so a burst of events never delays a bind and neither starves the other.
        self.event_client = event_client or client
        # With a client of their own, events keep the binds' pace (events.senders); sharing the main
        # client, they stay at 8 so they never take the connections the lists and watches need.
        workers = senders(max_binds_in_flight) if event_client is not None else EVENT_WORKERS
        self.events = EventRecorder(self.event_client, reporting_controller=config.profiles[0].scheduler_name,
                                    workers=workers, use_protobuf=use_protobuf)
        self.writes = writes = ApiWrites(client, self.binder, self.events)
        self.handle = Handle(snapshot=self.cache.snapshot, clock=clock, pods=self.pods, nodes=self.nodes,
                             jobs=self.jobs, bind_pod=writes.bind_pod, nominate_pod=writes.nominate_pod,
                             delete_victim=writes.delete_victim, disrupt_victim=writes.disrupt_victim,
                             write_volume=writes.write_volume, write_claim=writes.write_claim,
                             resource_claims=writes.resource_claims, spawn=self._spawn_background,
                             extenders=ordered(extenders))
        self.extenders = self.handle.extenders
        self.pod_group_states: PodGroupStates | None = None
        if sources.pod_groups is not None:
            self.pod_group_states = self.handle.pod_groups = PodGroupStates(self.cache, sources.pod_groups)
        self.profiles: dict[str, Profile] = build_profiles(config, sources, self.handle, out_of_tree)
        self.names = frozenset(self.profiles)
        self.queue = SchedulingQueue(initial_backoff=config.pod_initial_backoff_seconds,
                                     max_backoff=config.pod_max_backoff_seconds,
                                     max_in_unschedulable=max_in_unschedulable,
                                     pop_from_backoff=features.scheduler_pop_from_backoff_q,
                                     plugin_events={name: with_extender_events(p.plugin_events(), self.extenders)
                                                    for name, p in self.profiles.items()},
                                     pre_enqueue={name: p.pre_enqueue for name, p in self.profiles.items()},
                                     queue_sort=_one_queue_sort(self.profiles),
                                     nominator=PodNominator(self.pods))
        self.handle.nominator = self.queue.nominator
        self.handle.activate = self.queue.activate
        handlers = self.handlers = ClusterEventHandlers(self.cache, self.queue, self.names)
        handlers.pod_groups = self.pod_group_states
        if sources.co_pod_groups is not None:
            sources.co_pod_groups.handler = Handlers(handlers.co_pod_group_added, handlers.co_pod_group_updated,
                                                     handlers.co_pod_group_deleted)
        if sources.pod_groups is not None:
            sources.pod_groups.handler = Handlers(handlers.pod_group_added, handlers.pod_group_updated,
                                                  handlers.pod_group_deleted)
        self.jobs.handler = Handlers(handlers.job_changed, handlers.job_updated, handlers.job_deleted)
        self.conditions = ConditionWriter(client)
        self.metrics = Metrics(sorted(self.profiles), self.queue.pending_counts,
                               unschedulable_pods=self.queue.unschedulable_reasons, cache_size=self._cache_size)
        self.queue.on_incoming = self.metrics.incoming
        self.queue.plugin_recorder = self.metrics.plugins
        self.handle.preemption_attempted = self.metrics.preemption_attempts.inc
        self.handle.victims_chosen = self.metrics.preemption_victims.observe
        self.handle.volume_stage_failed = self.metrics.volume_stage_failed
        self.pods.handler = Handlers(handlers.pod_added, handlers.pod_updated, handlers.pod_deleted)
        self.nodes.handler = Handlers(handlers.node_added, handlers.node_updated, handlers.node_deleted)
        for resource, informer in sources.storage_informers:
            informer.handler = handlers.storage_handlers(resource)
        # DRA: claims as the assume cache changes them, slices with their taint rules applied.
        sources.dra.claims.listeners.append(handlers.changes(EventResource.RESOURCE_CLAIM))
        sources.dra.slices.listeners.append(handlers.changes(EventResource.RESOURCE_SLICE))
        sources.device_classes.handler = handlers.storage_handlers(EventResource.DEVICE_CLASS)
        self.cycles = Cycles(self.profiles, self.cache, self.queue, self.conditions, self.events, self.pods,
                             self.metrics, config.percentage_of_nodes_to_score, rng or random.Random(),
                             bound_or_gone=writes.bound_or_gone, extenders=tuple(self.extenders))
        self.binds = self.cycles.binds
        # With GenericWorkload: a pod of a PodGroup is scheduled with its group, in one cycle.
        self.group_cycles: PodGroupCycles | None = None
        if self.pod_group_states is not None:
            self.group_cycles = PodGroupCycles(
                self.cycles, self.pod_group_states,
                lambda group, condition: write_pod_group_condition(client, group, condition),
                self._spawn_background)
        # With a profile that enables Coscheduling: its groups too, whole or not at all.
        self.co_group_cycles = CoGroupCycles(
            self.cycles, self._spawn_background, self.pod_group_states or NoPodGroups()
        ) if sources.co_pod_groups is not None else None
        self.stats = self.cycles.stats
        self.schedule_one = self.cycles.schedule_one
        self._informers: tuple[Informer[Any], ...] = sources.all
        self._background = TaskSet()
        self._stopping = asyncio.Event()
        self._failed_event = asyncio.Event()
        self.failure: str | None = None
        self.failure_limit = failure_limit
        self._clock = clock
        self.ready = asyncio.Event()
        # With an elector, only the leader schedules; standbys keep their informers synced meanwhile.
        self.elector = elector
        self._campaign_task: asyncio.Task[Any] | None = None
        if elector is not None:
            elector.add_observer(self.metrics.leader_status(LEADER_METRIC_NAME))

    def _cache_size(self) -> dict[str, int]:
        """For scheduler_cache_size{type}, at scrape time."""
        return {"nodes": self.cache.node_count, "pods": self.cache.pod_count,
                "assumed_pods": len(self.cache.assumed_pods())}

    def compare_cache(self) -> Comparison:
        """kube-scheduler's cache comparer: the cache and the queue against the informers."""
        return compare(self.cache, self.queue, self.pods.store.values(), self.nodes.store.values(), self.names)

    def internal_sizes(self) -> dict[str, int]:
        """The size of every map the scheduler keeps: after warm-up, flat under steady churn."""
        sizes = {"cache_nodes": self.cache.node_count, "cache_pods": self.cache.pod_count,
                 "cache_assumed_pods": len(self.cache.assumed_pods()), "cache_orphan_nodes": self.cache.orphan_nodes,
                 **{f"queue_{k}": v for k, v in self.queue.internal_sizes().items()},
                 "event_series": self.events.series_count, "conditions_pending": self.conditions.pending_count,
                 "binds_in_flight": len(self.binds), "waiting_pods": len(self.handle.waiting_pods),
                 "background_tasks": len(self._background)}
        for informer in self._informers:
            sizes[f"{informer.name}"] = len(informer.store)
        return sizes | heap_sizes()

    def debug_state(self) -> DebugState:
        return DebugState(self.internal_sizes, self.compare_cache, extra={
            "relists": lambda: {i.name: i.relists for i in self._informers},
            "stats": lambda: {"attempts": self.stats.attempts, "scheduled": self.stats.scheduled,
                              "errors": self.stats.errors}})

    # --- running ------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Sync the informers, then schedule until stop() is called. Raises SchedulerFailed when
        the scheduler cannot do its work any more (see `health`), after stopping."""
        for informer in self._informers:
            self._spawn_critical(informer.run(), name=informer.name)
        self._spawn_critical(self.events.run(), name="events")
        self._spawn_critical(self.conditions.run(), name="pod-conditions")
        self._background.spawn(self._watch_health(), name="health")
        started = time.monotonic()
        synced = asyncio.ensure_future(asyncio.gather(*(i.wait_synced() for i in self._informers)))
        # Stopped before the sync, the gather ends cancelled: fetch that, or asyncio logs it as lost.
        synced.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            with collector_paused():
                is_synced = await self._until(synced)
                if is_synced:
                    # Everything listed so far lives as long as the scheduler: move it out of the
                    # collector's reach, so full collections stay short while pods stream through.
                    gc.collect()
                    gc.freeze()
        finally:
            synced.cancel()
        if not is_synced:
            return await self._give_up()
        self._background.spawn(self.queue.run(), name="queue-flush")
        # Pods, events and watch frames stream through the heap for weeks: glibc keeps the pages
        # of what they free between long-lived objects until trimmed (scheduler/memory.py).
        self._background.spawn(trim_forever(), name="memory-trim")
        log.info("caches synced", extra={"nodes": self.cache.node_count, "pods": len(self.pods.store),
                                         "queued": len(self.queue),
                                         "seconds": round(time.monotonic() - started, 3)})
        self.ready.set()
        if self.elector is not None and not await self._win_election(self.elector):
            return await self._give_up()
        self._spawn_critical(self._schedule_loop(), name="scheduling-loop")
        await self._until(None)
        await self._give_up()

    async def _win_election(self, elector: LeaderElector) -> bool:
        """Campaign until leader (True), or until stopped or failed (False)."""
        log.info("waiting to become leader", extra={"lease": elector.describe(), "identity": elector.identity})
        self._campaign_task = self._spawn_critical(self._campaign(elector), name="leader-election")
        won = asyncio.ensure_future(elector.leading.wait())
        try:
            return await self._until(won)
        finally:
            won.cancel()

    async def _campaign(self, elector: LeaderElector) -> None:
        await elector.run()
        # run() returns only once the lease is lost. From this moment (no await in between) no bind,
        # patch or event may go out, in flight or not: another replica may take the lease over once
        # its own view of it expires. Then stop scheduling and exit non-zero, as kube-scheduler does,
        # so a restart rejoins as a standby with fresh caches.
        self.client.fence("the leader lease was lost")
        self.event_client.fence("the leader lease was lost")
        self._fail("leader election lost")

    async def _until(self, step: asyncio.Future[Any] | None) -> bool:
        """Wait for `step` (or forever) unless stop() is called or the scheduler fails first;
        True when the step completed."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._stopping.wait()),
                                               asyncio.ensure_future(self._failed_event.wait())]
        if step is not None:
            waits.append(step)
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits[:2]:
                w.cancel()
        return step is not None and step.done() and not self._stopping.is_set() and self.failure is None

    async def _give_up(self) -> None:
        self.queue.close()
        if self.failure is not None and not self._stopping.is_set():
            log.error("kubesched cannot go on: %s", self.failure)
            # With the lease lost every write is refused: nothing is left to wait for.
            lost = self.elector is not None and self.elector.lost
            await self.stop(grace=0.0 if lost else 10.0)
            raise SchedulerFailed(self.failure)

    def _spawn_critical(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """A task the scheduler cannot work without: if it ends before stop(), the scheduler fails."""
        def ended(task: asyncio.Task[Any]) -> None:
            if self._stopping.is_set():
                return
            why = "was cancelled" if task.cancelled() else (
                f"failed: {type(exc).__name__}: {exc}" if (exc := task.exception()) else "ended")
            self._fail(f"task {name} {why}")
        task = self._background.spawn(coro, name=name)
        task.add_done_callback(ended)
        return task

    def _fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
            self._failed_event.set()

    def health(self) -> str | None:
        """Why the scheduler cannot work, or None. An informer or the credentials failing in a way
        waiting will not mend (credentials, 4xx, a bug) for longer than `failure_limit` counts: a
        live process that schedules nothing must fail its liveness probe and exit."""
        if self.failure is not None:
            return self.failure
        now = self._clock()
        since = self.client.credentials_failing_since
        if since is not None and now - since > self.failure_limit:
            return f"no credentials for {now - since:.0f}s"
        for informer in self._informers:
            since = informer.failing_fatally_since
            if since is not None and now - since > self.failure_limit:
                return f"{informer.name} has failed for {now - since:.0f}s: {informer.last_error}"
        return None

    async def _watch_health(self) -> None:
        while self.failure is None:
            reason = self.health()
            if reason is not None:
                self._fail(reason)
                return
            await asyncio.sleep(1.0)

    async def stop(self, grace: float = 10.0) -> None:
        """Stop scheduling; let in-flight binds, then events and conditions finish, all within `grace`
        seconds (an unreachable apiserver must not hold a SIGTERM up for longer); hand the lease over
        once no bind of this leader can still land."""
        self._stopping.set()
        self.queue.close()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        await self.binds.wait(grace)
        await self._step_down(deadline - loop.time())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.events.flush(), max(deadline - loop.time(), 0.0))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.conditions.flush(), max(deadline - loop.time(), 0.0))
        await self._background.cancel()

    async def _step_down(self, time_left: float) -> None:
        if self.elector is None:
            return
        if self._campaign_task is not None:
            # no renewal may race the release
            self._campaign_task.cancel()
            await asyncio.wait([self._campaign_task])
        await self.elector.release(request_timeout=min(max(time_left, 1.0), 5.0))

    async def _schedule_loop(self) -> None:
        while not self._stopping.is_set() and self.failure is None:
            info = await self.queue.pop()
            if info is None:
                return
            if not all(i.live for i in self._informers):
                if not await self._until_live():
                    return
                latest = self.pods.get(info.key)
                if latest is None or latest.metadata.uid != info.uid or not eligible(latest, self.names):
                    self.queue.done(info.uid)  # deleted, bound or handed over while we waited
                    continue
                info.pod = latest
            try:
                if self.group_cycles is not None and is_pod_group_member(info.pod):
                    self.group_cycles.schedule_group(info)
                elif self.co_group_cycles is not None and self.co_group_cycles.plugin(info.pod) is not None:
                    self.co_group_cycles.schedule_group(info)
                elif self.extenders:
                    await self.cycles.schedule_one_with_extenders(info)
                else:
                    self.schedule_one(info)
            except Exception:
                # A bug must cost one pod a backoff, not stop the scheduler.
                log.exception("scheduling cycle failed", extra={"pod": info.key})
                self.stats.errors += 1
                requeue_after_bug(self.queue, info)
            # Let binds, informers and events run between cycles.
            await asyncio.sleep(0)

    async def _until_live(self) -> bool:
        """Wait until every informer follows the apiserver again (True), or the scheduler stops.
        A cycle on a store that missed changes could bind to a deleted node or into room a pod
        deleted meanwhile never freed; binds would fail against an unreachable apiserver anyway."""
        behind = [i for i in self._informers if not i.live]
        log.info("scheduling paused until the informers have re-listed or resumed their watches",
                 extra={"informers": [i.name for i in behind]})
        paused = time.monotonic()
        live = asyncio.ensure_future(asyncio.gather(*(i.wait_live() for i in behind)))
        try:
            resumed = await self._until(live)
        finally:
            live.cancel()
        if resumed:
            log.info("scheduling resumed", extra={"seconds": round(time.monotonic() - paused, 3)})
        return resumed

    def _spawn_background(self, coro: Coroutine[Any, Any, Any], name: str) -> object:
        """The handle's task port (preemption's writes): run with the scheduler's background tasks."""
        return self._background.spawn(coro, name=name)


def with_extender_events(events: dict[str, tuple[Registration, ...]],
                         extenders: Sequence[Extender]) -> dict[str, tuple[Registration, ...]]:
    """A profile's queueing events, with "Extender" moving a pod on every event when extenders are
    configured (kube-scheduler registers a default enqueue extension under that name): extenders
    say nothing about what could make a node they rejected fit."""
    if not extenders:
        return events
    return {**events, EXTENDER_NAME: (WILDCARD,)}


def _one_queue_sort(profiles: Mapping[str, Profile]) -> QueueSortPlugin | None:
    """All profiles share one queue, so they must name the same QueueSort plugin (as kube-scheduler
    requires)."""
    first: tuple[str, QueueSortPlugin | None] | None = None
    for name, profile in profiles.items():
        plugin = profile.queue_sort
        if first is None:
            first = (name, plugin)
        elif (plugin.name if plugin else None) != (first[1].name if first[1] else None):
            raise ProfileError(f"different queue sort plugins for profile {name!r}: "
                               f"{plugin.name if plugin else None!r}, first: {first[1].name if first[1] else None!r}")
    return first[1] if first else None
