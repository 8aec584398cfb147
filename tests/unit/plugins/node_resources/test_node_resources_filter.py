"""Table tests of the NodeResourcesFit filter's verdict and reason text."""

from __future__ import annotations

import pytest

from kubesched.plugins.node_resources import fit as node_resources_fit
from tests.builders import PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, UNSCHEDULABLE, run_filter, verdict

SMALL = make_node("n").capacity(cpu="1", memory="1Gi", pods="2", example_com__gpu="1")


@pytest.mark.parametrize(("pod", "existing", "want"), [
    pytest.param(make_pod("p").req(cpu="500m", memory="512Mi"), (), None, id="fits"),
    pytest.param(make_pod("p").req(cpu="2"), (), (UNRESOLVABLE, ("Insufficient cpu",)), id="cpu-over-allocatable"),
    pytest.param(make_pod("p").req(cpu="600m"), (make_pod("q").req(cpu="500m"),),
                 (UNSCHEDULABLE, ("Insufficient cpu",)), id="cpu-used"),
    pytest.param(make_pod("p").req(memory="2Gi"), (), (UNRESOLVABLE, ("Insufficient memory",)), id="memory"),
    pytest.param(make_pod("p").req(ephemeral_storage="1Gi"), (),
                 (UNRESOLVABLE, ("Insufficient ephemeral-storage",)), id="ephemeral-storage"),
    pytest.param(make_pod("p").req(example_com__gpu="2"), (), (UNRESOLVABLE, ("Insufficient example.com/gpu",)),
                 id="extended"),
    pytest.param(make_pod("p").req(example_com__tpu="1"), (), (UNRESOLVABLE, ("Insufficient example.com/tpu",)),
                 id="extended-absent-on-node"),
    pytest.param(make_pod("p"), (make_pod("a"), make_pod("b")), (UNSCHEDULABLE, ("Too many pods",)),
                 id="too-many-pods"),
    pytest.param(make_pod("p").req(cpu="2", memory="2Gi"), (make_pod("a"), make_pod("b")),
                 (UNRESOLVABLE, ("Too many pods", "Insufficient cpu", "Insufficient memory")),
                 id="all-reasons-in-order"),
    pytest.param(make_pod("p").req(cpu="1").init_req(cpu="2"), (), (UNRESOLVABLE, ("Insufficient cpu",)),
                 id="init-container-counts"),
    pytest.param(make_pod("p").req(cpu="900m").overhead(cpu="200m"), (), (UNRESOLVABLE, ("Insufficient cpu",)),
                 id="overhead-counts"),
    # fitsRequest checks cpu, memory and ephemeral-storage only when the pod asks for them
    # (`podRequest.MilliCPU > 0 && ...`): a node its pods over-commit (allocatable shrunk under
    # them) still takes a pod that asks for none of the three.
    pytest.param(make_pod("p"), (make_pod("q").req(cpu="1500m", memory="2Gi"),), None,
                 id="no-request-fits-an-over-committed-node"),
    pytest.param(make_pod("p").req(memory="1Mi"), (make_pod("q").req(cpu="1500m"),), None,
                 id="memory-only-fits-a-cpu-over-committed-node"),
])
def test_node_resources_fit(pod: PodBuilder, existing: tuple[PodBuilder, ...], want: object) -> None:
    assert verdict(run_filter(node_resources_fit.NodeResourcesFit(), pod, SMALL, existing)) == want


@pytest.mark.parametrize("args", [
    pytest.param({"ignoredResources": ["example.com/tpu"]}, id="ignoredResources"),
    pytest.param({"ignoredResourceGroups": ["example.com"]}, id="ignoredResourceGroups"),
])
def test_node_resources_fit_ignored(args: dict[str, list[str]]) -> None:
    plugin = node_resources_fit.new(args)
    assert run_filter(plugin, make_pod("p").req(example_com__tpu="1"), SMALL) is None
