"""What the scheduler holds, checked against what its informers hold: kube-scheduler's cache
comparer (`backend/cache/debugger/comparer.go`, run on SIGUSR2) and the sizes of every internal map.

The comparison answers "is anything stale?" after a fault: a node or a bound pod the cache keeps
although the informer no longer has it (redundant), or one the informer has and the cache lacks
(missed); a queued pod that is gone, bound or no longer ours, or one of ours that is pending and
not queued. kube-scheduler logs the mismatches; kubesched logs them on SIGUSR2 too and serves them,
with the sizes, as JSON at /debug/kubesched/state (--serve-address), so a test or an operator can
watch the maps stay flat over a long run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kubesched.backend.cache.cache import Cache
from kubesched.backend.queue import SchedulingQueue, eligible
from kubesched.model.objects import Node, Pod

log = logging.getLogger("kubesched")

# At most this many uids or names of each kind of mismatch are listed (the counts are always whole).
SHOWN = 20


@dataclass
class Mismatch:
    count: int = 0
    examples: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, keys: set[str], describe: Mapping[str, str] | None = None) -> Mismatch:
        shown = sorted(keys)[:SHOWN]
        return cls(len(keys), [describe.get(k, k) if describe else k for k in shown])


@dataclass
class Comparison:
    """missed: the informer has it, the scheduler does not; redundant: the other way round."""

    missed_nodes: Mismatch
    redundant_nodes: Mismatch
    missed_pods: Mismatch  # bound pods the cache does not hold
    redundant_pods: Mismatch  # pods the cache holds that are not bound (nor being bound) in the informer
    missed_queued: Mismatch  # pending pods of ours neither queued, in flight nor being bound
    redundant_queued: Mismatch  # queued pods that are gone, bound, or not ours any more

    @property
    def ok(self) -> bool:
        return not any(m.count for m in (self.missed_nodes, self.redundant_nodes, self.missed_pods,
                                         self.redundant_pods, self.missed_queued, self.redundant_queued))

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, **asdict(self)}


def _pod_uid(pod: Pod) -> str:
    # The cache keys a pod without a uid (only in hand-made objects) by namespace/name.
    return pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"


def compare(cache: Cache, queue: SchedulingQueue, pods: Collection[Pod], nodes: Collection[Node],
            names: Collection[str]) -> Comparison:
    """The cache and the queue against the informers' pods and nodes (their stores' values)."""
    listed_nodes = {n.metadata.name for n in nodes}
    cached_nodes = set(cache.node_names())
    by_uid = {_pod_uid(p): p for p in pods}
    label = {uid: f"{p.metadata.namespace}/{p.metadata.name}" for uid, p in by_uid.items()}
    bound = {uid for uid, p in by_uid.items() if p.spec.node_name}
    cached = cache.pod_nodes()
    assumed = {uid for uid in cached if cache.is_assumed_uid(uid)}
    # An assumed pod is legitimate while the informer still shows it pending (its bind is in flight).
    redundant_pods = {uid for uid in cached
                      if uid not in bound and not (uid in assumed and uid in by_uid)}
    wrong_node = {uid for uid in bound & set(cached) if cached[uid] != by_uid[uid].spec.node_name}
    ours_pending = {uid for uid, p in by_uid.items() if eligible(p, names)}
    queued = {info.uid for info in queue.pending_pods()}
    busy = queued | set(queue.in_flight_uids()) | assumed
    return Comparison(
        missed_nodes=Mismatch.of(listed_nodes - cached_nodes),
        redundant_nodes=Mismatch.of(cached_nodes - listed_nodes),
        missed_pods=Mismatch.of((bound - set(cached)) | wrong_node, label),
        redundant_pods=Mismatch.of(redundant_pods, label),
        missed_queued=Mismatch.of(ours_pending - busy, label),
        redundant_queued=Mismatch.of(queued - ours_pending, label),
    )


def log_comparison(comparison: Comparison) -> None:
    """As kube-scheduler's comparer: one line per kind of mismatch found, or one saying none."""
    if comparison.ok:
        log.info("cache comparer: cache and queue agree with the informers")
        return
    log.warning("cache mismatch", extra={k: v for k, v in comparison.as_dict().items()
                                         if isinstance(v, dict) and v.get("count")})


@dataclass
class DebugState:
    """Everything the state page shows, gathered at request time (never on the scheduling path)."""

    sizes: Callable[[], dict[str, int]]
    comparison: Callable[[], Comparison]
    extra: dict[str, Callable[[], Any]] = field(default_factory=dict)

    def page(self) -> dict[str, Any]:
        return {"sizes": self.sizes(), "comparison": self.comparison().as_dict(),
                **{k: fn() for k, fn in self.extra.items()}}
