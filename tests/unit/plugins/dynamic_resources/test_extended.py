"""Extended resources backed by DRA: upstream's Test_createRequestsAndMappings_requests and
_mappings (extendeddynamicresources_test.go) and the extended-resource-* cases of TestPlugin
(dynamicresources_test.go, kube-scheduler v1.37.2) by their names, the extended-resource cache's
choice of class, and the default profile placing such a pod on the node with the device."""

from __future__ import annotations

import dataclasses

import pytest

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import FitError, ScheduleResult, build_profile
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.status import Code, Status
from kubesched.model.objects import (
    Container,
    ContainerExtendedResourceRequest,
    ObjectMeta,
    Pod,
    PodExtendedResourceClaimStatus,
    PodSpec,
    ResourceRequirements,
)
from kubesched.model.resource import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    DeviceClass,
    DeviceClassSpec,
    DeviceRequestAllocationResult,
    ResourceClaim,
    ResourceClaimConsumerReference,
)
from kubesched.plugins.dynamic_resources.extended import (
    DEVICE_CLASS_PREFIX,
    SPECIAL_CLAIM_IN_MEM_NAME,
    CannotFit,
    class_mapping,
    create_requests_and_mappings,
    node_extended_resources,
)
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.registry import in_tree_registry
from tests.builders import make_node, make_pod
from tests.unit.plugins.dynamic_resources.dra_builders import (
    ALLOCATED_CLAIM,
    CLASS_NAME,
    DEVICE_CLASS,
    DRIVER,
    LARGE_WORKER_NODE_SLICE,
    NAMESPACE,
    NODE2_NAME,
    NODE_NAME,
    PENDING_CLAIM,
    POD_NAME,
    POD_UID,
    WORKER_NODE_SLICE,
    allocation,
    from_claim,
    make_claim,
    make_slice,
    result,
)
from tests.unit.plugins.dynamic_resources.plugin_harness import Case, Result, Want, run
from tests.unit.plugins.dynamic_resources.test_plugin import in_claim, status_of
from tests.unit.plugins.dynamic_resources.test_plugin import reserve as reserve_claim
from tests.unit.scheduling_helpers import schedule

GPU = "example.com/gpu"
GPU2 = "example.com/gpu2"
IMPLICIT = DEVICE_CLASS_PREFIX + CLASS_NAME


def st_pod(*containers: tuple[str, dict[str, str]]) -> Pod:
    """st.MakePod().Res/Req (kind "con"), InitReq ("init") and SidecarReq ("sidecar"), with
    upstream's container names."""
    spec = PodSpec()
    spec.containers, spec.init_containers = [], []
    for kind, requests in containers:
        if kind == "con":
            spec.containers.append(Container(name=f"con{len(spec.containers)}",
                                             resources=ResourceRequirements(requests=dict(requests))))
        else:
            prefix = "sidecar-con" if kind == "sidecar" else "init-con"
            spec.init_containers.append(Container(
                name=f"{prefix}{len(spec.init_containers)}", resources=ResourceRequirements(requests=dict(requests)),
                restart_policy="Always" if kind == "sidecar" else None))
    return Pod(metadata=ObjectMeta(name=POD_NAME, namespace=NAMESPACE, uid=POD_UID), spec=spec)


def _class(name: str, extended: str | None = None, created: str | None = None) -> DeviceClass:
    return DeviceClass(ObjectMeta(name=name, creation_timestamp=created),
                       DeviceClassSpec(extended_resource_name=extended))


# --- createRequestsAndMappings -----------------------------------------------------------------------

E = GPU
POD1 = st_pod(("con", {E: "1", E + "1": "2"}))
POD2 = st_pod(("con", {E: "1"}), ("con", {E + "1": "2"}))
POD_INIT = st_pod(("con", {E: "1"}), ("init", {E + "init": "2"}))
POD_INIT2 = st_pod(("con", {E: "1"}), ("init", {E + "init": "1"}), ("init", {E + "init": "2"}))
POD_INIT3 = st_pod(("con", {E: "1"}), ("init", {E + "init": "1"}), ("sidecar", {E + "init": "1"}),
                   ("init", {E + "init": "2"}))
POD1_INIT_IMPLICIT = st_pod(("init", {E + "init": "1", DEVICE_CLASS_PREFIX + "classInit": "2"}))
POD_INIT_IMPLICIT = st_pod(("con", {E: "1"}), ("init", {E + "init": "1"}),
                           ("init", {DEVICE_CLASS_PREFIX + "classInit": "2"}))
RES = {E: 1}
RES2 = {E: 1, E + "1": 2}
RES_INIT = {E: 1, E + "init": 2}
RES_INIT_IMPLICIT = {E: 1, E + "init": 2, DEVICE_CLASS_PREFIX + "classInit": 2}
DEV_MAP = {E: _class("class")}
DEV_MAP2 = {E: _class("class"), E + "1": _class("class1")}
DEV_MAP_INIT = {E: _class("class"), E + "init": _class("classInit"),
                DEVICE_CLASS_PREFIX + "classInit": _class("classInit")}


@pytest.mark.parametrize(("pod", "extended", "mapping", "want"), [
    pytest.param(POD1, {}, {}, [], id="nil"),
    pytest.param(POD1, RES, DEV_MAP, [("container-0-request-0", "class", 1)], id="one resource match"),
    pytest.param(POD1, RES2, DEV_MAP, [("container-0-request-0", "class", 1)],
                 id="one resource match, one resource not match"),
    pytest.param(POD1, RES2, DEV_MAP2, [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)],
                 id="two resources match"),
    pytest.param(POD2, RES2, DEV_MAP2, [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)],
                 id="two containers match"),
    pytest.param(POD_INIT, RES_INIT, DEV_MAP_INIT,
                 [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)],
                 id="one init container, one regular container"),
    pytest.param(POD_INIT2, RES_INIT, DEV_MAP_INIT,
                 [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)],
                 id="two init containers, one regular container"),
    pytest.param(POD_INIT3, RES_INIT, DEV_MAP_INIT,
                 [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2),
                  ("container-3-request-0", "class", 1)],
                 id="three init containers, one sidecar, one regular container"),
])
def test_create_requests(pod: Pod, extended: dict[str, int], mapping: dict[str, DeviceClass],
                         want: list[tuple[str, str, int]]) -> None:
    requests, _ = create_requests_and_mappings(pod, extended, mapping)
    got = [(r.name, r.exactly.device_class_name, r.exactly.count) for r in requests if r.exactly is not None]
    assert got == want
    assert all(r.exactly is not None and r.exactly.allocation_mode == "ExactCount" for r in requests)


def _m(container: str, resource: str, request: str) -> tuple[str, str, str]:
    return container, resource, request


@pytest.mark.parametrize(("pod", "extended", "mapping", "want"), [
    pytest.param(POD1, RES2, DEV_MAP2, [_m("con0", E, "container-0-request-0"),
                                        _m("con0", E + "1", "container-0-request-1")],
                 id="one container, two requests"),
    pytest.param(POD1_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT,
                 [_m("init-con0", DEVICE_CLASS_PREFIX + "classInit", "container-0-request-0"),
                  _m("init-con0", E + "init", "container-0-request-1")],
                 id="one container, one explicit and one implicit request"),
    pytest.param(POD2, RES2, DEV_MAP2, [_m("con0", E, "container-0-request-0"),
                                        _m("con1", E + "1", "container-1-request-0")],
                 id="two containers, two requests"),
    pytest.param(POD_INIT, RES_INIT, DEV_MAP_INIT, [_m("init-con0", E + "init", "container-0-request-0"),
                                                    _m("con0", E, "container-1-request-0")],
                 id="one init container, one regular container, one request"),
    pytest.param(POD_INIT2, RES_INIT, DEV_MAP_INIT, [_m("init-con0", E + "init", "container-1-request-0"),
                                                     _m("init-con1", E + "init", "container-1-request-0"),
                                                     _m("con0", E, "container-2-request-0")],
                 id="three containers (two are init container), two requests"),
    pytest.param(POD_INIT_IMPLICIT, RES_INIT_IMPLICIT, DEV_MAP_INIT,
                 [_m("init-con0", E + "init", "container-0-request-0"),
                  _m("init-con1", DEVICE_CLASS_PREFIX + "classInit", "container-1-request-0"),
                  _m("con0", E, "container-2-request-0")],
                 id="three containers (two are init container), both explicit and implicit resources"),
    pytest.param(POD_INIT3, RES_INIT, DEV_MAP_INIT, [_m("init-con0", E + "init", "container-1-request-0"),
                                                     _m("sidecar-con1", E + "init", "container-1-request-0"),
                                                     _m("init-con2", E + "init", "container-2-request-0"),
                                                     _m("con0", E, "container-3-request-0")],
                 id="four containers (two are init container, one sidecar), three requests"),
])
def test_create_mappings(pod: Pod, extended: dict[str, int], mapping: dict[str, DeviceClass],
                         want: list[tuple[str, str, str]]) -> None:
    _, mappings = create_requests_and_mappings(pod, extended, mapping)
    # Upstream sorts by request name, then container name, before comparing.
    got = sorted(((m.container_name, m.resource_name, m.request_name) for m in mappings), key=lambda m: (m[2], m[0]))
    assert got == want


# --- the extended-resource cache and the node's share ---------------------------------------------

@pytest.mark.parametrize(("classes", "want"), [
    pytest.param([_class("old", GPU, "2026-01-01T00:00:00Z"), _class("new", GPU, "2026-02-01T00:00:00Z")], "new",
                 id="newest-wins"),
    pytest.param([_class("b", GPU, "2026-01-01T00:00:00Z"), _class("a", GPU, "2026-01-01T00:00:00Z")], "a",
                 id="same-age-lower-name"),
])
def test_class_mapping_picks_one_class_per_name(classes: list[DeviceClass], want: str) -> None:
    mapping = class_mapping(classes)
    assert mapping[GPU].metadata.name == want
    assert {n for n in mapping if n != GPU} == {DEVICE_CLASS_PREFIX + c.metadata.name for c in classes}


MAPPING = class_mapping([_class(CLASS_NAME, GPU)])


@pytest.mark.parametrize(("scalar", "allocatable", "want"), [
    pytest.param({GPU: 1}, {}, {GPU: 1}, id="not-in-allocatable"),
    pytest.param({GPU: 1}, {GPU: 0}, {GPU: 1}, id="zero-allocatable"),
    pytest.param({GPU: 1}, {GPU: 2}, {}, id="device-plugin"),
    pytest.param({IMPLICIT: 2}, {}, {IMPLICIT: 2}, id="implicit-name"),
    pytest.param({GPU: 0}, {}, {}, id="zero-request"),
    pytest.param({"hugepages-2Mi": 1}, {}, {}, id="not-an-extended-resource-name"),
    pytest.param({"other.example.com/fpga": 1}, {"other.example.com/fpga": 1}, {}, id="unmapped-in-allocatable"),
])
def test_node_extended_resources(scalar: dict[str, int], allocatable: dict[str, int], want: dict[str, int]) -> None:
    assert node_extended_resources(scalar, allocatable, MAPPING) == want


def test_node_extended_resources_unmapped_and_not_in_allocatable_cannot_fit() -> None:
    with pytest.raises(CannotFit):
        node_extended_resources({GPU: 1, "other.example.com/fpga": 1}, {}, MAPPING)


# --- TestPlugin's extended-resource cases ----------------------------------------------------------

DEVICE_CLASS_WITH_EXT = _class(CLASS_NAME, GPU)
DEVICE_CLASS_WITH_EXT2 = _class(CLASS_NAME + "2", GPU2)
POD_EXT = make_pod(POD_NAME, NAMESPACE).uid(POD_UID).req(example_com__gpu="1").obj()
POD_EXT2 = make_pod(POD_NAME, NAMESPACE).uid(POD_UID).req(example_com__gpu="1", example_com__gpu2="1").obj()
POD_IMPLICIT = make_pod(POD_NAME, NAMESPACE).uid(POD_UID).req().obj()
POD_IMPLICIT.spec.containers[0].resources.requests = {IMPLICIT: "1", GPU: "2"}
POD_IMPLICIT_TWO = make_pod(POD_NAME, NAMESPACE).uid(POD_UID).req().req().obj()
POD_IMPLICIT_TWO.spec.containers[0].resources.requests = {IMPLICIT: "1"}
POD_IMPLICIT_TWO.spec.containers[1].resources.requests = {GPU: "2"}
WORKER_NODE_WITH_EXT = make_node(NODE_NAME).label("kubernetes.io/hostname", NODE_NAME) \
    .capacity(cpu=None, memory=None, pods=None, example_com__gpu="1").obj()
WORKER_NODE_WITH_EXT_ZERO = make_node(NODE_NAME).label("kubernetes.io/hostname", NODE_NAME) \
    .capacity(cpu=None, memory=None, pods=None, example_com__gpu="0").obj()
CREATED = "my-pod-extended-resources-0"


def ext_claim(name: str, *requests: tuple[str, str, int], node: str = NODE_NAME,
              devices: tuple[str, ...] = ()) -> ResourceClaim:
    """extendedResourceClaim and its kin: annotated, owned by the pod, the requests allocated one
    device each (or `devices` in turn)."""
    b = make_claim(name, NAMESPACE).owner_reference(POD_NAME, POD_UID)
    b.obj().metadata.generate_name = POD_NAME + "-extended-resources-"
    b.obj().metadata.annotations = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    results: list[DeviceRequestAllocationResult] = []
    wanted = iter(devices or [f"instance-{i}" for i in range(1, 1 + sum(c for _, _, c in requests))])
    for request, cls, count in requests:
        b.request_named(request, cls, count)
        results.extend(result(DRIVER, node, next(wanted), request) for _ in range(count))
    return b.allocation(allocation(*results, node=node)).obj()


def reserve(claim: ResourceClaim) -> ResourceClaim:
    c = from_claim(claim).obj()
    c.status.reserved_for = [ResourceClaimConsumerReference(resource="pods", name=POD_NAME, uid=POD_UID)]
    return c


def timestamped(claim: ResourceClaim) -> ResourceClaim:
    c = from_claim(claim).obj()
    assert c.status.allocation is not None
    c.status.allocation.allocation_timestamp = "2026-06-01T12:00:00Z"
    return c


def named(claim: ResourceClaim, name: str) -> ResourceClaim:
    c = from_claim(claim).obj()
    c.metadata.name = name
    return c


R0 = ("container-0-request-0", CLASS_NAME, 1)
EXT_CLAIM = ext_claim(CREATED, R0)
EXT_CLAIM2 = ext_claim(CREATED, ("container-0-request-1", CLASS_NAME + "2", 1))
IMPLICIT_CLAIM = ext_claim(CREATED, R0, ("container-0-request-1", CLASS_NAME, 2))
IMPLICIT_CLAIM_TWO = ext_claim(CREATED, R0, ("container-1-request-0", CLASS_NAME, 2))
EXT_CLAIM_NODE2 = ext_claim(CREATED, R0, node=NODE2_NAME)


def status(*mappings: tuple[str, str, str]) -> PodExtendedResourceClaimStatus:
    return PodExtendedResourceClaimStatus([ContainerExtendedResourceRequest(*m) for m in mappings], CREATED)


def created(claim: ResourceClaim, pod_status: PodExtendedResourceClaimStatus | None, **kw: object) -> Want:
    """Allocated on the worker in memory, created, allocated and reserved in PreBind."""
    written = timestamped(reserve(claim))
    want = Want(reserve=Result(in_flight_claims=[named(claim, SPECIAL_CLAIM_IN_MEM_NAME)]),
                pre_bind=Result(assumed_claim=written, added=[written]), pod_extended_status=pod_status)
    return dataclasses.replace(want, **kw)  # type: ignore[arg-type]


GPU_STATUS = status(("c0", GPU, "container-0-request-0"))
STALE = Want(filter={NODE_NAME: Result(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                              "cannot schedule extended resource claim"))},
             post_filter=Result(Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed"),
                                removed=[EXT_CLAIM]))

CASES = [
    pytest.param(Case(POD_EXT, nodes=[WORKER_NODE_WITH_EXT], classes=[DEVICE_CLASS_WITH_EXT]),
                 id="extended-resource-name-with-node-resource"),
    pytest.param(Case(POD_EXT2, nodes=[WORKER_NODE_WITH_EXT], classes=[DEVICE_CLASS_WITH_EXT, DEVICE_CLASS_WITH_EXT2],
                      slices=[WORKER_NODE_SLICE],
                      want=created(EXT_CLAIM2, status(("c0", GPU2, "container-0-request-1")))),
                 id="extended-resource-one-device-plugin-one-dra"),
    pytest.param(Case(POD_EXT, nodes=[WORKER_NODE_WITH_EXT_ZERO], classes=[DEVICE_CLASS_WITH_EXT],
                      slices=[WORKER_NODE_SLICE], want=created(EXT_CLAIM, GPU_STATUS)),
                 id="extended-resource-name-with-zero-allocatable"),
    pytest.param(Case(POD_EXT, nodes=[WORKER_NODE_WITH_EXT_ZERO], classes=[DEVICE_CLASS], slices=[WORKER_NODE_SLICE],
                      want=Want(pre_filter=Result(Status(Code.SKIP)), pre_bind_pre_flight_status=Status(Code.SKIP))),
                 id="non-DRA-extended-resource-name-with-zero-allocatable"),
    pytest.param(Case(POD_EXT, classes=[DEVICE_CLASS_WITH_EXT], want=Want(
        filter={NODE_NAME: Result(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims"))},
        post_filter=Result(Status(Code.UNSCHEDULABLE)))), id="extended-resource-name-no-resource"),
    pytest.param(Case(POD_EXT, classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      want=created(EXT_CLAIM, GPU_STATUS)), id="extended-resource-name-with-resources"),
    pytest.param(Case(POD_IMPLICIT, classes=[DEVICE_CLASS_WITH_EXT], slices=[LARGE_WORKER_NODE_SLICE],
                      want=created(IMPLICIT_CLAIM, status(("c0", IMPLICIT, "container-0-request-0"),
                                                          ("c0", GPU, "container-0-request-1")))),
                 id="implicit-extended-resource-name-with-resources"),
    pytest.param(Case(POD_IMPLICIT_TWO, classes=[DEVICE_CLASS_WITH_EXT], slices=[LARGE_WORKER_NODE_SLICE],
                      want=created(IMPLICIT_CLAIM_TWO, status(("c0", IMPLICIT, "container-0-request-0"),
                                                              ("c1", GPU, "container-1-request-0")))),
                 id="implicit-extended-resource-name-two-containers-with-resources"),
    # Still in flight (PreBind failed): Unreserve releases it.
    pytest.param(Case(POD_EXT, classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      fail={"patch": "patch error"},
                      want=created(EXT_CLAIM, None, pre_bind=Result(
                          Status(Code.ERROR, "update pod default/my-pod ExtendedResourceClaimStatus: patch error"),
                          in_flight_claims=[timestamped(named(EXT_CLAIM, SPECIAL_CLAIM_IN_MEM_NAME))],
                          assumed_claim=timestamped(reserve(EXT_CLAIM)), added=[timestamped(reserve(EXT_CLAIM))]))),
                 id="extended-resource-name-with-resources-fail-patch"),
    pytest.param(Case(POD_EXT, claims=[EXT_CLAIM], classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      want=STALE), id="extended-resource-name-with-resources-has-claim"),
    pytest.param(Case(POD_EXT, claims=[EXT_CLAIM_NODE2], classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      want=dataclasses.replace(STALE, post_filter=dataclasses.replace(
                          STALE.post_filter, removed=[EXT_CLAIM_NODE2]))),
                 id="extended-resource-name-with-resources-delete-claim"),
    pytest.param(Case(POD_EXT, classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      want=created(EXT_CLAIM, GPU_STATUS, unreserve_after_bind_failure=Result(
                          removed=[reserve(EXT_CLAIM)]))), id="extended-resource-name-bind-failure"),
    pytest.param(Case(POD_EXT, classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      want=Want(reserve=Result(in_flight_claims=[named(EXT_CLAIM, SPECIAL_CLAIM_IN_MEM_NAME)]),
                                unreserve_before_pre_bind=Result())), id="extended-resource-name-skip-bind"),
    # Upstream's fake clientset keeps the claim its reactor refused, so its Unreserve removes one;
    # here none was made, so none is removed.
    pytest.param(Case(POD_EXT, classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE],
                      fail={"create": "claim creation errors"},
                      want=Want(reserve=Result(in_flight_claims=[named(EXT_CLAIM, SPECIAL_CLAIM_IN_MEM_NAME)]),
                                pre_bind=Result(Status(Code.ERROR, "create claim for extended resources default/: "
                                                                   "claim creation errors"),
                                                in_flight_claims=[named(EXT_CLAIM, SPECIAL_CLAIM_IN_MEM_NAME)]),
                                unreserve_after_bind_failure=Result())),
                 id="extended-resource-name-claim-creation-failure"),
]


# Beyond upstream's cases: a claim of the pod's own and an extended resource, allocated together
# (the extended-resource claim last, so it gets the next device); and a resource neither in the
# node's allocatable nor mapped by a class (NodeResourcesFit rejects the node before, in a profile).
POD_CLAIM_AND_EXT = make_pod(POD_NAME, NAMESPACE).uid(POD_UID) \
    .resource_claim("my-resource", claim=PENDING_CLAIM.metadata.name).req(example_com__gpu="1").obj()
POD_UNMAPPED = make_pod(POD_NAME, NAMESPACE).uid(POD_UID).req(example_com__gpu="1", example_com__fpga="1").obj()
EXT_AFTER_CLAIM = ext_claim(CREATED, R0, devices=("instance-2",))
MORE_CASES = [
    pytest.param(Case(POD_CLAIM_AND_EXT, claims=[PENDING_CLAIM], classes=[DEVICE_CLASS_WITH_EXT],
                      slices=[LARGE_WORKER_NODE_SLICE], want=created(
                          EXT_AFTER_CLAIM, GPU_STATUS,
                          reserve=Result(in_flight_claims=[ALLOCATED_CLAIM,
                                                           named(EXT_AFTER_CLAIM, SPECIAL_CLAIM_IN_MEM_NAME)]),
                          pre_bind=Result(assumed_claim=timestamped(reserve(EXT_AFTER_CLAIM)),
                                          added=[timestamped(reserve(EXT_AFTER_CLAIM))],
                                          changes=in_claim(PENDING_CLAIM.metadata.name,
                                                           status_of(reserve_claim(ALLOCATED_CLAIM)))))),
                 id="claim-and-extended-resource"),
    pytest.param(Case(POD_UNMAPPED, classes=[DEVICE_CLASS_WITH_EXT], slices=[WORKER_NODE_SLICE], want=Want(
                          filter={NODE_NAME: Result(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                                           "cannot fit resource"))},
                          post_filter=Result(Status(Code.UNSCHEDULABLE)))),
                 id="resource-neither-in-allocatable-nor-mapped"),
]


@pytest.mark.parametrize("case", CASES + MORE_CASES)
def test_plugin(case: Case) -> None:
    run(case)


# --- the default profile ---------------------------------------------------------------------------

def _profile(classes: list[DeviceClass], slices: list[object] = ()) -> Profile:  # type: ignore[assignment]
    dra = DraManager.of(classes=classes, slices=slices)  # type: ignore[arg-type]
    return build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(dra=dra))


def _gpu_pod(count: str = "1") -> Pod:
    pod = make_pod("p").req(cpu="1").obj()
    pod.spec.containers[0].resources.requests[GPU] = count
    return pod


CLASSES = [_class("gpu-class", GPU)]
DEVICE_NODE, OTHER_NODE = make_node("dra").capacity(), make_node("no-device").capacity()
GPU_SLICE = make_slice("dra", DRIVER).device("gpu-0").obj()


def test_the_pod_goes_to_the_node_with_the_device() -> None:
    result = schedule([OTHER_NODE, DEVICE_NODE], _gpu_pod(), profile=_profile(CLASSES, [GPU_SLICE]))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "dra"


def test_no_device_left_is_kube_schedulers_message() -> None:
    result = schedule([OTHER_NODE, DEVICE_NODE], _gpu_pod("2"), profile=_profile(CLASSES, [GPU_SLICE]))
    assert isinstance(result, FitError)
    assert result.message() == "0/2 nodes are available: 2 cannot allocate all claims."


def test_device_plugin_resource_on_every_node_placed_by_node_resources_fit() -> None:
    result = schedule([make_node("plugin").capacity(example_com__gpu="4"),
                       make_node("plugin-2").capacity(example_com__gpu="1")], _gpu_pod(), profile=_profile(CLASSES))
    assert isinstance(result, ScheduleResult)


def test_without_a_class_node_resources_fit_says_insufficient() -> None:
    result = schedule([OTHER_NODE, DEVICE_NODE], _gpu_pod(), profile=_profile([]))
    assert isinstance(result, FitError)
    assert result.message() == "0/2 nodes are available: 2 Insufficient example.com/gpu."


def test_nodes_that_must_satisfy_the_same_requests_share_one_claim() -> None:
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.types import NodeInfo, PodInfo
    from kubesched.plugins.dynamic_resources.plugin_state import DraState
    from tests.unit.plugins.dynamic_resources.plugin_harness import Case, setup
    from tests.unit.scheduling_helpers import snapshot_with

    nodes = [make_node(f"dra-{i}").capacity().obj() for i in range(3)]
    slices = [make_slice(n.metadata.name, DRIVER).device("gpu-0").obj() for n in nodes]
    ctx = setup(Case(pod=_gpu_pod(), classes=CLASSES, slices=slices))
    state, pod = CycleState(), PodInfo(_gpu_pod())
    _, status = ctx.plugin.pre_filter(state, pod, snapshot_with([*nodes]))
    assert status is None
    assert [ctx.plugin.filter(state, pod, NodeInfo(n)) for n in nodes] == [None, None, None]
    dra: DraState = state.read("DynamicResources")
    claims = {id(a.extended_claim) for a in dra.node_allocations.values()}
    assert len(dra.node_allocations) == 3
    assert len(claims) == 1
