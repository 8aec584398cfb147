"""The columnar view of the cluster that a scheduling cycle reads.

Row i of every array describes `node_infos[i]`, and rows are in kube-scheduler's node order (zones
interleaved), so the filter and score plugins work on whole columns: a few numpy operations per
pod instead of a Python loop over every node and plugin.

The cache owns one Snapshot and updates its rows in place as pods are assumed, bound or removed;
node additions and removals make the cache rebuild it. The scheduling cycle is synchronous code on
the one asyncio thread, so nothing can change the arrays while a cycle reads them: the snapshot
kube-scheduler copies at the start of each cycle is, here, just this view.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from kubesched.framework.row_memos import RowMemos
from kubesched.framework.row_values import RowValues
from kubesched.framework.scalar_columns import ScalarColumns
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Taint
from kubesched.model.quantity import saturate_int64 as _i64

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
Bools = npt.NDArray[np.bool_]

_A = TypeVar("_A", bound=np.ndarray[Any, Any])
_T = TypeVar("_T")

TaintKey = tuple[tuple[str, str, str], ...]

def _taint_key(taints: Sequence[Taint]) -> TaintKey:
    return tuple((t.key, t.value, t.effect) for t in taints)


class TaintGroups:
    """Distinct taint lists, numbered; nodes with the same taints share one toleration check."""

    def __init__(self) -> None:
        self.taints: list[tuple[Taint, ...]] = [()]
        self._ids: dict[TaintKey, int] = {(): 0}

    def id_of(self, taints: tuple[Taint, ...]) -> int:
        key = _taint_key(taints)
        gid = self._ids.get(key)
        if gid is None:
            gid = self._ids[key] = len(self.taints)
            self.taints.append(taints)
        return gid


def _mark(rows: dict[int, None], i: int, on: bool) -> None:
    if on:
        rows[i] = None
    else:
        rows.pop(i, None)


class Snapshot:
    def __init__(self, node_infos: Sequence[NodeInfo] = ()) -> None:
        self.node_infos: list[NodeInfo] = list(node_infos)
        n = self.n = len(self.node_infos)
        self.names = [ni.name for ni in self.node_infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        z = np.zeros
        # cpu and memory live as the two rows of one (2, n) array, the *_cpu/*_mem columns being
        # views of it: the resource scorers read both with one take and work on them together.
        self.alloc_cpu_mem: I64 = z((2, n), np.int64)
        self.req_cpu_mem: I64 = z((2, n), np.int64)
        self.nz_cpu_mem: I64 = z((2, n), np.int64)
        self.alloc_cpu: I64 = self.alloc_cpu_mem[0]
        self.alloc_mem: I64 = self.alloc_cpu_mem[1]
        self.alloc_eph: I64 = z(n, np.int64)
        self.alloc_pods: I64 = z(n, np.int64)
        self.req_cpu: I64 = self.req_cpu_mem[0]
        self.req_mem: I64 = self.req_cpu_mem[1]
        self.req_eph: I64 = z(n, np.int64)
        self.pod_count: I64 = z(n, np.int64)
        self.nz_cpu: I64 = self.nz_cpu_mem[0]
        self.nz_mem: I64 = self.nz_cpu_mem[1]
        self.scalar_alloc = ScalarColumns(n)
        self.scalar_req = ScalarColumns(n)
        self.unschedulable: Bools = z(n, np.bool_)
        self.has_ports: Bools = z(n, np.bool_)
        self.no_schedule = TaintGroups()
        self.prefer_no_schedule = TaintGroups()
        self.no_schedule_group: I32 = z(n, np.int32)
        self.prefer_group: I32 = z(n, np.int32)
        # label key -> per-row code of its value (-1: the node lacks the key), and the values by code
        self.label_codes: dict[str, I32] = {}
        self.label_values: dict[str, list[str]] = {}
        self._label_ids: dict[str, dict[str, int]] = {}
        self._images: dict[str, tuple[int, npt.NDArray[np.intp]]] | None = None
        self.all_rows: npt.NDArray[np.intp] = np.arange(n, dtype=np.intp)
        self._cpu_mem_everywhere: bool | None = None
        # Rows of the nodes holding pods with (required anti-)affinity, in row order: kube-scheduler's
        # HavePodsWithAffinityList / HavePodsWithRequiredAntiAffinityList, so InterPodAffinity visits
        # only those nodes, not every node, for a pod without terms of its own.
        self.with_affinity: dict[int, None] = {}
        self.with_required_anti_affinity: dict[int, None] = {}
        self.memos = RowMemos(self.node_infos)
        self.row_values = RowValues(self.all_rows)
        # Bumped whenever a node's labels change: what memos over label columns compare against.
        self.labels_version = 0
        self._rows_with_label: dict[str, tuple[int, Bools]] = {}
        self._codes_present: dict[str, tuple[int, list[int]]] = {}
        self._by_labels: dict[Hashable, tuple[int, object]] = {}
        # "namespace/claim" -> how many pods on the nodes use it (kube-scheduler usedPVCRefCounts),
        # and each row's share of it, so a row's refresh can take its old share out.
        self.used_pvcs: dict[str, int] = {}
        self._row_pvcs: dict[int, dict[str, int]] = {}
        for i in range(n):
            self.refresh_node(i, labels_changed=True)
            self.refresh_pods(i)

    # --- updates (the cache calls these) --------------------------------------------------------

    def refresh_pods(self, i: int, pod: PodInfo | None = None, sign: int = 0) -> None:
        """Copy node i's pod sums into the columns after a pod was added to or removed from it:
        `pod` added (sign 1) or removed (-1) when that is the only change, else None."""
        # The node's sums are exact ints and may pass int64 (one pod can ask for 10P cpu): saturated,
        # a full node still reads as full, and the assignment cannot raise.
        ni = self.node_infos[i]
        r = ni.requested
        self.req_cpu[i] = _i64(r.milli_cpu)
        self.req_mem[i] = _i64(r.memory)
        self.req_eph[i] = _i64(r.ephemeral_storage)
        self.pod_count[i] = len(ni.pods)
        self.nz_cpu[i] = _i64(ni.non0_cpu)
        self.nz_mem[i] = _i64(ni.non0_mem)
        self.scalar_req.set_row(i, r.scalar)
        self.has_ports[i] = len(ni.used_ports) > 0
        _mark(self.with_affinity, i, bool(ni.pods_with_affinity))
        _mark(self.with_required_anti_affinity, i, bool(ni.pods_with_required_anti_affinity))
        self.memos.pods_changed(i, pod, sign)
        self.row_values.changed(i)
        if ni.pvc_refs or i in self._row_pvcs:
            self._refresh_pvcs(i, ni.pvc_refs)

    def _refresh_pvcs(self, i: int, refs: dict[str, int]) -> None:
        used = self.used_pvcs
        for key, count in self._row_pvcs.pop(i, {}).items():
            left = used.get(key, 0) - count
            if left > 0:
                used[key] = left
            else:
                used.pop(key, None)
        if refs:
            self._row_pvcs[i] = dict(refs)
            for key, count in refs.items():
                used[key] = used.get(key, 0) + count

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether a pod on some node (bound or assumed) uses the claim "namespace/name"."""
        return self.used_pvcs.get(key, 0) > 0

    def nodes_with_affinity(self) -> list[NodeInfo]:
        return [self.node_infos[i] for i in sorted(self.with_affinity)]

    def nodes_with_required_anti_affinity(self) -> list[NodeInfo]:
        return [self.node_infos[i] for i in sorted(self.with_required_anti_affinity)]

    def refresh_node(self, i: int, labels_changed: bool = True, images_changed: bool = True) -> None:
        """Copy node i's allocatable, taints, labels and images into the columns after a node update."""
        ni = self.node_infos[i]
        self.row_values.changed(i)
        a = ni.allocatable
        self.alloc_cpu[i] = _i64(a.milli_cpu)
        self.alloc_mem[i] = _i64(a.memory)
        self.alloc_eph[i] = _i64(a.ephemeral_storage)
        self.alloc_pods[i] = _i64(a.allowed_pod_number)
        self._cpu_mem_everywhere = None
        self.scalar_alloc.set_row(i, a.scalar)
        self.unschedulable[i] = ni.unschedulable
        self.no_schedule_group[i] = self.no_schedule.id_of(ni.no_schedule_taints)
        self.prefer_group[i] = self.prefer_no_schedule.id_of(ni.prefer_no_schedule_taints)
        if labels_changed:
            self.labels_version += 1
            labels = ni.labels
            for key, codes in self.label_codes.items():
                if key not in labels:
                    codes[i] = -1
            for key, value in labels.items():
                column = self._label_column(key)
                column[i] = self._label_id(key, value)
        if images_changed:
            self._images = None

    def _label_column(self, key: str) -> I32:
        col = self.label_codes.get(key)
        if col is None:
            col = self.label_codes[key] = np.full(self.n, -1, np.int32)
            self.label_values[key] = []
            self._label_ids[key] = {}
        return col

    def _label_id(self, key: str, value: str) -> int:
        ids = self._label_ids[key]
        code = ids.get(value)
        if code is None:
            code = ids[value] = len(self.label_values[key])
            self.label_values[key].append(value)
        return code

    # --- reads ----------------------------------------------------------------------------------

    def per_row(self, key: Hashable, count: Callable[[NodeInfo], int],
                count_pod: Callable[[PodInfo], int] | None = None,
                initial: Callable[[], I64 | None] | None = None) -> I64:
        """count(node) for every row, remembered under key and recomputed only for the rows whose
        pods changed since: a pod's spread or affinity counts cost O(changed nodes) a cycle, not a
        walk over every pod of the cluster. `count` must be a function of the node's pods alone,
        the same for the same key; with count_pod, count(node) must be the sum of count_pod over
        its pods, and a pod added or removed moves the row by its count_pod instead of a recount.
        `initial`, when the memo is made, may give the values a cheaper way than counting every node
        (or None). The array is shared: read it, never write it."""
        return self.memos.per_row(key, count, count_pod, initial)

    def sums_by_label(self, key: Hashable, count: Callable[[NodeInfo], int], label: str,
                      count_pod: Callable[[PodInfo], int] | None = None,
                      initial: Callable[[], I64 | None] | None = None) -> I64 | None:
        """Per code of label, the sum of per_row(key, count) over the rows with that value; None when
        no node has the label. Kept like per_row, moved by the changed rows' deltas. Shared: read it."""
        codes = self.label_codes.get(label)
        if codes is None:
            return None
        return self.memos.sums_by_label(key, count, label, codes, len(self.label_values[label]),
                                        self.labels_version, count_pod, initial)

    def sums_total(self, key: Hashable, label: str) -> int | None:
        """The total of what sums_by_label(key, ..., label, ...) returned last (None: not kept):
        whether any is non-zero, for counts that are never negative, without a pass over them."""
        return self.memos.sums_total(key, label)

    def no_pod_matches(self, namespaces: Iterable[str], pairs: Iterable[tuple[str, Iterable[str]]]) -> bool:
        """Whether, for one of the (label key, values) pairs a selector requires (In), no pod of these
        namespaces carries the key with one of the values: so the selector matches no pod there."""
        return self.memos.none_labelled(namespaces, pairs)

    def zeros_unless_labelled(self, namespaces: Iterable[str],
                              pairs: Iterable[tuple[str, Iterable[str]]]) -> Callable[[], I64 | None]:
        """An `initial` for a memo counting the pods a selector matches: zeros where no_pod_matches."""
        def start() -> I64 | None:
            return np.zeros(self.n, np.int64) if self.no_pod_matches(namespaces, pairs) else None
        return start

    def key_counts(self, keys_key: Hashable, k: Hashable) -> I64 | None:
        """Per row, how many pods hold k in the keys_per_row memo under keys_key, when that memo is
        current (else None): an `initial` for a per-key memo that keys_per_row already counts."""
        return self.memos.key_counts(keys_key, k)

    def keys_per_row(self, key: Hashable, keys_of_pod: Callable[[PodInfo], Iterable[Hashable]],
                     pods_of: Callable[[NodeInfo], Iterable[PodInfo]] = lambda ni: ni.pods.values(),
                     ) -> dict[Hashable, int]:
        """The distinct keys_of_pod over the pods of every row (pods_of: those of a node's pods that
        can have any), each with the number of rows holding it, kept under key like per_row and
        moved by each added or removed pod: the distinct affinity terms of a cluster's pods, say.
        Read the dict, never write it."""
        return self.memos.keys_per_row(key, keys_of_pod, pods_of)

    def rows_with_label(self, label: str) -> Bools:
        """Whether each row's node has the label; shared until a node's labels change: read it."""
        found = self._rows_with_label.get(label)
        if found is None or found[0] != self.labels_version:
            codes = self.label_codes.get(label)
            mask = codes >= 0 if codes is not None else np.zeros(self.n, dtype=np.bool_)
            found = self._rows_with_label[label] = (self.labels_version, mask)
        return found[1]

    def kept_values(self, key: Hashable, compute: Callable[[npt.NDArray[np.intp]], _A],
                    rows: npt.NDArray[np.intp], compute_node: Callable[[NodeInfo], Any] | None = None) -> _A:
        """compute(rows), for a compute that reads only the rows' columns (their node and pods) and
        what key names, such as a pod's requests: kept over every row from the key's second use,
        and computed again only for the rows changed since, by compute_node (the same value from
        the node's info) when given. A new array."""
        infos = self.node_infos
        return self.row_values.values(key, compute, rows,
                                      None if compute_node is None else lambda i: compute_node(infos[i]))

    def by_labels(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """compute(), kept under key until a node's labels change (a node added or removed makes a
        new snapshot): for what depends on the nodes' labels alone. Shared: read it."""
        found = self._by_labels.get(key)
        if found is None or found[0] != self.labels_version:
            found = self._by_labels[key] = (self.labels_version, compute())
        return cast(_T, found[1])

    def codes_present(self, label: str) -> list[int]:
        """The codes of label some row holds, ascending (a value may have left every node)."""
        found = self._codes_present.get(label)
        if found is None or found[0] != self.labels_version:
            codes = self.label_codes.get(label)
            present: list[int] = [] if codes is None else np.flatnonzero(
                np.bincount(codes + 1, minlength=len(self.label_values[label]) + 1)[1:]).tolist()
            found = self._codes_present[label] = (self.labels_version, present)
        return found[1]

    def label_code(self, key: str, value: str) -> int:
        """The code of value under key, or -2 when no node has it (never equal to a row's code)."""
        ids = self._label_ids.get(key)
        if ids is None:
            return -2
        return ids.get(value, -2)

    def scalar_allocatable(self, name: str) -> I64 | None:
        return self.scalar_alloc.column(name)

    def scalar_requested(self, name: str) -> I64 | None:
        return self.scalar_req.column(name)

    @property
    def cpu_mem_allocatable_everywhere(self) -> bool:
        """Whether every node has non-zero cpu and memory allocatable, so the resource scorers can
        skip their per-node handling of a missing resource. Recomputed lazily after a node update:
        those are rare next to the cycles that read it."""
        known = self._cpu_mem_everywhere
        if known is None:
            known = self._cpu_mem_everywhere = bool(self.alloc_cpu_mem.all())
        return known

    def take_cpu_mem(self, pair: I64, rows: npt.NDArray[np.intp]) -> I64:
        """pair[:, rows] of a (2, n) cpu/memory array, without the copy for all the rows in order.
        ndarray.take is several times cheaper than the equivalent fancy index."""
        return pair if rows is self.all_rows else pair.take(rows, axis=1)

    @property
    def images(self) -> dict[str, tuple[int, npt.NDArray[np.intp]]]:
        """Image name -> (size of the first node that reported it, rows of the nodes that have it)."""
        if self._images is None:
            rows: dict[str, list[int]] = {}
            sizes: dict[str, int] = {}
            for i, ni in enumerate(self.node_infos):
                for name, size in ni.image_sizes.items():
                    rows.setdefault(name, []).append(i)
                    sizes.setdefault(name, size)
            self._images = {name: (sizes[name], np.array(r, dtype=np.intp)) for name, r in rows.items()}
        return self._images

    def take(self, column: _A, rows: npt.NDArray[np.intp]) -> _A:
        """column[rows], without the copy when rows are all the rows in order."""
        return column if rows is self.all_rows else cast(_A, column[rows])

    def get(self, name: str) -> NodeInfo | None:
        i = self.index.get(name)
        return None if i is None else self.node_infos[i]
