"""NodeResourcesBalancedAllocation: prefer nodes whose resources stay evenly used with the pod."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Rows, Scores
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper.dra_extended import DeviceScoring, DeviceTotals, cycle_devices, write_cycle_devices
from kubesched.plugins.node_resources import scoring as rs

NAME = "NodeResourcesBalancedAllocation"
_PRE_SCORE_KEY = "PreScore" + NAME
_DEVICES_KEY = "DRAPreScore" + NAME


class BalancedAllocation:
    name = NAME

    def __init__(self, resources: Sequence[rs.ResourceSpec] = rs.DEFAULT_RESOURCES,
                 devices: DeviceScoring | None = None) -> None:
        self.resources = tuple(resources)
        self.devices = devices
        self._cpu_mem = rs.cpu_memory_positions(self.resources)

    def pod_requests(self, pod: PodInfo) -> list[int]:
        """Plain requests: unlike Fit's score, no 100m/200Mi stand-in for empty containers."""
        return [pod.requests.get(spec.name) for spec in self.resources]

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        requests = self.pod_requests(pod)
        if not any(requests):
            return SKIP
        state.write(_PRE_SCORE_KEY, requests)
        write_cycle_devices(state, _DEVICES_KEY, self.devices, [r.name for r in self.resources])
        return None

    def _devices(self, state: CycleState) -> DeviceTotals | None:
        return cycle_devices(state, _DEVICES_KEY, self.devices, [r.name for r in self.resources])

    def _requests(self, state: CycleState, pod: PodInfo) -> list[int]:
        found: list[int] | None = state.get(_PRE_SCORE_KEY)
        return found if found is not None else self.pod_requests(pod)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        requests = self._requests(state, pod)
        if not any(requests):
            return 0
        requested, allocated, allocatable = rs.allocation(node, self.resources, requests, True, self._devices(state))
        return rs.balanced_allocation(requested, allocated, allocatable)

    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores:
        requests = self._requests(state, pod)
        if not any(requests):
            return np.zeros(len(rows), dtype=np.int64)
        if self._devices(state) is not None:
            return rs.per_node(snapshot, rows, lambda node: self.score(state, pod, node, snapshot))
        positions = self._cpu_mem
        if positions is not None and snapshot.cpu_mem_allocatable_everywhere:
            c, m = positions
            cpu, mem = requests[c], requests[m]
            def columns(r: Rows) -> Scores:
                return rs.balanced_allocation_cpu_memory_columns(snapshot, r, cpu, mem)

            def one(node: NodeInfo) -> int:
                if rs.small_cpu_memory(node, cpu, mem, requested=True):
                    return self.score(state, pod, node, snapshot)
                return int(columns(np.array([snapshot.index[node.name]], dtype=np.intp))[0])
            return snapshot.kept_values((self, cpu, mem), columns, rows, one)
        requested, allocated, allocatable = rs.allocation_columns(snapshot, rows, self.resources, requests, True)
        return rs.balanced_allocation_columns(requested, allocated, allocatable)


def new(args: Mapping[str, Any], devices: DeviceScoring | None = None) -> BalancedAllocation:
    """args as in NodeResourcesBalancedAllocationArgs: resources (default cpu and memory, weight 1);
    `devices` counts the devices behind extended resources a DeviceClass maps."""
    return BalancedAllocation(rs.parse_resources(args.get("resources")), devices)
