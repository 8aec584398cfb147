"""`./dev mutate`: paths become mutmut's mutant-name patterns, and mutants/'s .meta files become the
per-module report (mutmut 3.8.1's exit codes: 1 killed, 0 survived, 36 timeout, None not run)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from kubesched_dev import mutate
from tests.paths import REPO

TT = "kubesched.plugins.taint_toleration.x\u01c1TaintToleration\u01c1"
Q = "kubesched.backend.queue.scheduling_queue.x\u01c1SchedulingQueue\u01c1"


@pytest.mark.parametrize(("path", "want"), [
    pytest.param("src/kubesched/plugins/taint_toleration.py", "kubesched.plugins.taint_toleration.*", id="file"),
    pytest.param("src/kubesched/plugins/pod_topology_spread", "kubesched.plugins.pod_topology_spread.*",
                 id="folder"),
    pytest.param("src/kubesched/plugins/node_resources/", "kubesched.plugins.node_resources.*",
                 id="folder-slash"),
    pytest.param("src/kubesched/backend/queue/__init__.py", "kubesched.backend.queue.*", id="package-init"),
    pytest.param("kubesched/framework/runtime/schedule.py", "kubesched.framework.runtime.schedule.*",
                 id="without-src"),
    pytest.param(Q + "flush_*", Q + "flush_*", id="a-mutmut-pattern-as-given"),
])
def test_pattern(path: str, want: str) -> None:
    assert mutate.pattern(path) == want


@pytest.mark.parametrize("path", [
    pytest.param("tests/unit/plugins/test_rule_boundaries.py", id="a-test"),
    pytest.param("src", id="src-itself"),
])
def test_pattern_refuses_what_is_not_kubesched(path: str) -> None:
    with pytest.raises(ValueError, match="not a module or folder of src/kubesched"):
        mutate.pattern(path)


def _meta(mutants: Path, source: str, exit_codes: dict[str, int | None]) -> None:
    meta = mutants / (source + ".meta")
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"exit_code_by_key": exit_codes, "durations_by_key": {}}))


def test_collect_counts_each_module_and_names_its_survivors(tmp_path: Path) -> None:
    _meta(tmp_path, "src/kubesched/plugins/taint_toleration.py", {
        TT + "score__mutmut_1": 1, TT + "score__mutmut_10": 0, TT + "score__mutmut_2": 0,
        TT + "filter__mutmut_1": 36, TT + "filter__mutmut_2": None, TT + "filter__mutmut_3": 3,
        "kubesched.plugins.taint_toleration.x__prefer_no_schedule_tolerations__mutmut_1": 33,
    })
    _meta(tmp_path, "src/kubesched/backend/queue/scheduling_queue.py", {Q + "pop__mutmut_1": 0})
    results = mutate.collect(tmp_path, ["kubesched.plugins.taint_toleration.*"])
    assert list(results) == ["kubesched.plugins.taint_toleration"]
    tt = results["kubesched.plugins.taint_toleration"]
    assert dict(tt.counts) == {"mutants": 7, "killed": 2, "survived": 2, "timeout": 1, "not run": 1,
                               "no tests": 1}
    assert tt.survivors == [TT + "score__mutmut_2", TT + "score__mutmut_10"]  # in mutmut's numbering
    assert tt.timeouts == [TT + "filter__mutmut_1"]


def test_render_has_a_row_per_module_a_total_and_the_survivors(tmp_path: Path) -> None:
    _meta(tmp_path, "src/kubesched/plugins/taint_toleration.py", {TT + "score__mutmut_1": 1, TT + "score__mutmut_2": 0})
    _meta(tmp_path, "src/kubesched/backend/queue/scheduling_queue.py",
          {Q + "pop__mutmut_1": 1, Q + "pop__mutmut_2": -11})
    text = mutate.render(mutate.collect(tmp_path, ["kubesched.*"]))
    rows = [line.split() for line in text.splitlines()]
    assert rows[0] == ["module", "mutants", "killed", "survived", "timeout", "no", "tests", "not", "run", "other"]
    assert rows[1] == ["kubesched.backend.queue.scheduling_queue", "2", "1", "0", "0", "0", "0", "1"]
    assert rows[2] == ["kubesched.plugins.taint_toleration", "2", "1", "1", "0", "0", "0", "0"]
    assert rows[3] == ["total", "4", "2", "1", "0", "0", "0", "1"]
    assert text.endswith(f"kubesched.plugins.taint_toleration: survived (1)\n  {TT}score__mutmut_2\n")


def test_render_says_when_nothing_matched(tmp_path: Path) -> None:
    assert "no mutants matched" in mutate.render(mutate.collect(tmp_path, ["kubesched.*"]))


def test_the_default_paths_are_what_pyproject_mutates() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert config["only_mutate"] == [f"{p}/*" for p in mutate.DEFAULT_PATHS]
    assert "mutants/" in (REPO / ".gitignore").read_text().splitlines()


@pytest.mark.parametrize(("argv", "run_args"), [
    pytest.param(["src/kubesched/plugins/taint_toleration.py"],
                 ["run", "--max-children=1", "kubesched.plugins.taint_toleration.*"], id="a-path-is-tested-again"),
    pytest.param([], ["run", "--max-children=1"], id="no-path-tests-what-has-no-result"),
    pytest.param(["--max-children", "2", "src/kubesched/framework"],
                 ["run", "--max-children=2", "kubesched.framework.*"], id="max-children"),
])
def test_main_runs_mutmut_then_reports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str],
                                       run_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[list[str]] = []

    def fake_mutmut(args: list[str]) -> int:
        calls.append(list(args))
        return 0

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mutate, "_mutmut", fake_mutmut)
    _meta(tmp_path / "mutants", "src/kubesched/plugins/taint_toleration.py", {TT + "score__mutmut_1": 0})
    assert mutate.main(argv) == 0
    assert calls == [run_args]
    out = capsys.readouterr().out
    assert (tmp_path / "mutants" / "report.txt").read_text() == out
    assert (f"  {TT}score__mutmut_1" in out) == ("framework" not in " ".join(argv))


def test_results_only_runs_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mutate, "_mutmut", lambda args: pytest.fail("ran mutmut"))
    assert mutate.main(["--results"]) == 0
