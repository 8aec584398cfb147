"""What a plugin may reach beyond its arguments (kube-scheduler's framework.Handle), behind small
ports so plugins stay free of I/O: the scheduler's snapshot, its clock, read-only listers of the
informers' objects, the pods waiting at Permit, and the writes a bind plugin, preemption, volume
binding and DynamicResources need (bind a pod, set its nominated node, delete a victim, bind a PV to
a claim, give a claim its selected node, allocate, reserve and release a ResourceClaim) with a task
set to run them in."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from kubesched.framework.extender import Extender
from kubesched.framework.pod_groups import NoPodGroups, PodGroupManager
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.framework.waiting import WaitingPods
from kubesched.model.objects import Job, Node, Pod, PodExtendedResourceClaimStatus
from kubesched.model.resource import ResourceClaim
from kubesched.model.storage import PersistentVolume, PersistentVolumeClaim

T_co = TypeVar("T_co", covariant=True)

# POST the pod's Binding: None when bound, else a status with the apiserver's message.
PodBinder = Callable[[Pod, str], Awaitable[Status | None]]
# Set (a node name) or clear ("") the pod's status.nominatedNodeName.
PodNominator = Callable[[Pod, str], Awaitable[Status | None]]
# Delete a preemption victim (first) and, once deleted, record the Preempted event with this message
# from the profile of its preemptor (third).
VictimDeleter = Callable[[Pod, str, Pod | None], Awaitable[Status | None]]
# Give a preemption victim the DisruptionTarget=True (PreemptionByScheduler) condition with this message.
VictimDisruptor = Callable[[Pod, str], Awaitable[Status | None]]
# VolumeBinding's PreBind: write the PV's claimRef and annotations as this (assumed) version has
# them, on the condition that the apiserver still has its resourceVersion; the PV as written, or a
# status with the apiserver's message.
VolumeWriter = Callable[[PersistentVolume], Awaitable[PersistentVolume | Status]]
# The same for a claim's annotations (volume.kubernetes.io/selected-node, to have it provisioned).
ClaimWriter = Callable[[PersistentVolumeClaim], Awaitable[PersistentVolumeClaim | Status]]
# Run a coroutine in the background (the scheduler's task set), for a synchronous extension point
# that must write (preemption: nominate the preemptor, delete its victims).
Spawner = Callable[[Coroutine[Any, Any, Any], str], object]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WriteFailure:
    """A write the apiserver refused: its HTTP status (0 when it was not reached) and message."""

    code: int
    message: str

    @property
    def conflict(self) -> bool:
        """409: the object changed since the version the write was based on."""
        return self.code == 409


class ResourceClaimWrites(Protocol):
    """DynamicResources' writes of a ResourceClaim (kube-scheduler's clientset calls): each answers
    the claim as the apiserver now has it, or why it did not write."""

    async def get(self, namespace: str, name: str) -> ResourceClaim | WriteFailure:
        """The claim as the apiserver has it (read again after a conflict)."""
        ...

    async def update(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        """metadata.finalizers as `claim` has them, on the condition that the apiserver still has
        its resourceVersion (an Update's conflict)."""
        ...

    async def update_status(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        """status.allocation and status.reservedFor as `claim` has them (and status.devices cleared
        when it has none), on the same condition (UpdateStatus)."""
        ...

    async def unreserve(self, claim: ResourceClaim, uid: str) -> ResourceClaim | WriteFailure:
        """The reservedFor entry of this consumer uid removed, whatever the claim's version (a
        strategic merge patch)."""
        ...

    async def create(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        """The claim for a pod's extended resources backed by DRA created (metadata and spec; its
        name generated from metadata.generateName)."""
        ...

    async def delete(self, namespace: str, name: str) -> WriteFailure | None:
        """The claim deleted; one already gone is no failure."""
        ...

    async def set_extended_resource_claim_status(self, pod: Pod,
                                                 status: PodExtendedResourceClaimStatus) -> WriteFailure | None:
        """The pod's status.extendedResourceClaimStatus written (a strategic merge patch of pods/status)."""
        ...


class NoClaimWrites:
    async def get(self, namespace: str, name: str) -> ResourceClaim | WriteFailure:
        return _CANNOT_WRITE

    async def update(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        return _CANNOT_WRITE

    async def update_status(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        return _CANNOT_WRITE

    async def unreserve(self, claim: ResourceClaim, uid: str) -> ResourceClaim | WriteFailure:
        return _CANNOT_WRITE

    async def create(self, claim: ResourceClaim) -> ResourceClaim | WriteFailure:
        return _CANNOT_WRITE

    async def delete(self, namespace: str, name: str) -> WriteFailure | None:
        return _CANNOT_WRITE

    async def set_extended_resource_claim_status(self, pod: Pod,
                                                 status: PodExtendedResourceClaimStatus) -> WriteFailure | None:
        return _CANNOT_WRITE


_CANNOT_WRITE = WriteFailure(0, "this handle cannot write to a cluster")


class Lister(Protocol[T_co]):
    """Read-only view of one informer's store, keyed "namespace/name" (or "name" for nodes)."""

    def get(self, key: str) -> T_co | None: ...

    def list(self) -> Sequence[T_co]: ...


class _Empty(Generic[T_co]):
    def get(self, key: str) -> T_co | None:
        return None

    def list(self) -> Sequence[T_co]:
        return ()


class Nominator(Protocol):
    """The pods nominated to nodes by preemption (kube-scheduler's PodNominator, read side); the
    scheduling queue keeps them."""

    def nominated_nodes(self) -> Collection[str]:
        """The nodes with at least one nominated pod (empty in the common case)."""
        ...

    def nominated_pods_for_node(self, node: str) -> Sequence[PodInfo]: ...


class NoNominations:
    def nominated_nodes(self) -> Collection[str]:
        return ()

    def nominated_pods_for_node(self, node: str) -> Sequence[PodInfo]:
        return ()


# Move these pods to activeQ now (kube-scheduler's Handle.Activate): from unschedulablePods or
# backoffQ, their PreEnqueue plugins asked again; one in a cycle comes back after its backoff.
Activator = Callable[[Iterable[Pod]], None]

# Count one preemption attempt (scheduler_preemption_attempts_total).
PreemptionAttempted = Callable[[], None]
# Observe how many victims one preemption chose (scheduler_preemption_victims).
VictimsChosen = Callable[[int], None]
# Count one failed volume scheduling stage: "predicate", "assume" or "bind"
# (scheduler_volume_scheduling_stage_error_total).
VolumeStageFailed = Callable[[str], None]


def _nothing(*args: object) -> None:
    return None


async def _no_binder(pod: Pod, node_name: str) -> Status | None:
    return Status(Code.ERROR, "no binder: this handle cannot write to a cluster")


async def _no_writes(pod: Pod, value: str) -> Status | None:
    return Status(Code.ERROR, "this handle cannot write to a cluster")


async def _no_volume_writes(obj: PersistentVolume) -> PersistentVolume | Status:
    return Status(Code.ERROR, "this handle cannot write to a cluster")


async def _no_claim_writes(obj: PersistentVolumeClaim) -> PersistentVolumeClaim | Status:
    return Status(Code.ERROR, "this handle cannot write to a cluster")


async def _no_deletes(pod: Pod, value: str, preemptor: Pod | None = None) -> Status | None:
    return Status(Code.ERROR, "this handle cannot write to a cluster")


def _no_spawn(coro: Coroutine[Any, Any, Any], name: str) -> object:
    coro.close()
    log.warning("no task set: this handle cannot run %s in the background", name)
    return None


def _no_snapshot() -> Snapshot:
    raise RuntimeError("no snapshot: this handle is not attached to a scheduler")


@dataclass
class Handle:
    snapshot: Callable[[], Snapshot] = _no_snapshot
    clock: Callable[[], float] = field(default=lambda: 0.0)
    waiting_pods: WaitingPods = field(default_factory=WaitingPods)
    pods: Lister[Pod] = field(default_factory=_Empty)
    nodes: Lister[Node] = field(default_factory=_Empty)
    jobs: Lister[Job] = field(default_factory=_Empty)
    bind_pod: PodBinder = _no_binder
    nominate_pod: PodNominator = _no_writes
    delete_victim: VictimDeleter = _no_deletes
    disrupt_victim: VictimDisruptor = _no_writes
    write_volume: VolumeWriter = _no_volume_writes
    write_claim: ClaimWriter = _no_claim_writes
    resource_claims: ResourceClaimWrites = field(default_factory=NoClaimWrites)
    spawn: Spawner = _no_spawn
    # How a plugin waits (VolumeBinding's PreBind polls the informers); tests pass a fake.
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    nominator: Nominator = field(default_factory=NoNominations)
    activate: Activator = _nothing
    preemption_attempted: PreemptionAttempted = _nothing
    victims_chosen: VictimsChosen = _nothing
    volume_stage_failed: VolumeStageFailed = _nothing
    # The scheduler's extenders (kube-scheduler's Handle.Extenders()), for preemption's callExtenders.
    extenders: Sequence[Extender] = ()
    # The PodGroups and their members' states (GenericWorkload); none without the gate.
    pod_groups: PodGroupManager = field(default_factory=NoPodGroups)
