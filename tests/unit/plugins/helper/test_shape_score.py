"""The shape of a RequestedToCapacityRatio or VolumeBinding (StorageCapacityScoring) score, read from
args and validated as kube-scheduler v1.37.2's validateFunctionShape does
(apis/config/validation/validation_pluginargs.go).

The cases are validation_pluginargs_test.go's TestValidateRequestedToCapacityRatioScoringStrategy
(path scoringStrategy.requestedToCapacityRatio) and TestValidateVolumeBindingArgs' shape cases (path
of the args themselves, ""), with the messages field.Error prints for them (`Field: Invalid value:
BadValue: Detail`, the details of validateFunctionShape); the rest are worked out by hand from that
function and marked so."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.fields import Errors
from kubesched.plugins.helper.shape_score import broken_linear, go_div, shape_points

RATIO = "scoringStrategy.requestedToCapacityRatio"


def _shape(*points: tuple[int, int]) -> list[dict[str, int]]:
    return [{"utilization": u, "score": s} for u, s in points]


@pytest.mark.parametrize(("path", "shape", "want"), [
    # TestValidateRequestedToCapacityRatioScoringStrategy
    pytest.param(RATIO, [], [f"{RATIO}.shape: Required value: at least one point must be specified"],
                 id="no shapes"),
    pytest.param(RATIO, _shape((30, 3)), [], id="valid shapes"),
    pytest.param(RATIO, _shape((-1, 3)),
                 [f"{RATIO}.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]"],
                 id="utilization less than min"),
    pytest.param(RATIO, _shape((101, 3)),
                 [f"{RATIO}.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"],
                 id="utilization greater than max"),
    pytest.param(RATIO, _shape((10, 3), (10, 3)),
                 [f"{RATIO}.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"],
                 id="duplicated utilization values"),
    pytest.param(RATIO, _shape((10, 3), (20, 3), (30, 3)), [], id="increasing utilization values"),
    pytest.param(RATIO, _shape((10, 3), (20, 3), (15, 3)),
                 [f"{RATIO}.shape[2].utilization: Invalid value: 15: values must be sorted in increasing order"],
                 id="non-increasing utilization values"),
    pytest.param(RATIO, _shape((10, -1)),
                 [f"{RATIO}.shape[0].score: Invalid value: -1: not in valid range [0, 10]"],
                 id="score less than min"),
    pytest.param(RATIO, _shape((10, 11)),
                 [f"{RATIO}.shape[0].score: Invalid value: 11: not in valid range [0, 10]"],
                 id="score greater than max"),
    # TestValidateVolumeBindingArgs
    pytest.param("", [], ["shape: Required value: at least one point must be specified"],
                 id="[StorageCapacityScoring=on] shape should not be empty"),
    pytest.param("", _shape((3, 3), (1, 1)),
                 ["shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"],
                 id="[StorageCapacityScoring=on] shape points must be sorted in increasing order"),
    pytest.param("", _shape((-1, 1), (10, -1), (20, 11), (101, 1)),
                 ["shape[0].utilization: Invalid value: -1: not in valid range [0, 100]",
                  "shape[1].score: Invalid value: -1: not in valid range [0, 10]",
                  "shape[2].score: Invalid value: 11: not in valid range [0, 10]",
                  "shape[3].utilization: Invalid value: 101: not in valid range [0, 100]"],
                 id="[StorageCapacityScoring=on] shape point: invalid utilization and score"),
    # By hand from validateFunctionShape: the bounds are inclusive (0 <= utilization <= 100,
    # 0 <= score <= MaxCustomPriorityScore = 10).
    pytest.param(RATIO, _shape((0, 0), (100, 10)), [], id="by hand: the largest utilization and score"),
    # By hand: the sort loop's break leaves that loop only; the range loop still reports shape[1].score.
    pytest.param(RATIO, _shape((50, 1), (50, 11)),
                 [f"{RATIO}.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
                  f"{RATIO}.shape[1].score: Invalid value: 11: not in valid range [0, 10]"],
                 id="by hand: unsorted and out of range"),
])
def test_validate_function_shape(path: str, shape: list[dict[str, int]], want: list[str]) -> None:
    errs: Errors = []
    points = shape_points({"shape": shape}, path, errs)
    assert [str(err) for err in errs] == want
    assert points == shape


# What kube-scheduler's strict decoder rejects before validation (a shape that is not a list, a point
# that is not an object, an unknown field, a value that is not an integer), each reported at its
# field's path (by hand: the path is the one validateFunctionShape would name, shape[i].field); the
# points after a bad one are still read (so one bad point is not also reported as an empty shape).
@pytest.mark.parametrize(("shape", "want_paths", "want_points"), [
    pytest.param("x", [f"{RATIO}.shape", f"{RATIO}.shape"], [], id="shape not a list"),
    pytest.param(["x", {"utilization": 10, "score": 1}], [f"{RATIO}.shape[0]"], [{"utilization": 10, "score": 1}],
                 id="a point not an object, then a valid one"),
    pytest.param([{"utilization": 10, "score": 1, "weight": 2}], [f"{RATIO}.shape[0].weight"],
                 [{"utilization": 10, "score": 1}], id="unknown field"),
    pytest.param([{"utilization": "10", "score": 1}, {"utilization": 20, "score": "1"}],
                 [f"{RATIO}.shape[0].utilization", f"{RATIO}.shape[1].score"],
                 [{"utilization": 0, "score": 1}, {"utilization": 20, "score": 0}], id="values not integers"),
])
def test_shape_decoding_errors(shape: Any, want_paths: list[str], want_points: list[dict[str, int]]) -> None:
    errs: Errors = []
    points = shape_points({"shape": shape}, RATIO, errs)
    assert [err.path for err in errs] == want_paths
    assert points == want_points


@pytest.mark.parametrize(("points", "want"), [
    # requested_to_capacity_ratio_test.go, TestBrokenLinearFunction (its p of -10 and 110 left out:
    # callers index the table at 0..100 only)
    pytest.param([(10, 1), (90, 9)],
                 {0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9}, id="case_0"),
    pytest.param([(0, 2), (40, 10), (100, 0)], {0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0}, id="case_1"),
    pytest.param([(0, 2), (40, 2), (100, 2)], {0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2}, id="case_2"),
    # By hand from BuildBrokenLinearFunction: past the last point (90) the last point's score, 9, not
    # the middle one's; p = 30 is 1 + (5 - 1) * (30 - 10) / (50 - 10) = 3; p = 89 is
    # 5 + (9 - 5) * 39 / 40 = 5 + 156 / 40 = 8 (int64 division).
    pytest.param([(10, 1), (50, 5), (90, 9)], {30: 3, 89: 8, 90: 9, 95: 9, 100: 9},
                 id="three points, past the last (by hand)"),
])
def test_broken_linear(points: list[tuple[int, int]], want: dict[int, int]) -> None:
    table = broken_linear(points)
    assert {p: table[p] for p in want} == want


@pytest.mark.parametrize(("a", "b", "want"), [
    # Go's int64 division truncates toward zero (the Go spec's examples: 5/3, -5/3, 5/-3, -5/-3)
    pytest.param(5, 3, 1, id="5/3"),
    pytest.param(-5, 3, -1, id="-5/3"),
    pytest.param(5, -3, -1, id="5/-3"),
    pytest.param(-5, -3, 1, id="-5/-3"),
    pytest.param(0, -3, 0, id="0/-3"),
])
def test_go_div(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want
