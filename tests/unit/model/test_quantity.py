from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.model.quantity import QuantityError, milli_value, resource_amount, value


@pytest.mark.parametrize(("text", "milli", "units"), [
    pytest.param("100m", 100, 1, id="milli"),
    pytest.param("1", 1000, 1, id="one"),
    pytest.param("0.5", 500, 1, id="fraction-rounds-up"),
    pytest.param("1Ki", 1024000, 1024, id="Ki"),
    pytest.param("1.5Gi", 1610612736000, 1610612736, id="1.5Gi"),
    pytest.param("1e3", 1000000, 1000, id="exponent"),
    pytest.param("1E3", 1000000, 1000, id="Exponent"),
    # 2E in millis passes int64: saturated (see model.quantity).
    pytest.param("2E", 2**63 - 1, 2 * 10**18, id="exa-suffix"),
    pytest.param("129M", 129 * 10**9, 129 * 10**6, id="M"),
    pytest.param("1n", 1, 1, id="nano-rounds-up"),
])
def test_parse(text: str, milli: int, units: int) -> None:
    assert milli_value(text) == milli
    assert value(text) == units


@pytest.mark.parametrize("text", ["", "abc", "1Qi", "1.2.3", "inf"])
def test_bad_quantities_are_named(text: str) -> None:
    with pytest.raises(QuantityError, match="quantity"):
        value(text)


def test_resource_amount_uses_millicores_for_cpu_only() -> None:
    assert resource_amount("cpu", "2") == 2000
    assert resource_amount("memory", "2") == 2


@given(st.integers(min_value=0, max_value=10**12))
def test_integers_round_trip(n: int) -> None:
    assert value(str(n)) == n
    assert milli_value(f"{n}m") == n
