"""After a run: is any node over its allocatable cpu, memory or pod count?

Read back from the apiserver, independent of what any contender believes. Requests are the sum
over a pod's containers (init containers count when bigger), which is exact for the bench's
pause pods and for most pods.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

import msgspec

from kubesched.api import ApiClient
from kubesched.model.quantity import resource_amount

CHECKED = ("cpu", "memory", "pods")


class _Resources(msgspec.Struct):
    requests: dict[str, str] = {}


class _Container(msgspec.Struct):
    resources: _Resources = msgspec.field(default_factory=_Resources)


class _PodSpec(msgspec.Struct):
    nodeName: str = ""
    containers: list[_Container] = []
    initContainers: list[_Container] = []


class _Condition(msgspec.Struct):
    type: str = ""
    status: str = ""
    lastTransitionTime: str = ""


class _PodStatus(msgspec.Struct):
    phase: str = ""
    conditions: list[_Condition] = []


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    deletionTimestamp: str = ""


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _PodSpec = msgspec.field(default_factory=_PodSpec)
    status: _PodStatus = msgspec.field(default_factory=_PodStatus)


class _NodeStatus(msgspec.Struct):
    allocatable: dict[str, str] = {}


class _Node(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    status: _NodeStatus = msgspec.field(default_factory=_NodeStatus)


class _NodeList(msgspec.Struct):
    items: list[_Node] = []


class _PodList(msgspec.Struct):
    items: list[_Pod] = []


@dataclass
class CapacityReport:
    nodes: int = 0
    bound_pods: int = 0
    overcommitted: dict[str, list[str]] = field(default_factory=dict)  # node -> resources over
    max_pods_on_a_node: int = 0
    # PodScheduled=True transition times of the bench's pods, as the apiserver stamped them
    # (whole seconds): a cross-check of the watcher's clock that no watch delay can skew.
    scheduled_at: list[float] = field(default_factory=list)
    # namespace -> pod -> node of every bound pod not finished nor terminating: the placements checked
    placed: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.overcommitted


def _requests(pod: _Pod) -> dict[str, int]:
    total: dict[str, int] = defaultdict(int)
    for c in pod.spec.containers:
        for name, q in c.resources.requests.items():
            total[name] += resource_amount(name, q)
    for c in pod.spec.initContainers:
        for name, q in c.resources.requests.items():
            total[name] = max(total[name], resource_amount(name, q))
    total["pods"] = 1
    return total


def _scheduled_time(pod: _Pod) -> float | None:
    for c in pod.status.conditions:
        if c.type == "PodScheduled" and c.status == "True" and c.lastTransitionTime:
            return dt.datetime.fromisoformat(c.lastTransitionTime.replace("Z", "+00:00")).timestamp()
    return None


async def check(client: ApiClient, namespace: str) -> CapacityReport:
    node_items = msgspec.json.decode(await client.get("/api/v1/nodes"), type=_NodeList).items
    pods = msgspec.json.decode(await client.get("/api/v1/pods"), type=_PodList).items
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    report = CapacityReport(nodes=len(node_items))
    for pod in pods:
        if not pod.spec.nodeName or pod.status.phase in ("Succeeded", "Failed"):
            continue
        report.bound_pods += 1
        if not pod.metadata.deletionTimestamp:
            report.placed.setdefault(pod.metadata.namespace, {})[pod.metadata.name] = pod.spec.nodeName
        if pod.metadata.namespace == namespace:
            when = _scheduled_time(pod)
            if when is not None:
                report.scheduled_at.append(when)
        for name, amount in _requests(pod).items():
            used[pod.spec.nodeName][name] += amount
    for node in node_items:
        mine = used.get(node.metadata.name, {})
        report.max_pods_on_a_node = max(report.max_pods_on_a_node, mine.get("pods", 0))
        over = [r for r in CHECKED
                if mine.get(r, 0) > resource_amount(r, node.status.allocatable.get(r, "0"))]
        if over:
            report.overcommitted[node.metadata.name] = over
    return report
