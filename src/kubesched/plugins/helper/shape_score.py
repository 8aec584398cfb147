"""Shape scoring shared by plugins (kube-scheduler's plugins/helper/shape_score.go): a
RequestedToCapacityRatio or StorageCapacityScoring shape of (utilization, score) points, read from
args and turned into a utilization -> score table, with Go's int64 division."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import Errors, as_mapping, check_fields, child, get_int, get_list, index

MAX_CUSTOM_PRIORITY_SCORE = 10  # the score scale of a shape point
MAX_UTILIZATION = 100


def go_div(a: int, b: int) -> int:
    """Go's int64 division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q



def broken_linear(shape: Sequence[tuple[int, int]]) -> list[int]:
    """The utilization (0..100) -> score table of helper.BuildBrokenLinearFunction."""
    table = []
    for p in range(MAX_UTILIZATION + 1):
        for i, (util, score) in enumerate(shape):
            if p <= util:
                if i == 0:
                    table.append(shape[0][1])
                else:
                    pu, ps = shape[i - 1]
                    table.append(ps + go_div((score - ps) * (p - pu), util - pu))
                break
        else:
            table.append(shape[-1][1])
    return table


def shape_points(raw: Mapping[str, Any], path: str, errs: Errors) -> list[dict[str, int]]:
    shape_path = child(path, "shape")
    points: list[dict[str, int]] = []
    for i, item in enumerate(get_list(raw, "shape", path, errs)):
        p = index(shape_path, i)
        obj = as_mapping(item, p, errs)
        if obj is None:
            continue
        check_fields(obj, p, ("utilization", "score"), errs)
        points.append({"utilization": get_int(obj, "utilization", p, errs) or 0,
                       "score": get_int(obj, "score", p, errs) or 0})
    if not points:
        errs.append(e.required(shape_path, "at least one point must be specified"))
        return points
    for i in range(1, len(points)):
        if points[i - 1]["utilization"] >= points[i]["utilization"]:
            errs.append(e.invalid(child(index(shape_path, i), "utilization"), points[i]["utilization"],
                                  "values must be sorted in increasing order"))
            break
    for i, point in enumerate(points):
        if not 0 <= point["utilization"] <= 100:
            errs.append(e.invalid(child(index(shape_path, i), "utilization"), point["utilization"],
                                  "not in valid range [0, 100]"))
        if not 0 <= point["score"] <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(e.invalid(child(index(shape_path, i), "score"), point["score"],
                                  f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return points
