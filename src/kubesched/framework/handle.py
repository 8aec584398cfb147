"""What a plugin may reach beyond its arguments (kube-scheduler's framework.Handle), behind small
ports so plugins stay free of I/O: the scheduler's snapshot, its clock, the pods waiting at
Permit, and the one write a bind plugin needs. Preemption's ports (nominate a pod, delete a
victim) join here when it does."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting import WaitingPods
from kubesched.model.objects import Pod

# POST the pod's Binding: None when bound, else a status with the apiserver's message.
PodBinder = Callable[[Pod, str], Awaitable[Status | None]]


async def _no_binder(pod: Pod, node_name: str) -> Status | None:
    return Status(Code.ERROR, "no binder: this handle cannot write to a cluster")


def _no_snapshot() -> Snapshot:
    raise RuntimeError("no snapshot: this handle is not attached to a scheduler")


@dataclass
class Handle:
    snapshot: Callable[[], Snapshot] = _no_snapshot
    clock: Callable[[], float] = field(default=lambda: 0.0)
    waiting_pods: WaitingPods = field(default_factory=WaitingPods)
    bind_pod: PodBinder = _no_binder
