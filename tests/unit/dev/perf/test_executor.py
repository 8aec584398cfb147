"""Each operation's requests and waits, against a fake apiserver client and informer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubesched.api import ApiError
from kubesched.api.client import Response
from kubesched_dev.bench.perf import config, report, runner, volumes
from kubesched_dev.bench.perf import executor as ex_mod
from kubesched_dev.bench.perf.config import parse_duration
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
        if method == "GET" and path.startswith("/apis/storage.k8s.io/v1/csinodes/"):
            return Response(404, b"{}")
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
    # scheduler_perf's nodes: nothing heartbeats them, so no kwok annotation (runner.CONTROLLERS)
    assert "kwok.x-k8s.io/node" not in n["metadata"].get("annotations", {})
    assert n["status"]["capacity"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    patches = [(p, b) for m, p, _, b in client.requests if m == "PATCH"]
    # round-robin over the nodes in list order, as LabelNodePrepareStrategy patches them
    assert [b["metadata"]["labels"]["zone"] for _, b in patches] == ["a", "b", "c", "a"]
    assert [p.rsplit("/", 1)[1] for p, _ in patches] == sorted(client.nodes)
    assert ex.next_node == 4


def test_create_nodes_retries_a_name_taken_with_a_new_one() -> None:
    class Colliding(FakeClient):
        async def request(self, method: str, path: str, **kw: Any) -> Response:
            if method == "POST" and path == "/api/v1/nodes" and len(self.posts("/api/v1/nodes")) == 0:
                self.requests.append((method, path, None, kw.get("body")))
                return Response(409, b'{"kind":"Status","reason":"AlreadyExists"}')
            return await super().request(method, path, **kw)

    client = Colliding()
    run(_ex(client).run([{"opcode": "createNodes", "index": 0, "count": 3}]))
    assert len(client.nodes) == 3
    names = [b["metadata"]["name"] for b in client.posts("/api/v1/nodes")]
    assert len(names) == 4
    assert len(set(names)) == 4  # the retry drew another name


def test_create_nodes_gives_up_after_five_attempts(tmp_path: Path) -> None:
    t = tmp_path / "node.yaml"
    t.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: fixed\n")

    class Taken(FakeClient):
        async def request(self, method: str, path: str, **kw: Any) -> Response:
            if method == "POST" and path == "/api/v1/nodes":
                self.requests.append((method, path, None, kw.get("body")))
                return Response(409, b'{"kind":"Status","reason":"AlreadyExists","message":"taken"}')
            return await super().request(method, path, **kw)

    client = Taken()
    with pytest.raises(ExceptionGroup) as e:
        run(_ex(client).run([{"opcode": "createNodes", "index": 0, "count": 1, "nodeTemplatePath": str(t)}]))
    assert e.group_contains(ApiError, match="409 AlreadyExists")
    assert len(client.posts("/api/v1/nodes")) == 5


def test_create_nodes_from_template(tmp_path: Path) -> None:
    t = tmp_path / "node.yaml"
    t.write_text("apiVersion: v1\nkind: Node\nmetadata:\n  name: n-{{.Index}}-of-{{.Count}}\n")
    client = FakeClient()
    run(_ex(client).run([{"opcode": "createNodes", "index": 0, "count": 2, "nodeTemplatePath": str(t)}]))
    assert sorted(b["metadata"]["name"] for b in client.posts("/api/v1/nodes")) == ["n-0-of-2", "n-1-of-2"]


def test_create_nodes_allocatable_strategy_patches_nodes_and_creates_csinodes() -> None:
    # volumes/performance-config.yaml's SchedulingMigratedInTreePVs strategy, as NodeAllocatableStrategy applies it.
    strategy = {"nodeAllocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "39"},
                "csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 39}},
                "migratedPlugins": ["kubernetes.io/aws-ebs"]}
    client = FakeClient()
    run(_ex(client).run([{"opcode": "createNodes", "index": 0, "count": 2, "nodeAllocatableStrategy": strategy}]))
    patches = [(p, b) for m, p, _, b in client.requests if m == "PATCH"]
    assert [p.rsplit("/", 1)[1] for p, _ in patches] == sorted(client.nodes)
    assert patches[0][1] == {"status": {"allocatable": {"attachable-volumes-csi-ebs.csi.aws.com": "39"}}}
    csinodes = client.posts("/apis/storage.k8s.io/v1/csinodes")
    assert sorted(c["metadata"]["name"] for c in csinodes) == sorted(client.nodes)
    c = csinodes[0]
    assert c["metadata"]["annotations"] == {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}
    assert c["spec"]["drivers"] == [{"name": "ebs.csi.aws.com", "allocatable": {"count": 39},
                                     "nodeID": c["metadata"]["name"]}]


def test_allocatable_strategy_updates_an_existing_csinode() -> None:
    strategy = {"csiNodeAllocatable": {"ebs.csi.aws.com": {"count": 39}, "other": {"count": 1}}}
    existing = {"metadata": {"name": "n", "annotations": {"a": "b"}, "resourceVersion": "5"},
                "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "n", "allocatable": {"count": 2}}]}}
    got = volumes.updated_csi_node(strategy, existing)
    assert got["spec"]["drivers"] == [{"name": "ebs.csi.aws.com", "nodeID": "n", "allocatable": {"count": 39}},
                                      {"name": "other", "allocatable": {"count": 1}}]
    assert got["metadata"]["annotations"] == {"a": "b", "storage.alpha.kubernetes.io/migrated-plugins": ""}
    assert got["metadata"]["resourceVersion"] == "5"


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


def test_create_pods_says_how_many_were_bound_when_the_last_was_created() -> None:
    """Two of three pods bound while the harness still created, one bound before the window opened
    (not one of them): 2 of 3, at the time the last create returned."""
    informer = FakeInformer()
    informer.add("namespace-0", "earlier", node="n")

    def bind(ns: str, name: str) -> None:
        informer.add(ns, name, node="n")
        for hook in informer.hooks:
            hook(informer.pods[(ns, name)])

    class BindsTwo(FakeClient):
        async def request(self, method: str, path: str, **kw: Any) -> Response:
            resp = await super().request(method, path, **kw)
            if method == "POST" and path.endswith("/pods") and self.serial <= 2:
                bind("namespace-0", orjson.loads(resp.body)["metadata"]["name"])
            return resp

    ex = _ex(BindsTwo(), informer)
    # upstream's wait counts every scheduled pod of the namespace: the earlier one and two are enough
    (c,) = run(ex.run([{"opcode": "createPods", "index": 0, "count": 3, "collectMetrics": True}]))
    assert (c.base, c.created, c.bound_when_created, c.scheduled) == (1, 3, 2, 3)
    assert 0 < c.created_s <= c.stopped - c.started
    r = runner.PerfRun("kubesched", "T/w", 1)
    runner._fill(r, config.Workload(name="w"), [c])
    assert r.bound_when_created == pytest.approx(2 / 3)
    assert "67%" in report.table([r])


def test_create_pods_default_pod_when_no_template() -> None:
    client = FakeClient()
    informer = FakeInformer()
    informer.add("ns", "already", node="n")
    run(_ex(client, informer).run([{"opcode": "createPods", "index": 0, "count": 1, "namespace": "ns"}]))
    pod = client.posts("/namespaces/ns/pods")[0]
    assert pod["metadata"]["generateName"] == "pod-"
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}


@pytest.mark.parametrize(("source", "volume_key", "want"), [
    pytest.param("awsElasticBlockStore: {volumeID: <volume-id>}", "awsElasticBlockStore",
                 {"volumeID": "vol-1"}, id="in-tree-aws"),
    pytest.param("csi: {driver: ebs.csi.aws.com}", "csi",
                 {"driver": "ebs.csi.aws.com", "volumeHandle": "namespace-0-vol-1"}, id="csi"),
])
def test_create_pods_with_volume_templates(tmp_path: Path, source: str, volume_key: str, want: Any) -> None:
    # CreatePodWithPersistentVolume with bindVolume: claim pvc-i, then its status, then volume
    # <ns>-vol-i pre-bound to it, then its status, then the pod with only that claim as its volume.
    (tmp_path / "pv.yaml").write_text("apiVersion: v1\nkind: PersistentVolume\nspec:\n  accessModes: [ReadOnlyMany]\n"
                                      f"  capacity: {{storage: 1Gi}}\n  {source}\n")
    (tmp_path / "pvc.yaml").write_text("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  annotations:\n"
                                       "    pv.kubernetes.io/bind-completed: 'true'\n"
                                       "spec:\n  accessModes: [ReadOnlyMany]\n")
    client = FakeClient()
    informer = FakeInformer()
    for i in range(2):
        informer.add("namespace-0", f"p{i}", node="n")
    run(_ex(client, informer).run([{"opcode": "createPods", "index": 0, "count": 2,
                                    "persistentVolumeTemplatePath": str(tmp_path / "pv.yaml"),
                                    "persistentVolumeClaimTemplatePath": str(tmp_path / "pvc.yaml")}]))
    claims = sorted(client.posts("/namespaces/namespace-0/persistentvolumeclaims"),
                    key=lambda c: c["metadata"]["name"])
    assert [(c["metadata"]["name"], c["spec"]["volumeName"]) for c in claims] == \
        [("pvc-0", "namespace-0-vol-0"), ("pvc-1", "namespace-0-vol-1")]
    assert claims[0]["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "true"}
    pvs = sorted(client.posts("/api/v1/persistentvolumes"), key=lambda v: v["metadata"]["name"])
    assert pvs[1]["metadata"]["name"] == "namespace-0-vol-1"
    assert pvs[1]["spec"][volume_key] == want
    ref = pvs[1]["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["apiVersion"]) == \
        ("PersistentVolumeClaim", "namespace-0", "pvc-1", "v1")
    statuses = [(p, b) for m, p, _, b in client.requests if m == "PATCH"]
    assert sorted(p for p, _ in statuses) == [
        "/api/v1/namespaces/namespace-0/persistentvolumeclaims/pvc-0/status",
        "/api/v1/namespaces/namespace-0/persistentvolumeclaims/pvc-1/status",
        "/api/v1/persistentvolumes/namespace-0-vol-0/status", "/api/v1/persistentvolumes/namespace-0-vol-1/status"]
    assert all(b == {"status": {"phase": "Bound"}} for _, b in statuses)
    pods = client.posts("/namespaces/namespace-0/pods")
    assert sorted(p["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] for p in pods) == ["pvc-0", "pvc-1"]
    assert all(len(p["spec"]["volumes"]) == 1 for p in pods)
    # each pair is made before its pod, claim before volume
    order = [p for m, p, _, _ in client.requests if m == "POST"]
    assert order.index("/api/v1/namespaces/namespace-0/persistentvolumeclaims") \
        < order.index("/api/v1/persistentvolumes") < order.index("/api/v1/namespaces/namespace-0/pods")


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
