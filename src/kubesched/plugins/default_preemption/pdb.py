"""PodDisruptionBudgets in the dry run (kube-scheduler preemption/util.go FilterVictimsWithPDBViolation).

A victim "violates" when evicting it, after the more important victims before it on the same node,
would take a matching budget below zero. Budgets are read from the PDB informer's store once per
PostFilter, parsed once, and consumed afresh for each node.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from kubesched.framework.types import PodInfo
from kubesched.model.objects import PodDisruptionBudget
from kubesched.plugins.helper import label_selector as sel


class PDBLister(Protocol):
    """What a PodDisruptionBudget informer offers (kube-scheduler's PdbLister.List(Everything))."""

    def list(self) -> Sequence[PodDisruptionBudget]: ...


class NoPDBs:
    """No budget is known: every victim is non-violating."""

    def list(self) -> Sequence[PodDisruptionBudget]:
        return ()


@dataclass(frozen=True, slots=True)
class Budget:
    """One PDB as the dry run reads it; `selector` None when it matches no pod."""

    namespace: str
    selector: sel.Selector | None
    disrupted: Collection[str]
    allowed: int


def budgets(pdbs: Sequence[PodDisruptionBudget]) -> list[Budget]:
    """Every PDB, in the lister's order; an invalid, nil or empty selector matches no pod."""
    out: list[Budget] = []
    for pdb in pdbs:
        try:
            parsed: sel.Selector | None = sel.parse(pdb.spec.selector)
        except sel.SelectorError:
            parsed = None
        if parsed is not None and (parsed.nothing or parsed.empty()):
            parsed = None
        out.append(Budget(pdb.metadata.namespace, parsed, frozenset(pdb.status.disrupted_pods),
                          pdb.status.disruptions_allowed))
    return out


def split_by_violation(victims: Sequence[PodInfo],
                       known: Sequence[Budget]) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating), each in the order of `victims` (most important first)."""
    if not known:
        return [], list(victims)
    allowed = [b.allowed for b in known]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for v in victims:
        (violating if _violates(v, known, allowed) else non_violating).append(v)
    return violating, non_violating


T = TypeVar("T")


def split_units_by_violation(units: Sequence[T], pods: Callable[[T], Sequence[PodInfo]],
                             known: Sequence[Budget]) -> tuple[list[tuple[T, int]], list[T]]:
    """FilterVictimsWithPDBViolation over victims of one or more pods (pod-group preemption): a
    victim violates as a whole when any of its pods does, since a PodGroup victim goes whole or
    not at all; each violating one with the number of its pods that violate. Every pod of every
    victim consumes its budgets, in the order of `units` (most important first)."""
    if not known:
        return [], list(units)
    allowed = [b.allowed for b in known]
    violating: list[tuple[T, int]] = []
    non_violating: list[T] = []
    for unit in units:
        count = sum(1 for p in pods(unit) if _violates(p, known, allowed))
        if count:
            violating.append((unit, count))
        else:
            non_violating.append(unit)
    return violating, non_violating


def _violates(victim: PodInfo, known: Sequence[Budget], allowed: list[int]) -> bool:
    meta = victim.pod.metadata
    labels = meta.labels
    if not labels:
        return False
    for i, b in enumerate(known):
        if b.namespace != meta.namespace or b.selector is None or not b.selector.matches(labels):
            continue
        # Already counted by the apiserver's eviction: not a violation, and the budget stays.
        if meta.name in b.disrupted:
            continue
        allowed[i] -= 1
        if allowed[i] < 0:
            return True
    return False
