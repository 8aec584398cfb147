"""DynamicResourcesArgs from `pluginConfig`, with kube-scheduler v1.37.2's defaults and validation
(apis/config/v1/defaults.go SetDefaults_DynamicResourcesArgs, validation_pluginargs.go): with
DRASchedulerFilterTimeout (beta, on) filterTimeout defaults to 10s and must not be negative (0
turns the timeout off); with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (on)
bindingTimeout defaults to 10m0s and must be at least 1s. Durations stay Go duration strings, as
the file has them; the plugin reads their seconds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import Errors, check_fields, child, get_duration, parse_duration

DEFAULT_FILTER_TIMEOUT = "10s"
DEFAULT_BINDING_TIMEOUT = "10m0s"


def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("filterTimeout", "bindingTimeout"), errs)
    filter_timeout = get_duration(raw, "filterTimeout", path, errs)
    if filter_timeout is not None and filter_timeout < 0:
        errs.append(e.invalid(child(path, "filterTimeout"), raw["filterTimeout"], "must be zero or positive"))
    binding_timeout = get_duration(raw, "bindingTimeout", path, errs)
    if binding_timeout is not None and binding_timeout < 1:
        errs.append(e.invalid(child(path, "bindingTimeout"), raw["bindingTimeout"], "must be at least 1 second"))
    return {"filterTimeout": raw.get("filterTimeout") or DEFAULT_FILTER_TIMEOUT,
            "bindingTimeout": raw.get("bindingTimeout") or DEFAULT_BINDING_TIMEOUT}


def seconds(args: Mapping[str, Any], key: str, default: str) -> float:
    """A parsed args' duration in seconds (the default's when absent)."""
    value = args.get(key) or default
    parsed = parse_duration(value) if isinstance(value, str) else None
    return parsed if parsed is not None else float(parse_duration(default) or 0.0)
