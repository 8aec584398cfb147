"""VolumeBindingArgs from `pluginConfig`, with kube-scheduler v1.37's defaults (bindTimeoutSeconds
600; with StorageCapacityScoring, beta and on in 1.37, the shape (0, 10), (100, 0)) and its
validation (apis/config/v1/defaults.go, validation/validation_pluginargs.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import Errors, check_fields, child, get_int
from kubesched.plugins.helper.shape_score import MAX_CUSTOM_PRIORITY_SCORE, shape_points

DEFAULT_BIND_TIMEOUT_SECONDS = 600


def default_shape() -> list[dict[str, int]]:
    return [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE}, {"utilization": 100, "score": 0}]


def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("bindTimeoutSeconds", "shape"), errs)
    timeout = get_int(raw, "bindTimeoutSeconds", path, errs)
    if timeout is None:
        timeout = DEFAULT_BIND_TIMEOUT_SECONDS
    elif timeout < 0:
        errs.append(e.invalid(child(path, "bindTimeoutSeconds"), timeout,
                              "invalid BindTimeoutSeconds, should not be a negative value"))
    shape = shape_points(raw, path, errs) if raw.get("shape") else default_shape()
    return {"bindTimeoutSeconds": timeout, "shape": shape}
