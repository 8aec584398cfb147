"""Which pods a kubesched profile should ever queue."""

from __future__ import annotations

from collections.abc import Collection

from kubesched.model.objects import Pod


def eligible(pod: Pod, scheduler_names: Collection[str]) -> bool:
    """Ours, unassigned and alive. Gated pods are queued too: the queue's PreEnqueue plugins
    (SchedulingGates) hold them back, as in kube-scheduler, and report them as `gated`."""
    spec = pod.spec
    return (
        spec.scheduler_name in scheduler_names
        and not spec.node_name
        and pod.metadata.deletion_timestamp is None
        and pod.status.phase not in ("Succeeded", "Failed")
    )
