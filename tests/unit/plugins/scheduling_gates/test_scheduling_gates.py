"""The SchedulingGates PreEnqueue verdict and reason text."""

from __future__ import annotations

from kubesched.plugins import scheduling_gates
from tests.builders import make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, verdict


def test_scheduling_gates() -> None:
    plugin = scheduling_gates.SchedulingGates()
    assert plugin.pre_enqueue(make_pod("p").obj()) is None
    status = plugin.pre_enqueue(make_pod("p").gate("a").gate("b").obj())
    assert verdict(status) == (UNRESOLVABLE, ("waiting for scheduling gates: [a b]",))
