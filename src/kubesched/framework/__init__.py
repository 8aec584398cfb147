"""The scheduling framework: Status, CycleState, plugin protocols, NodeInfo/PodInfo, the columnar
snapshot, profiles and the scheduling algorithm.

What this package exports is kubesched's plugin API: an out-of-tree plugin imports from here only.
tests/unit/framework/test_framework_api.py pins the list, so removing a name is a conscious change.
"""

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreBindPreFlightResult,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from kubesched.framework.registry import ArgsParser, PluginFactory, PluginSpec, Registry
from kubesched.framework.runtime.profile import Profile, ProfileError, build_profile
from kubesched.framework.runtime.schedule import NodeCursor, ScheduleResult, num_feasible_nodes_to_find, schedule_pod
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import NodeInfo, PodInfo

__all__ = [
    "MAX_NODE_SCORE", "ActionType", "ArgsParser", "BindPlugin", "ClusterEvent", "Code", "CycleState",
    "Diagnosis", "EventResource", "FilterPlugin", "FitError", "Handle", "NodeCursor", "NodeInfo",
    "PermitPlugin", "PluginFactory", "PluginSpec", "PodInfo", "PostBindPlugin", "PostFilterPlugin",
    "PreBindPlugin", "PreBindPreFlightResult", "PreEnqueuePlugin", "PreFilterPlugin", "PreFilterResult",
    "PreScorePlugin", "Profile", "ProfileError", "QueueSortPlugin", "Registry", "ReservePlugin", "ScheduleResult",
    "SchedulingError", "ScorePlugin", "Snapshot", "Status", "build_profile", "num_feasible_nodes_to_find",
    "schedule_pod",
]
