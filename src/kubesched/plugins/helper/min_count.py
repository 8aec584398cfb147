"""GangScheduling's PlacementFeasible, on whichever count a group API names (the Workload API's
minCount, scheduler-plugins' minMember): one rule, so the two gang plugins cannot drift apart."""

from __future__ import annotations

from kubesched.framework.status import Code, Status


def min_count_feasible(field: str, need: int, remaining: int, scheduled: int, plugin: str) -> Status | None:
    """Unschedulable once the pods left cannot bring the group to `need`, Wait until they have,
    None once they have; `field` names the count in the message."""
    if remaining + scheduled < need:
        return Status(Code.UNSCHEDULABLE, f"{field} ({need}) cannot be satisfied: {scheduled} scheduled, "
                                          f"{remaining} remaining", plugin=plugin)
    if scheduled < need:
        return Status(Code.WAIT, f"{field} ({need}) is not yet satisfied: {scheduled} scheduled, "
                                 f"{remaining} remaining", plugin=plugin)
    return None
