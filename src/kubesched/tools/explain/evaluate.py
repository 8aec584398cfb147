"""The pure evaluation behind `kubesched explain`: a Profile, a Snapshot and a PodInfo in, an
Explanation out, with no I/O.

The decision itself — the FailedScheduling message, the node a cycle picks — comes from
`schedule_pod`, and the reported filter of each node, the feasible set and the scores from the
cycle's own PreFilter, search and scoring functions, run over every node instead of a sample; so
an explanation cannot drift from a decision. What the cycle does not compute, this adds: the
verdict of every filter plugin on every node (the cycle stops at the first that fails), and each
score before normalisation.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.interface import FilterPlugin, Rows, Scores

# The cycle's own steps: the explanation must run exactly the code a decision runs.
from kubesched.framework.runtime.filtering import find_feasible
from kubesched.framework.runtime.framework import can_dry_run_post_filter, dry_run_post_filter
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import (
    NodeCursor,
    candidate_rows,
    num_feasible_nodes_to_find,
    run_pre_filter,
    schedule_pod,
    score_nodes,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.tools.explain.model import FILTER, PRE_FILTER, Explanation, NodeExplanation, PluginScore, Verdict

Normalizer = Callable[[CycleState, PodInfo, Scores], Scores]


def explain(profile: Profile, snapshot: Snapshot, pod: PodInfo, *,
            percentage_of_nodes_to_score: int = 0) -> Explanation:
    """Every node's filter verdicts and, if feasible, scores; the best nodes or the message.

    Raises SchedulingError when a plugin errs, as the cycle does (kubesched then reports the
    error instead of a placement)."""
    original = pod.pod
    cycle_state = CycleState()
    decision = schedule_pod(profile, snapshot, PodInfo(original), rng=random.Random(0), cursor=NodeCursor(),
                            percentage_of_nodes_to_score=percentage_of_nodes_to_score, state=cycle_state)
    dry_run = isinstance(decision, FitError) and can_dry_run_post_filter(profile)
    if dry_run:
        # The message is then the whole one kubesched writes.
        assert isinstance(decision, FitError)
        dry_run_post_filter(profile, cycle_state, PodInfo(original), decision, snapshot)
    out = Explanation(pod=pod.key, profile=profile.scheduler_name, nodes=[], selected=[],
                      message=decision.message() if isinstance(decision, FitError) else "",
                      pre_filter=_pre_filter_verdicts(profile, snapshot, PodInfo(original)))
    if isinstance(decision, FitError) and profile.post_filter and not dry_run:
        out.notes.append("PostFilter plugins (" + ", ".join(pl.name for pl in profile.post_filter) + ") are not run "
                         "here: they may preempt; the message kubesched writes adds what they say.")
    if snapshot.n == 0:
        return out
    state = CycleState()
    info = PodInfo(original)
    result, error = run_pre_filter(profile, state, info, snapshot)
    if error is not None:
        _rejected_at_pre_filter(out, snapshot, error)
        return out
    rows = candidate_rows(snapshot, result)
    diagnosis = Diagnosis()
    # The cycle's search over every candidate: its feasible set and each rejected node's status.
    feasible, _ = find_feasible(profile, state, info, snapshot, rows, len(rows), 0, diagnosis,
                                statuses_on_success=True)
    percentage = profile.percentage_of_nodes_to_score
    if percentage is None:
        percentage = percentage_of_nodes_to_score
    want = num_feasible_nodes_to_find(percentage, len(rows)) if profile.score else 1
    out.nodes_to_find = want
    sampled = _sampled(snapshot.n, rows, feasible, want)
    per_plugin = _filter_verdicts(profile, state, info, snapshot)
    scores, totals = _scores(out, profile, state, info, snapshot, feasible)
    excluded = _excluded_verdict(state) if result is not None else None
    in_rows = np.zeros(snapshot.n, dtype=np.bool_)
    in_rows[rows] = True
    feasible_set = set(feasible.tolist())
    statuses = diagnosis.node_to_status
    names = snapshot.names
    nodes = out.nodes
    for r, name in enumerate(names):
        verdicts = [column.get(r, passing) for passing, column in per_plugin]
        if not in_rows[r]:
            assert excluded is not None
            verdicts.insert(0, excluded)
        else:
            reported = statuses.get(name)
            if reported is not None:
                verdicts = [_mark(v) if v.plugin == reported.plugin and v.stage == FILTER else v for v in verdicts]
        if r in feasible_set:
            nodes.append(NodeExplanation(name, True, tuple(verdicts), scores[r], totals[r], bool(sampled[r])))
        else:
            nodes.append(NodeExplanation(name, False, tuple(verdicts), sampled=bool(sampled[r])))
    if totals:
        best = max(totals.values())
        out.selected = [names[r] for r in feasible.tolist() if totals[r] == best]
    if not isinstance(decision, FitError):
        out.cycle_pick = decision.suggested_host
    _sampling_notes(out, len(feasible), want, len(rows))
    return out


def _pre_filter_verdicts(profile: Profile, snapshot: Snapshot, pod: PodInfo) -> tuple[Verdict, ...]:
    """What each PreFilter plugin says, every one of them: the cycle stops at the first that
    rejects the pod. On a scratch state, so the cycle's own state is not touched."""
    state = CycleState()
    found: list[Verdict] = []
    for pl in profile.pre_filter:
        r, s = pl.pre_filter(state, pod, snapshot)
        nodes = None if r is None or r.node_names is None else tuple(sorted(r.node_names))
        if s is None:
            found.append(Verdict(pl.name, PRE_FILTER, Code.SUCCESS, node_names=nodes))
        else:
            found.append(Verdict(pl.name, PRE_FILTER, s.code, s.reasons, node_names=nodes))
    return tuple(found)


def _rejected_at_pre_filter(out: Explanation, snapshot: Snapshot, error: FitError) -> None:
    """A PreFilter rejected the pod: no Filter runs, and every node counts with its status."""
    status = error.diagnosis.absent_nodes_status
    plugin = status.plugin or " ".join(sorted(error.diagnosis.unschedulable_plugins))
    reported = Verdict(plugin, PRE_FILTER, status.code, status.reasons, reported=True)
    others = tuple(v for v in out.pre_filter if v.failed and v.plugin != plugin)
    filters = (reported, *others)
    out.nodes = [NodeExplanation(name, False, filters) for name in snapshot.names]
    out.notes.append(f"PreFilter plugin {plugin} rejected the pod, so no Filter plugin runs on any node.")


def _excluded_verdict(state: CycleState) -> Verdict:
    """The status the cycle gives nodes a PreFilterResult left out (schedule_pod's absent nodes)."""
    plugins = " ".join(state.get("__prefilter_plugins__") or [])
    return Verdict(plugins, PRE_FILTER, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                   (f"node(s) didn't satisfy plugin(s) [{plugins}]",), reported=True)


def _mark(v: Verdict) -> Verdict:
    return dataclasses.replace(v, reported=True)


def _filter_verdicts(profile: Profile, state: CycleState, pod: PodInfo,
                     snapshot: Snapshot) -> list[tuple[Verdict, dict[int, Verdict]]]:
    """Per filter plugin in profile order: its verdict where a node passes, and by row where it
    does not. Batch methods where the plugin has them; verdicts are shared between nodes."""
    methods = profile.methods
    all_rows = snapshot.all_rows
    out: list[tuple[Verdict, dict[int, Verdict]]] = []
    for pl in profile.filter:
        if pl.name in state.skip_filter_plugins:
            out.append((Verdict(pl.name, FILTER, Code.SKIP), {}))
            continue
        passing = Verdict(pl.name, FILTER, Code.SUCCESS)
        batch = methods.filter_batch.get(pl.name)
        if batch is None:
            out.append((passing, _scalar_failures(pl, state, pod, snapshot)))
            continue
        mask = batch(state, pod, snapshot, all_rows)
        failing: Rows = np.zeros(0, dtype=np.intp) if mask is None else np.flatnonzero(~mask)
        statuses_of = methods.filter_statuses.get(pl.name)
        if statuses_of is not None:
            found: list[Status] = statuses_of(state, pod, snapshot, failing) if len(failing) else []
        else:
            infos = snapshot.node_infos
            found = [pl.filter(state, pod, infos[r]) or Status(Code.UNSCHEDULABLE) for r in failing.tolist()]
        out.append((passing, _shared(pl.name, failing.tolist(), found)))
    return out


def _scalar_failures(pl: FilterPlugin, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> dict[int, Verdict]:
    rows: list[int] = []
    found: list[Status] = []
    for r, ni in enumerate(snapshot.node_infos):
        s = pl.filter(state, pod, ni)
        if s is not None and s.code != Code.SUCCESS:
            rows.append(r)
            found.append(s)
    return _shared(pl.name, rows, found)


def _shared(plugin: str, rows: list[int], found: list[Status]) -> dict[int, Verdict]:
    """One Verdict per distinct status: plugins hand the same Status object to many nodes."""
    by_status: dict[int, Verdict] = {}
    out: dict[int, Verdict] = {}
    for r, s in zip(rows, found, strict=True):
        v = by_status.get(id(s))
        if v is None:
            v = by_status[id(s)] = Verdict(plugin, FILTER, s.code, s.reasons)
        out[r] = v
    return out


def _sampled(n: int, rows: Rows, feasible: Rows, want: int) -> np.ndarray[tuple[int], np.dtype[np.bool_]]:
    """Rows a search starting at the first candidate examines before it has `want` feasible nodes."""
    sampled = np.zeros(n, dtype=np.bool_)
    if want > 0 and len(feasible) >= want:
        last = int(np.searchsorted(rows, feasible[want - 1]))
        sampled[rows[:last + 1]] = True
    else:
        sampled[rows] = True
    return sampled


def _scores(out: Explanation, profile: Profile, state: CycleState, pod: PodInfo, snapshot: Snapshot,
            feasible: Rows) -> tuple[dict[int, tuple[PluginScore, ...]], dict[int, int]]:
    """The cycle's PreScore and Score over every feasible node, with each plugin's score caught
    before its normalisation."""
    if not len(feasible):
        return {}, {}
    raw: dict[str, Scores] = {}
    normalizers = profile.methods.normalize_scores

    def recording(name: str) -> Normalizer:
        own: Normalizer | None = normalizers.get(name)

        def normalize(state: CycleState, pod: PodInfo, scores: Scores) -> Scores:
            raw[name] = scores.copy()
            return own(state, pod, scores) if own is not None else scores
        return normalize

    methods = dataclasses.replace(profile.methods,
                                  normalize_scores={pl.name: recording(pl.name) for pl, _ in profile.score})
    totals, per_plugin = score_nodes(dataclasses.replace(profile, methods=methods), state, pod, snapshot, feasible)
    out.skipped_score_plugins = tuple(pl.name for pl, _ in profile.score if pl.name in state.skip_score_plugins)
    weights = [(pl.name, w) for pl, w in profile.score if pl.name in per_plugin]
    columns = [(name, raw[name].tolist(), per_plugin[name].tolist(), w) for name, w in weights]
    scores: dict[int, tuple[PluginScore, ...]] = {}
    for k, r in enumerate(feasible.tolist()):
        scores[r] = tuple(PluginScore(name, raw_col[k], norm_col[k], w) for name, raw_col, norm_col, w in columns)
    return scores, dict(zip(feasible.tolist(), totals.tolist(), strict=True))


def _sampling_notes(out: Explanation, feasible: int, want: int, candidates: int) -> None:
    if feasible == 1:
        out.notes.append("Only one node is feasible: the cycle picks it without scoring.")
    elif not out.nodes_to_find or feasible <= want:
        return
    else:
        out.notes.append(
            f"The cycle stops its search at {want} feasible nodes of {candidates} (percentageOfNodesToScore) "
            "and scores only those, normalising over them; it starts where the previous cycle stopped. "
            f"Here all {feasible} feasible nodes are scored together; 'sampled' marks what a search from "
            f"the first node examines, which picks {out.cycle_pick or '-'}.")
