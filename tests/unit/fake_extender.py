"""A fake of the Extender port, after kube-scheduler's testing/framework/fake_extender.go: predicates
decide its filter, prioritizers (with weights) its scores, an optional binder its bind."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.framework.extender import ExtenderError, FilterResult, Victims, interested
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod

Predicate = Callable[[Pod, NodeInfo], Status | None]
Prioritizer = Callable[[Pod, Sequence[NodeInfo]], list[tuple[str, int]]]


def true_predicate(pod: Pod, node: NodeInfo) -> Status | None:
    return None


def false_predicate(pod: Pod, node: NodeInfo) -> Status | None:
    return Status(Code.UNSCHEDULABLE, f'pod is unschedulable on the node "{node.name}"')


def error_predicate(pod: Pod, node: NodeInfo) -> Status | None:
    return Status(Code.ERROR, "some error")


def only(name: str, code: Code = Code.UNSCHEDULABLE) -> Predicate:
    """Node1PredicateExtender / Node2PredicateExtender: only the named node passes."""
    def predicate(pod: Pod, node: NodeInfo) -> Status | None:
        return None if node.name == name else Status(code, f'node "{node.name}" is not allowed')
    return predicate


def prefer(name: str) -> Prioritizer:
    """Node1PrioritizerExtender / Node2PrioritizerExtender: 10 for the named node, 1 for the others."""
    def prioritizer(pod: Pod, nodes: Sequence[NodeInfo]) -> list[tuple[str, int]]:
        return [(n.name, 10 if n.name == name else 1) for n in nodes]
    return prioritizer


def error_prioritizer(pod: Pod, nodes: Sequence[NodeInfo]) -> list[tuple[str, int]]:
    raise ExtenderError("some error")


@dataclass
class FakeExtender:
    extender_name: str = "defaultFakeExtender"
    predicates: list[Predicate] = field(default_factory=list)
    prioritizers: list[tuple[Prioritizer, int]] = field(default_factory=list)
    weight: int = 0
    ignorable: bool = False
    uninterested: bool = False
    managed: frozenset[str] | None = None
    binder: Callable[[Pod, str], None] | None = None
    preempts: bool = False
    # What process_preemption answers; None: run the predicates on each candidate (the fake's own way).
    preemption: Callable[[Pod, Mapping[str, Victims]], dict[str, Victims]] | None = None
    filtered: list[str] = field(default_factory=list)
    bound: list[tuple[str, str]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def name(self) -> str:
        return self.extender_name

    def is_ignorable(self) -> bool:
        return self.ignorable

    def is_interested(self, pod: Pod) -> bool:
        if self.managed is not None:
            return interested(self.managed, pod)
        return not self.uninterested

    def is_binder(self) -> bool:
        return self.binder is not None

    def is_prioritizer(self) -> bool:
        return bool(self.prioritizers)

    def is_filter(self) -> bool:
        return bool(self.predicates)

    def supports_preemption(self) -> bool:
        return self.preempts

    def _run(self, pod: Pod, node: NodeInfo) -> Status | None:
        for predicate in self.predicates:
            s = predicate(pod, node)
            if s is not None and s.code != Code.SUCCESS:
                return s
        return None

    async def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterResult:
        self.calls.append("filter")
        result = FilterResult([])
        for ni in nodes:
            s = self._run(pod, ni)
            if s is None:
                result.nodes.append(ni)
            elif s.code == Code.UNSCHEDULABLE:
                result.failed[ni.name] = f'FakeExtender: node "{ni.name}" failed'
            elif s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                result.failed_and_unresolvable[ni.name] = f'FakeExtender: node "{ni.name}" failed and unresolvable'
            else:
                raise ExtenderError(s.message())
        self.filtered = [ni.name for ni in result.nodes]
        return result

    async def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        self.calls.append("prioritize")
        combined: dict[str, int] = {}
        for fn, weight in self.prioritizers:
            if weight == 0:
                continue
            for host, score in fn(pod, nodes):
                combined[host] = combined.get(host, 0) + score * weight
        return list(combined.items()), self.weight

    async def bind(self, pod: Pod, node: str) -> None:
        self.calls.append("bind")
        assert self.binder is not None
        self.binder(pod, node)
        self.bound.append((pod.metadata.name, node))

    async def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                                 snapshot: Snapshot) -> dict[str, Victims]:
        self.calls.append("preempt")
        if self.preemption is not None:
            return self.preemption(pod, victims)
        out: dict[str, Victims] = {}
        for node, v in victims.items():
            s = self._run(pod, snapshot.node_infos[snapshot.index[node]])
            if s is None:
                out[node] = v
            elif not s.is_rejected():
                raise ExtenderError(s.message())
        return out
