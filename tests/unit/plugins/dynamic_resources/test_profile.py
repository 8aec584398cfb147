"""DynamicResources in kube-scheduler's default profile: the node with the device is chosen, and
when no node has one, or the class is missing, the cycle's message is kube-scheduler v1.37.2's (its
preemption part, added by PostFilter, is compared on the plane: tests/integration/test_dynamic_resources.py)."""

from __future__ import annotations

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import FitError, ScheduleResult, build_profile
from kubesched.framework.runtime.profile import Profile
from kubesched.model.objects import Node
from kubesched.model.resource import ResourceClaim
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.registry import in_tree_registry
from tests.builders import make_node
from tests.unit.plugins.dynamic_resources.dra_builders import (
    DEVICE_CLASS,
    DRIVER,
    NODE2_NAME,
    NODE_NAME,
    PENDING_CLAIM,
    make_slice,
    pod_with_claim_name,
)
from tests.unit.scheduling_helpers import schedule


def _profile(claims: list[ResourceClaim], with_class: bool = True) -> Profile:
    dra = DraManager.of(claims=claims, slices=[make_slice(NODE_NAME, DRIVER).device("instance-1").obj()],
                        classes=[DEVICE_CLASS] if with_class else [])
    config = ProfileConfig("kubesched", kube_scheduler_default_plugins())
    return build_profile(config, in_tree_registry(dra=dra))


NODES: list[Node] = [make_node(NODE2_NAME).capacity().obj(), make_node(NODE_NAME).capacity().obj()]
POD = pod_with_claim_name().req(cpu="100m").obj()


def test_the_node_with_the_device_is_chosen() -> None:
    result = schedule(list(NODES), POD, profile=_profile([PENDING_CLAIM]))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == NODE_NAME


def test_no_device_and_no_class_read_as_kube_schedulers_messages() -> None:
    taken = make_slice(NODE_NAME, DRIVER).obj()  # a slice without devices
    dra = DraManager.of(claims=[PENDING_CLAIM], slices=[taken], classes=[DEVICE_CLASS])
    profile = build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(dra=dra))
    result = schedule(list(NODES), POD, profile=profile)
    assert isinstance(result, FitError)
    assert result.message().startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    result = schedule(list(NODES), POD, profile=_profile([PENDING_CLAIM], with_class=False))
    assert isinstance(result, FitError)
    assert result.message().startswith("0/2 nodes are available: request req-1: device class my-resource-class "
                                       "does not exist.")
