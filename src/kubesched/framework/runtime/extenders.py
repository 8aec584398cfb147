"""The scheduling cycle with extenders (schedule_one.go's findNodesThatPassExtenders and
prioritizeNodes, extendersBinding; preemption.go's callExtenders).

Calling an extender means awaiting it, so this cycle is a coroutine; `schedule_pod` stays the
synchronous cycle, unchanged, for a scheduler without extenders. The synchronous parts (PreFilter
and Filter, then PreScore and Score) each run without a pause; the cache's snapshot may take
informer updates between them, as kube-scheduler's cache moves on while an extender answers.

What kube-scheduler does that shows here:
- Filter plugins first, over the adaptive sample (every node wanted when an extender filters, even
  with no Score plugin), then each interested extender in turn on what the previous one kept. An
  extender's rejections become the nodes' statuses (FailedAndUnresolvableNodes wins over
  FailedNodes); when extenders dropped any node, the attempt records the "Extender" plugin, so the
  pod comes back on any cluster event. An error fails the cycle unless the extender is ignorable.
- The nodes an extender that does not cache nodes returns are new NodeInfos of the Node objects it
  sent back: the Score plugins see them without pods (kube-scheduler's NewNodeInfo + SetNode).
- Prioritize runs on every interested extender at once; an error only loses that extender's scores.
  A node's extender score is score * weight * 10, and every node an extender scored draws a random
  tie-breaker (Randomizer), so equal totals among them are broken at random.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Mapping, Sequence

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import (
    EXTENDER_NAME,
    Extender,
    ExtenderError,
    Victims,
    extender_score,
    go_quote,
    wrap_int64,
)
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.interface import Rows
from kubesched.framework.runtime.filtering import find_feasible
from kubesched.framework.runtime.nominated import run_filters_with_nominated_pods, yielded_to
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import (
    NodeCursor,
    ScheduleResult,
    _candidates,
    num_feasible_nodes_to_find,
    score_nodes,
    select_host,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod

log = logging.getLogger(__name__)


async def find_nodes_that_pass_extenders(extenders: Sequence[Extender], pod: Pod, feasible: list[NodeInfo],
                                         statuses: dict[str, Status]) -> list[NodeInfo]:
    """findNodesThatPassExtenders: the nodes every interested extender kept, each extender given what
    the previous one kept; rejected nodes get their statuses. Raises ExtenderError from an extender
    that is not ignorable."""
    for ext in extenders:
        if not feasible:
            break
        if not ext.is_interested(pod):
            continue
        try:
            result = await ext.filter(pod, feasible)
        except ExtenderError as exc:
            if ext.is_ignorable():
                log.info("Skipping extender as it returned error and has ignorable flag set",
                         extra={"extender": ext.name(), "err": str(exc)})
                continue
            raise
        for name, msg in result.failed_and_unresolvable.items():
            statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
        for name, msg in result.failed.items():
            if name in result.failed_and_unresolvable:
                continue
            statuses[name] = Status(Code.UNSCHEDULABLE, msg)
        feasible = result.nodes
    return feasible


async def prioritize_with_extenders(extenders: Sequence[Extender], pod: Pod,
                                    nodes: Sequence[NodeInfo]) -> dict[str, int]:
    """The extenders' part of prioritizeNodes: each node name any interested extender scored, with the
    sum of its scaled scores. The extenders are asked concurrently; one that fails gives no scores."""
    asked = [ext for ext in extenders if ext.is_interested(pod)]
    if not asked:
        return {}
    answers = await asyncio.gather(*(ext.prioritize(pod, nodes) for ext in asked), return_exceptions=True)
    totals: dict[str, int] = {}
    for ext, answer in zip(asked, answers, strict=True):
        if isinstance(answer, BaseException):
            if not isinstance(answer, ExtenderError):
                raise answer
            log.debug("Failed to run extender's priority function. No score given by this extender.",
                      extra={"error": str(answer), "pod": f"{pod.metadata.namespace}/{pod.metadata.name}",
                             "extender": ext.name()})
            continue
        scores, weight = answer
        for host, score in scores:
            totals[host] = wrap_int64(totals.get(host, 0) + extender_score(score, weight))
    return totals


def _scoring_view(snapshot: Snapshot, nodes: Sequence[NodeInfo]) -> tuple[Snapshot, Rows]:
    """Where the Score plugins read the nodes: their rows in the snapshot, in the given order, when
    they are the snapshot's own; else a snapshot of just these nodes (what an extender sent back)."""
    rows: list[int] = []
    for ni in nodes:
        r = snapshot.index.get(ni.name)
        if r is None or snapshot.node_infos[r] is not ni:
            view = Snapshot(nodes)
            return view, view.all_rows
        rows.append(r)
    return snapshot, np.array(rows, dtype=np.intp)


async def _evaluate_nominated_node(profile: Profile, extenders: Sequence[Extender], state: CycleState,
                                   pod: PodInfo, snapshot: Snapshot, diagnosis: Diagnosis) -> list[NodeInfo]:
    """evaluateNominatedNode with extenders: the nominated node if the filters and then the extenders
    keep it; an error (of a plugin or an extender) only skips it."""
    name = pod.pod.status.nominated_node_name
    r = snapshot.index.get(name) if name else None
    if r is None:
        return []
    ni = snapshot.node_infos[r]
    s = run_filters_with_nominated_pods(profile, state, pod, ni, yielded_to(profile.handle.nominator, name, pod))
    if s is not None:
        if s.is_rejected():
            diagnosis.node_to_status[name] = s
            diagnosis.add_plugin_status(s)
        return []
    try:
        return await find_nodes_that_pass_extenders(extenders, pod.pod, [ni], diagnosis.node_to_status)
    except ExtenderError as exc:
        log.error("Evaluation failed on nominated node", extra={"pod": pod.key, "node": name, "err": str(exc)})
        return []


def needs_every_feasible_node(profile: Profile, extenders: Sequence[Extender]) -> bool:
    """hasExtenderFilters || hasScoring: else the search stops at the first feasible node."""
    return bool(profile.score) or any(e.is_filter() or e.is_prioritizer() for e in extenders)


async def schedule_pod_with_extenders(profile: Profile, snapshot: Snapshot, pod: PodInfo, *,
                                      extenders: Sequence[Extender], rng: random.Random, cursor: NodeCursor,
                                      percentage_of_nodes_to_score: int = 0,
                                      state: CycleState | None = None) -> ScheduleResult | FitError:
    """schedule_pod, with the extenders called as kube-scheduler calls them. Raises SchedulingError
    when a plugin errs or an extender that is not ignorable fails (its error is the message)."""
    if state is None:
        state = CycleState()
    found = _candidates(profile, state, pod, snapshot)
    if isinstance(found, FitError):
        return found
    rows, diagnosis = found
    feasible = await _evaluate_nominated_node(profile, extenders, state, pod, snapshot, diagnosis)
    if not feasible:
        percentage = profile.percentage_of_nodes_to_score
        if percentage is None:
            percentage = percentage_of_nodes_to_score
        want = num_feasible_nodes_to_find(percentage, len(rows)) if needs_every_feasible_node(profile, extenders) else 1
        start = cursor.next_start_node_index % len(rows) if len(rows) else 0
        found_rows, processed = find_feasible(profile, state, pod, snapshot, rows, want, start, diagnosis,
                                              statuses_on_success=True)
        cursor.next_start_node_index = (cursor.next_start_node_index + processed) % snapshot.n
        passed = [snapshot.node_infos[r] for r in found_rows.tolist()]
        try:
            feasible = await find_nodes_that_pass_extenders(extenders, pod.pod, passed, diagnosis.node_to_status)
        except ExtenderError as exc:
            raise SchedulingError(Status(Code.ERROR, str(exc))) from exc
        if len(feasible) != len(passed):
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
    if not feasible:
        return FitError(pod, snapshot.n, diagnosis)
    evaluated = len(feasible) + len(diagnosis.node_to_status)
    if len(feasible) == 1:
        return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1)
    view, view_rows = _scoring_view(snapshot, feasible)
    totals, per_plugin = score_nodes(profile, state, pod, view, view_rows)
    extra = await prioritize_with_extenders(extenders, pod.pod, feasible)
    randomizer = None
    if extra:
        summed = totals.tolist()
        draws = [0] * len(feasible)
        for i, ni in enumerate(feasible):
            score = extra.get(ni.name)
            if score is not None:
                summed[i] = wrap_int64(summed[i] + score)
                draws[i] = rng.getrandbits(63)
        totals = np.array(summed, dtype=np.int64)
        randomizer = np.array(draws, dtype=np.int64)
    pick = select_host(totals, randomizer)
    return ScheduleResult(feasible[pick].name, evaluated, len(feasible), view.names, view_rows, totals, per_plugin)


async def extenders_binding(extenders: Sequence[Extender], pod: Pod, node: str) -> tuple[bool, Status | None]:
    """extendersBinding: (True, its outcome) when an interested binder took the pod, (False, None) to
    leave it to the Bind plugins. An ignorable binder that fails passes the pod on."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            await ext.bind(pod, node)
        except ExtenderError as exc:
            if ext.is_ignorable():
                log.info("Skipping extender in bind as it returned error and has ignorable flag set",
                         extra={"extender": ext.name(), "err": str(exc)})
                continue
            return True, Status(Code.ERROR, str(exc))
        return True, None
    return False, None


async def call_extenders(extenders: Sequence[Extender], pod: Pod, victims: Mapping[str, Victims],
                         snapshot: Snapshot) -> dict[str, Victims] | Status:
    """callExtenders: the preemption candidates (node -> victims) every interested extender that
    supports preemption keeps, or the error status that ends the preemption."""
    kept = dict(victims)
    if not extenders or not kept:
        return kept
    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        try:
            answer = await ext.process_preemption(pod, kept, snapshot)
        except ExtenderError as exc:
            if ext.is_ignorable():
                log.info("Skipped extender as it returned error and has ignorable flag set",
                         extra={"extender": ext.name(), "err": str(exc)})
                continue
            return Status(Code.ERROR, str(exc))
        for node, v in list(answer.items()):
            if not v.pods:
                if ext.is_ignorable():
                    del answer[node]
                    log.info("Ignored node for which the extender didn't report victims",
                             extra={"node": node, "extender": ext.name()})
                    continue
                return Status(Code.ERROR, f"expected at least one victim pod on node {go_quote(node)}")
        kept = answer
        if not kept:
            break
    return kept
