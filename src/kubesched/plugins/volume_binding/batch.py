"""VolumeBinding's Filter over snapshot rows, for the shapes that need no per-node matching: bound
claims (their PVs' node affinity, one column each) and, with them, one WaitForFirstConsumer claim
for static PVs only (a class that provisions nothing). Each candidate PV's node affinity becomes a
column, and the PVs taken smallest first give each node its PV: what FindMatchingVolume picks there.

The verdicts are the per-node ones FindPodVolumes gives, reasons in its order; other shapes (and
in-tree PVs that a node may read as CSI ones, migration.py) return None and the plugin judges node
by node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.framework.interface import Bools, Rows
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.model.storage import (
    ANN_SELECTED_NODE,
    VOLUME_AVAILABLE,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.plugins.helper.csi_translation import TranslationError
from kubesched.plugins.helper.node_selector import Selector
from kubesched.plugins.volume_binding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    NOT_SUPPORTED_PROVISIONER,
    BindingInfo,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
)
from kubesched.plugins.volume_binding.matching import (
    MatchError,
    access_modes_fit,
    attributes_class_mismatch,
    claim_class,
    claim_selector,
    is_bound_to_claim,
    node_affinity_selector,
    requested_storage,
    volume_capacity,
    volume_class,
    volume_mode_mismatch,
)
from kubesched.plugins.volume_binding.migration import migratable_plugin, migrated_on_node, try_translate_pv_to_csi


@dataclass
class BatchVerdicts:
    """Per row (position in the rows filtered): True where the node passes; the rejected rows'
    statuses (`status_of`); and the PodVolumes of the passing nodes."""

    passing: Bools
    # Snapshot row -> index in `distinct` (-1: passing or not filtered); few distinct statuses.
    codes: npt.NDArray[np.intp]
    distinct: list[Status]
    volumes: dict[str, PodVolumes]  # node name -> what it would give the pod

    def status_of(self, row: int) -> Status | None:
        code = int(self.codes[row])
        return None if code < 0 else self.distinct[code]


_NONE = np.iinfo(np.intp).max


def _column(pv: PersistentVolume, snapshot: Snapshot, rows: Rows) -> Bools:
    selector = node_affinity_selector(pv)
    if selector is None:
        return np.ones(len(rows), dtype=np.bool_)
    return _mask(selector, snapshot, rows)


def _migratable_column(binder: VolumeBinder, pv: PersistentVolume, plugin: str, snapshot: Snapshot,
                       rows: Rows) -> Bools | None:
    """tryTranslatePVToCSI per node, by columns: the PV's CSI translation on the rows whose CSINode
    lists its plugin as migrated, the PV itself on the others. The translation depends on the PV
    alone, so it is made once; the CSINodes are read once a call, not once a row (a Python loop over
    5,000 nodes per pod made kubesched 0.43x kube-scheduler in scheduler_perf's SchedulingInTreePVs).
    None when the translation fails on a migrated row: the node-by-node path then raises its error
    where kube-scheduler's does."""
    fits = _column(pv, snapshot, rows)
    index = snapshot.index
    migrated = np.zeros(snapshot.n, dtype=np.bool_)
    some: CSINode | None = None
    for csi_node in binder.storage.all_csi_nodes():
        i = index.get(csi_node.metadata.name)
        if i is not None and migrated_on_node(plugin, csi_node):
            migrated[i] = True
            some = csi_node
    on_rows = migrated[rows]
    if some is None or not on_rows.any():
        return fits
    try:
        translated = try_translate_pv_to_csi(pv, some)
    except TranslationError:
        return None
    return np.where(on_rows, _column(translated, snapshot, rows), fits)


def _mask(selector: Selector, snapshot: Snapshot, rows: Rows) -> Bools:
    if any(t.fields for t in selector.terms):
        # CheckNodeAffinity matches a node made of labels only: its matchFields are not checked.
        infos = snapshot.node_infos
        return np.fromiter((selector.matches(infos[r].labels, "") for r in rows.tolist()), dtype=np.bool_,
                           count=len(rows))
    return selector.mask(snapshot, rows)


def _single_in(selector: Selector) -> tuple[str, tuple[str, ...]] | None:
    """(key, values) of an affinity that is one `key In values` (a local PV's hostname, a zone)."""
    if len(selector.terms) != 1:
        return None
    term = selector.terms[0]
    if not term.valid or term.fields or len(term.labels) != 1 or term.labels[0].op != "In":
        return None
    return term.labels[0].key, term.labels[0].values


def smallest_per_row(candidates: Sequence[PersistentVolume], snapshot: Snapshot, rows: Rows) -> npt.NDArray[np.intp]:
    """For each row, the index of the first candidate whose node affinity the node satisfies; -1 for
    none. Single `key In values` affinities go by the label's codes at once, others by a column."""
    best = np.full(len(rows), _NONE, dtype=np.intp)
    by_key: dict[str, tuple[list[int], list[int]]] = {}
    for i, pv in enumerate(candidates):
        selector = node_affinity_selector(pv)
        if selector is None:
            np.minimum(best, i, out=best)  # fits every node: no later candidate can come first
            break
        simple = _single_in(selector)
        if simple is None:
            np.minimum(best, np.where(_mask(selector, snapshot, rows), i, _NONE), out=best)
            continue
        key, values = simple
        codes, indexes = by_key.setdefault(key, ([], []))
        for value in values:
            code = snapshot.label_code(key, value)
            if code >= 0:
                codes.append(code)
                indexes.append(i)
    for key, (codes, indexes) in by_key.items():
        column = snapshot.label_codes.get(key)
        if column is None or not codes:
            continue
        first_by_code = np.full(len(snapshot.label_values[key]), _NONE, dtype=np.intp)
        np.minimum.at(first_by_code, np.array(codes, dtype=np.intp), np.array(indexes, dtype=np.intp))
        col = snapshot.take(column, rows)
        labelled = col >= 0
        found = np.full(len(rows), _NONE, dtype=np.intp)
        found[labelled] = first_by_code[col[labelled]]
        np.minimum(best, found, out=best)
    return np.where(best == _NONE, -1, best)


def _static_candidates(claim: PersistentVolumeClaim,
                       volumes: Sequence[PersistentVolume]) -> list[PersistentVolume] | None:
    """The PVs FindMatchingVolume could give the claim on some node, smallest first (ties in list
    order, as its strict comparison keeps the first); None when a PV is pre-bound to the claim
    (that rule is per node) or the selector does not parse (the per-node path reports it)."""
    requested = requested_storage(claim)
    cls = claim_class(claim)
    try:
        selector = claim_selector(claim)
    except MatchError:
        return None
    found: list[PersistentVolume] = []
    for pv in volumes:
        if pv.spec.claim_ref is not None:
            if is_bound_to_claim(pv, claim):
                return None
            continue
        if (volume_capacity(pv) < requested or volume_mode_mismatch(claim, pv) or attributes_class_mismatch(claim, pv)
                or pv.metadata.deletion_timestamp is not None or pv.status.phase != VOLUME_AVAILABLE
                or (selector is not None and not selector.matches(pv.metadata.labels))
                or volume_class(pv) != cls or not access_modes_fit(claim, pv)):
            continue
        found.append(pv)
    found.sort(key=volume_capacity)
    return found


def _static_only(binder: VolumeBinder, claim: PersistentVolumeClaim) -> bool:
    """A claim no node can have provisioned: its unmatched nodes fail with the bind conflict."""
    if ANN_SELECTED_NODE in claim.metadata.annotations:
        return False
    name = claim_class(claim)
    sc = binder.storage.storage_class(name) if name else None
    return sc is not None and (not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER)


def filter_rows(binder: VolumeBinder, claims: PodVolumeClaims, snapshot: Snapshot,
                rows: Rows) -> BatchVerdicts | None:
    delayed = claims.unbound_delay_binding
    if len(delayed) > 1 or (delayed and not _static_only(binder, delayed[0])):
        return None
    m = len(rows)
    # Bound claims, in order: the first that fails a node decides its bound verdict.
    bound_ok = np.ones(m, dtype=np.bool_)
    pvs_found = np.ones(m, dtype=np.bool_)
    undecided = np.ones(m, dtype=np.bool_)
    for pvc in claims.bound:
        pv = binder.pv_cache.get(pvc.spec.volume_name)
        if pv is None:
            pvs_found[undecided] = False
            break
        plugin = migratable_plugin(pv)
        fits = _column(pv, snapshot, rows) if plugin is None else _migratable_column(binder, pv, plugin, snapshot, rows)
        if fits is None:
            return None
        misses = undecided & ~fits
        bound_ok[misses] = False
        undecided &= ~misses
    unbound_ok = np.ones(m, dtype=np.bool_)
    chosen: npt.NDArray[np.intp] = np.full(m, -1, dtype=np.intp)
    candidates: list[PersistentVolume] = []
    if delayed:
        found = _static_candidates(delayed[0], claims.unbound_volumes_delay_binding.get(claim_class(delayed[0]), ()))
        if found is None:
            return None
        candidates = found
        chosen = smallest_per_row(candidates, snapshot, rows)
        unbound_ok = chosen >= 0
    passing = bound_ok & unbound_ok & pvs_found
    # Each rejected row's verdict as 3 bits (bound PVs fit, unbound claim fits, bound PVs exist).
    bits = (~bound_ok).astype(np.intp) | ((~unbound_ok).astype(np.intp) << 1) | ((~pvs_found).astype(np.intp) << 2)
    distinct: list[Status] = []
    index_of: dict[int, int] = {}
    for b in np.unique(bits[~passing]).tolist():
        reasons = [r for r, bit in ((ERR_REASON_NODE_CONFLICT, 1), (ERR_REASON_BIND_CONFLICT, 2),
                                    (ERR_REASON_PV_NOT_EXIST, 4)) if b & bit]
        index_of[b] = len(distinct)
        distinct.append(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons))
    lut = np.full(8, -1, dtype=np.intp)
    for b, i in index_of.items():
        lut[b] = i
    codes = np.full(snapshot.n, -1, dtype=np.intp)
    codes[rows] = np.where(passing, -1, lut[bits])
    row_list = rows.tolist()
    volumes: dict[str, PodVolumes] = {}
    if delayed:
        names = snapshot.names
        claim = delayed[0]
        for p in np.flatnonzero(passing).tolist():
            volumes[names[row_list[p]]] = PodVolumes([BindingInfo(claim, candidates[int(chosen[p])])])
    return BatchVerdicts(passing, codes, distinct, volumes)
