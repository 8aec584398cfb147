"""Table tests of the NodePorts filter's verdict and reason text."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import CycleState, PodInfo
from kubesched.plugins import node_ports
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNSCHEDULABLE, run_filter, verdict
from tests.unit.scheduling_helpers import snapshot_with

PORTS = (UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",))


@pytest.mark.parametrize(("pod", "existing", "want"), [
    pytest.param(make_pod("p").host_port(80), (), None, id="free"),
    pytest.param(make_pod("p").host_port(80), (make_pod("q").host_port(80),), PORTS, id="same-port"),
    pytest.param(make_pod("p").host_port(80, "UDP"), (make_pod("q").host_port(80),), None, id="other-protocol"),
    pytest.param(make_pod("p").host_port(80, host_ip="10.0.0.1"), (make_pod("q").host_port(80, host_ip="10.0.0.2"),),
                 None, id="other-ip"),
    pytest.param(make_pod("p").host_port(80, host_ip="10.0.0.1"), (make_pod("q").host_port(80),), PORTS,
                 id="wildcard-used"),
    pytest.param(make_pod("p").host_port(80), (make_pod("q").host_port(80, host_ip="10.0.0.2"),), PORTS,
                 id="wildcard-wanted"),
    pytest.param(make_pod("p").host_port(81), (make_pod("q").host_port(80),), None, id="other-port"),
])
def test_node_ports(pod: PodBuilder, existing: tuple[PodBuilder, ...], want: object) -> None:
    assert verdict(run_filter(node_ports.NodePorts(), pod, make_node("n"), existing)) == want



# TestNodePorts' "same tcp port" and "other port" on several nodes at once: the batch passes a node when
# fitsPorts does (no wanted port used there), by position in the rows asked, here out of order. n0 and
# n2 run a pod on TCP 80, n3 one on TCP 81, n1 none.
@pytest.mark.parametrize(("pod", "rows", "want"), [
    pytest.param(make_pod("p").host_port(80), [1, 0, 2, 3], [True, False, False, True],
                 id="same tcp port, every row out of order"),
    pytest.param(make_pod("p").host_port(80), [2, 1], [False, True], id="same tcp port, two rows"),
    pytest.param(make_pod("p").host_port(81), [3, 0], [False, True], id="other port on n0, the same on n3"),
])
def test_node_ports_batch(pod: PodBuilder, rows: list[int], want: list[bool]) -> None:
    snap = snapshot_with([make_node("n0"), make_node("n1"), make_node("n2"), make_node("n3")],
                         [make_pod("q0").node("n0").host_port(80), make_pod("q2").node("n2").host_port(80),
                          make_pod("q3").node("n3").host_port(81)])
    mask = node_ports.NodePorts().filter_batch(CycleState(), PodInfo(pod.obj()), snap, np.array(rows, dtype=np.intp))
    assert mask is not None
    assert mask.tolist() == want
