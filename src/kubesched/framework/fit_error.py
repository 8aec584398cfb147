"""Why a pod fits nowhere: per-node statuses and kube-scheduler's FailedScheduling message."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo


@dataclass
class Diagnosis:
    # The status of each node the filters rejected, by node name.
    node_to_status: dict[str, Status] = field(default_factory=dict)
    # Nodes absent from node_to_status (cut by a PreFilter result, or all nodes when a PreFilter
    # rejected the pod) count with this status's reasons.
    absent_nodes_status: Status = field(default_factory=lambda: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    # What the PostFilter plugins (preemption) said, appended to the message as kube-scheduler does.
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)
        if status.code == Code.PENDING:
            self.pending_plugins.add(status.plugin)


@dataclass
class FitError:
    pod: PodInfo
    num_all_nodes: int
    diagnosis: Diagnosis

    def reason_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for status in self.diagnosis.node_to_status.values():
            counts.update(status.reasons)
        absent = self.num_all_nodes - len(self.diagnosis.node_to_status)
        if absent > 0:
            for reason in self.diagnosis.absent_nodes_status.reasons:
                counts[reason] += absent
        return counts

    def message(self) -> str:
        """kube-scheduler v1.37.2's FitError text, up to where its ' preemption: ...' part would begin."""
        if self.num_all_nodes == 0:
            return "no nodes available to schedule pods"
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if self.diagnosis.pre_filter_msg:
            msg = f"{msg} {self.diagnosis.pre_filter_msg}."
        else:
            parts = sorted(f"{count} {reason}" for reason, count in self.reason_counts().items())
            if parts:
                msg += f" {', '.join(parts)}."
        if self.diagnosis.post_filter_msg:
            msg += f" {self.diagnosis.post_filter_msg}"
        return msg

    def __str__(self) -> str:
        return self.message()
