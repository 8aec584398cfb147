"""The part of Go's text/template that scheduler_perf's templates use, with its template functions.

Actions: `{{.Name}}` and `{{.}}`, function calls with arguments (fields, variables, numbers,
quoted strings, parenthesized pipelines), pipelines (`X | F` passes X as F's last argument),
variables (`{{$n := X}}`, `$n`, scoped to the enclosing block), `{{if X}}`, `{{range X}}` over an
integer (Go 1.22's: 0..n-1) or a list, with `{{range $v := X}}`, `{{else}}`, `{{end}}`, the
comparison and logic functions, and `{{-`/`-}}` trimming. Anything else (with, define, template,
block, break, continue, assignment with `=`) is refused by name rather than misread.
Values print as Go's `%v` would: a float64 workload parameter of 3 prints `3`.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class TemplateError(ValueError):
    pass


_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<str>"(?:[^"\\]|\\.)*")|(?P<field>\.[A-Za-z_][A-Za-z0-9_]*)|'
                    r"(?P<var>\$[A-Za-z0-9_]*)|(?P<assign>:=)|(?P<pipe>\|)|(?P<dot>\.)|"
                    r"(?P<num>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<bad>\S))")
_DECL = re.compile(r"^(\$[A-Za-z0-9_]+)\s*:=\s*(.*)$", re.S)

def _num(v: Any) -> float:
    if isinstance(v, bool):
        raise TemplateError(f"cannot cast {v} to float64")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {v} to float64")


def _int(v: Any) -> int:
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            raise TemplateError(f"cannot cast {v} to int") from None
    return int(_num(v))


def _div(a: Any, b: Any) -> float:
    if _num(b) == 0:
        raise TemplateError("division by zero")
    return _num(a) / _num(b)


def _truthy(v: Any) -> bool:
    return v is not None and v is not False and v != 0 and v != "" and v != [] and v != {}


FUNCS: dict[str, Callable[..., Any]] = {
    "AddFloat": lambda *xs: sum(_num(x) for x in xs),
    "AddInt": lambda *xs: int(sum(_num(x) for x in xs)),
    "SubtractFloat": lambda a, b: _num(a) - _num(b),
    "SubtractInt": lambda a, b: int(_num(a) - _num(b)),
    "MultiplyFloat": lambda *xs: math.prod(_num(x) for x in xs),
    "MultiplyInt": lambda *xs: int(math.prod(_num(x) for x in xs)),
    "DivideFloat": _div,
    "DivideInt": lambda a, b: int(_div(a, b)),
    "Int": _int,
    "Mod": lambda a, b: int(math.fmod(int(_num(a)), int(_num(b)))),
    "JSON": lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False),
    "eq": lambda a, *bs: any(a == b for b in bs),
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "not": lambda a: not _truthy(a),
    "and": lambda *xs: next((x for x in xs if not _truthy(x)), xs[-1]),
    "or": lambda *xs: next((x for x in xs if _truthy(x)), xs[-1]),
    "len": len,
}
_REFUSED = ("with", "define", "template", "block", "break", "continue")


def go_str(v: Any) -> str:
    """fmt's %v for the values a template sees (JSON-decoded parameters, ints, strings)."""
    if v is None:
        return "<no value>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e21:
            return str(int(v))
        return repr(v)
    if isinstance(v, list):
        return "[" + " ".join(go_str(x) for x in v) + "]"
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_str(v[k])}" for k in sorted(v)) + "]"
    return str(v)


Pipeline = list[list[Any]]  # commands; each [operand, ...] with the callee first


@dataclass
class _Node:
    kind: str  # "text", "expr", "assign", "if", "range"
    text: str = ""  # text; the variable of assign and range ("" when range declares none)
    expr: Pipeline | None = None
    then: list[_Node] | None = None
    other: list[_Node] | None = None


def _tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(src):
        if src[pos:].strip() == "":
            break
        m = _TOKEN.match(src, pos)
        if m is None or m.group("bad") is not None:
            raise TemplateError(f"unsupported template syntax in {{{{{src}}}}}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        if kind == "assign":
            raise TemplateError(f"{{{{{src}}}}}: this template construct is not supported")
        out.append((kind, m.group(kind)))
    return out


def _parse_pipeline(tokens: list[tuple[str, str]], src: str) -> Pipeline:
    """Commands split at `|`; a parenthesized pipeline becomes one ("call", pipeline) operand."""
    stack: list[Pipeline] = [[[]]]
    for kind, tok in tokens:
        if kind == "open":
            stack.append([[]])
        elif kind == "close":
            if len(stack) == 1:
                raise TemplateError(f"unexpected ) in {{{{{src}}}}}")
            inner = stack.pop()
            stack[-1][-1].append(("call", inner))
        elif kind == "pipe":
            if not stack[-1][-1]:
                raise TemplateError(f"missing command before | in {{{{{src}}}}}")
            stack[-1].append([])
        elif kind == "ident" and tok in ("true", "false", "nil"):
            stack[-1][-1].append(("lit", {"true": True, "false": False, "nil": None}[tok]))
        else:
            stack[-1][-1].append((kind, tok))
    if len(stack) != 1:
        raise TemplateError(f"unclosed ( in {{{{{src}}}}}")
    if any(not cmd for cmd in stack[0]):
        raise TemplateError(f"missing command in {{{{{src}}}}}")
    return stack[0]


def _expr(src: str) -> Pipeline:
    return _parse_pipeline(_tokens(src), src)


def _parse(text: str) -> list[_Node]:
    root: list[_Node] = []
    stack: list[tuple[_Node | None, list[_Node]]] = [(None, root)]
    pos = 0
    trim_next = False
    for m in _ACTION.finditer(text):
        chunk = text[pos:m.start()]
        if trim_next:
            chunk = chunk.lstrip()
        if m.group(1):
            chunk = chunk.rstrip()
        stack[-1][1].append(_Node("text", chunk))
        trim_next = bool(m.group(3))
        pos = m.end()
        body = m.group(2).strip()
        if body.startswith("/*"):
            continue
        word = body.split(None, 1)[0] if body else ""
        if word in _REFUSED:
            raise TemplateError(f"{{{{{body}}}}}: this template construct is not supported")
        if word in ("if", "range"):
            rest = body[len(word):].strip()
            var = ""
            if word == "range" and (d := _DECL.match(rest)):
                var, rest = d.group(1), d.group(2)
            node = _Node(word, text=var, expr=_expr(rest), then=[], other=None)
            stack[-1][1].append(node)
            assert node.then is not None
            stack.append((node, node.then))
        elif word == "else":
            top = stack[-1][0]
            if top is None or top.other is not None:
                raise TemplateError("{{else}} outside {{if}} or {{range}}")
            if body != "else":
                raise TemplateError(f"{{{{{body}}}}}: this template construct is not supported")
            top.other = []
            stack[-1] = (top, top.other)
        elif word == "end":
            if len(stack) == 1:
                raise TemplateError("unexpected {{end}}")
            stack.pop()
        elif d := _DECL.match(body):
            stack[-1][1].append(_Node("assign", text=d.group(1), expr=_expr(d.group(2))))
        else:
            stack[-1][1].append(_Node("expr", expr=_expr(body)))
    if len(stack) != 1:
        raise TemplateError(f"unexpected EOF: {{{{{stack[-1][0].kind if stack[-1][0] else ''}}}}} without {{{{end}}}}")
    tail = text[pos:]
    root.append(_Node("text", tail.lstrip() if trim_next else tail))
    return root


@dataclass
class _Scope:
    dot: Any
    vars: dict[str, Any]


def _operand(op: tuple[str, Any], s: _Scope) -> Any:
    kind, tok = op
    if kind == "field":
        if not isinstance(s.dot, Mapping):
            raise TemplateError(f"can't evaluate field {tok[1:]} in type {type(s.dot).__name__}")
        return s.dot.get(tok[1:])
    if kind == "dot":
        return s.dot
    if kind == "var":
        if tok not in s.vars:
            raise TemplateError(f"undefined variable: {tok}")
        return s.vars[tok]
    if kind == "num":
        return float(tok) if any(c in tok for c in ".eE") else int(tok)
    if kind == "str":
        return json.loads(tok)
    if kind == "lit":
        return tok
    if kind == "call":
        return _eval(tok, s)
    raise TemplateError(f"{tok!r}: a function needs arguments after it or parentheses around it")


def _command(cmd: list[Any], s: _Scope, piped: tuple[Any, ...]) -> Any:
    head = cmd[0]
    if head[0] == "ident":
        fn = FUNCS.get(head[1])
        if fn is None:
            raise TemplateError(f'function "{head[1]}" not defined')
        return fn(*(_operand(a, s) for a in cmd[1:]), *piped)
    if len(cmd) > 1 or piped:
        raise TemplateError(f"can't give argument to non-function {head[1]}")
    return _operand(head, s)


def _eval(pipeline: Pipeline, s: _Scope) -> Any:
    value = _command(pipeline[0], s, ())
    for cmd in pipeline[1:]:
        value = _command(cmd, s, (value,))
    return value


def _items(v: Any) -> list[Any]:
    if isinstance(v, bool) or v is None:
        raise TemplateError(f"range can't iterate over {go_str(v)}")
    if isinstance(v, int):
        return list(range(v))
    if isinstance(v, float) and v.is_integer():
        raise TemplateError(f"range can't iterate over {go_str(v)}: a float64; use Int")
    if isinstance(v, list):
        return v
    if isinstance(v, dict):
        return [v[k] for k in sorted(v)]
    raise TemplateError(f"range can't iterate over {go_str(v)}")


def _render(nodes: list[_Node], s: _Scope, out: list[str]) -> None:
    for n in nodes:
        if n.kind == "text":
            out.append(n.text)
            continue
        assert n.expr is not None
        if n.kind == "expr":
            out.append(go_str(_eval(n.expr, s)))
        elif n.kind == "assign":
            s.vars[n.text] = _eval(n.expr, s)
        elif n.kind == "if":
            assert n.then is not None
            branch = n.then if _truthy(_eval(n.expr, s)) else (n.other or [])
            _render(branch, _Scope(s.dot, dict(s.vars)), out)
        else:
            assert n.then is not None
            items = _items(_eval(n.expr, s))
            for item in items:
                inner = _Scope(item, dict(s.vars))
                if n.text:
                    inner.vars[n.text] = item
                _render(n.then, inner, out)
            if not items:
                _render(n.other or [], _Scope(s.dot, dict(s.vars)), out)


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> list[_Node]:
    """A template is rendered once per object, thousands of times a run: parsed once."""
    return _parse(text)


def render(text: str, env: Mapping[str, Any]) -> str:
    out: list[str] = []
    _render(_parsed(text), _Scope(env, {"$": env}), out)
    return "".join(out)


def is_template(text: str) -> bool:
    return "{{" in text
