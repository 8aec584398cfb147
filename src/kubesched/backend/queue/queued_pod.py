"""A pod plus the queue's bookkeeping about it (kube-scheduler's QueuedPodInfo)."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from kubesched.model.objects import Pod


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod: Pod
    # When the pod was added or last came back after a failed attempt; PrioritySort's tie-breaker
    # and the start of its backoff.
    timestamp: float
    # The first time the pod entered activeQ; feeds the scheduling-SLI metric.
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    # Set by the scheduler from the FitError before requeueing; empty means the attempt failed
    # with an error rather than a rejection, which decides error-backoff vs. unschedulable.
    # Replaced, never changed in place: one shared empty set, not two new ones a queued pod
    # (~400 B a pod, 20 MB with 50,000 pending: bench/list_decode.py --pending).
    unschedulable_plugins: Set[str] = frozenset()
    pending_plugins: Set[str] = frozenset()
    # The scheduling cycle in which this pod was last popped.
    scheduling_cycle: int = 0
    backoff_expiration: float | None = None
    flush_timestamp: float | None = None
    was_flushed_from_unschedulable: bool = False
    # Held back by a PreEnqueue plugin (e.g. SchedulingGates): waits with the unschedulable pods
    # for an event that plugin registered, and is not counted as unschedulable.
    gated: bool = False

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid

    @property
    def priority(self) -> int:
        return self.pod.spec.priority

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"

    def rejected(self) -> bool:
        return bool(self.unschedulable_plugins or self.pending_plugins)
