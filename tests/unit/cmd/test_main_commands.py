"""The main group's commands: kubesched's own, and those other packages add through the
`kubesched.commands` entry points (kubesched-dev's cluster, bench, chaos, demo), found lazily:
`kubesched run` neither scans the entry points nor imports the dev tools."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata

import click
import pytest
from click.testing import CliRunner

from kubesched import __version__
from kubesched.cmd import main as main_module
from kubesched.cmd.main import COMMANDS_GROUP, VERSIONS_GROUP, main

DEV_COMMANDS = {"cluster", "bench", "chaos", "demo"}


def _entry(name: str, value: str, group: str = COMMANDS_GROUP) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=group)


def _only(monkeypatch: pytest.MonkeyPatch, *entries: metadata.EntryPoint) -> None:
    """The installed entry points are these alone (none: kubesched without kubesched-dev)."""
    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        return [e for e in entries if e.group == group]
    monkeypatch.setattr(metadata, "entry_points", entry_points)  # the module main.py calls


def test_the_dev_tools_commands_are_listed_when_installed() -> None:
    out = CliRunner().invoke(main, ["--help"]).output
    listed = {line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()}
    assert listed >= DEV_COMMANDS
    assert {"run", "explain", "simulate", "snapshot", "shadow", "pool", "version"} <= listed


def test_a_dev_command_comes_from_kubesched_dev() -> None:
    command = main.get_command(click.Context(main), "cluster")
    assert command is not None
    assert command.callback is not None
    assert command.callback.__module__ == "kubesched_dev.cmd.cluster"


def test_version_names_the_plane_with_kubesched_dev() -> None:
    out = CliRunner().invoke(main, ["version"]).output
    assert out.startswith(f"kubesched {__version__} (local control plane: Kubernetes v")


def test_without_kubesched_dev(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch)
    runner = CliRunner()
    assert runner.invoke(main, ["version"]).output == f"kubesched {__version__}\n"
    help_text = runner.invoke(main, ["--help"]).output
    assert not DEV_COMMANDS & {line.split()[0] for line in help_text.split("Commands:")[1].splitlines()
                               if line.strip()}
    result = runner.invoke(main, ["cluster", "list"])
    assert result.exit_code == 2
    assert "No such command 'cluster'" in result.output


def test_kubescheds_own_command_wins_over_a_plugged_in_one(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, _entry("run", "kubesched_dev.cmd.demo:demo"), _entry("version", "kubesched_dev.cmd.demo:demo"))
    ctx = click.Context(main)
    run, version = main.get_command(ctx, "run"), main.get_command(ctx, "version")
    assert run is not None
    assert run.callback is not None
    assert run.callback.__module__ == "kubesched.cmd.run"
    assert version is main_module.version


def test_an_entry_point_that_is_no_command_is_refused_with_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, _entry("odd", "os.path:join"))
    result = CliRunner().invoke(main, ["odd"])
    assert result.exit_code == 1
    assert "the kubesched.commands entry point odd = os.path:join is a function, not a click command" in result.output


def test_versions_of_several_packages_are_joined_in_name_order(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, _entry("z", "platform:python_implementation", VERSIONS_GROUP),
          _entry("a", "platform:system", VERSIONS_GROUP))
    out = CliRunner().invoke(main, ["version"]).output
    assert out == f"kubesched {__version__} ({platform.system()}; {platform.python_implementation()})\n"


def test_run_neither_reads_the_entry_points_nor_imports_the_dev_tools() -> None:
    # A process of its own: in this one the other tests have imported kubesched_dev already.
    code = (
        "import sys\n"
        "from importlib import metadata\n"
        "def refuse(*a, **k): raise AssertionError('entry points read')\n"
        "metadata.entry_points = refuse\n"
        "from kubesched.cmd.main import main\n"
        "try:\n"
        "    main(['run', '--help'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "dev = sorted(m for m in sys.modules if m.startswith('kubesched_dev'))\n"
        "assert not dev, dev\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "--kubeconfig" in proc.stdout
