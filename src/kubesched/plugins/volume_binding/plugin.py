"""VolumeBinding (kube-scheduler volumebinding/volume_binding.go): a pod's claims must be usable on
the node — bound claims through their PV's node affinity, WaitForFirstConsumer claims through a PV
that fits them there or a class that can provision there — and the chosen PVs are bound (PreBind)
before the pod is.

    PreFilter  claims missing / lost / being deleted / unbound Immediate -> UnschedulableAndUnresolvable
    Filter     per node: FindPodVolumes; its reasons -> UnschedulableAndUnresolvable
    Score      with a shape (StorageCapacityScoring, on in 1.37): the chosen PVs' utilization
    Reserve    the node's choice assumed in the volume cache, so the next pod cannot take those PVs
    PreBindPreFlight  Skip when every claim is bound already (nothing for PreBind to do)
    PreBind    claimRef / selected-node written, then wait until the PV controller has bound them
    Unreserve  the assumption rolled back
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHintFn
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Bools, PreBindPreFlightResult, PreFilterResult, Rows
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import SKIP, Code, SchedulingError, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper.storage_lister import StorageLister, no_storage
from kubesched.plugins.volume_binding import hints
from kubesched.plugins.volume_binding.args import DEFAULT_BIND_TIMEOUT_SECONDS, default_shape
from kubesched.plugins.volume_binding.batch import BatchVerdicts, filter_rows
from kubesched.plugins.volume_binding.binder import (
    ERR_UNBOUND_IMMEDIATE,
    BinderError,
    ClaimProblem,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    has_claims,
)
from kubesched.plugins.volume_binding.prebind import VolumeBindingWaiter
from kubesched.plugins.volume_binding.scorer import VolumeScorer, build_scorer, class_resources

NAME = "VolumeBinding"



class _State:
    """Written at PreFilter, filled by Filter, read by Reserve and PreBind. It has no clone(): a
    cloned CycleState shares it, as kube-scheduler's stateData.Clone returns itself."""

    __slots__ = ("all_bound", "by_node", "claims", "has_static_bindings", "statuses", "verdicts")

    def __init__(self, claims: PodVolumeClaims | None = None) -> None:
        self.claims = claims
        self.by_node: dict[str, PodVolumes] = {}
        self.all_bound = False
        self.has_static_bindings = False
        # The statuses of the rows filter_batch rejected (snapshot row -> status).
        self.statuses: dict[int, Status] = {}
        self.verdicts: BatchVerdicts | None = None


def _missing_state() -> Status:
    return Status(Code.ERROR, f'reading "{NAME}" from cycleState: not found')


def _no_volumes_for(node_name: str) -> Status:
    return Status(Code.ERROR, f'no pod volume found for node "{node_name}"')


class VolumeBinding:
    name = NAME

    def __init__(self, storage: StorageLister, handle: Handle, bind_timeout: float,
                 scorer: VolumeScorer | None) -> None:
        self.binder = VolumeBinder(storage)
        self.waiter = VolumeBindingWaiter(self.binder, handle.pods, handle.nodes, handle.write_volume,
                                          handle.write_claim, handle.sleep, handle.clock)
        self.bind_timeout = bind_timeout
        self.scorer = scorer
        # Read at each failure: the scheduler gives the handle its metrics after the plugins are built.
        self.handle = handle

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        def on(resource: EventResource, action: ActionType, hint: QueueingHintFn | None = None) -> ClusterEventWithHint:
            return ClusterEventWithHint(ClusterEvent(resource, action), hint)

        add_update = ActionType.ADD | ActionType.UPDATE
        return (
            # A class added or changed (allowed topologies) may let a claim be provisioned.
            on(EventResource.STORAGE_CLASS, add_update, hints.after_storage_class_change),
            on(EventResource.PERSISTENT_VOLUME_CLAIM, add_update, hints.after_claim_change),
            on(EventResource.PERSISTENT_VOLUME, add_update),
            # A node's labels decide PV node affinity and allowed topologies.
            on(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            # The CSINode says which in-tree PVs are read as CSI ones there.
            on(EventResource.CSI_NODE, add_update, hints.after_csi_node_change),
            on(EventResource.CSI_DRIVER, ActionType.UPDATE, hints.after_csi_driver_change),
            on(EventResource.CSI_STORAGE_CAPACITY, add_update, hints.after_storage_capacity_change),
        )

    # --- PreFilter / Filter ----------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        p = pod.pod
        if not has_claims(p):
            state.write(NAME, _State())
            return None, SKIP
        try:
            self.binder.check_claims(p)
        except ClaimProblem as e:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(e))
        try:
            claims = self.binder.pod_volume_claims(p)
        except BinderError as e:
            return None, Status(Code.ERROR, str(e))
        if claims.unbound_immediate:
            # The PV controller binds these; the claim's update requeues the pod.
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        state.write(NAME, _State(claims))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: _State | None = state.get(NAME)
        if s is None or s.claims is None:
            return _missing_state()
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod.pod, s.claims, node.node)
        except BinderError as e:
            self.handle.volume_stage_failed("predicate")
            return Status(Code.ERROR, str(e))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.by_node[node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static_bindings)
        return None

    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        """Bound claims, and one WaitForFirstConsumer claim for static PVs, by columns (batch.py);
        other shapes node by node. Either way the rejected rows' statuses are kept for
        filter_statuses, and the passing nodes' PodVolumes for Reserve and Score."""
        s: _State | None = state.get(NAME)
        if s is None or s.claims is None:
            raise_error(_missing_state())
            return None
        verdicts = filter_rows(self.binder, s.claims, snapshot, rows)
        if verdicts is None:
            return self._filter_rows(s, state, pod, snapshot, rows)
        s.verdicts = verdicts
        s.by_node.update(verdicts.volumes)
        s.has_static_bindings = s.has_static_bindings or bool(verdicts.volumes)
        return verdicts.passing

    def _filter_rows(self, s: _State, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools:
        infos = snapshot.node_infos
        mask = np.zeros(len(rows), dtype=np.bool_)
        statuses: dict[int, Status] = {}
        for i, r in enumerate(rows.tolist()):
            status = self.filter(state, pod, infos[r])
            if status is None:
                mask[i] = True
            elif status.is_rejected():
                statuses[r] = status
            else:
                raise_error(status)
        s.statuses = statuses
        s.verdicts = None
        return mask

    def filter_statuses(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> list[Status]:
        s: _State | None = state.get(NAME)
        if s is not None and s.verdicts is not None:
            verdicts = s.verdicts
            distinct = verdicts.distinct
            fallback = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
            return [distinct[c] if c >= 0 else fallback for c in verdicts.codes[rows].tolist()]
        kept = s.statuses if s is not None else {}
        infos = snapshot.node_infos
        out: list[Status] = []
        for r in rows.tolist():
            status = kept.get(r) or self.filter(state, pod, infos[r])
            out.append(status if status is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        return out

    # --- PreScore / Score ------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None:
        s: _State | None = state.get(NAME)
        if self.scorer is None or s is None:
            return SKIP
        # Nodes without a static binding or a provision with a known capacity all score 0 in
        # kube-scheduler; when that is every node, skipping changes no total.
        if s.has_static_bindings or any(p.node_capacity is not None for v in s.by_node.values()
                                        for p in v.dynamic_provisions):
            return None
        return SKIP

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int:
        s: _State | None = state.get(NAME)
        if self.scorer is None or s is None:
            return 0
        volumes = s.by_node.get(node.name)
        if volumes is None:
            return 0
        return self.scorer(class_resources(volumes))

    # --- Reserve / PreBind / Unreserve -----------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(NAME)
        if s is None:
            return _missing_state()
        volumes = s.by_node.get(node_name)
        if volumes is None:
            s.all_bound = True  # no claims, or only bound ones
            return None
        try:
            s.all_bound = self.binder.assume_pod_volumes(pod.pod, node_name, volumes)
        except BinderError as e:
            self.handle.volume_stage_failed("assume")
            return Status(Code.ERROR, str(e))
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s: _State | None = state.get(NAME)
        if s is None:
            return
        volumes = s.by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed(volumes)

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo,
                            node_name: str) -> tuple[PreBindPreFlightResult | None, Status | None]:
        """Whether PreBind has claims to bind on this node (the answer PreBind itself would act on)."""
        result = PreBindPreFlightResult(allow_parallel=True)
        s: _State | None = state.get(NAME)
        if s is None:
            return result, _missing_state()
        if s.all_bound:
            return result, SKIP
        if node_name not in s.by_node:
            return result, _no_volumes_for(node_name)
        return result, None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(NAME)
        if s is None:
            return _missing_state()
        if s.all_bound:
            return None
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return _no_volumes_for(node_name)
        try:
            await self.waiter.bind_pod_volumes(pod.pod, node_name, volumes, self.bind_timeout)
        except BinderError as e:
            self.handle.volume_stage_failed("bind")
            return Status(Code.ERROR, str(e))
        return None


def raise_error(status: Status) -> None:
    """An error of the batch Filter, worded as RunFilterPlugins words a Filter's."""
    raise SchedulingError(Status(Code.ERROR, f'running "{NAME}" filter plugin: {status.message()}', plugin=NAME))


def new(args: Mapping[str, Any], handle: Handle, storage: StorageLister | None = None) -> VolumeBinding:
    """From parsed VolumeBindingArgs (args.parse_args) and the storage informers' lister."""
    shape = args.get("shape") or default_shape()
    timeout = args.get("bindTimeoutSeconds")
    bind_timeout = float(DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout)
    return VolumeBinding(storage or no_storage(), handle, bind_timeout, build_scorer(shape))
