"""DefaultPreemption's args (kube-scheduler DefaultPreemptionArgs, its defaults and validation):

    minCandidateNodesPercentage: 10   # 0..100; share of the potential nodes to dry-run at least
    minCandidateNodesAbsolute: 100    # >= 0; not both zero

`parse_args` has the config loader's ArgsParser signature and returns the defaulted args in the same
camelCase shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import Errors, check_fields, child, get_int

ARGS_FIELDS = ("minCandidateNodesAbsolute", "minCandidateNodesPercentage")
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE


def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    """DefaultPreemption's ArgsParser (validation_pluginargs.go ValidateDefaultPreemptionArgs)."""
    check_fields(raw, path, ARGS_FIELDS, errs)
    pct_path = child(path, "minCandidateNodesPercentage")
    abs_path = child(path, "minCandidateNodesAbsolute")
    pct = get_int(raw, "minCandidateNodesPercentage", path, errs)
    if pct is None:
        pct = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    absolute = get_int(raw, "minCandidateNodesAbsolute", path, errs)
    if absolute is None:
        absolute = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE
    if not 0 <= pct <= 100:
        errs.append(e.invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(e.invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(e.invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(e.invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}


def validate(args: Mapping[str, Any], path: str = "args") -> tuple[dict[str, Any], Sequence[e.FieldError]]:
    errs: Errors = []
    return parse_args(args, path, errs), errs


def typed(args: Mapping[str, Any]) -> DefaultPreemptionArgs:
    """The typed form of valid args; raises ValueError naming every bad field otherwise."""
    parsed, errs = validate(args)
    if errs:
        raise ValueError("DefaultPreemption args: " + "; ".join(str(x) for x in errs))
    return DefaultPreemptionArgs(parsed["minCandidateNodesPercentage"], parsed["minCandidateNodesAbsolute"])
