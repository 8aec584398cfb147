"""Plugin protocols, one per extension point (kube-scheduler framework/interface.go).

A plugin is a small class with a `name` and one method per extension point it implements. Filter
and Score take a single NodeInfo, so a plugin is a pure function of (pod, node info) in tests.
Plugins on the hot path may add a batch method over snapshot rows (`filter_batch`, `score_batch`);
the cycle prefers it, and the unit tests check that both paths agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Pod

if TYPE_CHECKING:
    from kubesched.framework.fit_error import FitError

Rows = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.int64]

MAX_NODE_SCORE = 100

# Where a PostFilter plugin leaves its nomination in the CycleState (kube-scheduler's
# PostFilterResult.NominatingInfo): a node name to nominate, "" to clear the pod's nomination.
# Absent: leave status.nominatedNodeName as it is. The failure handler writes it with the condition.
NOMINATED_NODE_KEY = "__post_filter_nominated_node__"


@dataclass(frozen=True)
class PreFilterResult:
    """Nodes a PreFilter already knows are the only candidates; None means all nodes."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


class Plugin(Protocol):
    name: str


@runtime_checkable
class QueuedEntity(Protocol):
    @property
    def priority(self) -> int: ...

    @property
    def timestamp(self) -> float: ...


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    name: str

    def pre_enqueue(self, pod: Pod) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    name: str

    def less(self, a: QueuedEntity, b: QueuedEntity) -> bool: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    name: str

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]: ...


@runtime_checkable
class FilterPlugin(Protocol):
    name: str

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(FilterPlugin, Protocol):
    def filter_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Bools | None:
        """True where the node in that row passes; None when every node passes."""
        ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: str

    def post_filter(self, state: CycleState, pod: PodInfo, fit_error: FitError) -> Status | None: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: str

    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Status | None: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Snapshot) -> int: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    def score_batch(self, state: CycleState, pod: PodInfo, snapshot: Snapshot, rows: Rows) -> Scores: ...


@runtime_checkable
class ScoreNormalizer(Protocol):
    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Scores) -> Scores: ...


@runtime_checkable
class ReservePlugin(Protocol):
    name: str

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    name: str

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """(status, timeout in seconds); a Wait status holds the pod until the plugin allows or
        rejects it through the handle's waiting pods, or the timeout rejects it."""
        ...


@dataclass(frozen=True)
class PreBindPreFlightResult:
    """What a PreBind plugin's pre-flight tells the framework besides its status (kube-scheduler's
    PreBindPreFlightResult): whether its PreBind may run alongside its neighbours' that may too."""

    allow_parallel: bool = False


@runtime_checkable
class PreBindPlugin(Protocol):
    name: str

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None: ...


@runtime_checkable
class PreBindPreFlight(Protocol):
    """kube-scheduler's PreBindPreFlight, which every PreBind plugin there has: cheap, and doing
    nothing, it says whether the plugin's PreBind has work for this pod on this node — Success (it
    has: the scheduler then writes status.nominatedNodeName before PreBind), Skip (none: its PreBind
    is not run) or Error. A PreBind plugin without it is taken to have work (Success)."""

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo,
                            node_name: str) -> tuple[PreBindPreFlightResult | None, Status | None]: ...


@runtime_checkable
class BindPlugin(Protocol):
    name: str

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Skip hands the pod to the next bind plugin; anything else ends the chain."""
        ...


@runtime_checkable
class PostBindPlugin(Protocol):
    name: str

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...
