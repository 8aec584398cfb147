"""Per-node memos of a long-lived snapshot: values computed from each node's pods, kept between
cycles and recomputed only for the rows whose pods changed.

kube-scheduler's PodTopologySpread and InterPodAffinity walk every pod of the cluster each cycle.
Here a count per node (the pods a selector matches, say) is remembered under a key; the snapshot
logs which rows' pods changed, so a memo catches up with the rows logged since it was last read,
and the per-topology-value sums built on it are moved by the same deltas instead of re-summed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from kubesched.framework.types import NodeInfo, PodInfo

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]

# Memos kept (least recently used dropped): each costs 16 bytes a node.
MAX_ROW_MEMOS = 128


def _view(a: npt.NDArray[Any]) -> memoryview:
    """Memos move one row at a time: through a memoryview, an element costs a third of numpy's indexing."""
    return memoryview(a)  # type: ignore[arg-type]  # numpy arrays are buffers; the stubs do not say so


class _LabelSums:
    __slots__ = ("codes", "codes_mv", "labels_version", "sums", "sums_mv", "total")

    def __init__(self, sums: I64, codes: I32, labels_version: int) -> None:
        self.sums = sums
        self.codes = codes
        self.sums_mv = _view(sums)
        self.codes_mv = _view(codes)
        self.labels_version = labels_version
        self.total = int(sums.sum())  # moved with the sums: whether any is set, without a pass


class _RowMemo:
    __slots__ = ("epoch", "label_sums", "values", "values_mv", "versions", "versions_mv")

    def __init__(self, values: I64, versions: I64, epoch: int) -> None:
        self.values = values
        self.versions = versions
        self.values_mv = _view(values)
        self.versions_mv = _view(versions)
        self.epoch = epoch
        self.label_sums: dict[str, _LabelSums] = {}


class _RowKeys:
    __slots__ = ("counts", "epoch", "rows", "versions", "versions_mv")

    def __init__(self, rows: list[dict[Hashable, int]], versions: I64, epoch: int) -> None:
        self.rows = rows  # per row: key -> how many of its pods hold it
        self.versions = versions
        self.versions_mv = _view(versions)
        self.epoch = epoch
        self.counts: dict[Hashable, int] = {}  # key -> rows holding it
        for row in rows:
            for k in row:
                self.counts[k] = self.counts.get(k, 0) + 1


class RowMemos:
    """The memos of one snapshot (rows fixed: a node added or removed makes a new snapshot)."""

    def __init__(self, node_infos: Sequence[NodeInfo]) -> None:
        self.node_infos = node_infos
        self.n = len(node_infos)
        # Bumped for a row whenever its pods change: what a memo compares against when the log
        # below no longer reaches back to it.
        self.pods_version: I64 = np.zeros(self.n, np.int64)
        self._pods_version_mv = _view(self.pods_version)
        # The rows whose pods changed, in order, since epoch _log_base (most cycles see one or two);
        # cut when it grows past a few times n.
        self._log: list[int] = []
        # Per log entry: the pod added (1) or removed (-1), when that was the row's only change.
        self._log_pods: list[tuple[PodInfo, int] | None] = []
        self._log_base = 0
        self._row_memos: OrderedDict[Hashable, _RowMemo] = OrderedDict()
        self._row_keys: dict[Hashable, _RowKeys] = {}
        # (namespace, label key, value) -> the pods carrying it, for the label keys asked about so
        # far: built when a new key is asked about, moved by each pod added or removed, dropped
        # (built again) on a change without one.
        self._pairs: dict[tuple[str, str, str], int] | None = None
        self._pair_keys: tuple[str, ...] = ()

    def pods_changed(self, i: int, pod: PodInfo | None = None, sign: int = 0) -> None:
        self._pods_version_mv[i] += 1
        pairs = self._pairs
        if pairs is not None:
            if pod is None or not sign:
                self._pairs = None
            else:
                meta = pod.pod.metadata
                labels = meta.labels
                for k in self._pair_keys:
                    v = labels.get(k)
                    if v is None:
                        continue
                    pair = (meta.namespace, k, v)
                    left = pairs.get(pair, 0) + sign
                    if left > 0:
                        pairs[pair] = left
                    else:
                        pairs.pop(pair, None)
        log = self._log
        log.append(i)
        self._log_pods.append((pod, sign) if pod is not None and sign else None)
        if len(log) > 4 * self.n + 64:
            self._log_base += len(log)
            log.clear()
            self._log_pods.clear()

    def _epoch(self) -> int:
        return self._log_base + len(self._log)

    def _changed_since(self, epoch: int, versions: I64) -> list[int]:
        start = epoch - self._log_base
        if start >= 0:
            return list(dict.fromkeys(self._log[start:]))
        rows: list[int] = np.flatnonzero(versions != self.pods_version).tolist()
        return rows

    def none_labelled(self, namespaces: Iterable[str], pairs: Iterable[tuple[str, Iterable[str]]]) -> bool:
        """Whether, for one of the (label key, values) pairs, no pod of these namespaces carries the
        key with one of the values: then no pod matches a selector that requires them."""
        pairs = list(pairs)
        held = self._pairs
        if held is None or any(key not in self._pair_keys for key, _ in pairs):
            keys = self._pair_keys = tuple(dict.fromkeys((*self._pair_keys, *(key for key, _ in pairs))))
            held = self._pairs = {}
            for ni in self.node_infos:
                for pi in ni.pods.values():
                    meta = pi.pod.metadata
                    for k in keys:
                        v = meta.labels.get(k)
                        if v is not None:
                            pair = (meta.namespace, k, v)
                            held[pair] = held.get(pair, 0) + 1
        spaces = tuple(namespaces)
        return any(not any((ns, key, v) in held for ns in spaces for v in values) for key, values in pairs)

    def key_counts(self, keys_key: Hashable, k: Hashable) -> I64 | None:
        """Per row, how many pods hold k in the keys_per_row memo under keys_key, when that memo is
        current (else None): what a per-term memo starts from instead of counting every node."""
        memo = self._row_keys.get(keys_key)
        if memo is None or memo.epoch != self._epoch():
            return None
        return np.fromiter((row.get(k, 0) for row in memo.rows), dtype=np.int64, count=self.n)

    def _memo(self, key: Hashable, count: Callable[[NodeInfo], int],
              count_pod: Callable[[PodInfo], int] | None = None,
              initial: Callable[[], I64 | None] | None = None) -> _RowMemo:
        memo = self._row_memos.get(key)
        epoch = self._epoch()
        if memo is None:
            # initial: the values found a cheaper way (None: count every node)
            found = initial() if initial is not None else None
            values = found if found is not None else np.fromiter(
                (count(ni) for ni in self.node_infos), dtype=np.int64, count=self.n)
            memo = self._row_memos[key] = _RowMemo(values, self.pods_version.copy(), epoch)
            if len(self._row_memos) > MAX_ROW_MEMOS:
                self._row_memos.popitem(last=False)
            return memo
        self._row_memos.move_to_end(key)
        if memo.epoch != epoch:
            start = memo.epoch - self._log_base
            changes = self._log_pods[start:] if start >= 0 and count_pod is not None else [None]
            if count_pod is not None and None not in changes:
                for i, change in zip(self._log[start:], changes, strict=True):
                    pod, sign = cast(tuple[PodInfo, int], change)
                    self._move(memo, i, sign * count_pod(pod))
            else:
                node_infos = self.node_infos
                for i in self._changed_since(memo.epoch, memo.versions):
                    self._move(memo, i, count(node_infos[i]) - int(memo.values[i]))
            memo.epoch = epoch
        return memo

    def _move(self, memo: _RowMemo, i: int, delta: int) -> None:
        if delta:
            memo.values_mv[i] += delta
            for ls in memo.label_sums.values():
                code = ls.codes_mv[i]
                # A code past the sums: the node took a value new since they were made, so they are
                # stale and sums_by_label makes them again from the values.
                if 0 <= code < len(ls.sums_mv):
                    ls.sums_mv[code] += delta
                    ls.total += delta
        memo.versions_mv[i] = self._pods_version_mv[i]

    def per_row(self, key: Hashable, count: Callable[[NodeInfo], int],
                count_pod: Callable[[PodInfo], int] | None = None,
                initial: Callable[[], I64 | None] | None = None) -> I64:
        return self._memo(key, count, count_pod, initial).values

    def sums_by_label(self, key: Hashable, count: Callable[[NodeInfo], int], label: str, codes: I32,
                      size: int, labels_version: int, count_pod: Callable[[PodInfo], int] | None = None,
                      initial: Callable[[], I64 | None] | None = None) -> I64:
        """Per code of label (codes: each row's code, -1 without the label; size: the codes in use):
        the sum of per_row(key, count) over the rows with that code. Node labels changing
        (labels_version) makes it sum again."""
        memo = self._memo(key, count, count_pod, initial)
        found = memo.label_sums.get(label)
        if found is None or found.labels_version != labels_version or found.codes is not codes:
            sums = np.bincount(codes + 1, weights=memo.values, minlength=size + 1)[1:].astype(np.int64)
            found = memo.label_sums[label] = _LabelSums(sums, codes, labels_version)
        return found.sums

    def sums_total(self, key: Hashable, label: str) -> int | None:
        """The total of the sums by label under key, as sums_by_label left them (None: none kept)."""
        memo = self._row_memos.get(key)
        found = memo.label_sums.get(label) if memo is not None else None
        return found.total if found is not None else None

    def keys_per_row(self, key: Hashable, keys_of_pod: Callable[[PodInfo], Iterable[Hashable]],
                     pods_of: Callable[[NodeInfo], Iterable[PodInfo]]) -> dict[Hashable, int]:
        memo = self._row_keys.get(key)
        epoch = self._epoch()

        def row_of(ni: NodeInfo) -> dict[Hashable, int]:
            row: dict[Hashable, int] = {}
            for pi in pods_of(ni):
                for k in keys_of_pod(pi):
                    row[k] = row.get(k, 0) + 1
            return row

        if memo is None:
            memo = self._row_keys[key] = _RowKeys([row_of(ni) for ni in self.node_infos],
                                                  self.pods_version.copy(), epoch)
            return memo.counts
        if memo.epoch != epoch:
            start = memo.epoch - self._log_base
            changes = self._log_pods[start:] if start >= 0 else [None]
            if None not in changes:
                for i, change in zip(self._log[start:], changes, strict=True):
                    pod, sign = cast(tuple[PodInfo, int], change)
                    for k in keys_of_pod(pod):
                        _count_key(memo, i, k, sign)
                    memo.versions_mv[i] = self._pods_version_mv[i]
            else:
                for i in self._changed_since(memo.epoch, memo.versions):
                    for k, n in list(memo.rows[i].items()):
                        _count_key(memo, i, k, -n)
                    for k, n in row_of(self.node_infos[i]).items():
                        _count_key(memo, i, k, n)
                    memo.versions_mv[i] = self._pods_version_mv[i]
            memo.epoch = epoch
        return memo.counts


def _count_key(memo: _RowKeys, i: int, k: Hashable, n: int) -> None:
    """n more (or fewer) pods of row i hold k; the rows holding k follow."""
    row = memo.rows[i]
    before = row.get(k, 0)
    after = before + n
    if after > 0:
        row[k] = after
    else:
        row.pop(k, None)
    if before <= 0 < after:
        memo.counts[k] = memo.counts.get(k, 0) + 1
    elif after <= 0 < before:
        left = memo.counts[k] - 1
        if left:
            memo.counts[k] = left
        else:
            del memo.counts[k]
