"""Table tests of the NodePorts filter's verdict and reason text."""

from __future__ import annotations

import pytest

from kubesched.plugins import node_ports
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNSCHEDULABLE, run_filter, verdict

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
