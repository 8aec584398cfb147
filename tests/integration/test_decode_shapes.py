"""Every shape of Pod, Node and Job the apiserver's own OpenAPI schema allows decodes into the slim
structs: hypothesis builds objects from the plane's /openapi/v3 documents with every field present,
absent, null or empty, and the informer's decoders must read each one, in a list and in a watch
event, without skipping it."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.informer import Codec
from kubesched.model.objects import (
    Job,
    Namespace,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from tests.integration.kube import Kube

pytestmark = pytest.mark.integration

Schemas = dict[str, dict[str, Any]]
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# The apiserver writes these as RFC 3339 strings whatever a client sent.
MAX_DEPTH = 9


@pytest.fixture(scope="module")
def schemas(plane: Kube) -> Schemas:
    out: Schemas = {}
    for path in ("/openapi/v3/api/v1", "/openapi/v3/apis/batch/v1", "/openapi/v3/apis/apps/v1"):
        out.update(orjson.loads(plane.kubectl("get", "--raw", path))["components"]["schemas"])
    return out


def _quantity() -> st.SearchStrategy[Any]:
    # The schema also allows a number (what a client may send); the apiserver always writes a string.
    return st.sampled_from(["0", "1", "100m", "1Gi", "10P", "1e3", "0.5", "9223372036854775807"])


def strategy(schemas: Schemas, schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    if "$ref" in schema or "allOf" in schema:
        ref = schema["$ref"] if "$ref" in schema else schema["allOf"][0]["$ref"]
        name = ref.rsplit("/", 1)[-1]
        if name == QUANTITY:
            return _quantity()
        return st.deferred(lambda: strategy(schemas, schemas[name], depth + 1))
    if "oneOf" in schema:  # IntOrString
        return st.one_of(st.integers(0, 65535), st.text(max_size=4))
    kind = schema.get("type")
    if depth > MAX_DEPTH and kind in ("object", "array"):
        return st.just({} if kind == "object" else [])
    if kind == "object" and "properties" in schema:
        fields = {k: st.one_of(st.none(), strategy(schemas, v, depth + 1)) for k, v in schema["properties"].items()}
        return st.fixed_dictionaries({}, optional=fields)
    if kind == "object":
        values = schema.get("additionalProperties", {"type": "string"})
        return st.dictionaries(st.text(max_size=5), strategy(schemas, values, depth + 1), max_size=2)
    if kind == "array":
        return st.lists(strategy(schemas, schema["items"], depth + 1), max_size=2)
    if kind == "integer":
        bits = 31 if schema.get("format") == "int32" else 63
        return st.integers(-(2**bits), 2**bits - 1)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    return st.text(max_size=6)


CASES: list[tuple[str, type[Any]]] = [
    ("io.k8s.api.core.v1.Pod", Pod), ("io.k8s.api.core.v1.Node", Node), ("io.k8s.api.batch.v1.Job", Job),
    ("io.k8s.api.core.v1.Service", Service), ("io.k8s.api.core.v1.ReplicationController", ReplicationController),
    ("io.k8s.api.apps.v1.ReplicaSet", ReplicaSet), ("io.k8s.api.apps.v1.StatefulSet", StatefulSet),
    ("io.k8s.api.core.v1.Namespace", Namespace),
]


@pytest.mark.parametrize(("name", "type_"), CASES,
                         ids=["pod", "node", "job", "service", "rc", "replicaset", "statefulset", "namespace"])
def test_every_shape_the_schema_allows_decodes(schemas: Schemas, name: str, type_: type[Any]) -> None:
    codec = Codec(type_)

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(strategy(schemas, schemas[name]))
    def decodes(obj: dict[str, Any]) -> None:
        body = orjson.dumps({"kind": "List", "metadata": {"resourceVersion": "1"}, "items": [obj]})
        _, items, skipped = codec.decode_list(body)
        assert skipped == []
        assert len(items) == 1
        event = codec.decode_event(orjson.dumps({"type": "MODIFIED", "object": obj}))
        assert event.skipped is None
        assert event.obj == items[0]

    decodes()
