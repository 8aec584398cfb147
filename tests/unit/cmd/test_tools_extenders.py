"""The read-only tools do not call extenders: with extenders configured, they say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cmd.common import load_scheduler_config

CONFIG = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
          "extenders:\n  - urlPrefix: http://ext:8888/scheduler\n    filterVerb: filter\n")


def test_tools_warn_that_they_do_not_call_extenders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    config, _ = load_scheduler_config(str(path), ())
    assert [e.url_prefix for e in config.extenders] == ["http://ext:8888/scheduler"]
    assert capsys.readouterr().err == ("warning: this tool does not call the configured extenders; it decides as "
                                       "if there were none: http://ext:8888/scheduler\n")


def test_no_warning_without_extenders(capsys: pytest.CaptureFixture[str]) -> None:
    load_scheduler_config(None, ())
    assert capsys.readouterr().err == ""
