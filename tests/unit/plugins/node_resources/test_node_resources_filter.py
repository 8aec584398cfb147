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


# 1 cpu, 1Gi memory, 1Gi ephemeral-storage, 2 example.com/gpu, room for 4 pods.
STORAGE = make_node("n").capacity(cpu="1", memory="1Gi", pods="4", ephemeral_storage="1Gi", example_com__gpu="2")
_CPU, _MEM, _EPH, _GPU = (f"Insufficient {r}" for r in ("cpu", "memory", "ephemeral-storage", "example.com/gpu"))


@pytest.mark.parametrize(("pod", "existing", "want"), [
    # fitsRequest by hand, kube-scheduler v1.37.2 fit.go: insufficient when the request exceeds
    # allocatable - requested; unresolvable only when it exceeds allocatable alone.
    pytest.param(make_pod("p").req(cpu="1"), (make_pod("q").req(cpu="1m"),), (UNSCHEDULABLE, (_CPU,)),
                 id="cpu-equal-to-allocatable-is-resolvable"),
    pytest.param(make_pod("p").req(memory="1Gi"), (make_pod("q").req(memory="1"),), (UNSCHEDULABLE, (_MEM,)),
                 id="memory-equal-to-allocatable-is-resolvable"),
    pytest.param(make_pod("p").req(ephemeral_storage="1Gi"), (make_pod("q").req(ephemeral_storage="1"),),
                 (UNSCHEDULABLE, (_EPH,)), id="ephemeral-equal-to-allocatable-is-resolvable"),
    pytest.param(make_pod("p").req(example_com__gpu="2"), (make_pod("q").req(example_com__gpu="1"),),
                 (UNSCHEDULABLE, (_GPU,)), id="extended-equal-to-allocatable-is-resolvable"),
    pytest.param(make_pod("p").req(cpu="1m"), (make_pod("q").req(cpu="1"),), (UNSCHEDULABLE, (_CPU,)),
                 id="one-millicpu-on-a-full-node"),
    pytest.param(make_pod("p").req(memory="1"), (make_pod("q").req(memory="1Gi"),), (UNSCHEDULABLE, (_MEM,)),
                 id="one-byte-of-memory-on-a-full-node"),
    pytest.param(make_pod("p").req(ephemeral_storage="1"), (make_pod("q").req(ephemeral_storage="1Gi"),),
                 (UNSCHEDULABLE, (_EPH,)), id="one-byte-of-ephemeral-storage-on-a-full-node"),
    pytest.param(make_pod("p").req(memory="768Mi"), (make_pod("q").req(memory="512Mi"),),
                 (UNSCHEDULABLE, (_MEM,)), id="memory-used"),
    pytest.param(make_pod("p").req(ephemeral_storage="768Mi"), (make_pod("q").req(ephemeral_storage="512Mi"),),
                 (UNSCHEDULABLE, (_EPH,)), id="ephemeral-used"),
    pytest.param(make_pod("p").req(ephemeral_storage="512Mi"), (make_pod("q").req(ephemeral_storage="512Mi"),),
                 None, id="ephemeral-exactly-the-rest"),
    # A resource the pod asks none of is not checked, however over-committed the node is.
    pytest.param(make_pod("p").req(cpu="1m"), (make_pod("q").req(memory="2Gi"),), None,
                 id="cpu-only-fits-a-memory-over-committed-node"),
    pytest.param(make_pod("p").req(cpu="1m"), (make_pod("q").req(ephemeral_storage="2Gi"),), None,
                 id="cpu-only-fits-an-ephemeral-over-committed-node"),
    pytest.param(make_pod("p").req(cpu="1m", example_com__gpu="0"), (make_pod("q").req(example_com__gpu="3"),),
                 None, id="zero-extended-fits-an-over-committed-node"),
    # Each extended resource is checked: one asked as 0 (sorted first) does not end the loop.
    pytest.param(make_pod("p").req(example_com__aaa="0", example_com__gpu="3"), (),
                 (UNRESOLVABLE, (_GPU,)), id="zero-extended-then-an-insufficient-one"),
])
def test_node_resources_fit_boundaries(pod: PodBuilder, existing: tuple[PodBuilder, ...], want: object) -> None:
    assert verdict(run_filter(node_resources_fit.NodeResourcesFit(), pod, STORAGE, existing)) == want


@pytest.mark.parametrize("args", [
    pytest.param({"ignoredResources": ["example.com/tpu"]}, id="ignoredResources"),
    pytest.param({"ignoredResourceGroups": ["example.com"]}, id="ignoredResourceGroups"),
])
def test_node_resources_fit_ignored(args: dict[str, list[str]]) -> None:
    plugin = node_resources_fit.new(args)
    assert run_filter(plugin, make_pod("p").req(example_com__tpu="1"), SMALL) is None
