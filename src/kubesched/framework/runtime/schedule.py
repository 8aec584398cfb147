"""One scheduling cycle's algorithm: PreFilter, Filter, PreScore, Score, select (schedule_one.go).

Filter plugins with a batch path evaluate every candidate node in a few vector operations; the
cycle then replays kube-scheduler's sequential search over them: start at the rotating index,
stop once the adaptive number of feasible nodes is found, and give each rejected node the status
of the first filter (in profile order) that rejected it.

In a cycle sampled for scheduler_plugin_execution_duration_seconds (state.plugin_recorder set),
every plugin call is timed. A batch method (Filter or Score over many nodes in one call) counts as
one call per node it evaluated, each taking an even share of the batch's time, and a batch Filter's
rejections take the code of its statuses in the diagnosis; kube-scheduler times each node's call.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.interface import MAX_NODE_SCORE, PreFilterResult, Rows, Scores
from kubesched.framework.plugin_metrics import timed
from kubesched.framework.runtime.filtering import find_feasible
from kubesched.framework.runtime.nominated import run_filters_with_nominated_pods, yielded_to
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import PodInfo

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring; percentage 0 means adaptive."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class NodeCursor:
    """Where the next cycle starts its search, so successive pods spread over the nodes."""

    next_start_node_index: int = 0


@dataclass
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    # Per-node details, kept as columns and turned into dicts only when asked for.
    _all_names: list[str] = field(default_factory=list, repr=False, compare=False)
    _rows: Rows | None = field(default=None, repr=False, compare=False)
    _totals: Scores | None = field(default=None, repr=False, compare=False)
    _plugin_scores: dict[str, Scores] = field(default_factory=dict, repr=False, compare=False)

    @property
    def _names(self) -> list[str]:
        rows = self._rows.tolist() if self._rows is not None else []
        return [self._all_names[r] for r in rows]

    def total_scores(self) -> dict[str, int]:
        """Final (weighted) score of each scored node; empty when only one node was feasible."""
        if self._totals is None:
            return {}
        return dict(zip(self._names, self._totals.tolist(), strict=True))

    def plugin_scores(self) -> dict[str, dict[str, int]]:
        """Normalized score of each plugin, per node, before weights."""
        return {pl: dict(zip(self._names, s.tolist(), strict=True)) for pl, s in self._plugin_scores.items()}


def run_pre_filter(profile: Profile, state: CycleState, pod: PodInfo,
                    snapshot: Snapshot) -> tuple[PreFilterResult | None, FitError | None]:
    """The cycle's PreFilter: the merged PreFilterResult (None: every node), or the FitError of a
    pod rejected before any Filter runs. Raises SchedulingError when a plugin errs."""
    result: PreFilterResult | None = None
    with_nodes: list[str] = []
    rejected: Status | None = None
    rec = state.plugin_recorder
    for pl in profile.pre_filter:
        r, s = pl.pre_filter(state, pod, snapshot) if rec is None else timed(
            rec, pl.name, "PreFilter", pl.pre_filter, state, pod, snapshot)
        if s is not None and s.code != Code.SUCCESS:
            if s.code == Code.SKIP:
                state.skip_filter_plugins.add(pl.name)
                continue
            s = s.with_plugin(pl.name)
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return None, _pre_filter_error(pod, snapshot, s, set())
            if s.code == Code.UNSCHEDULABLE:
                rejected = s
                continue
            raise SchedulingError(Status(Code.ERROR, f'running PreFilter plugin "{pl.name}": {s.message()}',
                                         plugin=pl.name))
        if r is not None and not r.all_nodes():
            with_nodes.append(pl.name)
            result = r if result is None else result.merge(r)
            if result.node_names is not None and not result.node_names:
                names = sorted(set(with_nodes))
                msg = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1 else
                       f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously")
                status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)
                return None, _pre_filter_error(pod, snapshot, status, set(names))
    if rejected is not None:
        return None, _pre_filter_error(pod, snapshot, rejected, set(with_nodes))
    if result is not None:
        # Remembered for the message about nodes the PreFilter result left out.
        state.write("__prefilter_plugins__", sorted(set(with_nodes)))
    return result, None


def _pre_filter_error(pod: PodInfo, snapshot: Snapshot, status: Status, plugins: set[str]) -> FitError:
    diagnosis = Diagnosis(absent_nodes_status=status, unschedulable_plugins=plugins,
                          pre_filter_msg=status.message())
    diagnosis.add_plugin_status(status)
    return FitError(pod, snapshot.n, diagnosis)


def _absent_nodes_status(state: CycleState) -> Status:
    """The status of the nodes a PreFilterResult left out."""
    plugins = " ".join(state.get("__prefilter_plugins__") or [])
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{plugins}]")


def candidate_rows(snapshot: Snapshot, result: PreFilterResult | None) -> Rows:
    """Rows of the nodes the PreFilterResult lets through, in snapshot order."""
    if result is None or result.node_names is None:
        return snapshot.all_rows
    found = sorted(i for i in (snapshot.index.get(n) for n in result.node_names) if i is not None)
    return np.array(found, dtype=np.intp)


def score_nodes(profile: Profile, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                rows: Rows) -> tuple[Scores, dict[str, Scores]]:
    """PreScore, then each Score plugin over `rows`, normalised: (weighted totals, normalised
    score by plugin). Raises SchedulingError when a plugin errs or a score is out of range."""
    rec = state.plugin_recorder
    for pl in profile.pre_score:
        s = pl.pre_score(state, pod, snapshot, rows) if rec is None else timed(
            rec, pl.name, "PreScore", pl.pre_score, state, pod, snapshot, rows)
        if s is not None and s.code != Code.SUCCESS:
            if s.code == Code.SKIP:
                state.skip_score_plugins.add(pl.name)
                continue
            raise SchedulingError(Status(Code.ERROR, f'running PreScore plugin "{pl.name}": {s.message()}',
                                         plugin=pl.name))
    total = np.zeros(len(rows), dtype=np.int64)
    per_plugin: dict[str, Scores] = {}
    for scorer, weight in profile.score:
        if scorer.name in state.skip_score_plugins:
            continue
        batch = profile.methods.score_batch.get(scorer.name)
        t = rec.now() if rec is not None else 0.0
        if batch is not None:
            scores: Scores = batch(state, pod, snapshot, rows)
        else:
            infos = snapshot.node_infos
            scores = np.fromiter((scorer.score(state, pod, infos[r], snapshot) for r in rows.tolist()),
                                 dtype=np.int64, count=len(rows))
        if rec is not None and len(rows):
            rec.observe(scorer.name, "Score", Code.SUCCESS, (rec.now() - t) / len(rows), len(rows))
        normalize = profile.methods.normalize_scores.get(scorer.name)
        if normalize is not None:
            scores = normalize(state, pod, scores) if rec is None else timed(
                rec, scorer.name, "ScoreExtensionNormalize", normalize, state, pod, scores)
        # One pass: read as unsigned, a negative score is larger than any valid one.
        if len(scores) and (int(scores.view(np.uint64).max()) > MAX_NODE_SCORE if scores.dtype == np.int64
                            else int(scores.min()) < 0 or int(scores.max()) > MAX_NODE_SCORE):
            bad = int(scores.min()) if int(scores.min()) < 0 else int(scores.max())
            raise SchedulingError(Status(
                Code.ERROR, f'applying score defaultWeights on Score plugins: plugin "{scorer.name}" returns an '
                f"invalid score {bad}, it should in the range of [0, {MAX_NODE_SCORE}] after normalizing",
                plugin=scorer.name))
        per_plugin[scorer.name] = scores
        total += scores if weight == 1 else scores * weight
    return total, per_plugin


def _candidates(profile: Profile, state: CycleState, pod: PodInfo,
                snapshot: Snapshot) -> tuple[Rows, Diagnosis] | FitError:
    """PreFilter, then the rows the search may visit and the diagnosis it fills; or the FitError
    when there is no node or PreFilter rejects the pod."""
    if snapshot.n == 0:
        return FitError(pod, 0, Diagnosis())
    result, error = run_pre_filter(profile, state, pod, snapshot)
    if error is not None:
        return error
    diagnosis = Diagnosis()
    if result is not None:
        diagnosis.absent_nodes_status = _absent_nodes_status(state)
    return candidate_rows(snapshot, result), diagnosis


def _evaluate_nominated_node(profile: Profile, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                             diagnosis: Diagnosis) -> str | None:
    """evaluateNominatedNode: a pod nominated by an earlier preemption tries that node first, and
    takes it without scoring when it fits; a rejection there is recorded, an error only skips it."""
    name = pod.pod.status.nominated_node_name
    if not name:
        return None
    r = snapshot.index.get(name)
    if r is None:
        return None
    s = run_filters_with_nominated_pods(profile, state, pod, snapshot.node_infos[r],
                                        yielded_to(profile.handle.nominator, name, pod))
    if s is None:
        return name
    if s.is_rejected():
        diagnosis.node_to_status[name] = s
        diagnosis.add_plugin_status(s)
    return None


def schedule_pod(profile: Profile, snapshot: Snapshot, pod: PodInfo, *, rng: random.Random,
                 cursor: NodeCursor, percentage_of_nodes_to_score: int = 0,
                 state: CycleState | None = None) -> ScheduleResult | FitError:
    """Choose a node for pod, or say why none fits. Raises SchedulingError if a plugin errs.

    `percentage_of_nodes_to_score` is the scheduler-wide value; the profile's own wins when set.
    Equal best totals are not broken at random (select_host): `rng` is for the tie-break among
    nodes an extender scored, and draws nothing while no extender is called.
    """
    if state is None:
        state = CycleState()
    found = _candidates(profile, state, pod, snapshot)
    if isinstance(found, FitError):
        return found
    rows, diagnosis = found
    nominated = _evaluate_nominated_node(profile, state, pod, snapshot, diagnosis)
    if nominated is not None:
        return ScheduleResult(nominated, 1 + len(diagnosis.node_to_status), 1)
    percentage = profile.percentage_of_nodes_to_score
    if percentage is None:
        percentage = percentage_of_nodes_to_score
    want = num_feasible_nodes_to_find(percentage, len(rows)) if profile.score else 1
    start = cursor.next_start_node_index % len(rows) if len(rows) else 0
    feasible, processed = find_feasible(profile, state, pod, snapshot, rows, want, start, diagnosis)
    cursor.next_start_node_index = (cursor.next_start_node_index + processed) % snapshot.n
    # Every examined node is feasible or rejected: kube-scheduler's len(feasible) + len(NodeToStatus).
    evaluated = processed
    if len(feasible) == 0:
        return FitError(pod, snapshot.n, diagnosis)
    names = snapshot.names
    if len(feasible) == 1:
        return ScheduleResult(names[int(feasible[0])], evaluated, 1)
    totals, per_plugin = score_nodes(profile, state, pod, snapshot, feasible)
    pick = select_host(totals)
    return ScheduleResult(names[int(feasible[pick])], evaluated, len(feasible),
                          names, feasible, totals, per_plugin)


def select_host(totals: Scores, randomizer: Scores | None = None) -> int:
    """The position, in `totals` (the feasible nodes in the order the search found them), of the
    node kube-scheduler v1.37.2 takes: NewSortedScoredNodes(list).Pop() (framework/sorted_nodes.go),
    a container/heap Init over the list whose Less puts the higher TotalScore first and, between
    equal totals, the higher Randomizer, which prioritizeNodes draws only for nodes an extender
    scored (schedule_one.go); with no extender it is 0 everywhere, and no tie is random.

    Pop returns the root Init leaves. Init sifts each parent down, last first, swapping it only with
    a child strictly above it, the left child unless the right one is strictly above the left; so
    the root is the first node with the best total in the preorder walk of the implicit tree (node
    i, then the subtree at 2i+1, then the one at 2i+2), not the first in the list: [1, 2, 10, 10]
    gives the fourth. Preorder is the order of the paths from the root, the bits of i+1 after the
    leading 1 (0 left, 1 right), an ancestor before its descendants.

    `randomizer` is each node's Randomizer when extenders scored (0 for the nodes none did): among
    equal totals the higher one wins, and the walk above settles what still ties."""
    best = totals.max()
    ties = np.flatnonzero(totals == best)
    if randomizer is not None and len(ties) > 1:
        draws = randomizer[ties]
        ties = ties[draws == draws.max()]
    if len(ties) == 1 or ties[0] == 0:
        return int(ties[0])
    k = ties + 1
    # bit_length of k, exact below 2**53: frexp gives k = m * 2**e with 0.5 <= m < 1.
    depth = np.frexp(k.astype(np.float64))[1].astype(np.int64) - 1
    deepest = int(depth.max())
    # Paths left-aligned to one length order as preorder, but for an ancestor and its leftmost
    # descendants, which align equal: the shallower first.
    key = (k << (deepest - depth)) * (deepest + 1) + depth
    return int(ties[int(np.argmin(key))])


@dataclass
class EveryNode:
    """Every feasible node's total, from a search over every candidate (no sampling, no start
    offset): what `shadow` compares another scheduler's choice with."""

    totals: dict[str, int]

    @property
    def best(self) -> list[str]:
        """The nodes sharing the best total, in snapshot order."""
        if not self.totals:
            return []
        top = max(self.totals.values())
        return [name for name, total in self.totals.items() if total == top]


def score_every_node(profile: Profile, snapshot: Snapshot, pod: PodInfo) -> EveryNode | FitError:
    """The cycle's steps (PreFilter, Filter, PreScore, Score) over every node rather than the
    adaptive sample, or the FitError when no node fits. A single feasible node is scored too,
    so its total is known. Raises SchedulingError when a plugin errs."""
    state = CycleState()
    found = _candidates(profile, state, pod, snapshot)
    if isinstance(found, FitError):
        return found
    rows, diagnosis = found
    feasible, _ = find_feasible(profile, state, pod, snapshot, rows, len(rows), 0, diagnosis)
    if len(feasible) == 0:
        return FitError(pod, snapshot.n, diagnosis)
    names = snapshot.names
    if not profile.score:
        return EveryNode({names[r]: 0 for r in feasible.tolist()})
    totals, _ = score_nodes(profile, state, pod, snapshot, feasible)
    return EveryNode({names[r]: t for r, t in zip(feasible.tolist(), totals.tolist(), strict=True)})
