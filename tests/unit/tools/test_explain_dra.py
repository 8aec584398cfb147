"""`kubesched explain` on a pod with a claim: DynamicResources' verdict with its message on every
node (the framework's per-node statuses, as for any filter plugin), and the decision's message."""

from __future__ import annotations

import pytest

from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import PodInfo, build_profile
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.status import Code
from kubesched.model.resource import ResourceClaim
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.registry import in_tree_registry
from kubesched.tools.explain.evaluate import explain
from kubesched.tools.explain.model import Explanation, Verdict
from tests.builders import make_node
from tests.unit.plugins.dynamic_resources.dra_builders import (
    DEVICE_CLASS,
    DRIVER,
    NODE2_NAME,
    NODE3_NAME,
    NODE_NAME,
    PENDING_CLAIM,
    make_slice,
    pod_with_claim_name,
)
from tests.unit.scheduling_helpers import snapshot_with

NO_DEVICE = "cannot allocate all claims"


def _profile(claims: list[ResourceClaim], with_class: bool = True) -> Profile:
    dra = DraManager.of(claims=claims, slices=[make_slice(NODE_NAME, DRIVER).device("instance-1").obj(),
                                               make_slice(NODE3_NAME, DRIVER).obj()],
                        classes=[DEVICE_CLASS] if with_class else [])
    return build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(dra=dra))


def _dra(verdicts: tuple[Verdict, ...]) -> list[tuple[str, Code, tuple[str, ...], bool]]:
    return [(v.stage, v.code, v.reasons, v.reported) for v in verdicts if v.plugin == "DynamicResources"]


def _run(with_class: bool = True) -> Explanation:
    nodes = [make_node(n).capacity() for n in (NODE_NAME, NODE2_NAME, NODE3_NAME)]
    pod = pod_with_claim_name().req(cpu="100m").obj()
    return explain(_profile([PENDING_CLAIM], with_class), snapshot_with(list(nodes)), PodInfo(pod))


def test_each_node_has_dynamic_resources_verdict_with_its_message() -> None:
    e = _run()
    by_name = {n.name: n for n in e.nodes}
    assert by_name[NODE_NAME].feasible
    assert [row[1] for row in _dra(by_name[NODE_NAME].filters) if row[0] == "Filter"] == [Code.SUCCESS]
    for name in (NODE2_NAME, NODE3_NAME):
        # A node without the driver's slice and one whose slice has no device: the same verdict.
        assert not by_name[name].feasible
        (filter_verdict,) = [row for row in _dra(by_name[name].filters) if row[0] == "Filter"]
        assert filter_verdict == ("Filter", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_DEVICE,), True)
    assert e.selected == [NODE_NAME]
    assert e.cycle_pick == NODE_NAME


@pytest.mark.parametrize("with_class", [pytest.param(False, id="missing-class")])
def test_missing_class_message_on_every_node(with_class: bool) -> None:
    e = _run(with_class)
    want = "request req-1: device class my-resource-class does not exist"
    assert e.message.startswith(f"0/3 nodes are available: {want}.")
    for n in e.nodes:
        assert not n.feasible
        assert any(want in v.reasons for v in n.filters if v.plugin == "DynamicResources"), n
