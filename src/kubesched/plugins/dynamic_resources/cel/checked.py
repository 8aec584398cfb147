"""The checked AST of a compiled expression, read from the runtime's serialized form (a
google.protobuf.Any holding a cel.expr.CheckedExpr) with a small protobuf wire-format reader, so that
no descriptor of CEL's own protos is needed. Only what the device-map defaults and the cost estimate
look at is kept: the expression tree, the checked type of each node and the resolved references."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

_Fields = list[tuple[int, int, int | bytes]]


def _varint(b: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return result, i


def _fields(b: bytes) -> _Fields:
    out: _Fields = []
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(b, i)
        elif wire == 2:
            n, i = _varint(b, i)
            value, i = b[i:i + n], i + n
        elif wire == 1:
            value, i = b[i:i + 8], i + 8
        elif wire == 5:
            value, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _bytes(fs: _Fields, number: int) -> bytes | None:
    for n, _, v in fs:
        if n == number and isinstance(v, bytes):
            return v
    return None


def _int(fs: _Fields, number: int) -> int | None:
    for n, _, v in fs:
        if n == number and isinstance(v, int):
            return v
    return None


def _str(fs: _Fields, number: int) -> str:
    b = _bytes(fs, number)
    return b.decode() if b is not None else ""


@dataclass(slots=True)
class Node:
    id: int
    kind: str  # const, ident, select, call, list, struct, comprehension
    name: str = ""  # ident name, select field, call function
    const: object = None  # the constant's value (str, int, float, bool, bytes, None)
    const_kind: str = ""  # string, int, uint, double, bool, bytes, null
    test_only: bool = False
    children: list[Node] = field(default_factory=list)  # operand / target+args / elements / values
    has_target: bool = False
    # comprehension parts
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None
    iter_var: str = ""
    accu_var: str = ""


_CONSTANTS = {2: "bool", 3: "int", 4: "uint", 5: "double", 6: "string", 7: "bytes", 1: "null"}


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _node(b: bytes) -> Node:
    fs = _fields(b)
    nid = _int(fs, 2) or 0
    for number, _, raw in fs:
        if not isinstance(raw, bytes) and number != 2:
            continue
        if number == 3 and isinstance(raw, bytes):
            cf = _fields(raw)
            for n, w, cv in cf:
                kind = _CONSTANTS.get(n, "other")
                value: object
                if n == 6 and isinstance(cv, bytes):
                    value = cv.decode()
                elif n == 7:
                    value = cv
                elif n == 5 and isinstance(cv, bytes):
                    value = struct.unpack("<d", cv)[0]
                elif n == 3 and isinstance(cv, int):
                    value = _signed(cv)
                elif n == 2:
                    value = bool(cv)
                elif n == 1:
                    value = None
                else:
                    value = cv
                _ = w
                return Node(nid, "const", const=value, const_kind=kind)
            return Node(nid, "const", const=False, const_kind="bool")
        if number == 4 and isinstance(raw, bytes):
            return Node(nid, "ident", name=_str(_fields(raw), 1))
        if number == 5 and isinstance(raw, bytes):
            sf = _fields(raw)
            operand = _bytes(sf, 1)
            return Node(nid, "select", name=_str(sf, 2), test_only=bool(_int(sf, 3)),
                        children=[_node(operand)] if operand is not None else [])
        if number == 6 and isinstance(raw, bytes):
            cf = _fields(raw)
            target = _bytes(cf, 1)
            args = [_node(v) for n, _, v in cf if n == 3 and isinstance(v, bytes)]
            children = ([_node(target)] if target is not None else []) + args
            return Node(nid, "call", name=_str(cf, 2), children=children, has_target=target is not None)
        if number == 7 and isinstance(raw, bytes):
            return Node(nid, "list", children=[_node(v) for n, _, v in _fields(raw) if n == 1 and isinstance(v, bytes)])
        if number == 8 and isinstance(raw, bytes):
            values = []
            for n, _, entry in _fields(raw):
                if n == 2 and isinstance(entry, bytes):
                    ef = _fields(entry)
                    key, val = _bytes(ef, 3), _bytes(ef, 4)
                    values += [_node(x) for x in (key, val) if x is not None]
            return Node(nid, "struct", children=values)
        if number == 9 and isinstance(raw, bytes):
            cf = _fields(raw)

            def part(n: int, cf: _Fields = cf) -> Node | None:
                pb = _bytes(cf, n)
                return _node(pb) if pb is not None else None
            return Node(nid, "comprehension", iter_var=_str(cf, 1), iter_range=part(2), accu_var=_str(cf, 3),
                        accu_init=part(4), loop_condition=part(5), loop_step=part(6), result=part(7))
    return Node(nid, "unknown")


@dataclass(slots=True)
class CheckedExpr:
    root: Node
    # node id -> the variable or function overload ids it resolves to
    references: dict[int, tuple[str, tuple[str, ...]]]
    # node id -> the checked type, as the wire bytes of a cel.expr.Type
    types: dict[int, bytes]


def _map_entries(fs: _Fields, number: int) -> list[tuple[int, bytes]]:
    out = []
    for n, _, entry in fs:
        if n == number and isinstance(entry, bytes):
            ef = _fields(entry)
            out.append((_int(ef, 1) or 0, _bytes(ef, 2) or b""))
    return out


def decode(serialized: bytes) -> CheckedExpr:
    outer = _fields(serialized)
    inner = _bytes(outer, 2)
    fs = _fields(inner if inner is not None else serialized)
    refs: dict[int, tuple[str, tuple[str, ...]]] = {}
    for nid, raw in _map_entries(fs, 2):
        rf = _fields(raw)
        refs[nid] = (_str(rf, 1), tuple(v.decode() for n, _, v in rf if n == 3 and isinstance(v, bytes)))
    types = dict(_map_entries(fs, 3))
    root = _bytes(fs, 4)
    return CheckedExpr(_node(root) if root is not None else Node(0, "unknown"), refs, types)


def walk(n: Node | None) -> list[Node]:
    if n is None:
        return []
    out = [n]
    for c in n.children:
        out += walk(c)
    for part in (n.iter_range, n.accu_init, n.loop_condition, n.loop_step, n.result):
        out += walk(part)
    return out
