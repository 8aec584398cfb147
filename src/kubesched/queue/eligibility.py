"""Which pods a kubesched profile should ever queue."""

from __future__ import annotations

from collections.abc import Collection

from kubesched.model.objects import Pod


def eligible(pod: Pod, scheduler_names: Collection[str]) -> bool:
    """Ours, unassigned, alive, and not held back by schedulingGates.

    kube-scheduler keeps gated pods in its queue (to report them as `gated`); kubesched leaves them
    out and picks them up from the pod update that removes the last gate.
    """
    spec = pod.spec
    return (
        spec.scheduler_name in scheduler_names
        and not spec.node_name
        and pod.metadata.deletion_timestamp is None
        and pod.status.phase not in ("Succeeded", "Failed")
        and not spec.scheduling_gates
    )
