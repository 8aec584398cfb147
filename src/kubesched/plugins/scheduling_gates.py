"""SchedulingGates: a pod with scheduling gates waits outside the active queue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.status import Code, Status
from kubesched.model.objects import Pod

NAME = "SchedulingGates"


class SchedulingGates:
    name = NAME

    _EVENTS = (ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),)

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        # Go prints the []string with %v: "[a b]".
        names = " ".join(g.name for g in gates)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{names}]",
                      plugin=NAME)


def new(args: Mapping[str, Any]) -> SchedulingGates:
    return SchedulingGates()
