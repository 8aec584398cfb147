"""The scheduling queue: activeQ, backoffQ and unschedulable pods, as in kube-scheduler's
``backend/queue``. Pure and clock-injected, so tests drive time with :class:`FakeClock`."""

from kubesched.backend.queue.clock import Clock, FakeClock, MonotonicClock
from kubesched.backend.queue.eligibility import eligible
from kubesched.backend.queue.interest import PluginEvents
from kubesched.backend.queue.nominator import PodNominator
from kubesched.backend.queue.queued_pod import QueuedPodInfo
from kubesched.backend.queue.scheduling_queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, SchedulingQueue
from kubesched.framework.events import ClusterEvent

__all__ = [
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "Clock",
    "ClusterEvent",
    "FakeClock",
    "MonotonicClock",
    "PluginEvents",
    "PodNominator",
    "QueuedPodInfo",
    "SchedulingQueue",
    "eligible",
]
