"""The soak's RSS slope: least squares over the samples after warm-up, in MB a minute."""

import pytest

from kubesched_dev.bench.chaos import slope_per_minute


@pytest.mark.parametrize(("points", "want"), [
    pytest.param([], 0.0, id="no-samples"),
    pytest.param([(0.0, 5.0)], 0.0, id="one-sample"),
    pytest.param([(0.0, 100.0), (60.0, 100.0), (120.0, 100.0)], 0.0, id="flat"),
    pytest.param([(0.0, 100.0), (60.0, 101.0), (120.0, 102.0)], 1.0, id="one-mb-a-minute"),
    # A 6-minute sawtooth of 40 MB around a flat line: no slope over whole teeth.
    pytest.param([(t * 60.0, 100.0 + 40.0 * ((t % 6) / 5)) for t in range(120)], 0.0, id="sawtooth"),
    pytest.param([(10.0, 7.0), (10.0, 9.0)], 0.0, id="same-instant"),
])
def test_slope_per_minute(points: list[tuple[float, float]], want: float) -> None:
    assert slope_per_minute(points) == pytest.approx(want, abs=0.02)
