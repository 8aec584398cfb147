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
    pytest.param("{{$n := (or .n 2) | Int}}{{range $n}}[{{.}}]{{end}}", {}, "[0][1]", id="range-int-var-pipe"),
    pytest.param("{{$r := or .r 3}}{{range $i := (.k | Int)}}{{Mod $i $r}}{{end}}", {"k": 5.0}, "01201",
                 id="range-decl-mod"),
    pytest.param("{{range .xs}}{{.}},{{else}}none{{end}}", {"xs": []}, "none", id="range-else"),
    pytest.param("{{range .xs}}{{.a}}{{end}}", {"xs": [{"a": 1}, {"a": 2}]}, "12", id="range-list"),
    pytest.param("{{$s := (or .sel nil) | JSON}}{{$s}}", {}, "null", id="json-nil"),
    pytest.param("{{$s := (or .sel nil) | JSON}}{{$s}}", {"sel": [{"cel": {"expression": "x"}}]},
                 '[{"cel":{"expression":"x"}}]', id="json-list"),
    pytest.param("{{range $i := 3}}{{if ge $i 1}}y{{else}}n{{end}}{{end}}", {}, "nyy", id="ge"),
    pytest.param("{{range 2}}{{$x := .}}{{end}}{{.a}}", {"a": "top"}, "top", id="dot-restored-after-range"),
])
def test_render(text: str, env: dict[str, Any], want: str) -> None:
    assert gotemplate.render(text, env) == want


@pytest.mark.parametrize(("text", "match"), [
    pytest.param("{{with .x}}{{end}}", "not supported", id="with"),
    pytest.param("{{range 2}}{{$y := 1}}{{end}}{{$y}}", r"undefined variable: \$y", id="variable-out-of-scope"),
    pytest.param("{{range .x}}{{end}}", "range can't iterate over 1.5", id="range-float"),
    pytest.param("{{.x | }}", "missing command", id="empty-pipe"),
    pytest.param("{{Nope 1}}", 'function "Nope" not defined', id="unknown-func"),
    pytest.param("{{if .x}}", "without {{end}}", id="unclosed-if"),
    pytest.param("{{DivideInt 1 0}}", "division by zero", id="div-zero"),
])
def test_refused(text: str, match: str) -> None:
    with pytest.raises(gotemplate.TemplateError, match=match):
        gotemplate.render(text, {"x": 1.5})
