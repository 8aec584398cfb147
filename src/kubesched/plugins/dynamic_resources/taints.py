"""Device taints against a request's tolerations (DRADeviceTaints, GA): a NoSchedule or NoExecute
taint that no toleration tolerates keeps the device from being allocated
(k8s.io/dynamic-resource-allocation resourceclaim.ToleratesTaint)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kubesched.model.resource import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    DeviceTaint,
    DeviceToleration,
)


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", TOLERATION_OP_EQUAL):
        return toleration.value == taint.value
    return toleration.operator == TOLERATION_OP_EXISTS


def taint_prevents_allocation(taints: Iterable[DeviceTaint], tolerations: Sequence[DeviceToleration]) -> bool:
    for taint in taints:
        if taint.effect in (TAINT_EFFECT_NO_EXECUTE, TAINT_EFFECT_NO_SCHEDULE) and \
                not any(tolerates(t, taint) for t in tolerations):
            return True
    return False
