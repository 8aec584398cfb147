"""The scheduling framework: Status, CycleState, plugin protocols, NodeInfo/PodInfo, the columnar
snapshot, profiles and the scheduling algorithm."""

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.interface import MAX_NODE_SCORE, PreFilterResult
from kubesched.framework.profile import Profile, ProfileError, build_profile
from kubesched.framework.registry import PluginFactory, Registry
from kubesched.framework.schedule import NodeCursor, ScheduleResult, num_feasible_nodes_to_find, schedule_pod
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import NodeInfo, PodInfo

__all__ = [
    "MAX_NODE_SCORE", "Code", "CycleState", "Diagnosis", "FitError", "NodeCursor", "NodeInfo",
    "PluginFactory", "PodInfo", "PreFilterResult", "Profile", "ProfileError", "Registry",
    "ScheduleResult", "SchedulingError", "Snapshot", "Status", "build_profile",
    "num_feasible_nodes_to_find", "schedule_pod",
]
