"""Extended resources backed by DRA: which requests kube-scheduler would leave to DynamicResources
(a DeviceClass maps the name, explicitly or as deviceclass.resource.kubernetes.io/<class>, and some
node's allocatable lacks it), and the stop at PreFilter that names them in the default profile."""

from __future__ import annotations

import pytest

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import FitError, ScheduleResult, build_profile
from kubesched.framework.runtime.profile import Profile
from kubesched.model.objects import ObjectMeta, Pod
from kubesched.model.resource import DeviceClass, DeviceClassSpec
from kubesched.plugins.dynamic_resources.extended import DEVICE_CLASS_PREFIX, class_mapping, delegated_requests
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.registry import in_tree_registry
from tests.builders import NodeBuilder, make_node, make_pod
from tests.unit.scheduling_helpers import schedule, snapshot_with

GPU = "example.com/gpu"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu-class"


def _class(name: str, extended: str | None = None, created: str | None = None) -> DeviceClass:
    return DeviceClass(ObjectMeta(name=name, creation_timestamp=created),
                       DeviceClassSpec(extended_resource_name=extended))


def _pod(resource: str = GPU, value: str = "1", init: bool = False) -> Pod:
    pod = (make_pod("p").init_req(cpu="1") if init else make_pod("p").req(cpu="1")).obj()
    (pod.spec.init_containers if init else pod.spec.containers)[0].resources.requests[resource] = value
    return pod


DEVICE_NODE = make_node("dra").capacity()
PLUGIN_NODE = make_node("plugin").capacity(example_com__gpu="4")
CLASSES = [_class("gpu-class", GPU)]


@pytest.mark.parametrize(("pod", "classes", "nodes", "want"), [
    pytest.param(_pod(), CLASSES, [DEVICE_NODE, PLUGIN_NODE],
                 [("spec.containers[0].resources.requests[example.com/gpu]", "gpu-class")], id="explicit-name"),
    pytest.param(_pod(IMPLICIT), CLASSES, [DEVICE_NODE],
                 [(f"spec.containers[0].resources.requests[{IMPLICIT}]", "gpu-class")], id="implicit-name"),
    pytest.param(_pod(init=True), CLASSES, [DEVICE_NODE],
                 [("spec.initContainers[0].resources.requests[example.com/gpu]", "gpu-class")], id="init-container"),
    pytest.param(_pod(), CLASSES, [PLUGIN_NODE], [], id="every-node-has-it-in-allocatable"),
    pytest.param(_pod(), [_class("other")], [DEVICE_NODE], [], id="no-class-maps-it"),
    pytest.param(_pod(value="0"), CLASSES, [DEVICE_NODE], [], id="zero-request"),
    pytest.param(_pod("cpu", "2"), [_class("cpu-class", "cpu")], [DEVICE_NODE], [], id="native-resource"),
])
def test_delegated_requests(pod: Pod, classes: list[DeviceClass], nodes: list[NodeBuilder],
                            want: list[tuple[str, str]]) -> None:
    assert delegated_requests(pod, lambda: classes, snapshot_with(list(nodes))) == want


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


def _profile() -> Profile:
    dra = DraManager.of(classes=CLASSES)
    return build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(dra=dra))


def test_such_a_pod_stops_at_pre_filter_naming_the_field() -> None:
    result = schedule([DEVICE_NODE, PLUGIN_NODE], _pod(), profile=_profile())
    assert isinstance(result, FitError)
    assert result.message().startswith(
        "0/2 nodes are available: pod requests extended resources backed by DRA, which kubesched does not allocate "
        "yet: spec.containers[0].resources.requests[example.com/gpu] (DeviceClass gpu-class).")


def test_device_plugin_resource_on_every_node_placed_by_node_resources_fit() -> None:
    result = schedule([PLUGIN_NODE, make_node("plugin-2").capacity(example_com__gpu="1")], _pod(), profile=_profile())
    assert isinstance(result, ScheduleResult)
