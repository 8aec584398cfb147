"""Filter over a cycle's candidate nodes (findNodesThatPassFilters): batch filters in a few vector
operations, then kube-scheduler's sequential search replayed over them (start at the rotating
index, stop once enough feasible nodes are found), each rejected node given the status of the first
filter, in profile order, that rejected it; nominated pods' first pass; plugin timings of a
sampled cycle (docs in schedule.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis
from kubesched.framework.interface import FilterPlugin, Rows
from kubesched.framework.plugin_metrics import PluginRecorder
from kubesched.framework.runtime.nominated import first_pass, yielded_to
from kubesched.framework.runtime.profile import PluginMethods, Profile
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import PodInfo


def _rotated(positions: npt.NDArray[np.intp], start: int) -> npt.NDArray[np.intp]:
    """Positions (ascending) in the order a search starting at `start` and wrapping around meets them."""
    cut = int(np.searchsorted(positions, start))
    if cut == 0:
        return positions
    return np.concatenate((positions[cut:], positions[:cut]))


def _first_from(passing: npt.NDArray[np.bool_] | None, m: int, start: int, want: int) -> Rows:
    """The first `want` positions of [0, m) that pass, met from `start` wrapping around; all of them
    when fewer pass."""
    if passing is None:
        return (np.arange(min(want, m), dtype=np.intp) + start) % m if m else np.arange(0, dtype=np.intp)
    after = np.flatnonzero(passing[start:])
    if len(after) >= want:
        return after[:want] + start
    before = np.flatnonzero(passing[:start])[:want - len(after)]
    return np.concatenate((after + start, before))


def find_feasible(profile: Profile, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows,
                  want: int, start: int, diagnosis: Diagnosis,
                  statuses_on_success: bool = False) -> tuple[Rows, int]:
    """Rows of the first `want` feasible nodes from `start` (positions in rows), and how many
    nodes were examined. Rejected examined nodes get their status in the diagnosis when none is
    feasible (only a FitError and preemption read them) or when `statuses_on_success` asks:
    building a status per rejected node is most of a cycle's cost when most nodes are full."""
    m = len(rows)
    filters = [pl for pl in profile.filter if pl.name not in state.skip_filter_plugins]
    masks: list[tuple[int, npt.NDArray[np.bool_]]] = []
    scalar: list[int] = []
    passing: npt.NDArray[np.bool_] | None = None
    rec = state.plugin_recorder
    passes = _passes if rec is None else _timed_passes(rec)
    batch_times: list[tuple[str, npt.NDArray[np.bool_] | None, float]] = []
    for idx, pl in enumerate(filters):
        batch = profile.methods.filter_batch.get(pl.name)
        if batch is None:
            scalar.append(idx)
            continue
        if rec is None:
            mask = batch(state, pod, snapshot, rows)
        else:
            t = rec.now()
            mask = batch(state, pod, snapshot, rows)
            batch_times.append((pl.name, mask, rec.now() - t))
        if mask is None:
            continue
        masks.append((idx, mask))
        passing = mask.copy() if passing is None else np.logical_and(passing, mask, out=passing)

    overrides = _nominated_rejections(profile, state, pod, snapshot, rows)
    if overrides:
        if passing is None:
            passing = np.ones(m, dtype=np.bool_)
        passing[list(overrides)] = False
    if not scalar:
        feasible_pos = _first_from(passing, m, start, want)
        enough = want > 0 and len(feasible_pos) == want
        processed = (int(feasible_pos[-1]) - start) % m + 1 if enough else m
    else:
        candidates = np.arange(m, dtype=np.intp) if passing is None else np.flatnonzero(passing)
        order = _rotated(candidates, start)
        found: list[int] = []
        processed = m
        node_infos = snapshot.node_infos
        for p in order.tolist():
            ni = node_infos[rows[p]]
            for idx in scalar:
                if not passes(filters[idx], state, pod, ni):
                    break
            else:
                found.append(p)
                if len(found) == want:
                    processed = (p - start) % m + 1
                    break
        feasible_pos = np.array(found, dtype=np.intp)

    # Rejected nodes among the examined ones: those not feasible in rotated [start, start+processed).
    # A sampled cycle needs them too: its batch Filter observations take the codes of the statuses.
    if len(feasible_pos) < processed and (statuses_on_success or rec is not None or not len(feasible_pos)):
        examined = (np.arange(processed, dtype=np.intp) + start) % m
        is_feasible = np.zeros(m, dtype=np.bool_)
        is_feasible[feasible_pos] = True
        rejected = examined[~is_feasible[examined]]
        rejected.sort()
        if overrides:
            rejected = _record_overrides(overrides, snapshot, rows, rejected, diagnosis)
        if len(rejected):
            _record_statuses(profile.methods, filters, masks, state, pod, snapshot, rows, rejected, diagnosis)
    if batch_times:
        assert rec is not None
        _observe_batch_filters(rec, batch_times, m, diagnosis)
    return rows[feasible_pos], processed


def _nominated_rejections(profile: Profile, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                          rows: Rows) -> dict[int, Status]:
    """RunFilterPluginsWithNominatedPods' first pass, for the candidate nodes that hold pods
    nominated there which this pod must yield to: their positions in rows whose first pass
    rejects the pod, with that status. The second pass is the ordinary filtering. No nominations,
    no work."""
    nominator = profile.handle.nominator
    nodes = nominator.nominated_nodes()
    if not nodes:
        return {}
    out: dict[int, Status] = {}
    all_rows = len(rows) == snapshot.n
    for name in nodes:
        r = snapshot.index.get(name)
        if r is None:
            continue
        if all_rows:
            pos = r
        else:
            pos = int(np.searchsorted(rows, r))
            if pos >= len(rows) or int(rows[pos]) != r:
                continue
        nominated = yielded_to(nominator, name, pod)
        if not nominated:
            continue
        s = first_pass(profile, state, pod, snapshot.node_infos[r], nominated)
        if s is None:
            continue
        if not s.is_rejected():
            raise SchedulingError(s)
        out[pos] = s
    return out


def _record_overrides(overrides: dict[int, Status], snapshot: Snapshot, rows: Rows, rejected: Rows,
                      diagnosis: Diagnosis) -> Rows:
    """Give the rejected nodes the first pass rejected their first-pass status; the others remain."""
    keep = np.fromiter((int(p) not in overrides for p in rejected.tolist()), dtype=np.bool_, count=len(rejected))
    names = snapshot.names
    for p in rejected[~keep].tolist():
        s = overrides[p]
        diagnosis.node_to_status[names[int(rows[p])]] = s
        diagnosis.add_plugin_status(s)
    return rejected[keep]


def _passes(pl: FilterPlugin, state: CycleState, pod: PodInfo, ni: object) -> bool:
    s = pl.filter(state, pod, ni)  # type: ignore[arg-type]
    if s is None or s.code == Code.SUCCESS:
        return True
    if not s.is_rejected():
        raise SchedulingError(filter_error(pl.name, s))
    return False


def filter_error(plugin: str, status: Status) -> Status:
    """A Filter plugin's error as RunFilterPlugins words it (framework.go)."""
    return Status(Code.ERROR, f'running "{plugin}" filter plugin: {status.message()}', plugin=plugin)


def _timed_passes(rec: PluginRecorder) -> Callable[[FilterPlugin, CycleState, PodInfo, object], bool]:
    """_passes, each call timed: the sampled cycles' Filter loop."""
    def passes(pl: FilterPlugin, state: CycleState, pod: PodInfo, ni: object) -> bool:
        t = rec.now()
        s = pl.filter(state, pod, ni)  # type: ignore[arg-type]
        rec.observe(pl.name, "Filter", Code.SUCCESS if s is None else s.code, rec.now() - t)
        if s is None or s.code == Code.SUCCESS:
            return True
        if not s.is_rejected():
            raise SchedulingError(filter_error(pl.name, s))
        return False

    return passes


def _observe_batch_filters(rec: PluginRecorder, batch_times: list[tuple[str, npt.NDArray[np.bool_] | None, float]],
                           n: int, diagnosis: Diagnosis) -> None:
    """One Filter observation per node each batch evaluated. A rejection takes the code the
    plugin gave the nodes it was first to reject (its statuses in the diagnosis), Unschedulable
    when it was first nowhere."""
    if n == 0:
        return
    codes: dict[str | None, int] = {}
    for status in diagnosis.node_to_status.values():
        codes.setdefault(status.plugin, status.code)
    for plugin, mask, seconds in batch_times:
        each = seconds / n
        fits = n if mask is None else int(np.count_nonzero(mask))
        if fits:
            rec.observe(plugin, "Filter", Code.SUCCESS, each, fits)
        if n - fits:
            rec.observe(plugin, "Filter", codes.get(plugin, Code.UNSCHEDULABLE), each, n - fits)


def _record_statuses(methods: PluginMethods, filters: list[FilterPlugin],
                     masks: list[tuple[int, npt.NDArray[np.bool_]]],
                     state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows,
                     rejected: npt.NDArray[np.intp], diagnosis: Diagnosis) -> None:
    """Give each rejected node (positions in rows) the status of the first filter that rejects it."""
    mask_of = dict(masks)
    by_plugin: dict[int, list[int]] = {}
    batched = methods.filter_batch
    if all(idx in mask_of or filters[idx].name in batched
           for idx in range(len(filters))):
        # Every filter has a column: the first False down the stacked masks names the plugin.
        idxs = [idx for idx, _ in masks]
        stacked = np.stack([m[rejected] for _, m in masks])
        first = stacked.argmin(axis=0)
        for k, idx in enumerate(idxs):
            sel = rejected[first == k]
            if len(sel):
                by_plugin[idx] = sel.tolist()
    else:
        node_infos = snapshot.node_infos
        for p in rejected.tolist():
            ni = node_infos[rows[p]]
            for idx, pl in enumerate(filters):
                mask = mask_of.get(idx)
                ok = bool(mask[p]) if mask is not None else (
                    True if pl.name in batched else _passes(pl, state, pod, ni))
                if not ok:
                    by_plugin.setdefault(idx, []).append(p)
                    break
    names = snapshot.names
    node_infos = snapshot.node_infos
    statuses = diagnosis.node_to_status
    for idx, positions in by_plugin.items():
        pl = filters[idx]
        node_rows = rows[np.array(positions, dtype=np.intp)]
        batch_statuses = methods.filter_statuses.get(pl.name)
        if batch_statuses is not None:
            found: list[Status] = batch_statuses(state, pod, snapshot, node_rows)
        else:
            found = []
            for r in node_rows.tolist():
                s = pl.filter(state, pod, node_infos[r])
                found.append(s if s is not None else Status(Code.UNSCHEDULABLE))
        seen: dict[int, Status] = {}
        for r, s in zip(node_rows.tolist(), found, strict=True):
            tagged = seen.get(id(s))
            if tagged is None:
                tagged = seen[id(s)] = s.with_plugin(pl.name)
                diagnosis.add_plugin_status(tagged)
            statuses[names[r]] = tagged
