"""Each operation's requests and waits, against a fake apiserver client and informer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubesched.api.client import Response
from kubesched_dev.bench.perf import executor as ex_mod
from kubesched_dev.bench.perf.config import UnsupportedOperation, parse_duration
from kubesched_dev.bench.perf.executor import Executor
from kubesched_dev.bench.perf.informer import PodInformer, PodState

DISCOVERY = {
    "/api/v1": {"resources": [{"name": "pods", "kind": "Pod", "namespaced": True},
                              {"name": "pods/status", "kind": "Pod", "namespaced": True},
                              {"name": "nodes", "kind": "Node", "namespaced": False},
                              {"name": "services", "kind": "Service", "namespaced": True}]},
    "/apis/scheduling.k8s.io/v1": {"resources": [{"name": "priorityclasses", "kind": "PriorityClass",
                                                  "namespaced": False}]},
}


class FakeClient:
    """Records every request; POSTed pods and nodes are kept so later lists and the informer see them."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any, Any]] = []
        self.nodes: list[str] = []
        self.serial = 0

    async def request(self, method: str, path: str, *, params: Any = None, body: Any = None,
                      content_type: str = "", request_timeout: float | None = None) -> Response:
        self.requests.append((method, path, params, body))
        if method == "GET" and path in DISCOVERY:
            return Response(200, orjson.dumps(DISCOVERY[path]))
        if method == "GET" and path == "/api/v1/nodes":
            return Response(200, orjson.dumps({"items": [{"metadata": {"name": n}} for n in sorted(self.nodes)]}))
        if method == "POST":
            meta = dict((body or {}).get("metadata", {}))
            if not meta.get("name"):
                self.serial += 1
                meta["name"] = f"{meta.get('generateName', 'x-')}{self.serial}"
            if path == "/api/v1/nodes":
                self.nodes.append(meta["name"])
            return Response(201, orjson.dumps({**(body or {}), "metadata": meta}))
        return Response(200, b"{}")

    async def call(self, method: str, path: str, *, params: Any = None, body: Any = None,
                   content_type: str = "", request_timeout: float | None = None) -> bytes:
        return (await self.request(method, path, params=params, body=body)).body

    async def get(self, path: str, params: Any = None) -> bytes:
        return await self.call("GET", path, params=params)

    def posts(self, suffix: str) -> list[Any]:
        return [b for m, p, _, b in self.requests if m == "POST" and p.endswith(suffix)]


class FakeInformer(PodInformer):
    def __init__(self) -> None:
        super().__init__(None)  # type: ignore[arg-type]

    def add(self, ns: str, name: str, node: str = "", attempted: bool = False,
            labels: dict[str, str] | None = None) -> None:
        self.pods[(ns, name)] = PodState(ns, name, labels or {}, node, attempted)

    def check(self) -> None:
        return None


def _ex(client: FakeClient, informer: FakeInformer | None = None, template: str | None = None) -> Executor:
    return Executor(client, informer or FakeInformer(), template, "T/w", lambda _: None)  # type: ignore[arg-type]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ex_mod, "POLL_S", 0.01)


def test_create_nodes_default_template_and_label_strategy() -> None:
    client = FakeClient()
    op = {"opcode": "createNodes", "index": 0, "count": 4,
          "labelNodePrepareStrategy": {"labelKey": "zone", "labelValues": ["a", "b", "c"]}}
    ex = _ex(client)
    run(ex.run([op]))
    nodes = client.posts("/api/v1/nodes")
    assert len(nodes) == 4
    n = nodes[0]
    assert n["metadata"]["name"].startswith("node-0-")
    assert n["metadata"]["labels"]["kubernetes.io/hostname"] == n["metadata"]["name"]
    assert n["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert n["status"]["capacity"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    patches = [(p, b) for m, p, _, b in client.requests if m == "PATCH"]
    # round-robin over the nodes in list order, as LabelNodePrepareStrategy patches them
    assert [b["metadata"]["labels"]["zone"] for _, b in patches] == ["a", "b", "c", "a"]
    assert [p.rsplit("/", 1)[1] for p, _ in patches] == sorted(client.nodes)
    assert ex.next_node == 4


def test_create_nodes_from_template(tmp_path: Path) -> None:
    t = tmp_path / "node.yaml"
    t.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n-{{.Index}}-of-{{.Count}}\n")
    client = FakeClient()
    run(_ex(client).run([{"opcode": "createNodes", "index": 0, "count": 2, "nodeTemplatePath": str(t)}]))
    assert sorted(b["metadata"]["name"] for b in client.posts("/api/v1/nodes")) == ["n-0-of-2", "n-1-of-2"]


def test_create_nodes_allocatable_strategy_refused() -> None:
    with pytest.raises(UnsupportedOperation, match="createNodes with nodeAllocatableStrategy"):
        run(_ex(FakeClient()).run([{"opcode": "createNodes", "index": 0, "count": 1,
                                    "nodeAllocatableStrategy": {"nodeAllocatable": {}}}]))


def test_create_pods_waits_for_scheduled_and_collects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    t = tmp_path / "pod.yaml"
    t.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: pod-\nspec: {}\n")
    client = FakeClient()
    informer = FakeInformer()
    ex = _ex(client, informer, str(t))

    async def scenario() -> list[Any]:
        async def bind_later() -> None:
            await asyncio.sleep(0.05)
            for i in range(3):
                informer.add("namespace-0", f"p{i}", node="n")
                for hook in informer.hooks:
                    hook(informer.pods[("namespace-0", f"p{i}")])

        task = asyncio.create_task(bind_later())
        out = await ex.run([{"opcode": "createPods", "index": 0, "count": 3, "collectMetrics": True,
                             "signatureBatchSize": 2}])
        await task
        return out

    results = run(scenario())
    pods = client.posts("/namespaces/namespace-0/pods")
    assert len(pods) == 3
    assert sorted(p["metadata"]["labels"]["signature"] for p in pods) == [
        "signature-label-0", "signature-label-0", "signature-label-1"]
    assert client.posts("/api/v1/namespaces")[0]["metadata"]["name"] == "namespace-0"
    assert len(results) == 1
    assert results[0].scheduled == 3
    assert results[0].name == "T/w/namespace-0"


def test_create_pods_default_pod_when_no_template() -> None:
    client = FakeClient()
    informer = FakeInformer()
    informer.add("ns", "already", node="n")
    run(_ex(client, informer).run([{"opcode": "createPods", "index": 0, "count": 1, "namespace": "ns"}]))
    pod = client.posts("/namespaces/ns/pods")[0]
    assert pod["metadata"]["generateName"] == "pod-"
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}


@pytest.mark.parametrize("key", ["persistentVolumeClaimTemplatePath", "persistentVolumeTemplatePath"])
def test_create_pods_unimplemented_options_refused(key: str) -> None:
    with pytest.raises(UnsupportedOperation, match=f"createPods with {key}"):
        run(_ex(FakeClient()).run([{"opcode": "createPods", "index": 0, "count": 1, key: True}]))


def test_skip_wait_then_barrier_attempted_and_scheduled() -> None:
    informer = FakeInformer()
    ex = _ex(FakeClient(), informer)

    async def scenario() -> None:
        await ex.run([{"opcode": "createPods", "index": 0, "count": 2, "skipWaitToCompletion": True}])
        assert ex.pending == {"namespace-0": 2}
        informer.add("namespace-0", "a", attempted=True)
        informer.add("namespace-0", "b", node="n")
        await ex.run([{"opcode": "barrier", "index": 1, "stageRequirement": "Attempted"}])
        assert ex.pending == {"namespace-0": 2}  # an Attempted barrier keeps the namespace
        waiter = asyncio.create_task(ex.run([{"opcode": "barrier", "index": 2, "stageRequirement": "Scheduled"}]))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        informer.add("namespace-0", "a", node="n")
        await asyncio.wait_for(waiter, 2)
        assert ex.pending == {}

    run(scenario())


def test_barrier_unknown_namespace() -> None:
    with pytest.raises(ValueError, match="unknown namespace nope"):
        run(_ex(FakeClient()).run([{"opcode": "barrier", "index": 0, "namespaces": ["nope"]}]))


def test_delete_pods_by_label_rate_limited_and_collection() -> None:
    client = FakeClient()
    informer = FakeInformer()
    informer.add("ns", "keep", labels={"app": "other"})
    informer.add("ns", "go1", labels={"app": "x"})
    informer.add("ns", "go2", labels={"app": "x"})
    ex = _ex(client, informer)
    run(ex.run([{"opcode": "deletePods", "index": 0, "namespace": "ns", "labelSelector": {"app": "x"},
                 "deletePodsPerSecond": 100}]))
    assert sorted(p for m, p, _, _ in client.requests if m == "DELETE") == [
        "/api/v1/namespaces/ns/pods/go1", "/api/v1/namespaces/ns/pods/go2"]
    client.requests.clear()
    run(ex.run([{"opcode": "deletePods", "index": 1, "namespace": "ns"}]))
    assert [(m, p) for m, p, _, _ in client.requests] == [("DELETE", "/api/v1/namespaces/ns/pods")]


def test_create_any_and_update_any(tmp_path: Path) -> None:
    t = tmp_path / "pc.yaml"
    t.write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: pc-{{.Index}}\nvalue: 1\n")
    svc = tmp_path / "svc.yaml"
    svc.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec: {}\n")
    client = FakeClient()
    ex = _ex(client)
    run(ex.run([{"opcode": "createAny", "index": 0, "templatePath": str(t), "count": 2},
                {"opcode": "createAny", "index": 1, "templatePath": str(svc), "namespace": "svc-ns"},
                {"opcode": "updateAny", "index": 2, "templatePath": str(svc), "namespace": "svc-ns"}]))
    posts = [(p, q) for m, p, q, _ in client.requests if m == "POST" and "priorityclasses" in p]
    assert posts == [("/apis/scheduling.k8s.io/v1/priorityclasses", {"fieldValidation": "Strict"})] * 2
    assert client.posts("/namespaces/svc-ns/services")[0]["metadata"]["name"] == "s"
    puts = [p for m, p, _, _ in client.requests if m == "PUT"]
    assert puts == ["/api/v1/namespaces/svc-ns/services/s", "/api/v1/namespaces/svc-ns/services/s/status"]


def test_create_any_wrong_scope(tmp_path: Path) -> None:
    t = tmp_path / "node.yaml"
    t.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n")
    with pytest.raises(ValueError, match="is cluster-scoped"):
        run(_ex(FakeClient()).run([{"opcode": "createAny", "index": 0, "namespace": "x", "templatePath": str(t)}]))


def test_churn_recreate_creates_then_deletes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    svc = tmp_path / "svc.yaml"
    svc.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  generateName: churn-\nspec: {}\n")
    client = FakeClient()
    ex = _ex(client)

    async def scenario() -> None:
        await ex._op_churn({"opcode": "churn", "index": 1, "mode": "recreate", "number": 1,
                            "intervalMilliseconds": 10, "templatePaths": [str(svc)]})
        await asyncio.sleep(0.055)
        for t in ex.background:
            t.cancel()

    run(scenario())
    ops = [(m, p.rsplit("/", 1)[-1]) for m, p, _, _ in client.requests if "services" in p]
    assert ops[:3] == [("POST", "services"), ("DELETE", "churn-1"), ("POST", "services")]
    assert client.posts("/api/v1/namespaces")[0]["metadata"]["name"] == "namespace-1"


def test_sleep_and_metrics_window() -> None:
    client = FakeClient()
    informer = FakeInformer()
    ex = _ex(client, informer)
    results = run(ex.run([{"opcode": "startCollectingMetrics", "index": 0, "name": "m", "namespaces": ["a"]},
                          {"opcode": "sleep", "index": 1, "duration": "10ms"},
                          {"opcode": "stopCollectingMetrics", "index": 2}]))
    assert [r.name for r in results] == ["T/w/m"]
    assert results[0].stopped - results[0].started >= 0.01


@pytest.mark.parametrize(("ops", "match"), [
    pytest.param([{"opcode": "stopCollectingMetrics", "index": 0}], "missing startCollectingMetrics", id="stop-first"),
    pytest.param([{"opcode": "startCollectingMetrics", "index": 0, "namespaces": ["a"]},
                  {"opcode": "startCollectingMetrics", "index": 1, "namespaces": ["a"]}], "overlapping", id="twice"),
    pytest.param([{"opcode": "startCollectingMetrics", "index": 0}], "namespaces cannot be empty", id="no-ns"),
])
def test_metrics_window_errors(ops: list[dict[str, Any]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run(_ex(FakeClient()).run(ops))


@pytest.mark.parametrize(("text", "want"), [
    pytest.param("5s", 5.0, id="s"), pytest.param("1m30s", 90.0, id="m-s"),
    pytest.param("500ms", 0.5, id="ms"), pytest.param("0", 0.0, id="zero"),
])
def test_parse_duration(text: str, want: float) -> None:
    assert parse_duration(text) == pytest.approx(want)


def test_parse_duration_invalid() -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration("5 seconds")
