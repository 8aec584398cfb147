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
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.api import (
    ApiClient,
    Binder,
    BindResult,
    ConditionWriter,
    EventRecorder,
    Handlers,
    Informer,
    TaskSet,
    job_informer,
    node_informer,
    pod_informer,
)
from kubesched.cache.cache import Cache
from kubesched.config.types import SchedulerConfig
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import QueueSortPlugin
from kubesched.framework.profile import Profile, ProfileError, build_profile
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime import (
    run_bind,
    run_permit,
    run_post_bind,
    run_post_filter,
    run_pre_bind,
    run_reserve,
    run_unreserve,
    wait_on_permit,
)
from kubesched.framework.schedule import NodeCursor, schedule_pod
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import PodInfo
from kubesched.metrics import Metrics
from kubesched.model.objects import Job, Node, Pod
from kubesched.plugins import cronjob_pool, default_binder
from kubesched.plugins.pool_ownership import InformerJobs
from kubesched.plugins.registry import in_tree_registry
from kubesched.queue import QueuedPodInfo, SchedulingQueue, eligible

log = logging.getLogger("kubesched")

# kube-scheduler's pod informer leaves finished pods out: they hold no resources.
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


# How long credentials or an informer may fail with errors that waiting will not mend before the
# scheduler gives up and exits non-zero (its restart re-reads the kubeconfig and service account).
DEFAULT_FAILURE_LIMIT = 60.0


class SchedulerFailed(Exception):
    """The scheduler stopped because it cannot do its work; the message says why."""


@dataclass
class Stats:
    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    bind_failures: int = 0
    cycle_seconds: float = 0.0


class Scheduler:
    def __init__(self, client: ApiClient, config: SchedulerConfig, *, rng: random.Random | None = None,
                 max_binds_in_flight: int = 64, out_of_tree: Iterable[PluginSpec] = (),
                 failure_limit: float = DEFAULT_FAILURE_LIMIT, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.config = config
        self.jobs: Informer[Job] = job_informer(client, Handlers(self._job_changed, self._job_updated,
                                                                 self._job_deleted))
        # The pool plugin reads Jobs from this scheduler's informer, never from the API per pod.
        registry = in_tree_registry(jobs=InformerJobs(self.jobs)).merged(out_of_tree)
        # One handle for every profile: plugins reach the cache's snapshot, the clock, the pods waiting
        # at Permit and the binding port through it, never the API client itself.
        self.handle = Handle(snapshot=lambda: self.cache.snapshot(), clock=clock, bind_pod=self._bind_pod)
        self.profiles: dict[str, Profile] = {p.scheduler_name: build_profile(p, registry, self.handle)
                                             for p in config.profiles}
        self.names = frozenset(self.profiles)
        self.rng = rng or random.Random()
        self.cursor = NodeCursor()
        self.cache = Cache()
        self.queue = SchedulingQueue(initial_backoff=config.pod_initial_backoff_seconds,
                                     max_backoff=config.pod_max_backoff_seconds,
                                     plugin_events={name: p.plugin_events() for name, p in self.profiles.items()},
                                     pre_enqueue={name: p.pre_enqueue for name, p in self.profiles.items()},
                                     queue_sort=_one_queue_sort(self.profiles))
        self.binder = Binder(client, max_in_flight=max_binds_in_flight)
        first = next(iter(self.profiles))
        self.events = EventRecorder(client, reporting_controller=first)
        self.conditions = ConditionWriter(client)
        self.binds = TaskSet()
        self.stats = Stats()
        self.metrics = Metrics(sorted(self.profiles), self.queue.pending_counts)
        self.pods: Informer[Pod] = pod_informer(client, Handlers(self._pod_added, self._pod_updated,
                                                                 self._pod_deleted), POD_FIELD_SELECTOR)
        self.nodes: Informer[Node] = node_informer(client, Handlers(self._node_added, self._node_updated,
                                                                    self._node_deleted))
        self._informers: tuple[Informer[Any], ...] = (self.nodes, self.jobs, self.pods)
        self._background = TaskSet()
        self._stopping = asyncio.Event()
        self._failed_event = asyncio.Event()
        self.failure: str | None = None
        self.failure_limit = failure_limit
        self._clock = clock
        self.ready = asyncio.Event()

    # --- informer handlers ------------------------------------------------------------------------

    # Each handler reports kube-scheduler's cluster events; the queue moves only the pods that a
    # plugin which rejected them registered the event for.

    def _pod_added(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.add_pod(pod)
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD)
        elif eligible(pod, self.names):
            self.queue.add(pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        if new.spec.node_name:
            if not old.spec.node_name:
                self.queue.delete(new)  # bound, by us or by someone else
                self.cache.add_pod(new)
                self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_ADD)
            else:
                self.cache.update_pod(new)
                # A resize that lowered its requests frees room (AssignedPodUpdate / UpdatePodScaleDown).
                for event in events.assigned_pod_update_events(old, new):
                    self.queue.move_all_to_active_or_backoff(event)
        elif eligible(new, self.names):
            self.queue.update(old, new)
        else:
            self.queue.delete(new)  # terminating, gated, or handed to another scheduler

    def _pod_deleted(self, pod: Pod) -> None:
        self.queue.delete(pod)
        if pod.spec.node_name or self.cache.is_assumed(pod):
            self.cache.remove_pod(pod)
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)

    def _node_added(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(events.NODE_ADD)

    def _node_updated(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        # Only what can make a pod fit is an event: not a heartbeat, nor an image list.
        for event in events.node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event)

    def _node_deleted(self, node: Node) -> None:
        self.queue.move_all_to_active_or_backoff(events.NODE_DELETE)
        self.cache.remove_node(node.metadata.name)

    def _job_changed(self, job: Job) -> None:
        # Pods the pool plugin held back until their owner Job was known can be decided now.
        self.queue.move_all_to_active_or_backoff(events.JOB_ADD, pre_check=cronjob_pool.waits_for_job(job))

    def _job_updated(self, old: Job, new: Job) -> None:
        if old.metadata.owner_references != new.metadata.owner_references:
            self._job_changed(new)

    def _job_deleted(self, job: Job) -> None:
        # Nothing waits on a Job's deletion: its pods are judged when they come up for scheduling.
        return None

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
        try:
            if not await self._until(synced):
                return await self._give_up()
        finally:
            synced.cancel()
        self._background.spawn(self.queue.run(), name="queue-flush")
        log.info("caches synced", extra={"nodes": self.cache.node_count, "pods": len(self.pods.store),
                                         "queued": len(self.queue),
                                         "seconds": round(time.monotonic() - started, 3)})
        # Everything listed so far lives as long as the scheduler: move it out of the collector's
        # reach, so full collections stay short while pods stream through.
        gc.collect()
        gc.freeze()
        self.ready.set()
        self._spawn_critical(self._schedule_loop(), name="scheduling-loop")
        await self._until(None)
        await self._give_up()

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
            await self.stop()
            raise SchedulerFailed(self.failure)

    def _spawn_critical(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        """A task the scheduler cannot work without: if it ends before stop(), the scheduler fails."""
        def ended(task: asyncio.Task[Any]) -> None:
            if self._stopping.is_set():
                return
            why = "was cancelled" if task.cancelled() else (
                f"failed: {type(exc).__name__}: {exc}" if (exc := task.exception()) else "ended")
            self._fail(f"task {name} {why}")
        self._background.spawn(coro, name=name).add_done_callback(ended)

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
        """Stop scheduling; let in-flight binds, events and conditions finish."""
        self._stopping.set()
        self.queue.close()
        await self.binds.wait(grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.events.flush(), grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.conditions.flush(), grace)
        await self._background.cancel()

    async def _schedule_loop(self) -> None:
        while not self._stopping.is_set():
            info = await self.queue.pop()
            if info is None:
                return
            try:
                self.schedule_one(info)
            except Exception:
                # A bug must cost one pod a backoff, not stop the scheduler.
                log.exception("scheduling cycle failed", extra={"pod": info.key})
                self.stats.errors += 1
                self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
            # Let binds, informers and events run between cycles.
            await asyncio.sleep(0)

    # --- one pod ------------------------------------------------------------------------------------

    def schedule_one(self, info: QueuedPodInfo) -> None:
        pod = info.pod
        profile = self.profiles.get(pod.spec.scheduler_name)
        if profile is None or pod.spec.node_name or self.cache.node_of(pod.metadata.uid) is not None:
            self.queue.done(info.uid)
            return
        started = time.perf_counter()
        pod_info = PodInfo(pod)
        state = CycleState()
        self.stats.attempts += 1
        try:
            result = schedule_pod(profile, self.cache.snapshot(), pod_info, rng=self.rng, cursor=self.cursor,
                                  percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                                  state=state)
        except SchedulingError as exc:
            self.stats.errors += 1
            self.metrics.error[profile.scheduler_name].inc()
            self._failed(info, profile, str(exc), reason="SchedulerError")
            return
        finally:
            elapsed = time.perf_counter() - started
            self.stats.cycle_seconds += elapsed
            self.metrics.algorithm.observe(elapsed)
        if isinstance(result, FitError):
            post = run_post_filter(profile, state, pod_info, result)
            if post is not None and post.code == Code.ERROR:
                log.warning("PostFilter failed", extra={"pod": pod_info.key, "detail": post.message()})
            self.stats.unschedulable += 1
            self.metrics.unschedulable[profile.scheduler_name].inc()
            info.unschedulable_plugins = set(result.diagnosis.unschedulable_plugins)
            self._failed(info, profile, result.message(), reason="Unschedulable")
            return
        node = result.suggested_host
        self.cache.assume_pod(pod_info, node)
        status = run_reserve(profile, state, pod_info, node)
        if status is None:
            status = run_permit(profile, state, pod_info, node, profile.handle.waiting_pods)
        if status is not None and status.code != Code.WAIT:
            run_unreserve(profile, state, pod_info, node)
            self.cache.forget_pod(pod_info)
            self._failed(info, profile, *_failure(pod_info, node, status))
            return
        self.conditions.discard(pod.metadata.uid)
        self.binds.spawn(self._binding_cycle(info, pod_info, node, profile, state), name=f"bind/{pod_info.key}")

    def _failed(self, info: QueuedPodInfo, profile: Profile, message: str, reason: str) -> None:
        pod = info.pod
        log.info("unschedulable" if reason == "Unschedulable" else "scheduling error",
                 extra={"pod": f"{pod.metadata.namespace}/{pod.metadata.name}", "reason": reason,
                        "detail": message})
        self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
        self.events.failed_scheduling(pod, message, controller=profile.scheduler_name)
        latest = self.pods.get(_key(pod)) or pod
        self.conditions.submit(latest, message, reason=reason)

    async def _binding_cycle(self, info: QueuedPodInfo, pod_info: PodInfo, node: str, profile: Profile,
                             state: CycleState) -> None:
        """Permit's wait, PreBind, Bind, PostBind. Every way out but a bound pod unreserves,
        forgets the assumed pod and hands it to the failure handler: an assumed pod never
        expires, so a path that skipped this would keep the node's room taken for good."""
        pod = info.pod
        started = time.perf_counter()
        status: Status | None = Status(Code.ERROR, "binding cycle interrupted")
        bound = False
        try:
            await self.conditions.settled(pod.metadata.uid)
            status = await wait_on_permit(profile.handle.waiting_pods, pod_info)
            if status is None:
                status = await run_pre_bind(profile, state, pod_info, node)
            if status is None:
                status = await run_bind(profile, state, pod_info, node)
            bound = status is None
        except Exception as e:
            status = Status(Code.ERROR, f"{type(e).__name__}: {e}")
        finally:
            # Also on cancellation (shutdown): the pod must not stay assumed.
            if not bound:
                self._binding_failed(info, pod_info, node, profile, state,
                                     status or Status(Code.ERROR, "binding cycle interrupted"))
        if not bound:
            return
        self.metrics.binding.observe(time.perf_counter() - started)
        self.stats.scheduled += 1
        self.metrics.scheduled[profile.scheduler_name].inc()
        self.queue.done(info.uid)
        self.events.scheduled(pod, node, controller=profile.scheduler_name)
        run_post_bind(profile, state, pod_info, node)
        log.debug("bound", extra={"pod": pod_info.key, "node": node})

    def _binding_failed(self, info: QueuedPodInfo, pod_info: PodInfo, node: str, profile: Profile,
                        state: CycleState, status: Status) -> None:
        """kube-scheduler's handleBindingCycleError, then its failure handler's informer check."""
        self.stats.bind_failures += 1
        run_unreserve(profile, state, pod_info, node)
        if self.cache.is_assumed(pod_info):
            self.cache.forget_pod(pod_info)
            # The room it held is free again, as if an assigned pod had been deleted.
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE)
        latest = self.pods.get(pod_info.key)
        final = status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.plugin in _BINDERS
        if final or latest is None or latest.metadata.uid != pod_info.pod.metadata.uid or latest.spec.node_name:
            # Already bound (by us or another), deleted, or replaced: the informer brings the truth.
            log.info("binding skipped", extra={"pod": pod_info.key, "node": node, "detail": status.message()})
            self.queue.done(info.uid)
            return
        log.warning("binding failed", extra={"pod": pod_info.key, "node": node, "detail": status.message()})
        self._failed(info, profile, *_failure(pod_info, node, status))

    async def _bind_pod(self, pod: Pod, node: str) -> Status | None:
        """The handle's binding port, for DefaultBinder."""
        meta = pod.metadata
        outcome = await self.binder.bind(meta.namespace, meta.name, meta.uid, node)
        if outcome.ok:
            return None
        if outcome.result in (BindResult.CONFLICT, BindResult.NOT_FOUND):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, outcome.message)
        return Status(Code.ERROR, outcome.message)


# Bind plugins whose UnschedulableAndUnresolvable means "already bound, replaced or gone".
_BINDERS = frozenset({default_binder.NAME})


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


def _failure(pod: PodInfo, node: str, status: Status) -> tuple[str, str]:
    """(message, reason) for a pod that failed after a node was chosen: a rejection reads like
    kube-scheduler's FitError over the one node, an error is its message."""
    if status.is_rejected():
        diagnosis = Diagnosis(node_to_status={node: status})
        diagnosis.add_plugin_status(status)
        return FitError(pod, 1, diagnosis).message(), "Unschedulable"
    return status.message(), "SchedulerError"


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"
