"""Whether a pod's tolerations tolerate a node's taints (k8s.io/api core/v1 Toleration.ToleratesTaint)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kubesched.model.objects import Taint, Toleration


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    # An empty key (only valid with Exists) matches every taint.
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", "Equal"):
        return toleration.value == taint.value
    # Lt/Gt need the TaintTolerationComparisonOperators gate, off by default in v1.37: no match.
    return op == "Exists"


def tolerates_taint(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def first_untolerated(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    for taint in taints:
        if not tolerates_taint(tolerations, taint):
            return taint
    return None
