"""The scheduling cycle and the binding cycle for one pod, against small ports: the cache and
the queue (pure), and three for I/O — the PodScheduled condition writer, the event recorder and
a pod lister — so both cycles are unit-tested without a cluster.

A scheduling cycle is synchronous code between two awaits, so nothing changes the cache while it
runs; the chosen node is assumed at once and bound in the background, as kube-scheduler does,
which is why a node is never overcommitted while binds are in flight.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from kubesched.api.tasks import TaskSet
from kubesched.backend.cache.cache import Cache
from kubesched.backend.queue import QueuedPodInfo, SchedulingQueue
from kubesched.framework import events
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extender
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.interface import NOMINATED_NODE_KEY
from kubesched.framework.plugin_metrics import sampled
from kubesched.framework.runtime.extenders import extenders_binding, schedule_pod_with_extenders
from kubesched.framework.runtime.framework import (
    run_bind,
    run_permit,
    run_post_bind,
    run_post_filter,
    run_post_filter_async,
    run_pre_bind,
    run_pre_bind_pre_flights,
    run_reserve,
    run_unreserve,
    wait_on_permit,
    will_wait_on_permit,
)
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import NodeCursor, ScheduleResult, schedule_pod
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import PodInfo
from kubesched.metrics import (
    Metrics,
    ProfileMetrics,
)
from kubesched.model.objects import Pod

log = logging.getLogger("kubesched")

# A failed attempt's (unschedulable plugins, pending plugins): what the queue moves it on.
Rejectors = tuple[Set[str], Set[str]]
# An error's: none, so it backs off as an error, whatever rejected it in an earlier attempt.
NO_REJECTORS: Rejectors = (frozenset(), frozenset())


class ConditionPort(Protocol):
    def submit(self, pod: Pod, message: str, reason: str = ..., nominated_node: str | None = ...) -> None: ...
    def discard(self, uid: str, *, with_nomination: bool = ...) -> None: ...
    async def settled(self, uid: str) -> None: ...


class EventPort(Protocol):
    def scheduled(self, pod: Pod, node: str, controller: str | None = None) -> None: ...
    def failed_scheduling(self, pod: Pod, message: str, controller: str | None = None) -> None: ...


class PodLister(Protocol):
    def get(self, key: str) -> Pod | None: ...


@dataclass
class Stats:
    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    bind_failures: int = 0
    cycle_seconds: float = 0.0


@dataclass
class Cycles:
    profiles: Mapping[str, Profile]
    cache: Cache
    queue: SchedulingQueue
    conditions: ConditionPort
    events: EventPort
    pods: PodLister
    metrics: Metrics
    percentage_of_nodes_to_score: int = 0
    rng: random.Random = field(default_factory=random.Random)
    # Draws which cycles time their plugins; apart from `rng` (kept for extenders' tie-break).
    sample_rng: random.Random = field(default_factory=random.Random)
    cursor: NodeCursor = field(default_factory=NodeCursor)
    binds: TaskSet = field(default_factory=TaskSet)
    stats: Stats = field(default_factory=Stats)
    # Whether the bind port found the pod already bound, replaced or deleted (ApiWrites.bound_or_gone).
    bound_or_gone: Callable[[str], bool] = field(default=lambda uid: False)
    # The configured extenders, ignorable ones last; none: every cycle is synchronous.
    extenders: tuple[Extender, ...] = ()


    def schedule_one(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle, synchronous: the scheduler without extenders."""
        cycle = self._begin(info)
        if cycle is None:
            return
        profile, pod_info, state, started = cycle
        try:
            result = schedule_pod(profile, self.cache.snapshot(), pod_info, rng=self.rng, cursor=self.cursor,
                                  percentage_of_nodes_to_score=self.percentage_of_nodes_to_score,
                                  state=state)
        except SchedulingError as exc:
            self._scheduling_error(info, profile, exc, started)
            return
        elapsed = time.perf_counter() - started
        post = None
        if isinstance(result, FitError) and result.num_all_nodes:
            post = run_post_filter(profile, state, pod_info, result)
        self._decided(info, profile, pod_info, state, started, elapsed, result, post)

    async def schedule_one_with_extenders(self, info: QueuedPodInfo) -> None:
        """One scheduling cycle that calls the extenders, awaiting each (framework/runtime/extenders.py)."""
        cycle = self._begin(info)
        if cycle is None:
            return
        profile, pod_info, state, started = cycle
        try:
            result = await schedule_pod_with_extenders(
                profile, self.cache.snapshot(), pod_info, extenders=self.extenders, rng=self.rng,
                cursor=self.cursor, percentage_of_nodes_to_score=self.percentage_of_nodes_to_score, state=state)
        except SchedulingError as exc:
            self._scheduling_error(info, profile, exc, started)
            return
        elapsed = time.perf_counter() - started
        post = None
        if isinstance(result, FitError) and result.num_all_nodes:
            post = await run_post_filter_async(profile, state, pod_info, result)
        self._decided(info, profile, pod_info, state, started, elapsed, result, post)

    def _begin(self, info: QueuedPodInfo) -> tuple[Profile, PodInfo, CycleState, float] | None:
        """The pod's profile, its PodInfo, a fresh cycle state and the start time; None (and the pod
        done) when it is no longer ours to schedule."""
        pod = info.pod
        profile = self.profiles.get(pod.spec.scheduler_name)
        if profile is None or pod.spec.node_name or self.cache.node_of(pod.metadata.uid) is not None:
            self.queue.done(info.uid)
            return None
        pm = self.metrics.profiles[profile.scheduler_name]
        started = time.perf_counter()
        state = CycleState(sampled(self.metrics.plugins, self.sample_rng), point_recorder=pm)
        self.stats.attempts += 1
        return profile, PodInfo(pod), state, started

    def _scheduling_error(self, info: QueuedPodInfo, profile: Profile, exc: SchedulingError, started: float) -> None:
        self.stats.errors += 1
        self.stats.cycle_seconds += time.perf_counter() - started
        self._failed(info, profile, str(exc), reason="SchedulerError", started=started)

    def _decided(self, info: QueuedPodInfo, profile: Profile, pod_info: PodInfo, state: CycleState, started: float,
                 elapsed: float, result: ScheduleResult | FitError, post: Status | None) -> None:
        """After the algorithm (which took `elapsed`): a FitError (with its PostFilter's status `post`)
        goes to the failure handler; a node is assumed, reserved and permitted, then bound in the
        background."""
        pod = info.pod
        self.stats.cycle_seconds += elapsed
        if isinstance(result, FitError):
            # No node at all is kube-scheduler's ErrNoNodesAvailable ("no nodes available to
            # schedule pods"): schedulingAlgorithm answers before PostFilter and clears the nomination.
            no_nodes = result.num_all_nodes == 0
            if post is not None and post.code == Code.ERROR:
                log.warning("PostFilter failed", extra={"pod": pod_info.key, "detail": post.message()})
            self.stats.unschedulable += 1
            # kube-scheduler clears the nomination when no PostFilter runs, else writes the one
            # the PostFilter result carries (none: leave it).
            nominated: str | None = state.get(NOMINATED_NODE_KEY) if profile.post_filter and not no_nodes else ""
            self._failed(info, profile, result.message(), reason="Unschedulable", nominated_node=nominated,
                         started=started, rejectors=_of(result.diagnosis))
            return
        # kube-scheduler observes the algorithm's latency only when it found a node.
        self.metrics.algorithm.observe(elapsed)
        node = result.suggested_host
        self.cache.assume_pod(pod_info, node)
        # An assumed pod needs no nomination any more.
        self.queue.nominator.delete(pod)
        status = run_reserve(profile, state, pod_info, node)
        if status is None:
            status = run_permit(profile, state, pod_info, node, profile.handle.waiting_pods)
        if status is not None and status.code != Code.WAIT:
            run_unreserve(profile, state, pod_info, node)
            self.cache.forget_pod(pod_info)
            # Rejected, a FitError over the one node, its plugin the rejector (AddPluginStatus).
            message, reason, diagnosis = _failure(pod_info, node, status)
            self._failed(info, profile, message, reason, started=started,
                         rejectors=NO_REJECTORS if diagnosis is None else _of(diagnosis))
            return
        self.conditions.discard(pod.metadata.uid)
        self.binds.spawn(self._binding_cycle(info, pod_info, node, profile, state, started),
                         name=f"bind/{pod_info.key}")

    def _failed(self, info: QueuedPodInfo, profile: Profile, message: str, reason: str,
                started: float | None = None, nominated_node: str | None = "",
                rejectors: Rejectors = NO_REJECTORS) -> None:
        """kube-scheduler's handleSchedulingFailure: counts the attempt (with its latency since
        `started`, the cycle's start), requeues the pod with `rejectors` (those of an earlier attempt
        cleared, ClearRejectorPlugins: an error, or a rejection that is no FitError, leaves none),
        records the event and the condition."""
        info.unschedulable_plugins, info.pending_plugins = rejectors
        pod = info.pod
        pm = self.metrics.profiles.get(profile.scheduler_name)
        if pm is not None:
            seconds = 0.0 if started is None else time.perf_counter() - started
            if reason == "Unschedulable":
                pm.unschedulable.inc()
                pm.unschedulable_seconds.observe(seconds)
            else:
                pm.error.inc()
                pm.error_seconds.observe(seconds)
        log.info("unschedulable" if reason == "Unschedulable" else "scheduling error",
                 extra={"pod": f"{pod.metadata.namespace}/{pod.metadata.name}", "reason": reason,
                        "detail": message})
        latest = self.pods.get(_key(pod)) or pod
        if latest.metadata.uid == pod.metadata.uid:
            # Requeued as the informer has it: updates that came while it was assumed were not queued.
            info.pod = latest
        self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
        self.events.failed_scheduling(pod, message, controller=profile.scheduler_name)
        if latest.metadata.uid == pod.metadata.uid:
            # At once, not when the status patch comes back: the next cycle must see the nomination.
            self.queue.nominator.add(latest, nominated_node)
        self.conditions.submit(latest, message, reason=reason, nominated_node=nominated_node)

    async def _binding_cycle(self, info: QueuedPodInfo, pod_info: PodInfo, node: str, profile: Profile,
                             state: CycleState, started: float) -> None:
        """The pre-flights and the nomination, Permit's wait, PreBind, Bind, PostBind. Every way out
        but a bound pod unreserves, forgets the assumed pod and hands it to the failure handler: an
        assumed pod never expires, so a path that skipped this would keep the node's room taken for
        good."""
        pod = info.pod
        pm = self.metrics.profiles[profile.scheduler_name]
        status: Status | None = Status(Code.ERROR, "binding cycle interrupted")
        bound = False
        at_permit = False
        try:
            status = await self._expect(pod_info, node, profile, state)
            if status is None:
                status = await wait_on_permit(profile.handle.waiting_pods, pod_info)
                at_permit = status is not None
            if status is None:
                status = await run_pre_bind(profile, state, pod_info, node)
            if status is None:
                status = await self._bind(profile, state, pod_info, node)
            bound = status is None
        except Exception as e:
            status = Status(Code.ERROR, f"{type(e).__name__}: {e}")
        finally:
            # Also on cancellation (shutdown): the pod must not stay assumed.
            if not bound:
                self._binding_failed(info, pod_info, node, profile, state,
                                     status or Status(Code.ERROR, "binding cycle interrupted"), started,
                                     at_permit=at_permit)
        if not bound:
            return
        self._scheduled(info, pm, started)
        self.stats.scheduled += 1
        self.queue.done(info.uid)
        self.events.scheduled(pod, node, controller=profile.scheduler_name)
        run_post_bind(profile, state, pod_info, node)
        log.debug("bound", extra={"pod": pod_info.key, "node": node})

    async def _expect(self, pod_info: PodInfo, node: str, profile: Profile, state: CycleState) -> Status | None:
        """NominatedNodeNameForExpectation (on in v1.37): the PreBind plugins' pre-flights, then,
        when PreBind has work or Permit made the pod wait, status.nominatedNodeName set to the
        node, so that others see where the pod is going while it is not bound yet (the apiserver
        clears it when it binds the pod). A failed write is logged and binding goes on; a failed
        pre-flight fails the binding cycle."""
        pod = pod_info.pod
        uid = pod.metadata.uid
        flight = run_pre_bind_pre_flights(profile, state, pod_info, node)
        failed = flight is not None and flight.code != Code.SKIP
        nominate = not failed and (flight is None or will_wait_on_permit(profile.handle.waiting_pods, pod_info))
        if nominate:
            # A nomination an earlier failed cycle left unsent is superseded by this one.
            self.conditions.discard(uid, with_nomination=True)
        # A condition being written lands before anything this cycle writes.
        await self.conditions.settled(uid)
        if failed:
            # Not left waiting at Permit: wait_on_permit, which removes it, is not reached.
            profile.handle.waiting_pods.remove(uid)
            return flight
        if nominate and pod.status.nominated_node_name != node:
            written = await profile.handle.nominate_pod(pod, node)
            if written is not None:
                log.error("Failed to update the nominated node name in the binding cycle",
                          extra={"pod": pod_info.key, "nominatedNodeName": node, "detail": written.message()})
        return None

    async def _bind(self, profile: Profile, state: CycleState, pod_info: PodInfo, node: str) -> Status | None:
        """kube-scheduler's bind: an interested extender that binds goes first, else the Bind plugins."""
        if self.extenders:
            bound, status = await extenders_binding(self.extenders, pod_info.pod, node)
            if bound:
                return status
        return await run_bind(profile, state, pod_info, node)

    def _scheduled(self, info: QueuedPodInfo, pm: ProfileMetrics, started: float) -> None:
        """kube-scheduler's metrics for a bound pod: the attempt (from its cycle's start), the
        attempts it took and the SLI latency from its first entry to activeQ, on the queue's clock."""
        first = info.initial_attempt_timestamp
        sli = None if first is None else self.queue.clock.now() - first
        self.metrics.pod_scheduled(pm, time.perf_counter() - started, info.attempts, sli)

    def _binding_failed(self, info: QueuedPodInfo, pod_info: PodInfo, node: str, profile: Profile,
                        state: CycleState, status: Status, started: float | None = None,
                        at_permit: bool = False) -> None:
        """kube-scheduler's handleBindingCycleError, then its failure handler's informer check.
        `at_permit`: the status is WaitOnPermit's, whose rejection alone is a FitError naming its
        plugin; one from PreBind or Bind is its own message and leaves no rejector."""
        self.stats.bind_failures += 1
        run_unreserve(profile, state, pod_info, node)
        forgotten = self.cache.is_assumed(pod_info)
        if forgotten:
            self.cache.forget_pod(pod_info)
        # The room it held is free again, as if an assigned pod had been deleted: reported with
        # the assumed pod (its node set), after the failure handler for a rejection and then not
        # to the pod itself, as kube-scheduler defers it.
        uid = pod_info.pod.metadata.uid
        objects = (_on_node(pod_info.pod, node), None)
        if forgotten and not status.is_rejected():
            self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE, objects=objects)
        try:
            self._binding_failure_handler(info, pod_info, node, profile, status, started, at_permit)
        finally:
            if forgotten and status.is_rejected():
                self.queue.move_all_to_active_or_backoff(events.ASSIGNED_POD_DELETE,
                                                         pre_check=lambda p: p.metadata.uid != uid, objects=objects)

    def _binding_failure_handler(self, info: QueuedPodInfo, pod_info: PodInfo, node: str, profile: Profile,
                                 status: Status, started: float | None, at_permit: bool) -> None:
        latest = self.pods.get(pod_info.key)
        # Asked on every failure, so the port's record of this pod is spent whatever the status says.
        gone = self.bound_or_gone(pod_info.pod.metadata.uid)
        final = status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and gone
        if final or latest is None or latest.metadata.uid != pod_info.pod.metadata.uid or latest.spec.node_name:
            # Already bound (by us or another), deleted, or replaced: the informer brings the truth.
            log.info("binding skipped", extra={"pod": pod_info.key, "node": node, "detail": status.message()})
            self.queue.done(info.uid)
            return
        log.warning("binding failed", extra={"pod": pod_info.key, "node": node, "detail": status.message()})
        if at_permit and status.is_rejected():
            message = FitError(pod_info, 1, Diagnosis(node_to_status={node: status})).message()
            self._failed(info, profile, message, "Unschedulable", started=started,
                         rejectors=(frozenset({status.plugin}), frozenset()))
            return
        self._failed(info, profile, status.message(), "Unschedulable" if status.is_rejected() else "SchedulerError",
                     started=started)


def _failure(pod: PodInfo, node: str, status: Status) -> tuple[str, str, Diagnosis | None]:
    """(message, reason, diagnosis) for a pod Reserve or Permit turned away on the node chosen: a
    rejection reads like kube-scheduler's FitError over the one node, with its plugin in the
    diagnosis; an error is its message, with no diagnosis."""
    if status.is_rejected():
        diagnosis = Diagnosis(node_to_status={node: status})
        diagnosis.add_plugin_status(status)
        return FitError(pod, 1, diagnosis).message(), "Unschedulable", diagnosis
    return status.message(), "SchedulerError", None


def _of(diagnosis: Diagnosis) -> Rejectors:
    return frozenset(diagnosis.unschedulable_plugins), frozenset(diagnosis.pending_plugins)


def _on_node(pod: Pod, node: str) -> Pod:
    """The assumed pod, as kube-scheduler reports it when it forgets it: its node set."""
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"
