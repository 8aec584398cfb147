"""The shadow's loop: the informers `kubesched run` has fill a cache as the scheduler's handlers
would; when a pod of the watched scheduler goes from no node to a node, it is classified on the
cache as it is at that moment, which does not hold the pod yet (the state just before that bind),
and only then added. Binds seen before every informer has synced are taken in unjudged: the cache
may lack nodes then.

Nothing is written: the profiles' handle keeps its default ports, which refuse every write.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import IO, Any

import orjson

from kubesched.api import ApiClient, Handlers, TaskSet
from kubesched.backend.cache.cache import Cache
from kubesched.config.types import SchedulerConfig
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import Profile
from kubesched.metrics import SHADOW_VERDICTS, ShadowMetrics
from kubesched.model.objects import Node, Pod
from kubesched.scheduler.profiles import build_profiles, read_only_handle
from kubesched.scheduler.sources import ClusterSources
from kubesched.tools.shadow.classify import Verdict, classify

log = logging.getLogger("kubesched.tools.shadow")


class Tally:
    """Counts by verdict, and the summary line logged on exit and on SIGUSR1."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, v: Verdict) -> None:
        self.counts[v.verdict] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> dict[str, Any]:
        total = self.total
        agree = self.counts["same"] + self.counts["tie"]
        return {"binds": total, **{v: self.counts[v] for v in SHADOW_VERDICTS},
                "agreement": round(agree / total, 4) if total else None}


def record(v: Verdict) -> dict[str, Any]:
    """One verdict as a JSON line (the --disagreements file)."""
    return {"pod": v.pod, "verdict": v.verdict, "node": v.node, "nodeTotal": v.node_total,
            "best": list(v.best), "bestTotal": v.best_total, "message": v.message}


class Shadow:
    def __init__(self, client: ApiClient, config: SchedulerConfig, *, scheduler_name: str = "default-scheduler",
                 profile_name: str | None = None, out_of_tree: Iterable[PluginSpec] = (),
                 disagreements: IO[bytes] | None = None, metrics: ShadowMetrics | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.scheduler_name = scheduler_name
        self.config = config
        self.cache = Cache()
        self.sources = sources = ClusterSources(client)
        profiles = build_profiles(config, sources, read_only_handle(self.cache.snapshot, sources, clock), out_of_tree)
        if profile_name is not None and profile_name not in profiles:
            raise ValueError(f"no profile {profile_name!r}; the profiles are: {', '.join(profiles)}")
        self.profile: Profile = profiles[profile_name] if profile_name else next(iter(profiles.values()))
        self.metrics = metrics or ShadowMetrics()
        self.tally = Tally()
        self.disagreements = disagreements
        self.ready = asyncio.Event()
        self._clock = clock
        self._tasks = TaskSet()
        sources.nodes.handler = Handlers(self._node_added, self._node_updated, self._node_deleted)
        sources.pods.handler = Handlers(self._pod_added, self._pod_updated, self._pod_deleted)

    async def run(self) -> None:
        """Informers until cancelled; `ready` once all have synced."""
        for informer in self.sources.all:
            self._tasks.spawn(informer.run(), name=informer.name)
        await asyncio.gather(*(i.wait_synced() for i in self.sources.all))
        log.info("shadow watching binds", extra={"scheduler": self.scheduler_name,
                                                 "profile": self.profile.scheduler_name,
                                                 "nodes": self.cache.node_count, "pods": self.cache.pod_count})
        self.ready.set()
        await asyncio.Event().wait()

    def health(self, limit: float = 60.0) -> str | None:
        """Why the shadow cannot judge (an informer failing with errors waiting will not mend for
        longer than `limit` seconds), or None; /healthz fails with it."""
        now = self._clock()
        for informer in self.sources.all:
            since = informer.failing_fatally_since
            if since is not None and now - since > limit:
                return f"{informer.name} has failed for {now - since:.0f}s: {informer.last_error}"
        return None

    async def stop(self) -> None:
        await self._tasks.cancel()

    # --- handlers ---------------------------------------------------------------------------------

    def _node_added(self, node: Node) -> None:
        self.cache.add_node(node)

    def _node_updated(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)

    def _node_deleted(self, node: Node) -> None:
        self.cache.remove_node(node.metadata.name)

    def _pod_added(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.add_pod(pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        if not new.spec.node_name:
            return
        if not old.spec.node_name:
            if self.ready.is_set() and new.spec.scheduler_name == self.scheduler_name:
                self.judge(new)
            self.cache.add_pod(new)
        else:
            self.cache.update_pod(new)

    def _pod_deleted(self, pod: Pod) -> None:
        if pod.spec.node_name:
            self.cache.remove_pod(pod)

    # --- the verdict ------------------------------------------------------------------------------

    def judge(self, pod: Pod) -> Verdict:
        started = time.perf_counter()
        try:
            v = classify(self.profile, self.cache.snapshot(), pod, pod.spec.node_name,
                         percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score)
        except Exception as exc:
            # A bug must cost one verdict, not the shadow.
            log.exception("shadow evaluation failed", extra={"pod": pod.key})
            v = Verdict(pod.key, pod.spec.node_name, "error", message=f"{type(exc).__name__}: {exc}")
        self.metrics.seconds.observe(time.perf_counter() - started)
        self.metrics.decided(v.verdict, self.scheduler_name)
        if v.verdict == "different" and v.best_total is not None and v.node_total is not None:
            self.metrics.score_gap.observe(v.best_total - v.node_total)
        self.tally.add(v)
        line = record(v)
        # `message` is a LogRecord attribute: logged as `detail`.
        log.info("shadow verdict", extra={**{k: v for k, v in line.items() if k != "message"},
                                          "detail": v.message})
        if self.disagreements is not None and not v.agrees:
            self.disagreements.write(orjson.dumps(line) + b"\n")
            self.disagreements.flush()
        return v

    def log_summary(self, why: str) -> None:
        log.info(f"shadow summary ({why})", extra=self.tally.summary())
