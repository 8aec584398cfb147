"""Out-of-tree plugins: `--plugin NAME=module:attr` and the `kubesched.plugins` entry points, and the
one-line message (no traceback) each way of getting them wrong gives."""

from __future__ import annotations

import itertools
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cmd.run import run
from kubesched.framework.runtime.outoftree import PluginLoadError, out_of_tree_plugins
from kubesched.plugins.registry import in_tree_registry

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
_unique = itertools.count()

PLUGIN_MODULE = '''
from kubesched.framework import CycleState, NodeInfo, PluginSpec, PodInfo, Status

class Gate:
    name = "Gate"
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

class Empty:
    name = "Gate"

def new(args) -> Gate:
    return Gate()

def new_unannotated(args):
    return Gate()

def needs_args(args):
    return Gate() if args["x"] else None

def empty(args):
    return Empty()

def parse(raw, path, errs):
    if "x" not in raw:
        raise ValueError("x is required")
    return dict(raw)

SPEC = PluginSpec("Gate", new, args_parser=parse)
NOT_CALLABLE = 42
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A plugin module the project has never seen, importable under a fresh name."""
    name = f"oot_plugins_{next(_unique)}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    (tmp_path / f"broken_{name}.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.mark.parametrize(("attr", "points"), [
    pytest.param("new", {"filter"}, id="annotated-factory"),
    pytest.param("new_unannotated", {"filter"}, id="unannotated-factory-probed"),
    pytest.param("Gate", {"filter"}, id="plugin-class"),
    pytest.param("SPEC", {"filter"}, id="plugin-spec"),
])
def test_flag_loads_a_plugin(module: str, attr: str, points: set[str]) -> None:
    [spec] = out_of_tree_plugins([f"Gate={module}:{attr}"], in_tree_registry())
    assert spec.name == "Gate"
    assert spec.extension_points == points


FLAG_ERRORS = [
    pytest.param("Foo=nosuch:new", "--plugin Foo=nosuch:new: cannot import module 'nosuch': No module named 'nosuch'",
                 id="module-does-not-import"),
    pytest.param("Foo=broken_{m}:new", "--plugin Foo=broken_{m}:new: importing module 'broken_{m}' failed: "
                 "RuntimeError: boom at import", id="module-raises-on-import"),
    pytest.param("Foo={m}:nosuch", "--plugin Foo={m}:nosuch: module '{m}' has no attribute 'nosuch'",
                 id="missing-attribute"),
    pytest.param("Foo={m}:NOT_CALLABLE", "--plugin Foo={m}:NOT_CALLABLE: NOT_CALLABLE is a int, not callable: give a "
                 "plugin factory (args[, handle]) -> plugin, a plugin class or a PluginSpec", id="not-callable"),
    pytest.param("Foo", "--plugin Foo: expected NAME=module:attr, e.g. --plugin MyFilter=my_plugins.filters:new",
                 id="no-equals"),
    pytest.param("Foo={m}", "--plugin Foo={m}: expected NAME=module:attr", id="no-colon"),
    pytest.param("={m}:new", "--plugin ={m}:new: expected NAME=module:attr", id="no-name"),
    pytest.param("NodeName={m}:new", "--plugin NodeName={m}:new: NodeName is the name of a built-in plugin; "
                 "choose another name", id="clash-with-built-in"),
    pytest.param("Other={m}:SPEC", "--plugin Other={m}:SPEC: SPEC is the PluginSpec of plugin 'Gate', not 'Other'; "
                 "register it as Gate", id="spec-named-otherwise"),
    pytest.param("Gate={m}:needs_args", "--plugin Gate={m}:needs_args: cannot tell which extension points it "
                 "implements: its factory names no plugin class (as its return annotation) and calling it with "
                 "empty args failed (KeyError: 'x')", id="unannotated-factory-needing-args"),
    pytest.param("Gate={m}:empty", "--plugin Gate={m}:empty: its Empty implements no extension point",
                 id="no-extension-point"),
]


@pytest.mark.parametrize(("flag", "message"), FLAG_ERRORS)
def test_flag_errors_are_one_clear_line(module: str, flag: str, message: str) -> None:
    result = CliRunner().invoke(run, ["--plugin", flag.format(m=module)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"Error: {message.format(m=module)}" in result.output
    assert "Traceback" not in result.output


def test_two_flags_with_one_name(module: str) -> None:
    with pytest.raises(PluginLoadError, match=rf"--plugin Gate={module}:SPEC: plugin Gate is already given by "
                                              rf"--plugin Gate={module}:new"):
        out_of_tree_plugins([f"Gate={module}:new", f"Gate={module}:SPEC"], in_tree_registry())


def test_args_a_plugin_parser_rejects_name_the_field(module: str, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(HEAD + "profiles:\n  - plugins:\n      multiPoint:\n        enabled:\n          - name: Gate\n"
                      "    pluginConfig:\n      - name: Gate\n        args: {y: 1}\n")
    result = CliRunner().invoke(run, ["--plugin", f"Gate={module}:SPEC", f"--config={config}"])
    assert result.exit_code == 1
    assert "profiles[0].pluginConfig[0].args: x is required" in result.output
    assert "Traceback" not in result.output


def test_a_plugin_not_loaded_is_an_unknown_name(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(HEAD + "profiles:\n  - plugins:\n      filter:\n        enabled:\n          - name: Gate\n")
    result = CliRunner().invoke(run, [f"--config={config}"])
    assert result.exit_code == 1
    assert 'profiles[0].plugins.filter.enabled[0].name: Unsupported value: "Gate"' in result.output


def _entry_points(*eps: metadata.EntryPoint):  # type: ignore[no-untyped-def]
    def entry_points(group: str) -> list[metadata.EntryPoint]:
        assert group == "kubesched.plugins"
        return list(eps)
    return entry_points


def test_entry_points_are_loaded(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ep = metadata.EntryPoint("Gate", f"{module}:SPEC", "kubesched.plugins")
    monkeypatch.setattr(metadata, "entry_points", _entry_points(ep))
    [spec] = out_of_tree_plugins([], in_tree_registry())
    assert spec.name == "Gate"
    assert spec.args_parser is not None


@pytest.mark.parametrize(("name", "flags", "message"), [
    pytest.param("NodeName", [], "entry point NodeName = {m}:new (group kubesched.plugins): NodeName is the name of "
                 "a built-in plugin", id="entry-point-clashes-with-built-in"),
    pytest.param("Gate", ["Gate={m}:new"], "--plugin Gate={m}:new: plugin Gate is already given by entry point "
                 "Gate = {m}:new", id="flag-clashes-with-entry-point"),
    pytest.param("Gate", [], None, id="no-clash"),
])
def test_entry_point_clashes(module: str, monkeypatch: pytest.MonkeyPatch, name: str, flags: list[str],
                             message: str | None) -> None:
    monkeypatch.setattr(metadata, "entry_points",
                        _entry_points(metadata.EntryPoint(name, f"{module}:new", "kubesched.plugins")))
    if message is None:
        assert [s.name for s in out_of_tree_plugins(flags, in_tree_registry())] == [name]
        return
    with pytest.raises(PluginLoadError) as exc:
        out_of_tree_plugins([f.format(m=module) for f in flags], in_tree_registry())
    assert message.format(m=module) in str(exc.value)


def test_a_broken_entry_point_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata, "entry_points",
                        _entry_points(metadata.EntryPoint("Foo", "nosuch_dist_module:new", "kubesched.plugins")))
    with pytest.raises(PluginLoadError, match=r"entry point Foo = nosuch_dist_module:new \(group kubesched.plugins\): "
                                              r"cannot import module 'nosuch_dist_module'"):
        out_of_tree_plugins([], in_tree_registry())
