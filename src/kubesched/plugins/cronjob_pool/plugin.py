"""CronJobPool: node pools dedicated to some pods (by default: CronJob pods), with no change to any workload.

A pod belongs to the first pool (in config order) that it matches:
- the annotation `kubesched.io/pool: <pool name>` puts it in that pool; `kubesched.io/pool: none`
  keeps it out of every pool (a value naming no pool leaves it Pending with a clear reason);
- otherwise its controller chain (`ownerKinds`, default Pod -> Job -> CronJob, resolved from the Job
  informer, see pool_ownership), its labels (`selector`) or its `spec.nodeSelector` (`nodeSelector`,
  for the seed's `tier: cronjob` pods).
A node belongs to a pool when its labels match the pool's `nodes` selector (default
`kubesched.io/pool=<name>`); nodes matching `excludedNodes` get no pod at all.

Filter, per node (UnschedulableAndUnresolvable: no preemption can change a node's labels):
- excluded node: "node(s) were excluded from scheduling";
- a pool pod on a node outside its pool, when its pool has `fallback: never` (or has room, with
  `fallback: general`): "node(s) were outside the pod's <pool> pool";
- any other pod on a node of an `exclusive` pool: "node(s) were reserved for the <pool> pool".
With `fallback: general`, PreFilter checks whether any node of the pool could take the pod (cordon,
taints, required node affinity, free cpu/memory/ephemeral-storage/extended resources and pod slots);
if none can, the pod may use general nodes for this attempt. A pod of a gang (a Workload API PodGroup
through spec.schedulingGroup, or scheduler-plugins' `scheduling.x-k8s.io/pod-group` label) never
falls back: that check is per pod, so its first members would take the pool's room and the last ones
general nodes; it keeps to its pool, so the gang lands whole in the pool or waits whole.
PreFilter keeps a pod whose Job is not known yet Unschedulable ("waiting for the pod's owner Job
ns/name") until the Job's Add event.

The pool's taint (default `kubesched.io/pool=<name>:NoSchedule`) keeps kube-scheduler and other
schedulers off the pool's nodes. kubesched tolerates it for the pool's own pods only: PreFilter gives
the cycle's PodInfo a copy of the pod with that toleration added (the informer's object and the API
are untouched), so TaintToleration, and every plugin that reads tolerations, treats the pod as if its
spec tolerated the taint. Put CronJobPool before TaintToleration in the filter order so that a
non-pool pod on a tainted pool node is told "reserved for the <pool> pool", not "untolerated taint".
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    JOB_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Registration,
)
from kubesched.framework.field_errors import ConfigError
from kubesched.framework.interface import Bools, PreFilterResult, Rows
from kubesched.framework.pod_groups import pod_group_name
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.coscheduling import POD_GROUP_LABEL
from kubesched.model.objects import Job, Pod, Taint, Toleration
from kubesched.plugins.cronjob_pool.config import (
    NO_POOL,
    POOL_LABEL,
    PoolArgs,
    PoolSpec,
    typed,
    validate,
)
from kubesched.plugins.cronjob_pool.ownership import (
    JOB,
    Clock,
    JobLookup,
    OwnerChain,
    StaticJobs,
    Waiting,
    controller_of,
    owner_chain,
)
from kubesched.plugins.helper.label_selector import EQUALS, Selector
from kubesched.plugins.helper.node_selector import LabelRequirement, required_node_affinity
from kubesched.plugins.helper.tolerations import first_untolerated, tolerates_taint

NAME = "CronJobPool"
POOL_ANNOTATION = POOL_LABEL  # kubesched.io/pool: <pool name> | none
ERR_REASON_EXCLUDED = "node(s) were excluded from scheduling"
ERR_REASON_RESERVED = "node(s) were reserved for the {pool} pool"
ERR_REASON_OUTSIDE = "node(s) were outside the pod's {pool} pool"
ERR_REASON_WAITING = "waiting for the pod's owner Job {job}"
ERR_REASON_UNKNOWN_POOL = 'pod annotation kubesched.io/pool names no configured pool: "{value}"'
_STATE_KEY = "PreFilter" + NAME

# Filter verdict codes, per node; reserved-for-pool-q is _RESERVED + q.
_PASS, _EXCLUDED, _OUTSIDE, _RESERVED = 0, 1, 2, 3
Codes = npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class _PodState:
    pool: int  # index in the pools, or -1: not a pool pod
    pool_only: bool  # a pool pod kept to its pool's nodes (fallback never, or the pool has room)


@dataclass(frozen=True, slots=True)
class UnknownPool:
    value: str


Classification = int | Waiting | UnknownPool


class _Selector:
    """A LabelSelector over node labels, one node at a time or as a column mask."""

    __slots__ = ("_reqs", "_selector")

    def __init__(self, selector: Selector) -> None:
        self._selector = selector
        self._reqs = tuple(LabelRequirement(r.key, "In" if r.op == EQUALS else r.op, tuple(sorted(r.values)))
                           for r in selector.requirements)

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self._selector.matches(labels)

    def mask(self, snapshot: Snapshot, rows: Rows) -> Bools:
        result: Bools | None = None
        for r in self._reqs:
            m = r.mask(snapshot, rows)
            result = m if result is None else np.logical_and(result, m, out=result)
        return np.ones(len(rows), dtype=np.bool_) if result is None else result


def _toleration_for(taint: Taint) -> Toleration:
    return Toleration(key=taint.key, operator="Equal", value=taint.value, effect=taint.effect)


def tolerate_in_cycle(pod: PodInfo, taint: Taint) -> None:
    """Let this cycle see the pod as tolerating `taint`: a copy of the pod replaces PodInfo.pod, so the
    informer's object, shared with the queue and the cache, is never changed."""
    if tolerates_taint(pod.tolerations, taint):
        return
    spec = pod.pod.spec
    new_spec = msgspec.structs.replace(spec, tolerations=[*spec.tolerations, _toleration_for(taint)])
    pod.pod = msgspec.structs.replace(pod.pod, spec=new_spec)


class CronJobPool:
    name = NAME

    # Pool membership follows node labels; whether a pool has room (fallback: general) follows its
    # nodes' taints, cordon and allocatable; a pod waiting for its owner Job waits for the Job's Add.
    # A pool filling up (an assigned pod added) could also let a pod fall back to general nodes:
    # not registered, as this plugin has no AssignedPodAdd queueing hint to keep each bind from
    # requeueing every pod it rejected; such a pod waits for the periodic flush.
    _EVENTS = (ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                            | ActionType.UPDATE_NODE_TAINT | ActionType.UPDATE_NODE_ALLOCATABLE),
               ClusterEventWithHint(JOB_ADD, lambda pod, old, new: after_job_added(pod, new)))

    def events_to_register(self) -> tuple[Registration, ...]:
        return self._EVENTS

    def __init__(self, args: PoolArgs, jobs: JobLookup, *, clock: Clock = time.time) -> None:
        self.args = args
        self.pools = args.pools
        self.jobs = jobs
        self._clock = clock
        self._index = {p.name: i for i, p in enumerate(self.pools)}
        self._nodes = tuple(_Selector(p.nodes) for p in self.pools)
        self._excluded = _Selector(args.excluded_nodes) if args.excluded_nodes is not None else None
        self._exclusive = tuple(i for i, p in enumerate(self.pools) if p.exclusive)
        self._depth = max((len(p.pods.owner_kinds) for p in self.pools), default=0)
        rejected = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        self._excluded_status = Status(rejected, ERR_REASON_EXCLUDED)
        self._outside = [Status(rejected, ERR_REASON_OUTSIDE.format(pool=p.name)) for p in self.pools]
        self._reserved = [Status(rejected, ERR_REASON_RESERVED.format(pool=p.name)) for p in self.pools]

    # --- which pool a pod is in -------------------------------------------------------------------

    def classify(self, pod: Pod) -> Classification:
        """The index of the pod's pool, -1 for none, or why it cannot be told yet."""
        meta = pod.metadata
        value = meta.annotations.get(POOL_ANNOTATION)
        if value is not None:
            if value == NO_POOL:
                return -1
            found = self._index.get(value)
            return UnknownPool(value) if found is None else found
        chain: OwnerChain | Waiting | None = None
        for i, pool in enumerate(self.pools):
            match = pool.pods
            if match.matches_labels_or_selector(meta.labels, pod.spec.node_selector):
                return i
            kinds = match.owner_kinds
            if not kinds:
                continue
            if chain is None:
                chain = owner_chain(pod, self.jobs, depth=self._depth, wait_seconds=self.args.owner_wait_seconds,
                                    clock=self._clock)
            if isinstance(chain, Waiting):
                # The pod's controller is a Job, so a one-kind chain can still be told.
                if len(kinds) > 1:
                    return chain
                if kinds[0] == JOB:
                    return i
            elif chain[:len(kinds)] == kinds:
                return i
        return -1

    def pool_of(self, pod: Pod) -> PoolSpec | None:
        c = self.classify(pod)
        return self.pools[c] if isinstance(c, int) and c >= 0 else None

    # --- PreFilter --------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        c = self.classify(pod.pod)
        if isinstance(c, Waiting):
            return None, Status(Code.UNSCHEDULABLE, ERR_REASON_WAITING.format(job=c.key))
        if isinstance(c, UnknownPool):
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_POOL.format(value=c.value))
        if c < 0:
            if not self._exclusive and self._excluded is None:
                return None, SKIP
            state.write(_STATE_KEY, _PodState(-1, False))
            return None, None
        pool = self.pools[c]
        if pool.taint is not None:
            tolerate_in_cycle(pod, pool.taint)
        pool_only = pool.fallback == "never" or in_gang(pod.pod) or self._pool_has_room(pod, c, snapshot)
        state.write(_STATE_KEY, _PodState(c, pool_only))
        return None, None

    def _pool_has_room(self, pod: PodInfo, pool: int, snapshot: Snapshot) -> bool:
        """Whether a node of the pool could take the pod, as the main filters would see it; decides
        fallback: general before the filters run, so general nodes are used only when needed."""
        all_rows = snapshot.all_rows
        in_pool = self._nodes[pool].mask(snapshot, all_rows)
        if self._excluded is not None:
            in_pool &= ~self._excluded.mask(snapshot, all_rows)
        rows = np.flatnonzero(in_pool)
        if not len(rows):
            return False
        ok = ~snapshot.unschedulable[rows]
        tolerations = pod.tolerations
        groups = [first_untolerated(t, tolerations) is None for t in snapshot.no_schedule.taints]
        ok &= np.array(groups, dtype=np.bool_)[snapshot.no_schedule_group[rows]]
        ok &= required_node_affinity(pod).mask(snapshot, rows)
        ok &= snapshot.pod_count[rows] < snapshot.alloc_pods[rows]
        r = pod.requests
        for want, alloc, used in ((r.milli_cpu, snapshot.alloc_cpu, snapshot.req_cpu),
                                  (r.memory, snapshot.alloc_mem, snapshot.req_mem),
                                  (r.ephemeral_storage, snapshot.alloc_eph, snapshot.req_eph)):
            if want > 0:
                ok &= alloc[rows] - used[rows] >= want
        for name, want in r.scalar.items():
            if want <= 0:
                continue
            alloc_col = snapshot.scalar_allocatable(name)
            if alloc_col is None:
                return False
            used_col = snapshot.scalar_requested(name)
            free = alloc_col[rows] - (used_col[rows] if used_col is not None else 0)
            ok &= free >= want
        return bool(np.count_nonzero(ok))

    # --- Filter -----------------------------------------------------------------------------------

    def _pod_state(self, state: CycleState, pod: PodInfo) -> _PodState:
        found: _PodState | None = state.get(_STATE_KEY)
        if found is not None:
            return found
        c = self.classify(pod.pod)
        return _PodState(c if isinstance(c, int) else -1, True)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        ps = self._pod_state(state, pod)
        code = self._code(ps, node.labels)
        return None if code == _PASS else self._status(code, ps)

    def _code(self, ps: _PodState, labels: Mapping[str, str]) -> int:
        if self._excluded is not None and self._excluded.matches(labels):
            return _EXCLUDED
        if ps.pool >= 0:
            if self._nodes[ps.pool].matches(labels):
                return _PASS
            if ps.pool_only:
                return _OUTSIDE
        for q in self._exclusive:
            if self._nodes[q].matches(labels):
                return _RESERVED + q
        return _PASS

    def _codes(self, ps: _PodState, snapshot: Snapshot, rows: Rows) -> Codes:
        codes = np.zeros(len(rows), dtype=np.int32)
        # Reverse order, so where pools overlap the first one's name wins, as in _code.
        for q in reversed(self._exclusive):
            codes[self._nodes[q].mask(snapshot, rows)] = _RESERVED + q
        if ps.pool >= 0:
            mine = self._nodes[ps.pool].mask(snapshot, rows)
            codes[mine] = _PASS
            if ps.pool_only:
                codes[~mine] = _OUTSIDE
        if self._excluded is not None:
            codes[self._excluded.mask(snapshot, rows)] = _EXCLUDED
        return codes

    def _status(self, code: int, ps: _PodState) -> Status:
        if code == _EXCLUDED:
            return self._excluded_status
        if code == _OUTSIDE:
            return self._outside[ps.pool]
        return self._reserved[code - _RESERVED]

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        ps = self._pod_state(state, pod)
        if rows is snapshot.all_rows:
            # Pool membership follows node labels only: one mask per kind of pod until they change.
            kept = snapshot.by_labels((self, ps.pool, ps.pool_only), lambda: self._passing(ps, snapshot, rows))
            return None if kept is None else kept.copy()
        return self._passing(ps, snapshot, rows)

    def _passing(self, ps: _PodState, snapshot: Snapshot, rows: Rows) -> Bools | None:
        passing = self._codes(ps, snapshot, rows) == _PASS
        return None if np.count_nonzero(passing) == len(passing) else passing

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> list[Status]:
        ps = self._pod_state(state, pod)
        return [self._status(code, ps) if code != _PASS else Status(Code.UNSCHEDULABLE)
                for code in self._codes(ps, snapshot, rows).tolist()]


def in_gang(pod: Pod) -> bool:
    """Whether the pod is scheduled with a group, all or nothing: spec.schedulingGroup names a
    PodGroup, or it carries scheduler-plugins' pod-group label."""
    return pod_group_name(pod) is not None or bool(pod.metadata.labels.get(POD_GROUP_LABEL))


def after_job_added(pod: Pod, job: Job | None) -> QueueingHint:
    """JobAdd's queueing hint: only the pods this Job owns may get through PreFilter now, the ones
    held back until their owner Job was known (a Job changing its owners counts as an Add)."""
    if job is None:
        return QueueingHint.QUEUE_SKIP
    ref = controller_of(pod.metadata)
    if ref is not None and ref.kind == JOB and ref.name == job.metadata.name \
            and pod.metadata.namespace == job.metadata.namespace:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new_cronjob_pool(args: Mapping[str, Any], jobs: JobLookup | None = None, *,
                     clock: Clock = time.time) -> CronJobPool:
    """The plugin, from its pluginConfig args (validated again here, so raw args work too), reading
    Jobs from `jobs`. Without a JobLookup, every Job counts as gone (see pool_ownership)."""
    parsed, errs = validate(args)
    if errs:
        # The same field-path error as the config loader's (ConfigError is a ValueError).
        raise ConfigError(f"{NAME} args", errs)
    return CronJobPool(typed(parsed), jobs if jobs is not None else StaticJobs(), clock=clock)


def new(args: Mapping[str, Any]) -> CronJobPool:
    """The registry's factory signature, with no Job informer: for tools that schedule offline."""
    return new_cronjob_pool(args)
