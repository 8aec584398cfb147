"""InterPodAffinity's args (kube-scheduler InterPodAffinityArgs, its defaults and validation):

    hardPodAffinityWeight: 1                    # 0..100; existing pods' required affinity in scores
    ignorePreferredTermsOfExistingPods: false   # skip scoring when the pod has no preferred terms

`parse_args` has the config loader's ArgsParser signature and returns the defaulted args in the same
camelCase shape, so parsing its own output again gives the same result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import Errors, check_fields, child, get_bool, get_int

ARGS_FIELDS = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


@dataclass(frozen=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False


def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    """InterPodAffinity's ArgsParser: the defaulted args; every bad field appended to errs."""
    check_fields(raw, path, ARGS_FIELDS, errs)
    weight = get_int(raw, "hardPodAffinityWeight", path, errs)
    if weight is None:
        weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    elif not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
        errs.append(e.invalid(child(path, "hardPodAffinityWeight"), weight,
                              f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, "
                              f"{MAX_HARD_POD_AFFINITY_WEIGHT}]"))
    ignore = get_bool(raw, "ignorePreferredTermsOfExistingPods", path, errs)
    return {"hardPodAffinityWeight": weight, "ignorePreferredTermsOfExistingPods": bool(ignore)}


def validate(args: Mapping[str, Any], path: str = "args") -> tuple[dict[str, Any], Sequence[e.FieldError]]:
    """parse_args outside the config loader (the plugin's factory)."""
    errs: Errors = []
    return parse_args(args, path, errs), errs


def typed(args: Mapping[str, Any]) -> InterPodAffinityArgs:
    """The typed form of valid args; raises ValueError naming every bad field otherwise."""
    parsed, errs = validate(args)
    if errs:
        raise ValueError("InterPodAffinity args: " + "; ".join(str(x) for x in errs))
    return InterPodAffinityArgs(parsed["hardPodAffinityWeight"], parsed["ignorePreferredTermsOfExistingPods"])
