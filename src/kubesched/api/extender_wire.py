"""The JSON an HTTP extender exchanges with the scheduler: k8s.io/kube-scheduler extender/v1's
ExtenderArgs, ExtenderFilterResult, HostPriorityList, ExtenderBindingArgs/Result and
ExtenderPreemptionArgs/Result. Their Go structs have no json tags, so the keys are the Go field
names ("Pod", "NodeNames", "FailedNodes", ...), and the answers are read as Go's encoding/json reads
them: a key matches its field exactly or, failing that, case-insensitively; unknown keys are
ignored; null leaves a field unset; only the first JSON value of the body counts. A malformed answer
raises ExtenderError with the error Go's decoder gives.

The pod and the nodes go out as kubesched's cache holds them: the fields the scheduler reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from kubesched.framework.extender import ExtenderError, Victims
from kubesched.framework.types import NodeInfo
from kubesched.model.decode import drop_nulls
from kubesched.model.objects import Node, Pod

_encoder = msgspec.json.Encoder()


def _node_list(nodes: Sequence[NodeInfo]) -> dict[str, Any]:
    # v1.NodeList as Go marshals it: TypeMeta omitted when empty, ListMeta always there.
    return {"metadata": {}, "items": [ni.node for ni in nodes]}


def extender_args(pod: Pod, nodes: Sequence[NodeInfo], node_cache_capable: bool) -> bytes:
    """ExtenderArgs: the node names for an extender that caches nodes, the whole nodes otherwise."""
    return _encoder.encode({
        "Pod": pod,
        "Nodes": None if node_cache_capable else _node_list(nodes),
        "NodeNames": [ni.name for ni in nodes] if node_cache_capable else None,
    })


def binding_args(pod: Pod, node: str) -> bytes:
    meta = pod.metadata
    return _encoder.encode({"PodName": meta.name, "PodNamespace": meta.namespace, "PodUID": meta.uid, "Node": node})


def preemption_args(pod: Pod, victims: Mapping[str, Victims], node_cache_capable: bool) -> bytes:
    """ExtenderPreemptionArgs: pod UIDs (MetaVictims) for an extender that caches nodes, whole pods
    otherwise; Go writes map keys sorted."""
    by_node = sorted(victims.items())
    if node_cache_capable:
        meta = {node: {"Pods": [{"UID": p.pod.metadata.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in by_node}
        return _encoder.encode({"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta})
    full = {node: {"Pods": [p.pod for p in v.pods], "NumPDBViolations": v.num_pdb_violations} for node, v in by_node}
    return _encoder.encode({"Pod": pod, "NodeNameToVictims": full, "NodeNameToMetaVictims": None})


# --- reading the answers -----------------------------------------------------------------------


def _kind(value: Any) -> str:
    """The JSON kind Go's UnmarshalTypeError names."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_error(value: Any, where: str, go_type: str) -> ExtenderError:
    into = f"Go struct field {where}" if "." in where else "Go value"
    return ExtenderError(f"json: cannot unmarshal {_kind(value)} into {into} of type {go_type}")


def decode_body(body: bytes) -> Any:
    """The first JSON value of the body, as json.Decoder.Decode reads it."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    text = body.decode("utf-8", errors="replace").lstrip(" \t\r\n")
    if not text:
        raise ExtenderError("EOF")
    try:
        return json.JSONDecoder().raw_decode(text)[0]
    except json.JSONDecodeError:
        first = text[0]
        if first not in '{["-0123456789tfn':
            raise ExtenderError(f"invalid character {first!r} looking for beginning of value") from None
        raise ExtenderError("unexpected EOF") from None


def _field(obj: Mapping[str, Any], name: str) -> Any:
    """Go's field matching: the exact key, else the first key equal to it ignoring case."""
    if name in obj:
        return obj[name]
    folded = name.casefold()
    for key, value in obj.items():
        if key.casefold() == folded:
            return value
    return None


def _struct(value: Any, go_type: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _type_error(value, "", go_type)
    return value


def _string(obj: Mapping[str, Any], name: str, struct: str) -> str:
    value = _field(obj, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _type_error(value, f"{struct}.{name}", "string")
    return value


def _int64(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _type_error(value, where, "int64")
    if (isinstance(value, float) and not value.is_integer()) or not -(1 << 63) <= value < (1 << 63):
        struct, _, field = where.rpartition(".")
        raise ExtenderError(f"json: cannot unmarshal number {value} into Go struct field {struct}.{field} "
                            "of type int64")
    return int(value)


def _string_map(obj: Mapping[str, Any], name: str, struct: str) -> dict[str, str]:
    value = _field(obj, name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _type_error(value, f"{struct}.{name}", "v1.FailedNodesMap")
    out: dict[str, str] = {}
    for key, text in value.items():
        if text is None:
            out[key] = ""
        elif not isinstance(text, str):
            raise _type_error(text, f"{struct}.{name}", "string")
        else:
            out[key] = text
    return out


@dataclass
class FilterAnswer:
    """ExtenderFilterResult as read: None for a list the extender left unset."""

    nodes: list[Node] | None
    node_names: list[str] | None
    failed: dict[str, str]
    failed_and_unresolvable: dict[str, str]
    error: str


def filter_result(body: bytes) -> FilterAnswer:
    obj = _struct(decode_body(body), "v1.ExtenderFilterResult")
    struct = "ExtenderFilterResult"
    nodes: list[Node] | None = None
    raw_nodes = _field(obj, "Nodes")
    if raw_nodes is not None:
        node_list = raw_nodes if isinstance(raw_nodes, dict) else None
        if node_list is None:
            raise _type_error(raw_nodes, f"{struct}.Nodes", "v1.NodeList")
        items = _field(node_list, "items") or []
        if not isinstance(items, list):
            raise _type_error(items, f"{struct}.Nodes.items", "[]v1.Node")
        nodes = [_node(item, struct) for item in items]
    names: list[str] | None = None
    raw_names = _field(obj, "NodeNames")
    if raw_names is not None:
        if not isinstance(raw_names, list):
            raise _type_error(raw_names, f"{struct}.NodeNames", "[]string")
        names = []
        for n in raw_names:
            if n is not None and not isinstance(n, str):
                raise _type_error(n, f"{struct}.NodeNames", "string")
            names.append(n or "")
    return FilterAnswer(nodes, names, _string_map(obj, "FailedNodes", struct),
                        _string_map(obj, "FailedAndUnresolvableNodes", struct), _string(obj, "Error", struct))


def _node(item: Any, struct: str) -> Node:
    if not isinstance(item, dict):
        raise _type_error(item, f"{struct}.Nodes.items", "v1.Node")
    try:
        return msgspec.convert(drop_nulls(item), Node)
    except msgspec.ValidationError as exc:
        raise ExtenderError(f"json: cannot unmarshal into Go struct field {struct}.Nodes.items of type "
                            f"v1.Node: {exc}") from None


def host_priority_list(body: bytes) -> list[tuple[str, int]]:
    value = decode_body(body)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _type_error(value, "", "v1.HostPriorityList")
    out: list[tuple[str, int]] = []
    for item in value:
        entry = _struct(item, "v1.HostPriority")
        out.append((_string(entry, "Host", "HostPriority"), _int64(_field(entry, "Score"), "HostPriority.Score")))
    return out


def binding_error(body: bytes) -> str:
    return _string(_struct(decode_body(body), "v1.ExtenderBindingResult"), "Error", "ExtenderBindingResult")


def preemption_result(body: bytes) -> dict[str, tuple[list[str], int]]:
    """ExtenderPreemptionResult.NodeNameToMetaVictims: per node the victims' UIDs and PDB violations."""
    struct = "ExtenderPreemptionResult"
    obj = _struct(decode_body(body), "v1.ExtenderPreemptionResult")
    raw = _field(obj, "NodeNameToMetaVictims")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _type_error(raw, f"{struct}.NodeNameToMetaVictims", "map[string]*v1.MetaVictims")
    out: dict[str, tuple[list[str], int]] = {}
    for node, victims in raw.items():
        meta = _struct(victims, "v1.MetaVictims")
        pods = _field(meta, "Pods") or []
        if not isinstance(pods, list):
            raise _type_error(pods, "MetaVictims.Pods", "[]*v1.MetaPod")
        uids = [_string(_struct(p, "v1.MetaPod"), "UID", "MetaPod") for p in pods]
        out[node] = (uids, _int64(_field(meta, "NumPDBViolations"), "MetaVictims.NumPDBViolations"))
    return out
