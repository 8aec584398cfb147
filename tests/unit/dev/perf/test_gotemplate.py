"""The text/template subset scheduler_perf's templates use."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched_dev.bench.perf import gotemplate


@pytest.mark.parametrize(("text", "env", "want"), [
    pytest.param("name: n-{{.Index}}", {"Index": 3}, "name: n-3", id="field"),
    pytest.param("{{.minCount}}", {"minCount": 3.0}, "3", id="float-param-prints-as-go"),
    pytest.param("{{.x}}", {"x": 0.5}, "0.5", id="fraction"),
    pytest.param("{{AddInt 0 .priority}}", {"priority": 5.0}, "5", id="func"),
    pytest.param("{{DivideInt (MultiplyInt .Index 10) 4}}", {"Index": 3}, "7", id="nested"),
    pytest.param("{{Mod .Index 3}}", {"Index": 7}, "1", id="mod"),
    pytest.param("{{if .p}}{{.p}}{{else}}1000{{end}}", {}, "1000", id="if-else-missing"),
    pytest.param("{{if eq .m \"single\"}}s{{else}}a{{end}}", {"m": "single"}, "s", id="eq"),
    pytest.param("a\n  {{- .x -}}\n  b", {"x": 1}, "a1b", id="trim"),
    pytest.param("{{JSON .v}}", {"v": {"a": [1, "x"]}}, '{"a":[1,"x"]}', id="json"),
    pytest.param("no actions", {}, "no actions", id="plain"),
])
def test_render(text: str, env: dict[str, Any], want: str) -> None:
    assert gotemplate.render(text, env) == want


@pytest.mark.parametrize(("text", "match"), [
    pytest.param("{{range .x}}{{end}}", "not supported", id="range"),
    pytest.param("{{$n := 1}}", "not supported", id="variable"),
    pytest.param("{{.x | Int}}", "not supported", id="pipe"),
    pytest.param("{{Nope 1}}", 'function "Nope" not defined', id="unknown-func"),
    pytest.param("{{if .x}}", "without {{end}}", id="unclosed-if"),
    pytest.param("{{DivideInt 1 0}}", "division by zero", id="div-zero"),
])
def test_refused(text: str, match: str) -> None:
    with pytest.raises(gotemplate.TemplateError, match=match):
        gotemplate.render(text, {"x": 1})
