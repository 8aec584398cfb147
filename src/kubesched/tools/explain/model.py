"""What an explanation holds: per node, every filter's verdict and, for feasible nodes, every
score; for the pod, the nodes with the best total or the FailedScheduling message."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.framework.status import Code
from kubesched.tools.groups import GroupVerdict

# kube-scheduler's names for the status codes (framework/interface.go statusCodeName).
CODE_NAMES: dict[Code, str] = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}

PRE_FILTER = "PreFilter"
FILTER = "Filter"


@dataclass(frozen=True)
class Verdict:
    """One plugin's say about one node (or, at PreFilter, about the pod)."""

    plugin: str
    stage: str  # PRE_FILTER or FILTER
    code: Code
    reasons: tuple[str, ...] = ()
    # The one status kube-scheduler's diagnosis records for the node, which its message counts.
    reported: bool = False
    # At PreFilter: the only nodes the plugin's PreFilterResult lets through (None: all of them).
    node_names: tuple[str, ...] | None = None

    @property
    def code_name(self) -> str:
        return CODE_NAMES[self.code]

    @property
    def failed(self) -> bool:
        return self.code not in (Code.SUCCESS, Code.SKIP)


@dataclass(frozen=True)
class PluginScore:
    plugin: str
    raw: int
    normalized: int
    weight: int

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


@dataclass(frozen=True)
class NodeExplanation:
    name: str
    feasible: bool
    filters: tuple[Verdict, ...]
    scores: tuple[PluginScore, ...] = ()
    total: int | None = None
    # Whether a cycle whose search starts at the first node examines this node before it has found
    # its adaptive number of feasible nodes (a feasible node examined is one it scores).
    sampled: bool = True

    @property
    def reported(self) -> Verdict | None:
        return next((v for v in self.filters if v.reported), None)


@dataclass
class Explanation:
    pod: str  # namespace/name
    profile: str
    nodes: list[NodeExplanation]
    # Names of the feasible nodes sharing the best total; empty when nothing fits.
    selected: list[str]
    # The FailedScheduling message kubesched writes; empty when a node fits.
    message: str
    pre_filter: tuple[Verdict, ...] = ()
    # How many feasible nodes the cycle looks for before it scores (percentageOfNodesToScore).
    nodes_to_find: int = 0
    # The node a cycle starting at the first node picks, if any.
    cycle_pick: str = ""
    skipped_score_plugins: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)
    # The verdict of the pod's group (tools/groups.py), when it is in one scheduled together.
    group: GroupVerdict | None = None

    @property
    def feasible(self) -> list[NodeExplanation]:
        return [n for n in self.nodes if n.feasible]
