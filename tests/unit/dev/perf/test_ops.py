"""The DRA and pod-group operations and createPods' steady state, against a fake apiserver client."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubesched.api.client import Response
from kubesched.model.resource import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.plugins.dynamic_resources.allocator import NodeView
from kubesched_dev.bench.perf import claims, pod_ops
from kubesched_dev.bench.perf.executor import Executor
from kubesched_dev.bench.perf.informer import PodState
from tests.unit.dev.perf.test_executor import DISCOVERY, FakeClient, FakeInformer

DRIVER = "test-driver.cdi.k8s.io"
DISCOVERY["/apis/scheduling.k8s.io/v1beta1"] = {"resources": [{"name": "podgroups", "kind": "PodGroup",
                                                               "namespaced": True}]}


def _slice(node: str, devices: int) -> ResourceSlice:
    return claims._decode({"metadata": {"name": f"slice-{node}"}, "spec": {
        "driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": f"dev-{i}", "attributes": {"model": {"string": "B60"}}} for i in range(devices)]}},
        ResourceSlice)


def _class(expression: str = f'device.driver == "{DRIVER}"') -> DeviceClass:
    return claims._decode({"metadata": {"name": "test-class"}, "spec": {"selectors": [{"cel": {
        "expression": expression}}]}}, DeviceClass)


def _claim(name: str, count: int = 1, allocated: list[tuple[str, str]] | None = None) -> ResourceClaim:
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": "init", "uid": name}, "spec": {"devices": {
        "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "allocationMode": "ExactCount",
                                                              "count": count}}]}}}
    if allocated:
        obj["status"] = {"allocation": {"devices": {"results": [
            {"request": "req-0", "driver": DRIVER, "pool": pool, "device": dev} for pool, dev in allocated]}}}
    return claims._decode(obj, ResourceClaim)


NODES = [NodeView("a"), NodeView("b")]
SLICES = [_slice("a", 2), _slice("b", 2)]


def _devices(allocations: list[Any]) -> list[tuple[str, str]]:
    return [(r.pool, r.device) for _, a in allocations for r in a.devices.results]


@pytest.mark.parametrize(("pending", "allocated", "want_count"), [
    pytest.param(["c0", "c1", "c2", "c3"], [], 4, id="fills-every-device"),
    pytest.param(["c0", "c1"], [("a", "dev-0"), ("b", "dev-1")], 2, id="skips-held-devices"),
])
def test_allocate_never_gives_a_device_twice(pending: list[str], allocated: list[tuple[str, str]],
                                             want_count: int) -> None:
    held = [_claim("old", allocated=allocated)] if allocated else []
    out = claims.allocate([*held, *(_claim(n) for n in pending)], SLICES, [_class()], NODES, random.Random(1))
    assert [i for i, _ in out] == list(range(len(held), len(held) + want_count))  # the allocated one is skipped
    devices = _devices(out)
    assert len(set(devices)) == len(devices) == want_count
    assert not set(devices) & set(allocated)
    for _, a in out:  # a node-local slice: the allocation is pinned to its node by name
        assert a.node_selector is not None
        (term,) = a.node_selector.node_selector_terms
        assert term.match_fields[0].values == [a.devices.results[0].pool]


def test_allocate_one_claim_per_node_at_random() -> None:
    seen = {_devices(claims.allocate([_claim("c")], SLICES, [_class()], NODES, random.Random(seed)))[0][0]
            for seed in range(20)}
    assert seen == {"a", "b"}  # nodes shuffled for each claim, as upstream's rand.Shuffle


@pytest.mark.parametrize(("claim_list", "cls", "match"), [
    pytest.param([_claim(f"c{i}") for i in range(5)], _class(), "Could not allocate claim 4 out of 5", id="full"),
    pytest.param([_claim("c", count=3)], _class(), "Could not allocate claim 0 out of 1", id="too-many-on-a-node"),
    pytest.param([_claim("c")], _class('device.driver == "other"'), "Could not allocate claim 0 out of 1",
                 id="no-device-matches"),
])
def test_allocate_fails_when_a_claim_fits_nowhere(claim_list: list[ResourceClaim], cls: DeviceClass,
                                                  match: str) -> None:
    with pytest.raises(claims.AllocationFailed, match=match):
        claims.allocate(claim_list, SLICES, [cls], NODES, random.Random(0))


class DraClient(FakeClient):
    """Serves lists of claims, slices, classes and nodes; records status patches."""

    def __init__(self, objects: dict[str, list[Any]]) -> None:
        super().__init__()
        self.objects = objects

    async def request(self, method: str, path: str, *, params: Any = None, body: Any = None,
                      content_type: str = "", request_timeout: float | None = None) -> Response:
        if method == "GET" and path in self.objects:
            self.requests.append((method, path, params, body))
            return Response(200, orjson.dumps({"metadata": {}, "items": self.objects[path]}))
        return await super().request(method, path, params=params, body=body, content_type=content_type)


def test_alloc_resource_claims_writes_status_allocation() -> None:
    r = claims.RESOURCE
    client = DraClient({
        f"{r}/namespaces/init/resourceclaims": [orjson.loads(orjson.dumps(
            {"metadata": {"name": f"test-claim-{i}", "namespace": "init"}, "spec": {"devices": {"requests": [
                {"name": "req-0", "exactly": {"deviceClassName": "test-class", "allocationMode": "ExactCount",
                                              "count": 1}}]}}})) for i in range(2)],
        f"{r}/resourceslices": [{"metadata": {"name": "s"}, "spec": {
            "driver": DRIVER, "nodeName": "n", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "d0"}, {"name": "d1"}]}}],
        f"{r}/deviceclasses": [{"metadata": {"name": "test-class"}, "spec": {}}],
        "/api/v1/nodes": [{"metadata": {"name": "n"}}],
    })
    asyncio.run(claims.alloc_resource_claims(client, "init", lambda _: None, random.Random(0)))  # type: ignore[arg-type]
    patches = [(p, b) for m, p, _, b in client.requests if m == "PATCH"]
    assert [p for p, _ in patches] == [f"{r}/namespaces/init/resourceclaims/test-claim-{i}/status" for i in range(2)]
    results = [b["status"]["allocation"]["devices"]["results"] for _, b in patches]
    assert results == [[{"request": "req-0", "driver": DRIVER, "pool": "p", "device": d}] for d in ("d0", "d1")]
    assert patches[0][1]["status"]["allocation"]["nodeSelector"] == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}]}
    assert "allocationTimestamp" not in patches[0][1]["status"]["allocation"]


def test_create_resource_claims_copies_the_file(tmp_path: Path) -> None:
    t = tmp_path / "claim.yaml"
    t.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  generateName: c-\n")
    client = FakeClient()
    ex = Executor(client, FakeInformer(), None, "T/w", lambda _: None)  # type: ignore[arg-type]
    asyncio.run(ex.run([{"opcode": "createResourceClaims", "index": 0, "namespace": "ns", "count": 3,
                         "templatePath": str(t)}]))
    assert [b["metadata"] for b in client.posts("/namespaces/ns/resourceclaims")] == [{"generateName": "c-"}] * 3
    assert client.posts("/api/v1/namespaces")[0]["metadata"]["name"] == "ns"


class PodGroupClient(FakeClient):
    def __init__(self, failures: list[int]) -> None:
        super().__init__()
        self.failures = failures
        self.groups: list[str] = []

    async def request(self, method: str, path: str, *, params: Any = None, body: Any = None,
                      content_type: str = "", request_timeout: float | None = None) -> Response:
        if path.endswith("/podgroups"):
            self.requests.append((method, path, params, body))
            if method == "GET":
                return Response(200, orjson.dumps({"items": [{"metadata": {"name": g}} for g in self.groups]}))
            if self.failures:
                return Response(self.failures.pop(0), b'{"kind": "Status", "message": "no"}')
            self.groups.append(body["metadata"]["name"])
            return Response(201, orjson.dumps(body))
        return await super().request(method, path, params=params, body=body, content_type=content_type)


def _podgroup_template(tmp_path: Path) -> str:
    t = tmp_path / "podgroup.yaml"
    t.write_text("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: gang-{{.Index}}\n"
                 "spec:\n  schedulingPolicy:\n    gang:\n      minCount: {{.podsPerGroup}}\n")
    return str(t)


async def _no_sleep(_: float) -> None:
    return None


def test_create_pod_groups_from_template_retrying_transient_errors(tmp_path: Path) -> None:
    client = PodGroupClient([500, 429])
    ex = Executor(client, FakeInformer(), None, "T/w", lambda _: None)  # type: ignore[arg-type]
    asyncio.run(pod_ops.create_pod_groups(client, ex.mapper, "gang-ns-0", 2, _podgroup_template(tmp_path),  # type: ignore[arg-type]
                                          {"podsPerGroup": 3}, lambda _: None, sleep=_no_sleep))
    posts = [(p, q, b) for m, p, q, b in client.requests if m == "POST"]
    assert [p for p, _, _ in posts] == ["/apis/scheduling.k8s.io/v1beta1/namespaces/gang-ns-0/podgroups"] * 4
    assert {str(q) for _, q, _ in posts} == {str({"fieldValidation": "Strict"})}
    assert client.groups == ["gang-0", "gang-1"]
    assert posts[-1][2]["spec"] == {"schedulingPolicy": {"gang": {"minCount": 3}}}


def test_create_pod_groups_invalid_fails_at_once(tmp_path: Path) -> None:
    client = PodGroupClient([422])
    ex = Executor(client, FakeInformer(), None, "T/w", lambda _: None)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="no"):
        asyncio.run(pod_ops.create_pod_groups(client, ex.mapper, "ns", 1, _podgroup_template(tmp_path),  # type: ignore[arg-type]
                                              {"podsPerGroup": 3}, lambda _: None, sleep=_no_sleep))
    assert len([m for m, *_ in client.requests if m == "POST"]) == 1


def test_steady_state_replaces_each_scheduled_pod_until_the_duration_ends() -> None:
    client = FakeClient()
    informer = FakeInformer()
    created: list[int] = []

    async def create(n: int) -> None:
        created.append(n)

    async def scenario() -> int:
        async def scheduler() -> None:
            for i in range(3):
                await asyncio.sleep(0.02)
                for hook in list(informer.hooks):
                    hook(PodState("test", f"p{i}", {}, "node", True))
                    hook(PodState("elsewhere", f"q{i}", {}, "node", True))  # another namespace: left alone

        task = asyncio.create_task(scheduler())
        seen = await pod_ops.create_pods_steadily(client, informer, "test", 5, 0.2, create,  # type: ignore[arg-type]
                                                  lambda _: None)
        await task
        return seen

    assert asyncio.run(scenario()) == 3
    assert created == [5, 1, 1, 1]  # the seed, then one for each pod deleted
    deletes = [(p, q) for m, p, q, _ in client.requests if m == "DELETE"]
    assert deletes == [(f"/api/v1/namespaces/test/pods/p{i}", {"gracePeriodSeconds": 0,
                                                               "propagationPolicy": "Background"}) for i in range(3)]
    assert informer.hooks == []


def test_steady_state_with_nothing_scheduled_fails() -> None:
    async def create(_: int) -> None:
        return None

    with pytest.raises(RuntimeError, match="no pod at all got scheduled"):
        asyncio.run(pod_ops.create_pods_steadily(FakeClient(), FakeInformer(), "test", 1, 0.01, create,  # type: ignore[arg-type]
                                                 lambda _: None))


def test_shuffled_is_a_uniform_permutation_drawn_lazily() -> None:
    rng = random.Random(3)
    firsts = [next(claims.shuffled("abcd", rng)) for _ in range(4000)]
    assert {c: firsts.count(c) for c in "abcd"} == pytest.approx({c: 1000 for c in "abcd"}, rel=0.1)
    assert sorted(claims.shuffled(range(50), rng)) == list(range(50))
