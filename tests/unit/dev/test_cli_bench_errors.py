"""A plane that cannot start ends `kubesched bench` with one clear line, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched_dev.cmd import bench as cli_bench
from kubesched_dev.localcluster.plane import ClusterError


def test_a_plane_that_does_not_start_is_reported_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def no_plane(*_: object) -> list[object]:
        raise ClusterError("only 3882 of 5000 nodes became Ready within 250 s; kwok log: /x/kwok.log")

    monkeypatch.setattr(cli_bench, "run_all", no_plane)
    result = CliRunner().invoke(cli_bench.bench, ["--quick", "--contenders", "kubesched", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert ("Error: the local control plane for the basic workload did not start: only 3882 of 5000 nodes"
            in result.output)
    assert "Traceback" not in result.output
