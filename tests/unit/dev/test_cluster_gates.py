"""`kubesched cluster up --feature-gates/--runtime-config`: the values checked before anything starts
and handed to the components that take them."""

from __future__ import annotations

import pytest

from kubesched_dev.localcluster import plane


@pytest.mark.parametrize(("value", "want"), [
    pytest.param("", "", id="none"),
    pytest.param("GenericWorkload=true", "GenericWorkload=true", id="one"),
    pytest.param(" GenericWorkload=true , PodGroup=false,", "GenericWorkload=true,PodGroup=false", id="blanks-dropped"),
])
def test_pairs_are_normalized(value: str, want: str) -> None:
    assert plane._validate_pairs("--feature-gates", value) == want


@pytest.mark.parametrize("value", [
    pytest.param("GenericWorkload", id="no-equals"),
    pytest.param("=true", id="no-key"),
    pytest.param("GenericWorkload=", id="no-value"),
])
def test_malformed_pairs_stop_up(value: str) -> None:
    with pytest.raises(plane.ClusterError, match=r"^--runtime-config: Invalid value: .*KEY=VALUE"):
        plane._validate_pairs("--runtime-config", value)


def test_gates_go_on_the_command_line_only_when_given() -> None:
    c = plane.Cluster(name="x", dir="/x")
    assert plane._gate_args(c) == []
    c.feature_gates = "GenericWorkload=true"
    assert plane._gate_args(c) == ["--feature-gates=GenericWorkload=true"]
