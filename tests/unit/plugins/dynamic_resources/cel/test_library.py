"""The quantity and semver cases of k8s.io/apiserver v0.37.2 pkg/cel/library (quantity_test.go,
semver_test.go), with upstream's names as ids, evaluated in the device-selector environment. A case
whose upstream value is a quantity or a semver is compared by an equality in CEL."""

from __future__ import annotations

import re

import pytest
from cel_expr_python import cel

from kubesched.plugins.dynamic_resources.cel import quantity as q
from kubesched.plugins.dynamic_resources.cel.compile import runtime_message
from kubesched.plugins.dynamic_resources.cel.environment import environment

_NO_DEVICE = {"device.driver": "", "device.allowMultipleAllocations": False, "device.attributes": {},
              "device.capacity": {}}


def evaluate(expression: str) -> object:
    result = environment().compile(expression).eval(data=_NO_DEVICE)
    if result.type() == cel.Type.ERROR:
        raise RuntimeError(runtime_message(str(result.value())))
    return result.value()


QUANTITY = [
    ("parse", 'quantity("12Mi") == quantity("12582912")', True, ""),
    ("parseInvalidSuffix", 'quantity("10Mo")', None, "quantities must match the regular expression.*"),
    ("parseInvalidSuffixPassesRegex", 'quantity("10Mm")', None, "unable to parse quantity's suffix"),
    ("isQuantity", 'isQuantity("20")', True, ""),
    ("isQuantity_megabytes", 'isQuantity("20M")', True, ""),
    ("isQuantity_mebibytes", 'isQuantity("20Mi")', True, ""),
    ("isQuantity_invalidSuffix", 'isQuantity("20Mo")', False, ""),
    ("isQuantity_passingRegex", 'isQuantity("10Mm")', False, ""),
    ("equality_reflexivity", 'quantity("200M") == quantity("200M")', True, ""),
    ("equality_symmetry", 'quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True, ""),
    ("equality_transitivity", 'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && '
                              'quantity("0.002G") == quantity("2000k")', True, ""),
    ("inequality", 'quantity("200M") == quantity("0.3G")', False, ""),
    ("quantity_less", 'quantity("50M").isLessThan(quantity("50Mi"))', True, ""),
    ("quantity_less_obvious", 'quantity("50M").isLessThan(quantity("100M"))', True, ""),
    ("quantity_less_false", 'quantity("100M").isLessThan(quantity("50M"))', False, ""),
    ("quantity_greater", 'quantity("50Mi").isGreaterThan(quantity("50M"))', True, ""),
    ("quantity_greater_obvious", 'quantity("150Mi").isGreaterThan(quantity("100Mi"))', True, ""),
    ("quantity_greater_false", 'quantity("50M").isGreaterThan(quantity("100M"))', False, ""),
    ("compare_equal", 'quantity("200M").compareTo(quantity("0.2G"))', 0, ""),
    ("compare_less", 'quantity("50M").compareTo(quantity("50Mi"))', -1, ""),
    ("compare_greater", 'quantity("50Mi").compareTo(quantity("50M"))', 1, ""),
    ("add_quantity", 'quantity("50k").add(quantity("20")) == quantity("50.02k")', True, ""),
    ("add_int", 'quantity("50k").add(20).isLessThan(quantity("50020"))', False, ""),
    ("sub_quantity", 'quantity("50k").sub(quantity("20")) == quantity("49.98k")', True, ""),
    ("sub_int", 'quantity("50k").sub(20) == quantity("49980")', True, ""),
    ("arith_chain_1", 'quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980, ""),
    ("arith_chain", 'quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20, ""),
    ("as_integer", 'quantity("50k").asInteger()', 50000, ""),
    ("as_integer_error", 'quantity("9999999999999999999999999999999999999G").asInteger()', None,
     "cannot convert value to integer"),
    ("is_integer", 'quantity("9999999999999999999999999999999999999G").isInteger()', False, ""),
    ("is_integer-50", 'quantity("50").isInteger()', True, ""),
    ("as_float", 'quantity("50.703k").asApproximateFloat()', 50703.0, ""),
    ("add_does_not_mutate_receiver", '[quantity("9999999999999999999999999999999999999")].all(x, '
                                     'x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)', True, ""),
]

SEMVER = [
    ("parse", 'semver("1.2.3") == semver("1.2.3+build")', True, ""),
    ("parseInvalidVersion", 'semver("v1.0")', None, "No Major.Minor.Patch elements found"),
    ("isSemver", 'isSemver("1.2.3-beta.1+build.1")', True, ""),
    ("isSemver_empty_false", 'isSemver("")', False, ""),
    ("isSemver_v_prefix_false", 'isSemver("v1.0.0")', False, ""),
    ("isSemver_v_leading_whitespace_false", 'isSemver(" 1.0.0")', False, ""),
    ("isSemver_v_contains_whitespace_false", 'isSemver("1. 0.0")', False, ""),
    ("isSemver_v_trailing_whitespace_false", 'isSemver("1.0.0 ")', False, ""),
    ("isSemver_leading_zeros_false", 'isSemver("01.01.01")', False, ""),
    ("isSemver_major_only_false", 'isSemver("1")', False, ""),
    ("isSemver_major_minor_only_false", 'isSemver("1.1")', False, ""),
    ("isSemver_empty_normalize_false", 'isSemver("", true)', False, ""),
    ("isSemver_v_leading_whitespace_normalize_false", 'isSemver(" 1.0.0", true)', False, ""),
    ("isSemver_v_contains_whitespace_normalize_false", 'isSemver("1. 0.0", true)', False, ""),
    ("isSemver_v_trailing_whitespace_normalize_false", 'isSemver("1.0.0 ", true)', False, ""),
    ("isSemver_v_prefix_normalize_true", 'isSemver("v1.0.0", true)', True, ""),
    ("isSemver_leading_zeros_normalize_true", 'isSemver("01.01.01", true)', True, ""),
    ("isSemver_major_only_normalize_true", 'isSemver("1", true)', True, ""),
    ("isSemver_major_minor_only_normalize_true", 'isSemver("1.1", true)', True, ""),
    ("equality_normalize", 'semver("v01.01", true) == semver("1.1.0")', True, ""),
    ("equality_reflexivity", 'semver("1.2.3") == semver("1.2.3")', True, ""),
    ("inequality", 'semver("1.2.3") == semver("1.0.0")', False, ""),
    ("semver_less", 'semver("1.0.0").isLessThan(semver("1.2.3"))', True, ""),
    ("semver_less_false", 'semver("1.0.0").isLessThan(semver("1.0.0"))', False, ""),
    ("semver_greater", 'semver("1.2.3").isGreaterThan(semver("1.0.0"))', True, ""),
    ("semver_greater_false", 'semver("1.0.0").isGreaterThan(semver("1.0.0"))', False, ""),
    ("compare_equal", 'semver("1.2.3").compareTo(semver("1.2.3"))', 0, ""),
    ("compare_less", 'semver("1.0.0").compareTo(semver("1.2.3"))', -1, ""),
    ("compare_greater", 'semver("1.2.3").compareTo(semver("1.0.0"))', 1, ""),
    ("major", 'semver("1.2.3").major()', 1, ""),
    ("minor", 'semver("1.2.3").minor()', 2, ""),
    ("patch", 'semver("1.2.3").patch()', 3, ""),
    ("prerelease-order", 'semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta")) && '
                         'semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True, ""),
]


@pytest.mark.parametrize(("expression", "want", "error"),
                         [pytest.param(e, w, err, id=f"quantity-{n}") for n, e, w, err in QUANTITY]
                         + [pytest.param(e, w, err, id=f"semver-{n}") for n, e, w, err in SEMVER])
def test_library(expression: str, want: object, error: str) -> None:
    if error:
        with pytest.raises(RuntimeError) as e:
            evaluate(expression)
        assert re.search(error, str(e.value)), str(e.value)
        return
    got = evaluate(expression)
    assert got == want
    assert type(got) is type(want)


@pytest.mark.parametrize(("expression", "error"), [
    pytest.param("isQuantity([1, 2, 3])", "found no matching overload for 'isQuantity' applied to",
                 id="isQuantity_noOverload"),
    pytest.param("isSemver([1, 2, 3])", "found no matching overload for 'isSemver' applied to",
                 id="isSemver_noOverload"),
    pytest.param('quantity("1").compareTo(semver("1.0.0"))', "found no matching overload for 'compareTo'",
                 id="no-mixing-quantity-and-semver"),
])
def test_library_compile_errors(expression: str, error: str) -> None:
    with pytest.raises(RuntimeError, match=error):
        environment().compile(expression)


@pytest.mark.parametrize(("text", "unscaled", "scale"), [
    pytest.param("0", 0, 0, id="zero"),
    pytest.param("1.5Gi", 15 * 2**30, 1, id="binary-with-fraction"),
    pytest.param("1e3", 1, -3, id="exponent"),
    pytest.param("100m", 100, 3, id="milli"),
    pytest.param("0.0000000001", 1, 9, id="rounded-up-to-nano"),
    pytest.param("-0.0000000001", -1, 9, id="rounded-away-from-zero"),
    pytest.param("16Ei", 2**63 - 1, 0, id="binary-capped-at-int64"),
    pytest.param(".", 0, 0, id="just-a-dot"),
])
def test_parse_quantity(text: str, unscaled: int, scale: int) -> None:
    assert q.parse(text).cmp(q.Quantity(unscaled, scale)) == 0


@pytest.mark.parametrize(("text", "error"), [
    pytest.param("", q.ERR_FORMAT_WRONG, id="empty"),
    pytest.param("1.2.3", q.ERR_FORMAT_WRONG, id="two-dots"),
    pytest.param("1Mm", q.ERR_SUFFIX, id="bad-suffix"),
])
def test_parse_quantity_errors(text: str, error: str) -> None:
    with pytest.raises(q.QuantityParseError) as e:
        q.parse(text)
    assert str(e.value) == error
