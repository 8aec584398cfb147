"""A PodGroup's conditions as kube-scheduler's updatePodGroupCondition sets them."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from kubesched.api.pod_group_status import pod_group_conditions
from kubesched.model.workload import Condition, PodGroup, PodGroupStatus
from tests.builders import make_pod_group

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
EARLIER = "2026-01-01T00:00:00Z"
TYPE = "PodGroupInitiallyScheduled"


def _with(*conditions: Condition, generation: int = 0) -> PodGroup:
    group = make_pod_group("pg", min_count=2)
    group.metadata.generation = generation
    return msgspec.structs.replace(group, status=PodGroupStatus(conditions=list(conditions)))


FALSE = Condition(type=TYPE, status="False", reason="Unschedulable", message="m", last_transition_time=EARLIER)
TRUE = Condition(type=TYPE, status="True", reason="Scheduled", last_transition_time=EARLIER)


@pytest.mark.parametrize(("group", "condition", "want"), [
    pytest.param(_with(), Condition(type=TYPE, status="True", reason="Scheduled"),
                 [Condition(type=TYPE, status="True", reason="Scheduled", last_transition_time="2026-01-02T03:04:05Z")],
                 id="new condition"),
    pytest.param(_with(FALSE), Condition(type=TYPE, status="False", reason="Unschedulable", message="m"), None,
                 id="unchanged: nothing sent"),
    pytest.param(_with(FALSE), Condition(type=TYPE, status="False", reason="Unschedulable", message="other"),
                 [msgspec.structs.replace(FALSE, message="other")], id="new message keeps the transition time"),
    pytest.param(_with(FALSE), Condition(type=TYPE, status="True", reason="Scheduled"),
                 [Condition(type=TYPE, status="True", reason="Scheduled", last_transition_time="2026-01-02T03:04:05Z")],
                 id="flip moves the transition time"),
    pytest.param(_with(TRUE), Condition(type=TYPE, status="False", reason="Unschedulable", message="m"), None,
                 id="a True condition is never turned back"),
    pytest.param(_with(generation=3), Condition(type=TYPE, status="True", reason="Scheduled"),
                 [Condition(type=TYPE, status="True", reason="Scheduled", observed_generation=3,
                            last_transition_time="2026-01-02T03:04:05Z")], id="observed generation"),
])
def test_pod_group_conditions(group: PodGroup, condition: Condition, want: list[Condition] | None) -> None:
    assert pod_group_conditions(group, condition, NOW) == want
