"""extender/v1's wire types (k8s.io/kube-scheduler@v0.37.2 extender/v1/types.go): the keys are the Go
field names, and answers are read as Go's encoding/json reads them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kubesched.api import extender_wire as wire
from kubesched.framework.extender import ExtenderError, Victims
from kubesched.framework.types import NodeInfo, PodInfo
from tests.builders import make_node, make_pod


def nodes(*names: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(n).capacity().obj()) for n in names]


def test_args_for_an_extender_that_caches_nodes_carry_names_only() -> None:
    pod = make_pod("p", "ns").uid("u1").obj()
    doc = orjson.loads(wire.extender_args(pod, nodes("a", "b"), node_cache_capable=True))
    assert doc["NodeNames"] == ["a", "b"]
    assert doc["Nodes"] is None
    assert doc["Pod"]["metadata"] == {"name": "p", "namespace": "ns", "uid": "u1"}


def test_args_for_other_extenders_carry_the_whole_nodes() -> None:
    doc = orjson.loads(wire.extender_args(make_pod("p").obj(), nodes("a"), node_cache_capable=False))
    assert doc["NodeNames"] is None
    assert doc["Nodes"]["metadata"] == {}
    [item] = doc["Nodes"]["items"]
    assert item["metadata"]["name"] == "a"
    assert item["status"]["allocatable"]["cpu"] == "4"


def test_binding_args() -> None:
    pod = make_pod("p", "ns").uid("u1").obj()
    assert orjson.loads(wire.binding_args(pod, "n1")) == {
        "PodName": "p", "PodNamespace": "ns", "PodUID": "u1", "Node": "n1"}


def test_preemption_args() -> None:
    pod = make_pod("p").uid("u0").obj()
    victims = {"n2": Victims([PodInfo(make_pod("v2").uid("u2").obj())], 1),
               "n1": Victims([PodInfo(make_pod("v1").uid("u1").obj())], 0)}
    meta = orjson.loads(wire.preemption_args(pod, victims, node_cache_capable=True))
    assert meta["NodeNameToVictims"] is None
    assert meta["NodeNameToMetaVictims"] == {"n1": {"Pods": [{"UID": "u1"}], "NumPDBViolations": 0},
                                             "n2": {"Pods": [{"UID": "u2"}], "NumPDBViolations": 1}}
    assert list(meta["NodeNameToMetaVictims"]) == ["n1", "n2"]
    full = orjson.loads(wire.preemption_args(pod, victims, node_cache_capable=False))
    assert full["NodeNameToMetaVictims"] is None
    assert full["NodeNameToVictims"]["n2"]["Pods"][0]["metadata"]["name"] == "v2"
    assert full["NodeNameToVictims"]["n2"]["NumPDBViolations"] == 1


def body(doc: Any) -> bytes:
    return orjson.dumps(doc)


FILTER_CASES = [
    pytest.param(body({"NodeNames": ["a"], "FailedNodes": {"b": "no"}, "FailedAndUnresolvableNodes": {"c": "never"}}),
                 (None, ["a"], {"b": "no"}, {"c": "never"}, ""), id="names"),
    pytest.param(body({"nodenames": ["a"], "failednodes": {"b": "no"}, "ERROR": "x"}),
                 (None, ["a"], {"b": "no"}, {}, "x"), id="keys-match-ignoring-case"),
    pytest.param(body({"NodeNames": ["a"], "nodenames": ["b"]}), (None, ["a"], {}, {}, ""), id="exact-key-first"),
    pytest.param(body({"NodeNames": None, "Nodes": None, "FailedNodes": None}), (None, None, {}, {}, ""),
                 id="nulls-leave-fields-unset"),
    pytest.param(body({"NodeNames": []}), (None, [], {}, {}, ""), id="empty-list-is-set"),
    pytest.param(b"null", (None, None, {}, {}, ""), id="null-body"),
    pytest.param(b'{"Error": "busy"} trailing', (None, None, {}, {}, "busy"), id="first-value-only"),
    pytest.param(body({"Unknown": 1, "Error": ""}), (None, None, {}, {}, ""), id="unknown-keys-ignored"),
]


@pytest.mark.parametrize(("raw", "want"), FILTER_CASES)
def test_filter_result(raw: bytes, want: tuple[Any, ...]) -> None:
    got = wire.filter_result(raw)
    assert (got.nodes, got.node_names, got.failed, got.failed_and_unresolvable, got.error) == want


def test_filter_result_nodes_decode_as_nodes() -> None:
    got = wire.filter_result(body({"Nodes": {"items": [{"metadata": {"name": "a", "labels": {"k": "v"}}}]}}))
    assert got.nodes is not None
    assert [(n.metadata.name, n.metadata.labels) for n in got.nodes] == [("a", {"k": "v"})]


ERROR_CASES = [
    pytest.param(b"", "EOF", id="empty"),
    pytest.param(b"<html>", "invalid character '<' looking for beginning of value", id="html"),
    pytest.param(b"[]", "json: cannot unmarshal array into Go value of type v1.ExtenderFilterResult", id="array"),
    pytest.param(body({"Error": 1}),
                 "json: cannot unmarshal number into Go struct field ExtenderFilterResult.Error of type string",
                 id="error-not-a-string"),
    pytest.param(body({"NodeNames": "a"}),
                 "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames of type []string",
                 id="names-not-a-list"),
]


@pytest.mark.parametrize(("raw", "want"), ERROR_CASES)
def test_filter_result_errors(raw: bytes, want: str) -> None:
    with pytest.raises(ExtenderError) as info:
        wire.filter_result(raw)
    assert str(info.value) == want


PRIORITY_CASES = [
    pytest.param(body([{"Host": "a", "Score": 3}, {"host": "b", "score": 10}]), [("a", 3), ("b", 10)], id="list"),
    pytest.param(b"null", [], id="null"),
    pytest.param(body([{"Host": "a", "Score": -4}]), [("a", -4)], id="negative-score-kept"),
]


@pytest.mark.parametrize(("raw", "want"), PRIORITY_CASES)
def test_host_priority_list(raw: bytes, want: list[tuple[str, int]]) -> None:
    assert wire.host_priority_list(raw) == want


def test_host_priority_list_score_must_be_an_integer() -> None:
    with pytest.raises(ExtenderError) as info:
        wire.host_priority_list(body([{"Host": "a", "Score": 1.5}]))
    assert str(info.value) == "json: cannot unmarshal number 1.5 into Go struct field HostPriority.Score of type int64"


def test_binding_result() -> None:
    assert wire.binding_error(body({"Error": ""})) == ""
    assert wire.binding_error(body({"error": "no room"})) == "no room"


def test_preemption_result() -> None:
    raw = body({"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "u1"}, {"uid": "u2"}], "NumPDBViolations": 2},
                                          "n2": None}})
    assert wire.preemption_result(raw) == {"n1": (["u1", "u2"], 2), "n2": ([], 0)}
    assert wire.preemption_result(body({})) == {}
