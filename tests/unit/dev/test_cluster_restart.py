"""`kubesched cluster restart`: its refusals, without a plane (the restart itself runs in R3,
tests/integration/test_watch_expiry.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cmd.main import main
from kubesched_dev.localcluster import plane


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path / "kubesched" / "clusters"


def _restart(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["cluster", "restart", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(("args", "says"), [
    pytest.param(["--name", "nosuch", "--component", "kwok"], "no cluster named 'nosuch'", id="no-cluster"),
    pytest.param(["--component", "kubelet"], "'kubelet' is not one of", id="unknown-component"),
    pytest.param([], "Missing option '--component'", id="no-component"),
])
def test_restart_refuses_with_a_reason(state: Path, args: list[str], says: str) -> None:
    code, out = _restart(*args)
    assert code != 0
    assert says in out, out


def _write_state(state: Path, **fields: object) -> None:
    d = state / "old"
    d.mkdir(parents=True)
    (d / "state.json").write_text(json.dumps({"name": "old", "dir": str(d), **fields}))


def test_a_cluster_of_an_older_kubesched_is_told_to_be_recreated(state: Path) -> None:
    # Written before `commands` existed: it loads, and restart says why it cannot.
    _write_state(state, pids={"kwok": 999999}, ports={})
    loaded = plane.load("old")
    assert loaded is not None
    assert loaded.commands == {}
    code, out = _restart("--name", "old", "--component", "kwok")
    assert code != 0
    assert "did not record how it started kwok" in out, out


def test_a_component_the_cluster_does_not_run(state: Path) -> None:
    _write_state(state, pids={"kwok": 999999}, ports={}, commands={"kwok": ["kwok"]})
    code, out = _restart("--name", "old", "--component", "kube-scheduler")
    assert code != 0
    assert "--component: Invalid value: 'kube-scheduler': cluster 'old' runs kwok" in out, out
