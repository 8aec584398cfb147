"""VolumeBinding's score (volumebinding/scorer.go): per storage class, the utilization of what the
node would give the pod (the chosen static PVs' capacity, or the CSIStorageCapacity of the
provisions), read through the args' shape; the node's score is the classes' mean."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kubesched.model.quantity import value
from kubesched.plugins.helper.shape_score import MAX_UTILIZATION, broken_linear
from kubesched.plugins.volume_binding.binder import PodVolumes
from kubesched.plugins.volume_binding.matching import STORAGE

# Storage class -> [requested, capacity] in bytes.
ClassResources = dict[str, list[int]]
VolumeScorer = Callable[[ClassResources], int]

_SCORE_SCALE = 10  # MaxNodeScore / MaxCustomPriorityScore


def build_scorer(shape: Sequence[Mapping[str, int]]) -> VolumeScorer:
    table = broken_linear([(int(p["utilization"]), int(p["score"]) * _SCORE_SCALE) for p in shape])

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return table[MAX_UTILIZATION]
        return table[requested * MAX_UTILIZATION // capacity]

    def score(resources: ClassResources) -> int:
        if not resources:
            return 0
        total = sum(class_score(req, cap) for req, cap in resources.values())
        n = len(resources)
        return (2 * total + n) // (2 * n)  # math.Round of a non-negative quotient

    return score


def class_resources(volumes: PodVolumes) -> ClassResources:
    """The static bindings' classes when there are any, else the provisions with a known capacity
    (each class's capacity is the node's, not a sum: two claims of a class share it)."""
    out: ClassResources = {}
    if volumes.static_bindings:
        for b in volumes.static_bindings:
            req, cap = b.requested_and_capacity()
            entry = out.setdefault(b.storage_class_name(), [0, 0])
            entry[0] += req
            entry[1] += cap
        return out
    for p in volumes.dynamic_provisions:
        if p.node_capacity is None or p.node_capacity.capacity is None:
            continue
        entry = out.setdefault(p.pvc.spec.storage_class_name or "", [0, 0])
        entry[1] = value(p.node_capacity.capacity)
        text = p.pvc.spec.resources.requests.get(STORAGE)
        entry[0] += value(text) if text else 0
    return out
