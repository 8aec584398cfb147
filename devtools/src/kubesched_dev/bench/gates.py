"""Feature gates and the API versions they need, as a plane is started for a workload."""

from __future__ import annotations

# The API versions mustSetupCluster serves for a feature: scheduler_perf's apiserver runs with
# --runtime-config naming them.
RUNTIME_CONFIG = {"DynamicResourceAllocation": ("resource.k8s.io/v1", "resource.k8s.io/v1beta2",
                                                "resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3"),
                  "GenericWorkload": ("scheduling.k8s.io/v1beta1",)}


def plane_flags(gates: dict[str, bool]) -> tuple[str, str]:
    """--feature-gates and --runtime-config for the plane, as scheduler_perf's in-process
    apiserver gets them: the workload's gates (upstream sets them process-wide, so the apiserver
    and the controllers have them too) and the API versions those features need."""
    fg = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))
    rc = ",".join(f"{gv}=true" for feature, gvs in RUNTIME_CONFIG.items() if gates.get(feature) for gv in gvs)
    return fg, rc
