"""NodeInfo.clone copies the node's sums instead of recomputing them from every pod: it must equal
a NodeInfo built afresh from the same pods, and change independently of the original."""

from __future__ import annotations

from kubesched.framework.types import NodeInfo, PodInfo
from tests.builders import make_node, make_pod


def _state(ni: NodeInfo) -> tuple[object, ...]:
    return (ni.name, ni.requested, ni.non0_cpu, ni.non0_mem, sorted(ni.pods), sorted(ni.pods_with_affinity),
            sorted(ni.pods_with_required_anti_affinity), len(ni.used_ports), dict(ni.pvc_refs),
            ni.allocatable, ni.labels, ni.no_schedule_taints, ni.image_sizes)


def _pods() -> list[PodInfo]:
    return [
        PodInfo(make_pod("a").req(cpu="100m", memory="64Mi").labels(app="x").host_port(8080).obj()),
        PodInfo(make_pod("b").req(cpu="1").pod_affinity(anti=True, topology_key="kubernetes.io/hostname",
                                                         app="x").obj()),
        PodInfo(make_pod("c").volume("v", claim="c1").host_port(8080, host_ip="10.0.0.1").obj()),
    ]


def test_a_clone_equals_a_node_info_built_afresh() -> None:
    node = make_node("n1").label("kubernetes.io/hostname", "n1").capacity(cpu="4", memory="8Gi").obj()
    pods = _pods()
    original = NodeInfo(node, pods)
    assert _state(original.clone()) == _state(NodeInfo(node, pods))


def test_a_clone_changes_without_touching_the_original() -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi").obj()
    pods = _pods()
    original = NodeInfo(node, pods[:2])
    before = _state(original)
    c = original.clone()
    c.add_pod(pods[2])
    c.remove_pod(pods[1])
    assert _state(original) == before
    assert _state(c) == _state(NodeInfo(node, [pods[0], pods[2]]))
