"""PodTopologySpread's hard constraints (kube-scheduler podtopologyspread/filtering.go).

PreFilter counts, per constraint and topology value, the existing pods its selector matches on the
nodes the constraint counts (those with every constraint's topology key that pass its node inclusion
policies) and keeps the two smallest counts (the critical paths). Filter is then, per node,
O(constraints): `matchNum + selfMatchNum - minMatchNum > maxSkew` rejects it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.framework.interface import Bools, Rows
from kubesched.framework.snapshot import I64, Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod
from kubesched.plugins.helper.node_selector import required_node_affinity
from kubesched.plugins.pod_topology_spread.common import (
    Constraint,
    Inclusion,
    InclusionMasks,
    matching_per_node,
    matching_sums,
    node_has_keys,
    nodes_with_keys,
)

NAME = "PodTopologySpread"
PRE_FILTER_KEY = "PreFilter" + NAME
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
CONSTRAINTS_NOT_MATCH = Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
NODE_LABEL_NOT_MATCH = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """The two topology values with the fewest matching pods, [0] always the minimum (criticalPaths).
    After AddPod/RemovePod [1] is not guaranteed to be the second minimum, as in kube-scheduler."""

    __slots__ = ("nums", "values")

    def __init__(self) -> None:
        self.values = ["", ""]
        self.nums = [MAX_INT32, MAX_INT32]

    def update(self, value: str, num: int) -> None:
        values, nums = self.values, self.nums
        i = 0 if value == values[0] else 1 if value == values[1] else -1
        if i >= 0:
            nums[i] = num
            if nums[0] > nums[1]:
                values.reverse()
                nums.reverse()
        elif num < nums[0]:
            values[1], nums[1] = values[0], nums[0]
            values[0], nums[0] = value, num
        elif num < nums[1]:
            values[1], nums[1] = value, num

    def pairs(self) -> list[tuple[str, int]]:
        return list(zip(self.values, self.nums, strict=True))

    def clone(self) -> CriticalPaths:
        c = CriticalPaths()
        c.values = list(self.values)
        c.nums = list(self.nums)
        return c


@dataclass
class PreFilterState:
    constraints: Sequence[Constraint]
    critical_paths: list[CriticalPaths]
    # Per constraint: topology value -> matching pods. Its keys are the constraint's domains.
    tp_value_to_match_num: list[dict[str, int]]
    # Per constraint, when PreFilter had them: the same counts by label code (0 for a value that is
    # no domain) with a last 0 for code -1: Filter's lookup table. Dropped by AddPod/RemovePod.
    luts: list[I64 | None] | None = None

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum; 0 while there are fewer domains than minDomains."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].nums[0]

    def clone(self) -> PreFilterState:
        """A copy AddPod/RemovePod may change (preemption works on one per node); constraints shared."""
        return PreFilterState(self.constraints, [p.clone() for p in self.critical_paths],
                              [dict(m) for m in self.tp_value_to_match_num])


def counted_rows(snapshot: Snapshot, pod: PodInfo, constraints: Sequence[Constraint]) -> list[Bools]:
    """Per constraint, over every snapshot row: the nodes it counts pods on — those with all the
    constraints' topology keys that pass its node inclusion policies."""
    has_keys = nodes_with_keys(snapshot, constraints)
    inclusion = InclusionMasks(snapshot, pod)
    return [np.logical_and(has_keys, inclusion.of(c)) for c in constraints]


def _domain_counts(snapshot: Snapshot, key: str, counted: Bools, per_node: I64) -> tuple[list[str], list[int]]:
    """The topology values of the counted nodes and the matching pods on each, in code order."""
    codes = snapshot.label_codes[key][counted]
    size = len(snapshot.label_values[key])
    present = np.flatnonzero(np.bincount(codes, minlength=size))
    sums = np.bincount(codes, weights=per_node[counted], minlength=size)[present].astype(np.int64)
    values = snapshot.label_values[key]
    return [values[c] for c in present.tolist()], sums.tolist()


def _counted_everywhere(snapshot: Snapshot, pod: PodInfo,
                        constraints: Sequence[Constraint]) -> list[bool]:
    """Per constraint: whether it counts every node with its topology key (one key for all the
    constraints, and node inclusion policies that pass every node), so the snapshot's kept sums
    per topology value are its domain counts."""
    if len(constraints) > 1 and len({c.topology_key for c in constraints}) != 1:
        return [False] * len(constraints)
    inclusion = InclusionMasks(snapshot, pod)
    return [inclusion.restricts(c) is None for c in constraints]


def _kept_counts(snapshot: Snapshot, c: Constraint, namespace: str) -> tuple[list[str], list[int], I64 | None]:
    """The domains and counts of a constraint counted everywhere, and Filter's lookup table."""
    sums = matching_sums(snapshot, c.selector, namespace, c.topology_key)
    if sums is None:
        return [], [], None
    codes, values = snapshot.by_labels(("PodTopologySpread", "domains", c.topology_key),
                                       lambda: _domains(snapshot, c.topology_key))
    lut = np.zeros(len(sums) + 1, dtype=np.int64)
    lut[:-1] = sums
    return values, lut[codes].tolist(), lut


def _domains(snapshot: Snapshot, key: str) -> tuple[npt.NDArray[np.intp], list[str]]:
    """The codes of key that some node holds, and their values."""
    present = snapshot.codes_present(key)
    names = snapshot.label_values[key]
    return np.array(present, dtype=np.intp), [names[code] for code in present]


def _critical_paths(values: list[str], nums: list[int]) -> CriticalPaths:
    """criticalPaths.update over every domain: only the two smallest can end up in it."""
    p = CriticalPaths()
    if len(nums) > 2:
        # Both sorts stable: the first of equal counts wins, as in the update loop.
        a, b = (sorted(range(len(nums)), key=nums.__getitem__)[:2] if len(nums) <= 64
                else np.argsort(np.array(nums, dtype=np.int64), kind="stable")[:2].tolist())
        # The update loop over these two, ascending and distinct, leaves them in this order.
        p.values = [values[a], values[b]]
        p.nums = [nums[a], nums[b]]
        return p
    for value, num in zip(values, nums, strict=True):
        p.update(value, num)
    return p


def compute_state(snapshot: Snapshot, pod: PodInfo, constraints: Sequence[Constraint]) -> PreFilterState:
    """calPreFilterState. The matching pods of each node are counted once per selector and kept by
    the snapshot (per_row), so a cycle only recounts the nodes whose pods changed; when a
    constraint counts every node with its key, the sums per domain are kept too."""
    namespace = pod.pod.metadata.namespace
    everywhere = _counted_everywhere(snapshot, pod, constraints)
    masks = None if all(everywhere) else counted_rows(snapshot, pod, constraints)
    tp: list[dict[str, int]] = []
    paths: list[CriticalPaths] = []
    luts: list[I64 | None] = []
    for i, c in enumerate(constraints):
        lut: I64 | None = None
        if everywhere[i]:
            values, nums, lut = _kept_counts(snapshot, c, namespace)
        else:
            assert masks is not None
            counted = masks[i]
            per_node = matching_per_node(snapshot, c.selector, namespace)
            values, nums = (_domain_counts(snapshot, c.topology_key, counted, per_node)
                            if np.count_nonzero(counted) else ([], []))
        tp.append(dict(zip(values, nums, strict=True)))
        paths.append(_critical_paths(values, nums))
        luts.append(lut)
    return PreFilterState(constraints, paths, tp, luts)


def filter_node(s: PreFilterState, pod: PodInfo, node: NodeInfo) -> Status | None:
    labels = node.labels
    pod_labels = pod.pod.metadata.labels
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return NODE_LABEL_NOT_MATCH
        self_match = 1 if c.selector.matches(pod_labels) else 0
        skew = s.tp_value_to_match_num[i].get(value, 0) + self_match - s.min_match_num(i, c.min_domains)
        if skew > c.max_skew:
            return CONSTRAINTS_NOT_MATCH
    return None


def filter_mask(s: PreFilterState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
    ok: Bools | None = None
    pod_labels = pod.pod.metadata.labels
    for i, c in enumerate(s.constraints):
        key = c.topology_key
        col = snapshot.label_codes.get(key)
        if col is None:
            return np.zeros(len(rows), dtype=np.bool_)
        lut = s.luts[i] if s.luts is not None else None
        if lut is None:
            lut = np.zeros(len(snapshot.label_values[key]) + 1, dtype=np.int64)
            for value, num in s.tp_value_to_match_num[i].items():
                code = snapshot.label_code(key, value)
                if code >= 0:
                    lut[code] = num
        allowed = c.max_skew + s.min_match_num(i, c.min_domains) - (1 if c.selector.matches(pod_labels) else 0)
        # By label code: whether a node with that value passes; the last entry answers code -1
        # (the node lacks the key), which never does.
        passes = lut <= allowed
        passes[-1] = False
        m = passes.take(snapshot.take(col, rows))
        ok = m if ok is None else np.logical_and(ok, m, out=ok)
    return None if ok is None or np.count_nonzero(ok) == len(ok) else ok


def update_with_pod(s: PreFilterState, updated: Pod, preemptor: PodInfo, node: NodeInfo | None,
                    delta: int) -> None:
    """updateWithPod: AddPod (+1) / RemovePod (-1) of `updated` on `node`."""
    if updated.metadata.namespace != preemptor.pod.metadata.namespace or node is None:
        return
    s.luts = None
    if not node_has_keys(node.labels, s.constraints):
        return
    inclusion = Inclusion(required_node_affinity(preemptor), preemptor)
    labels = updated.metadata.labels
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(labels) or not inclusion.matches(c, node):
            continue
        value = node.labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[value] = m.get(value, 0) + delta
        s.critical_paths[i].update(value, m[value])
