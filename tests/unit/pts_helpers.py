"""A compact notation for PodTopologySpread's table tests (ported from kube-scheduler's
podtopologyspread *_test.go): nodes and pods as short strings.

    N("node-a zone=zone1 node=node-a")      node with labels ("foo" alone is foo="", host= is
                                            kubernetes.io/hostname)
    P("p-a1@node-a foo")                    pod p-a1 bound to node-a, labels foo=""
    P("ns1/p-a1@node-a foo")                in namespace ns1
    P("p-a1@node-a foo !")                  terminating
"""

from __future__ import annotations

from kubesched.framework import CycleState, PodInfo, Snapshot
from kubesched.model.objects import Node, Pod, Taint
from kubesched.plugins.pod_topology_spread import PodTopologySpread
from tests.builders import NodeBuilder, PodBuilder, label_selector, make_node, make_pod
from tests.unit.scheduling_helpers import snapshot_with

HOST = "kubernetes.io/hostname"
FOO = label_selector("foo")
BAR = label_selector("bar")
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", value="", effect="NoSchedule")


def _labels(parts: list[str]) -> dict[str, str]:
    out = {}
    for part in parts:
        k, _, v = part.partition("=")
        out[HOST if k == "host" else k] = v
    return out


def N(spec: str, tainted: bool = False) -> NodeBuilder:
    name, *rest = spec.split()
    b = make_node(name)
    for k, v in _labels(rest).items():
        b.label(k, v)
    if tainted:
        b.taint(UNSCHEDULABLE_TAINT.key, UNSCHEDULABLE_TAINT.value, UNSCHEDULABLE_TAINT.effect)
    return b


def P(spec: str) -> PodBuilder:
    head, *rest = spec.split()
    namespace = "default"
    if "/" in head:
        namespace, head = head.split("/", 1)
    name, _, node = head.partition("@")
    b = make_pod(name, namespace)
    if node:
        b.node(node)
    if "!" in rest:  # terminating
        rest.remove("!")
        b.terminating()
    for k, v in _labels(rest).items():
        b.label(k, v)
    return b


FOUR_NODES = ("node-a zone=zone1 node=node-a", "node-b zone=zone1 node=node-b",
              "node-x zone=zone2 node=node-x", "node-y zone=zone2 node=node-y")


def nodes_of(specs: tuple[str, ...] | list[str], tainted: tuple[str, ...] = ()) -> list[NodeBuilder]:
    return [N(s, tainted=s.split()[0] in tainted) for s in specs]


def pods_of(specs: str) -> list[PodBuilder]:
    """Pods separated by commas."""
    return [P(s.strip()) for s in specs.split(",") if s.strip()]


def pre_filtered(plugin: PodTopologySpread, pod: PodBuilder, nodes: list[NodeBuilder],
                 pods: list[PodBuilder]) -> tuple[CycleState, PodInfo, Snapshot]:
    node_list: list[Node | NodeBuilder] = [*nodes]
    pod_list: list[Pod | PodBuilder] = [*pods]
    snapshot = snapshot_with(node_list, pod_list)
    info = PodInfo(pod.obj())
    state = CycleState()
    _, status = plugin.pre_filter(state, info, snapshot)
    assert status is None, status
    return state, info, snapshot
