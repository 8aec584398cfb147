"""The resource scores with extended resources backed by DRA (kube-scheduler v1.37.2
noderesources): TestCalculateResourceAllocatableRequest's cases (resource_allocation_test.go),
the LeastAllocated cases of fit_test.go and the balanced-allocation cases of
balanced_allocation_test.go that count devices, by their names, each with and without PreScore."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectMeta
from kubesched.model.resource import (
    CELDeviceSelector,
    Device,
    DeviceCapacity,
    DeviceClass,
    DeviceClassSpec,
    DeviceSelector,
    ResourceClaim,
    ResourcePool,
    ResourceSlice,
    ResourceSliceSpec,
)
from kubesched.plugins.dynamic_resources.cel.cache import CelSelectorCache
from kubesched.plugins.dynamic_resources.extended_scoring import DeviceScoring
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.node_resources import balanced_allocation
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.plugins.node_resources.scoring import ResourceSpec
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.dynamic_resources.allocator_fixtures import attrs
from tests.unit.plugins.dynamic_resources.dra_builders import allocation, make_claim, make_slice, result
from tests.unit.scheduling_helpers import snapshot_with

DRA_RESOURCE = "extended.resource.dra.io/something"
CLASS_NAME = "device-class-name"
IMPLICIT = "deviceclass.resource.kubernetes.io/" + CLASS_NAME
CLASS = DeviceClass(ObjectMeta(name=CLASS_NAME), DeviceClassSpec(extended_resource_name=DRA_RESOURCE))
NODE, DRIVER = "resource-node", "test-driver"


def devices(node: str, *names: str) -> ResourceSlice:
    s = make_slice(node, DRIVER)
    for name in names:
        s.device(name)
    return s.obj()


def claim_of(name: str, device: str, share_id: str | None = None, pool: str = NODE) -> ResourceClaim:
    c = make_claim(name).request(CLASS_NAME).obj()
    c.status.allocation = allocation(result(DRIVER, pool, device, "req-1", share_id))
    return c


GPU_CLASS = DeviceClass(ObjectMeta(name=CLASS_NAME), DeviceClassSpec(
    extended_resource_name=DRA_RESOURCE, selectors=[DeviceSelector(cel=CELDeviceSelector(
        'device.driver == "test-driver" && device.capacity["test-driver"].memory.compareTo(quantity("8Gi")) >= 0'
        ' && device.attributes["test-driver"].model.startsWith("SOME-")'))]))
ZONE = NodeSelector([NodeSelectorTerm(match_expressions=[
    NodeSelectorRequirement(key="zone", operator="In", values=["us-east-1a"])])])


def gpu(name: str, model: str, memory: str, **where: object) -> Device:
    return Device(name=name, attributes=attrs(model=model), capacity={"memory": DeviceCapacity(value=memory)},
                  **where)  # type: ignore[arg-type]


PER_DEVICE = ResourceSlice(ObjectMeta(name="per-device-slice"), ResourceSliceSpec(
    driver=DRIVER, pool=ResourcePool(name="per-device-pool", resource_slice_count=1), per_device_node_selection=True,
    devices=[gpu("device-1", "SOME-XYZ", "16Gi", node_name=NODE), gpu("device-2", "SOME-ZYX", "12Gi",
                                                                        node_name="other-node"),
             gpu("device-3", "SOME-XZY", "24Gi", node_selector=ZONE)]))


def totals(resource: str, node: NodeBuilder, classes: Sequence[DeviceClass] = (),
           slices: Sequence[ResourceSlice] = (), claims: Sequence[ResourceClaim] = ()) -> tuple[int, int]:
    """calculateResourceAllocatableRequest through Fit's score path: (allocatable, allocated)."""
    scoring = DeviceScoring(DraManager.of(claims, slices, classes), CelSelectorCache())
    found = scoring.pre_score([resource])
    n = NodeInfo(node.obj())
    alloc = n.allocatable.scalar.get(resource, 0)
    if alloc or found is None:
        return alloc, n.requested.scalar.get(resource, 0)
    return found.totals(resource, n.node)


@pytest.mark.parametrize(("resource", "node", "classes", "slices", "claims", "want"), [
    pytest.param(DRA_RESOURCE, make_node(NODE).capacity(**{"extended.resource.dra.io__something": "4"}), [CLASS],
                 [], [], (4, 0), id="device-plugin-resource-feature-enabled"),
    pytest.param(DRA_RESOURCE, make_node(NODE), [CLASS], [devices(NODE, "device-1")], [], (1, 0),
                 id="DRA-backed-resource-explicit"),
    pytest.param(IMPLICIT, make_node(NODE), [DeviceClass(ObjectMeta(name=CLASS_NAME))], [devices(NODE, "device-1")],
                 [], (1, 0), id="DRA-backed-resource-implicit"),
    pytest.param(DRA_RESOURCE, make_node(NODE), [CLASS], [], [], (0, 0), id="DRA-backed-resource-no-slices"),
    pytest.param(DRA_RESOURCE, make_node(NODE), [CLASS], [devices(NODE, "device-1", "device-2")],
                 [claim_of("test-claim", "device-1")], (2, 1), id="DRA-backed-resource-with-allocated-device"),
    pytest.param(DRA_RESOURCE, make_node(NODE), [CLASS], [devices(NODE, "device-1", "device-2")],
                 [claim_of("test-claim", "device-1", "share-123")], (2, 1),
                 id="DRA-backed-resource-with-shared-device-allocation"),
    pytest.param(DRA_RESOURCE, make_node(NODE), [CLASS], [devices(NODE, "device-1", "device-2", "device-3")],
                 [claim_of("test-claim-1", "device-1"), claim_of("test-claim-2", "device-2", "share-456")], (3, 2),
                 id="DRA-backed-resource-multiple-devices-mixed-allocation"),
    pytest.param(DRA_RESOURCE, make_node(NODE).label("zone", "us-east-1a"), [GPU_CLASS], [PER_DEVICE],
                 [claim_of("test-claim", "device-1", pool="per-device-pool")], (2, 1),
                 id="DRA-backed-resource-with-per-device-node-selection"),
    # Not upstream's: a slice of another node, and a class selector that fails at runtime.
    pytest.param(DRA_RESOURCE, make_node(NODE), [CLASS], [devices("other", "device-1")], [], (0, 0),
                 id="slice-of-another-node"),
    pytest.param(DRA_RESOURCE, make_node(NODE), [DeviceClass(ObjectMeta(name=CLASS_NAME), DeviceClassSpec(
        extended_resource_name=DRA_RESOURCE, selectors=[DeviceSelector(cel=CELDeviceSelector(
            'device.attributes["test-driver"].model == "x"'))]))], [devices(NODE, "device-1")], [], (0, 0),
                 id="runtime-error-scores-without-it"),
])
def test_calculate_resource_allocatable_request(resource: str, node: NodeBuilder, classes: list[DeviceClass],
                                                slices: list[ResourceSlice], claims: list[ResourceClaim],
                                                want: tuple[int, int]) -> None:
    assert totals(resource, node, classes, slices, claims) == want


def _scores(plugin: object, pod: PodBuilder, nodes: Sequence[NodeBuilder], pre_score: bool,
            pods: Sequence[PodBuilder] = ()) -> list[int]:
    snap = snapshot_with(list(nodes), list(pods))
    info, state = PodInfo(pod.obj()), CycleState()
    if pre_score:
        plugin.pre_score(state, info, snap, snap.all_rows)  # type: ignore[attr-defined]
    one = [plugin.score(state, info, snap.node_infos[i], snap) for i in range(snap.n)]  # type: ignore[attr-defined]
    assert plugin.score_batch(state, info, snap, snap.all_rows).tolist() == one  # type: ignore[attr-defined]
    return one


def _dra_pod() -> PodBuilder:
    pod = make_pod("p")
    pod.obj().spec.containers[0].resources.requests = {DRA_RESOURCE: "1"}
    return pod


@pytest.mark.parametrize("pre_score", [pytest.param(True, id="PreScore"),
                                       pytest.param(False, id="PreScore not called")])
def test_least_allocated_with_extended_resources(pre_score: bool) -> None:
    """fit_test.go: "test case for ScoringStrategy LeastAllocated with Extended resources"."""
    scoring = DeviceScoring(DraManager.of((), [devices("node1", "device-1", "device-2", "device-3"),
                                               devices("node2", "device-1", "device-2")], [CLASS]),
                            CelSelectorCache())
    plugin = node_resources_fit.NodeResourcesFit(resources=[ResourceSpec(DRA_RESOURCE, 1)], devices=scoring)
    nodes = [make_node("node1").capacity(cpu=None, memory=None, pods=None),
             make_node("node2").capacity(cpu=None, memory=None, pods=None)]
    assert _scores(plugin, _dra_pod(), nodes, pre_score) == [66, 50]


@pytest.mark.parametrize("pre_score", [pytest.param(True, id="PreScore"),
                                       pytest.param(False, id="PreScore not called")])
def test_include_dra_resource_on_a_node_for_balanced_resource_allocation(pre_score: bool) -> None:
    """balanced_allocation_test.go: node1 has 8 devices of the class, node2 none."""
    scoring = DeviceScoring(DraManager.of((), [devices("node1", *(f"device-{i}" for i in range(1, 9)))], [CLASS]),
                            CelSelectorCache())
    # Through the plugin's factory, as the registry builds it: args, then the device source.
    plugin = balanced_allocation.new(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                       {"name": DRA_RESOURCE, "weight": 1}]}, scoring)
    nodes = [make_node("node1").capacity(cpu="3500m", memory="40000", pods="110"),
             make_node("node2").capacity(cpu="3500m", memory="40000", pods="110")]
    pods = [make_pod("a").node("node1").req(cpu="3000m"), make_pod("c").node("node2").req(cpu="3000m", memory="5000")]
    assert _scores(plugin, _dra_pod(), nodes, pre_score, pods) == [76, 75]


def test_without_a_class_for_a_scored_resource_the_columns_path_is_kept() -> None:
    scoring = DeviceScoring(DraManager.of((), [devices("node1", "device-1")], []), CelSelectorCache())
    assert scoring.pre_score(["cpu", "memory", DRA_RESOURCE]) is None
    assert scoring.pre_score(["cpu", "memory"]) is None


@pytest.mark.parametrize("pre_score", [pytest.param(True, id="PreScore"),
                                       pytest.param(False, id="PreScore not called")])
def test_least_allocated_counts_a_single_device(pre_score: bool) -> None:
    """By hand from calculateResourceAllocatableRequest (the class's devices count when there are
    more than 0): node1 has one device, so the DRA resource scores (1 - 1) * 100 / 1 = 0 beside
    cpu (4000 - 100) * 100 / 4000 = 97 (the pod's non-zero 100m): (0 + 97) / 2 = 48. node2 has no
    device: the resource is skipped, 97."""
    scoring = DeviceScoring(DraManager.of((), [devices("node1", "device-1")], [CLASS]), CelSelectorCache())
    plugin = node_resources_fit.NodeResourcesFit(resources=[ResourceSpec(DRA_RESOURCE, 1), ResourceSpec("cpu", 1)],
                                                 devices=scoring)
    nodes = [make_node("node1").capacity(cpu="4", memory=None, pods=None),
             make_node("node2").capacity(cpu="4", memory=None, pods=None)]
    assert _scores(plugin, _dra_pod(), nodes, pre_score) == [48, 97]
