"""CoschedulingArgs (scheduler-plugins apis/config: defaults.go, validation_pluginargs.go)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import Errors, check_fields, child, get_int

DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10
ARGS_FIELDS = ("permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage")


@dataclass(frozen=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE


def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ARGS_FIELDS, errs)
    permit = get_int(raw, "permitWaitingTimeSeconds", path, errs)
    backoff = get_int(raw, "podGroupBackoffSeconds", path, errs)
    reject = get_int(raw, "podGroupRejectPercentage", path, errs)
    permit = DEFAULT_PERMIT_WAITING_TIME_SECONDS if permit is None else permit
    backoff = DEFAULT_POD_GROUP_BACKOFF_SECONDS if backoff is None else backoff
    reject = DEFAULT_POD_GROUP_REJECT_PERCENTAGE if reject is None else reject
    if permit < 0:
        errs.append(e.invalid(child(path, "permitWaitingTimeSeconds"), permit, "must be greater than 0"))
    if backoff < 0:
        errs.append(e.invalid(child(path, "podGroupBackoffSeconds"), backoff, "must be greater than 0"))
    if not 0 <= reject <= 100:
        errs.append(e.invalid(child(path, "podGroupRejectPercentage"), reject, "must be between 0 and 100"))
    return {"permitWaitingTimeSeconds": permit, "podGroupBackoffSeconds": backoff,
            "podGroupRejectPercentage": reject}


def typed(args: Mapping[str, Any]) -> CoschedulingArgs:
    errs: Errors = []
    parsed = parse_args(args, "args", errs)
    if errs:
        raise ValueError("Coscheduling args: " + "; ".join(str(x) for x in errs))
    return CoschedulingArgs(parsed["permitWaitingTimeSeconds"], parsed["podGroupBackoffSeconds"],
                            parsed["podGroupRejectPercentage"])
