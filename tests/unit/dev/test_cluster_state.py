"""A local plane's saved state read back: odd or newer state files never break listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubesched_dev.localcluster import plane


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path / "kubesched" / "clusters"


def _write(root: Path, name: str, text: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "state.json").write_text(text)


def test_a_state_written_by_another_version_still_loads(state_home: Path) -> None:
    _write(state_home, "newer", json.dumps({"name": "newer", "dir": "/x", "owner_pid": 7, "commands": {"a": []}}))
    got = plane.load("newer")
    assert got is not None
    assert (got.name, got.dir, got.owner_pid) == ("newer", "/x", 7)


@pytest.mark.parametrize("text", ["[1, 2]", "not json", '{"dir": "/x"}', '"a string"'],
                         ids=["a-list", "not-json", "missing-name", "a-string"])
def test_odd_state_files_are_left_out_of_the_list(state_home: Path, text: str) -> None:
    _write(state_home, "odd", text)
    _write(state_home, "good", json.dumps({"name": "good", "dir": "/y"}))
    assert [c.name for c in plane.list_clusters()] == ["good"]


@pytest.mark.parametrize(("off", "want"), [
    ((), "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition"),
    (("Priority",), "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority"),
], ids=["every-plane", "scheduler-perf"])
def test_admission_plugins_a_plane_runs_without(off: tuple[str, ...], want: str) -> None:
    assert plane._disabled_admission(plane.Cluster(name="p", dir="/p", admission_off=off)) == want


def test_admission_off_survives_the_state_file(state_home: Path) -> None:
    _write(state_home, "perf", json.dumps({"name": "perf", "dir": "/p", "admission_off": ["Priority"]}))
    got = plane.load("perf")
    assert got is not None
    assert plane._disabled_admission(got).endswith(",Priority")
