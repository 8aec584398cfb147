"""NodeResourcesFit with extended resources backed by DRA: upstream's enoughPodsTests cases for
DRAExtendedResource (fit_test.go, kube-scheduler v1.37.2) and Test_isSchedulableAfterDeviceClassChange,
by their names; and the batch Filter agreeing with the per-node one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import ObjectMeta, Pod
from kubesched.model.resource import DeviceClass, DeviceClassSpec
from kubesched.plugins.node_resources import fit as node_resources_fit
from kubesched.plugins.node_resources.fit import after_device_class_event
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.filter_helpers import UNRESOLVABLE, run_filter, verdict
from tests.unit.scheduling_helpers import snapshot_with

RESOURCE_A, RESOURCE_B = "example.com/aaa", "example.com/bbb"
DRA_RESOURCE = "extended.resource.dra.io/something"
CLASS = DeviceClass(ObjectMeta(name="device-class-name"), DeviceClassSpec(extended_resource_name=DRA_RESOURCE))
FIRST_DRA_RESOURCE = "dra.example.com/first"  # sorts before RESOURCE_B
FIRST_CLASS = DeviceClass(ObjectMeta(name="first"), DeviceClassSpec(extended_resource_name=FIRST_DRA_RESOURCE))
# makeAllocatableResources(10, 20, 32, 5, 20, 5): extendedResourceA 5, no extendedResourceB.
NODE = make_node("n").capacity(cpu="10m", memory="20", pods="32", example_com__aaa="5")


def _fit(classes: list[DeviceClass] | None) -> node_resources_fit.NodeResourcesFit:
    return node_resources_fit.new({}, classes=None if classes is None else (lambda: classes))


def _pod(**requests: str) -> PodBuilder:
    """Requests by their full names."""
    pod = make_pod("p").req(cpu="1m", memory="1")
    pod.obj().spec.containers[0].resources.requests.update(requests)
    return pod


@pytest.mark.parametrize(("pod", "classes", "node", "want"), [
    pytest.param(make_pod("p").req(example_com__aaa="1"), [CLASS], NODE, None,
                 id="extended resource backed by device plugin"),
    pytest.param(_pod(**{DRA_RESOURCE: "1"}), [CLASS], NODE, None, id="extended resource backed by DRA"),
    pytest.param(_pod(**{RESOURCE_A: "1"}), None, NODE, None, id="extended resource backed by DRA, nil draManager"),
    # DRAExtendedResource off is a class list kube-scheduler never reads: no class maps the name.
    pytest.param(_pod(**{DRA_RESOURCE: "1"}), [], NODE, (UNRESOLVABLE, (f"Insufficient {DRA_RESOURCE}",)),
                 id="extended resource backed by DRA not enabled"),
    pytest.param(_pod(**{RESOURCE_B: "1"}), [CLASS], NODE, (UNRESOLVABLE, (f"Insufficient {RESOURCE_B}",)),
                 id="extended resource NOT backed by DRA"),
    pytest.param(make_pod("p").req(**{DRA_RESOURCE.replace("/", "__"): "1"}), [CLASS], NODE, None,
                 id="extended resource was backed by Device Plugin (Allocatable: 0)"),
    pytest.param(make_pod("p").req(example_com__aaa="1"), [CLASS],
                 make_node("n").capacity(cpu="10m", memory="20", pods="32", example_com__aaa="0"),
                 (UNRESOLVABLE, (f"Insufficient {RESOURCE_A}",)),
                 id="extended resource was backed by Device Plugin (Allocatable: 0), no class maps it"),
    pytest.param(_pod(**{"deviceclass.resource.kubernetes.io/device-class-name": "1"}), [CLASS], NODE, None,
                 id="implicit name"),
    # Listed in allocatable: the device plugin's, checked as ever.
    pytest.param(_pod(**{DRA_RESOURCE: "3"}), [CLASS],
                 make_node("n").capacity(cpu="10m", memory="20", pods="32", **{DRA_RESOURCE.replace("/", "__"): "2"}),
                 (UNRESOLVABLE, (f"Insufficient {DRA_RESOURCE}",)), id="mapped-but-in-allocatable"),
    # shouldDelegateResourceToDRA: allocatable > 0 keeps the device plugin's check, even at 1.
    pytest.param(_pod(**{DRA_RESOURCE: "2"}), [CLASS],
                 make_node("n").capacity(cpu="10m", memory="20", pods="32", **{DRA_RESOURCE.replace("/", "__"): "1"}),
                 (UNRESOLVABLE, (f"Insufficient {DRA_RESOURCE}",)), id="mapped-but-one-in-allocatable"),
    # A delegated name sorted first does not end the loop over the others.
    pytest.param(_pod(**{FIRST_DRA_RESOURCE: "1", RESOURCE_B: "1"}), [CLASS, FIRST_CLASS], NODE,
                 (UNRESOLVABLE, (f"Insufficient {RESOURCE_B}",)), id="delegated-then-an-insufficient-one"),
])
def test_fit_delegates_to_dra(pod: PodBuilder, classes: list[DeviceClass] | None, node: NodeBuilder,
                              want: object) -> None:
    assert verdict(run_filter(_fit(classes), pod, node)) == want


NODES = [make_node("none").capacity(),
         make_node("zero").capacity(**{DRA_RESOURCE.replace("/", "__"): "0"}),
         make_node("two").capacity(**{DRA_RESOURCE.replace("/", "__"): "2"})]


@pytest.mark.parametrize(("count", "classes"), [
    pytest.param("1", [CLASS], id="one-mapped"),
    pytest.param("3", [CLASS], id="three-mapped"),
    pytest.param("3", [], id="three-unmapped"),
])
def test_batch_filter_agrees_with_per_node(count: str, classes: list[DeviceClass]) -> None:
    plugin = _fit(classes)
    pod = PodInfo(_pod(**{DRA_RESOURCE: count}).obj())
    snapshot = snapshot_with(list(NODES))
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot)
    rows = np.arange(len(NODES), dtype=np.intp)
    one = [plugin.filter(state, pod, ni) for ni in snapshot.node_infos]
    batch = plugin.filter_batch(state, pod, snapshot, rows)
    fits = [s is None for s in one]
    assert (batch is None and all(fits)) or (batch is not None and batch.tolist() == fits)
    statuses = plugin.filter_statuses(state, pod, snapshot, rows)
    assert [verdict(s) if s.reasons else None for s in statuses] == [verdict(s) for s in one]


GPU = "example.com/gpu"


def _class(name: str = "", extended: str | None = None) -> DeviceClass:
    return DeviceClass(ObjectMeta(name=name), DeviceClassSpec(extended_resource_name=extended))


def _scalar_pod(name: str) -> Pod:
    return _pod(**{name: "1"}).obj()


MEMORY_POD = make_pod("p").req(memory="2").obj()


@pytest.mark.parametrize(("pod", "old", "new", "want"), [
    pytest.param(Pod(), None, "not-a-class", QueueingHint.QUEUE, id="backoff-wrong-new-object"),
    pytest.param(Pod(), "not-a-class", DeviceClass(), QueueingHint.QUEUE, id="backoff-wrong-old-object"),
    pytest.param(MEMORY_POD, _class(), _class(), QueueingHint.QUEUE_SKIP,
                 id="skip-queue-on-class-nil-extended-resource-name-pointer"),
    pytest.param(MEMORY_POD, _class(extended=GPU), _class(extended=GPU), QueueingHint.QUEUE_SKIP,
                 id="skip-queue-on-class-same-extended-resource-name"),
    pytest.param(_scalar_pod("deviceclass.resource.kubernetes.io/gpuclass"), None, _class("gpuclass", GPU),
                 QueueingHint.QUEUE, id="queue-on-class-add-with-implicit-extended-resource-name"),
    pytest.param(_scalar_pod("deviceclass.resource.kubernetes.io/gpuclass"), None, _class("myclass", GPU),
                 QueueingHint.QUEUE_SKIP, id="skip-on-class-add-with-implicit-extended-resource-name-not-matching"),
    pytest.param(_scalar_pod("example.com/othergpu"), None, _class("myclass", GPU), QueueingHint.QUEUE_SKIP,
                 id="skip-on-class-add-with-explicit-extended-resource-name-not-matching"),
    pytest.param(_scalar_pod("deviceclass.resource.kubernetes.io/gpuclass"), _class("gpuclass"),
                 _class("gpuclass", GPU), QueueingHint.QUEUE_SKIP,
                 id="skip-on-class-update-with-implicit-extended-resource-name"),
    pytest.param(_scalar_pod(GPU), None, _class(extended=GPU), QueueingHint.QUEUE,
                 id="queue-on-class-add-with-extended-resource-name"),
    pytest.param(_scalar_pod(GPU), _class(extended=GPU + "1"), _class(extended=GPU), QueueingHint.QUEUE,
                 id="queue-on-class-update-with-extended-resource-name"),
    # By hand from isSchedulableAfterDeviceClassEvent: an update that keeps the name is skipped
    # before the pod's requests are read, even when the pod asks for that very name.
    pytest.param(_scalar_pod(GPU), _class(extended=GPU), _class(extended=GPU), QueueingHint.QUEUE_SKIP,
                 id="skip-on-class-update-keeping-the-name-the-pod-asks-for"),
    # resource.PodRequests adds the pod's overhead: a name asked only there is asked.
    pytest.param(make_pod("p").overhead(example_com__gpu="1").obj(), None,
                 _class(extended=GPU), QueueingHint.QUEUE, id="queue-on-class-add-with-the-name-in-the-overhead"),
])
def test_after_device_class_event(pod: Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert after_device_class_event(pod, old, new) == want


def test_events_to_register() -> None:
    """TestEventsToRegister's cases for DRAExtendedResource and InPlacePodVerticalScaling (both on
    in v1.37: kube-scheduler's list is the union), and the DeviceClass event carries its hint."""
    regs = _fit([]).events_to_register()
    got = {(r.event.resource, r.event.action_type) if isinstance(r, ClusterEventWithHint)
           else (r.resource, r.action_type) for r in regs}
    assert got == {
        (EventResource.ASSIGNED_POD, ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        (EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN),
        (EventResource.TARGET_POD, ActionType.UPDATE_POD_SCALE_DOWN),
        (EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
    }
    [device_class] = [r for r in regs if isinstance(r, ClusterEventWithHint)
                      and r.event.resource == EventResource.DEVICE_CLASS]
    assert device_class.hint is after_device_class_event


def test_status_codes_unchanged_without_classes() -> None:
    status = run_filter(_fit(None), make_pod("p").req(example_com__bbb="1"), NODE)
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"Insufficient {RESOURCE_B}")
