"""The part of Go's text/template that scheduler_perf's templates use, with its template functions.

Actions: `{{.Name}}`, a function call with arguments (fields, numbers, quoted strings, parenthesized
calls), `{{if X}}...{{else}}...{{end}}`, `eq`/`ne`/`not`/`and`/`or`, and `{{-`/`-}}` trimming.
Anything else (range, with, define, pipes, variables) is refused by name rather than misread.
Values print as Go's `%v` would: a float64 workload parameter of 3 prints `3`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class TemplateError(ValueError):
    pass


_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(r'\s*(?:(\()|(\))|("(?:[^"\\]|\\.)*")|(\.[A-Za-z_][A-Za-z0-9_]*)|'
                    r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(\S))")


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
    "not": lambda a: not _truthy(a),
    "and": lambda *xs: next((x for x in xs if not _truthy(x)), xs[-1]),
    "or": lambda *xs: next((x for x in xs if _truthy(x)), xs[-1]),
    "len": len,
}
_REFUSED = ("range", "with", "define", "template", "block", "break", "continue")


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


@dataclass
class _Node:
    kind: str  # "text", "expr", "if"
    text: str = ""
    expr: list[Any] | None = None
    then: list[_Node] | None = None
    other: list[_Node] | None = None


def _tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(src):
        if src[pos:].strip() == "":
            break
        m = _TOKEN.match(src, pos)
        if m is None or m.group(7) is not None:
            raise TemplateError(f"unsupported template syntax in {{{{{src}}}}}")
        pos = m.end()
        kinds = ("(", ")", "str", "field", "num", "ident")
        for kind, g in zip(kinds, m.groups()[:6], strict=True):
            if g is not None:
                out.append((kind, g))
                break
    return out


def _parse_expr(tokens: list[tuple[str, str]], src: str) -> list[Any]:
    """A command: [callee, args...] or a single operand; nested parentheses become sub-lists."""
    stack: list[list[Any]] = [[]]
    for kind, tok in tokens:
        if kind == "(":
            stack.append([])
        elif kind == ")":
            if len(stack) == 1:
                raise TemplateError(f"unexpected ) in {{{{{src}}}}}")
            inner = stack.pop()
            stack[-1].append(("call", inner))
        elif kind == "ident" and tok in ("true", "false", "nil"):
            stack[-1].append(("lit", {"true": True, "false": False, "nil": None}[tok]))
        else:
            stack[-1].append((kind, tok))
    if len(stack) != 1:
        raise TemplateError(f"unclosed ( in {{{{{src}}}}}")
    return stack[0]


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
        if word in _REFUSED or body.startswith("$") or "|" in body or ":=" in body:
            raise TemplateError(f"{{{{{body}}}}}: this template construct is not supported")
        if word == "if":
            node = _Node("if", expr=_parse_expr(_tokens(body[2:]), body), then=[], other=None)
            stack[-1][1].append(node)
            assert node.then is not None
            stack.append((node, node.then))
        elif word == "else":
            top = stack[-1][0]
            if top is None or top.other is not None:
                raise TemplateError("{{else}} outside {{if}}")
            if body != "else":
                raise TemplateError(f"{{{{{body}}}}}: this template construct is not supported")
            top.other = []
            stack[-1] = (top, top.other)
        elif word == "end":
            if len(stack) == 1:
                raise TemplateError("unexpected {{end}}")
            stack.pop()
        else:
            stack[-1][1].append(_Node("expr", expr=_parse_expr(_tokens(body), body)))
    if len(stack) != 1:
        raise TemplateError("unexpected EOF: {{if}} without {{end}}")
    tail = text[pos:]
    root.append(_Node("text", tail.lstrip() if trim_next else tail))
    return root


def _operand(op: tuple[str, Any], env: Mapping[str, Any]) -> Any:
    kind, tok = op
    if kind == "field":
        return env.get(tok[1:])
    if kind == "num":
        return float(tok) if any(c in tok for c in ".eE") else int(tok)
    if kind == "str":
        return json.loads(tok)
    if kind == "lit":
        return tok
    if kind == "call":
        return _eval(tok, env)
    raise TemplateError(f"{tok!r}: a function needs arguments after it or parentheses around it")


def _eval(expr: list[Any], env: Mapping[str, Any]) -> Any:
    if not expr:
        raise TemplateError("empty command")
    head = expr[0]
    if head[0] == "ident":
        fn = FUNCS.get(head[1])
        if fn is None:
            raise TemplateError(f'function "{head[1]}" not defined')
        return fn(*(_operand(a, env) for a in expr[1:]))
    if len(expr) > 1:
        raise TemplateError(f"can't give argument to non-function {head[1]}")
    return _operand(head, env)


def _render(nodes: list[_Node], env: Mapping[str, Any], out: list[str]) -> None:
    for n in nodes:
        if n.kind == "text":
            out.append(n.text)
        elif n.kind == "expr":
            assert n.expr is not None
            out.append(go_str(_eval(n.expr, env)))
        else:
            assert n.expr is not None
            assert n.then is not None
            branch = n.then if _truthy(_eval(n.expr, env)) else (n.other or [])
            _render(branch, env, out)


def render(text: str, env: Mapping[str, Any]) -> str:
    out: list[str] = []
    _render(_parse(text), env, out)
    return "".join(out)


def is_template(text: str) -> bool:
    return "{{" in text
