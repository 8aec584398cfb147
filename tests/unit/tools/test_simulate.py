"""`kubesched simulate` without a cluster: workloads expanded as their controllers would, pods placed
in order (each assumed before the next), drains and template nodes, the snapshot file."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kubesched.backend.cache.cache import filled
from kubesched.config import load
from kubesched.model.objects import Node, Pod
from kubesched.scheduler.sources import KINDS, StaticSources
from kubesched.tools.simulate.expand import ALPHANUMS, Expanded, Expander, ExpandError
from kubesched.tools.simulate.render import render_json, render_table, to_dict
from kubesched.tools.simulate.run import Simulation, SimulationError, simulate
from kubesched.tools.simulate.state import ClusterState, SnapshotError, decode, encode
from kubesched.tools.simulate.whatif import UNSCHEDULABLE_TAINT, WhatIfError, drain, template_nodes
from tests.builders import make_node, make_pod

CONFIG = load(None)


def template(cpu: str = "1", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}], **spec}}


def deployment(name: str = "web", replicas: int = 3, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": template(cpu, {"app": name}), **spec}}


def pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}], **spec}}


def expand(*manifests: dict[str, Any], now: float = 0.0) -> Expanded:
    return Expander("shop", now=lambda: now).expand(manifests)


def state(nodes: list[Any], pods: list[Any] = ()) -> ClusterState:  # type: ignore[assignment]
    return ClusterState({"nodes": [n.obj() for n in nodes], "pods": [p.obj() for p in pods]})


def controller(p: Pod) -> tuple[str, str, str]:
    o = next(o for o in p.metadata.owner_references if o.controller)
    return o.api_version, o.kind, o.name


# --- expansion ------------------------------------------------------------------------------------


def test_deployment_makes_a_replicaset_and_its_pods() -> None:
    out = expand(deployment(replicas=3))
    (rs,) = out.objects["replicasets"]
    assert rs.metadata.name.startswith("web-")
    assert rs.metadata.namespace == "shop"
    assert rs.spec.selector.match_labels == {"app": "web"}
    hash_ = rs.metadata.name.removeprefix("web-")
    assert hash_
    assert set(hash_) <= set(ALPHANUMS)
    assert len(out.pods) == 3
    for p in out.pods:
        assert p.metadata.name.startswith(f"{rs.metadata.name}-")
        suffix = p.metadata.name.removeprefix(f"{rs.metadata.name}-")
        assert len(suffix) == 5
        assert set(suffix) <= set(ALPHANUMS)
        assert p.metadata.labels == {"app": "web", "pod-template-hash": hash_}
        assert controller(p) == ("apps/v1", "ReplicaSet", rs.metadata.name)
        assert p.metadata.owner_references[0].uid == rs.metadata.uid
        assert p.metadata.namespace == "shop"
        assert not p.spec.node_name
    assert len({p.metadata.name for p in out.pods}) == 3
    assert len({p.metadata.uid for p in out.pods}) == 3


def test_template_hash_follows_the_template() -> None:
    a, b, c = expand(deployment()), expand(deployment()), expand(deployment(cpu="2"))
    assert a.objects["replicasets"][0].metadata.name == b.objects["replicasets"][0].metadata.name
    assert a.objects["replicasets"][0].metadata.name != c.objects["replicasets"][0].metadata.name


def test_statefulset_pods_are_numbered_from_ordinals_start() -> None:
    sts = {"kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 2, "ordinals": {"start": 3}, "selector": {"matchLabels": {"app": "db"}},
                    "template": template(labels={"app": "db"})}}
    out = expand(sts)
    assert [p.metadata.name for p in out.pods] == ["db-3", "db-4"]
    labels = out.pods[1].metadata.labels
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-4"
    assert labels["apps.kubernetes.io/pod-index"] == "4"
    assert labels["controller-revision-hash"].startswith("db-")
    assert controller(out.pods[0]) == ("apps/v1", "StatefulSet", "db")
    assert out.objects["statefulsets"][0].spec.selector.match_labels == {"app": "db"}


@pytest.mark.parametrize(("spec", "count", "indexed"), [
    pytest.param({}, 1, False, id="defaults-one-pod"),
    pytest.param({"parallelism": 4}, 4, False, id="parallelism"),
    pytest.param({"parallelism": 4, "completions": 2}, 2, False, id="completions-cap"),
    pytest.param({"parallelism": 2, "completionMode": "Indexed", "completions": 5}, 2, True, id="indexed"),
    pytest.param({"parallelism": 3, "suspend": True}, 0, False, id="suspended"),
])
def test_job_pods(spec: dict[str, Any], count: int, indexed: bool) -> None:
    out = expand({"kind": "Job", "metadata": {"name": "batch"},
                  "spec": {"template": template(restartPolicy="Never"), **spec}})
    (job,) = out.objects["jobs"]
    assert len(out.pods) == count
    for i, p in enumerate(out.pods):
        assert controller(p) == ("batch/v1", "Job", "batch")
        assert p.metadata.labels["batch.kubernetes.io/job-name"] == "batch"
        assert p.metadata.labels["batch.kubernetes.io/controller-uid"] == job.metadata.uid
        assert p.metadata.name.startswith(f"batch-{i}-" if indexed else "batch-")
        if indexed:
            assert p.metadata.labels["batch.kubernetes.io/job-completion-index"] == str(i)


def test_cronjob_makes_the_job_of_the_current_minute() -> None:
    cj = {"kind": "CronJob", "metadata": {"name": "nightly"},
          "spec": {"schedule": "* * * * *", "jobTemplate": {"metadata": {"labels": {"team": "a"}},
                                                            "spec": {"template": template(restartPolicy="Never")}}}}
    out = expand(cj, now=1_800_000_030.0)
    (job,) = out.objects["jobs"]
    assert job.metadata.name == "nightly-30000000"
    assert job.metadata.labels == {"team": "a"}
    assert [(o.kind, o.name, o.controller) for o in job.metadata.owner_references] == [("CronJob", "nightly", True)]
    (p,) = out.pods
    assert controller(p) == ("batch/v1", "Job", "nightly-30000000")


def test_apiserver_defaulting_requests_from_limits() -> None:
    m = pod("p")
    m["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}
    (p,) = expand(m).pods
    assert p.spec.containers[0].resources.requests == {"cpu": "1", "memory": "1Gi"}


def test_list_services_and_namespaces() -> None:
    out = expand({"kind": "List", "items": [
        {"kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}}},
        {"kind": "Namespace", "metadata": {"name": "team", "labels": {"t": "1"}}},
        pod("a"), {"kind": "Pod", "metadata": {"generateName": "g-"}, "spec": pod("x")["spec"]}]})
    assert out.objects["services"][0].metadata.namespace == "shop"
    assert out.objects["namespaces"][0].metadata.labels == {"t": "1"}
    assert out.pods[0].metadata.name == "a"
    assert out.pods[1].metadata.name.startswith("g-")
    assert len(out.pods[1].metadata.name) == 7


@pytest.mark.parametrize(("manifest", "says"), [
    pytest.param({"kind": "DaemonSet", "metadata": {"name": "d"}}, "kind 'DaemonSet' is not one simulate reads",
                 id="unknown-kind"),
    pytest.param({"kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}, "spec.template.spec is required",
                 id="no-template"),
    pytest.param(deployment(replicas=-1), "spec.replicas must be a whole number >= 0", id="negative-replicas"),
    pytest.param({"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}, "spec.containers must list",
                 id="no-containers"),
    pytest.param({"kind": "Pod", "metadata": {}, "spec": pod("x")["spec"]}, "metadata.name or metadata.generateName",
                 id="no-name"),
    pytest.param({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": "nope"}}, "Expected `array`",
                 id="wrong-type"),
    pytest.param("just a string", "expected a Kubernetes object", id="not-a-map"),
])
def test_bad_manifests_are_named(manifest: Any, says: str) -> None:
    with pytest.raises(ExpandError, match="document 1") as err:
        expand(manifest)
    assert says in str(err.value)


# --- placement ------------------------------------------------------------------------------------


def placed(sim: Simulation) -> dict[str, str | None]:
    return {p.pod.split("/")[1]: p.node for p in sim.placements}


def test_each_pod_sees_the_ones_before_it() -> None:
    nodes = [make_node("a").capacity(cpu="2"), make_node("b").capacity(cpu="3")]
    sim = simulate(CONFIG, state(nodes), expand(*(pod(f"p{i}") for i in range(6))))
    where = [p.node for p in sim.placements]
    assert where[:5].count("a") == 2
    assert where[:5].count("b") == 3
    last = sim.placements[5]
    assert last.node is None
    assert last.reason == "Unschedulable"
    assert last.message.startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert " preemption: " in last.message
    counts = {n.name: (len(n.placed), n.cpu_requested_m) for n in sim.nodes}
    assert counts == {"a": (2, 2000), "b": (3, 3000)}


def test_placement_order_is_input_order() -> None:
    # The first pod takes the only node's room, whatever the priorities: simulate places in the given order.
    nodes = [make_node("a").capacity(cpu="1")]
    sim = simulate(CONFIG, state(nodes), expand(pod("low", priority=0), pod("high", priority=100)))
    assert placed(sim) == {"low": "a", "high": None}
    # The high-priority pod could preempt the low one: the nomination is reported, nothing is evicted.
    high = sim.placements[1]
    assert high.nominated_node == "a"
    assert high.victims == 1
    assert "preemption: found a potential placement for pod on node a, preempting 1 victims" in high.message
    assert sim.nodes[0].placed == ["shop/low"]


def test_existing_pods_count() -> None:
    nodes = [make_node("a").capacity(cpu="2"), make_node("b").capacity(cpu="2")]
    existing = [make_pod("old").req(cpu="2").node("a")]
    sim = simulate(CONFIG, state(nodes, existing), expand(pod("x"), pod("y"), pod("z")))
    assert placed(sim) == {"x": "b", "y": "b", "z": None}


def test_default_spread_reads_the_expanded_replicaset() -> None:
    # PodTopologySpread's system defaults select the pods of the same ReplicaSet: 4 replicas over two
    # zones land 2 and 2 although zone y's node is much bigger.
    nodes = [make_node("x1").zone("x").capacity(cpu="8"), make_node("y1").zone("y").capacity(cpu="64", memory="256Gi")]
    sim = simulate(CONFIG, state(nodes), expand(deployment(replicas=4, cpu="100m")))
    assert sorted(len(n.placed) for n in sim.nodes) == [2, 2]


def test_gated_and_bound_pods() -> None:
    nodes = [make_node("a")]
    sim = simulate(CONFIG, state(nodes), expand(pod("gated", schedulingGates=[{"name": "wait"}]),
                                                pod("pinned", nodeName="a"), pod("lost", nodeName="nope")))
    by = {p.pod: p for p in sim.placements}
    assert by["shop/gated"].node is None
    assert by["shop/gated"].message == "waiting for scheduling gates: [wait]"
    assert by["shop/pinned"].node == "a"
    assert by["shop/pinned"].reason == "Bound"
    assert by["shop/lost"].node is None
    assert 'no node "nope"' in by["shop/lost"].message


def test_unknown_profile() -> None:
    with pytest.raises(SimulationError, match="no profile 'x'; the profiles are: kubesched"):
        simulate(CONFIG, state([make_node("a")]), expand(pod("p")), profile_name="x")


# --- what-ifs ---------------------------------------------------------------------------------------


def test_drain_cordons_and_replaces_in_priority_order() -> None:
    nodes = [make_node("a").capacity(cpu="4"), make_node("b").capacity(cpu="2")]
    existing = [make_pod("low").req(cpu="1").node("a").priority(1),
                make_pod("high").req(cpu="2").node("a").priority(10),
                make_pod("mid").req(cpu="1").node("a").priority(5),
                make_pod("ds").req(cpu="100m").node("a").owner("DaemonSet", "agent")]
    sim = simulate(CONFIG, state(nodes, existing), expand(), drain_nodes=["a"])
    assert [(p.pod, p.node, p.replaces) for p in sim.placements] == [
        ("default/high", "b", "a"), ("default/mid", None, "a"), ("default/low", None, "a")]
    assert "1 node(s) were unschedulable" in sim.placements[1].message
    a = next(n for n in sim.nodes if n.name == "a")
    assert a.drained
    assert a.pods == ["default/ds"]


def test_drain_unknown_node() -> None:
    with pytest.raises(WhatIfError, match="--drain: no node 'zz'"):
        simulate(CONFIG, state([make_node("a")]), expand(), drain_nodes=["zz"])


def test_template_nodes_take_the_batch() -> None:
    tmpl = {"kind": "Node", "metadata": {"name": "big", "labels": {"pool": "new"}},
            "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
    added = template_nodes(tmpl, 2, existing=["a"])
    assert [n.metadata.name for n in added] == ["big-1", "big-2"]
    assert added[1].metadata.labels == {"pool": "new", "kubernetes.io/hostname": "big-2"}
    assert added[0].status.allocatable == {"cpu": "8", "memory": "32Gi", "pods": "110"}
    sim = simulate(CONFIG, state([make_node("a").capacity(cpu="1")]), expand(pod("p", cpu="6")), add_nodes=added)
    assert sim.placements[0].node in ("big-1", "big-2")
    assert sim.added_nodes == ["big-1", "big-2"]
    assert {n.name for n in sim.nodes if n.added} == {"big-1", "big-2"}


@pytest.mark.parametrize(("tmpl", "says"), [
    pytest.param({"metadata": {}}, "metadata.name is required", id="no-name"),
    pytest.param({"metadata": {"name": "a"}, "status": {"capacity": {"cpu": "1"}}}, "'a-1' already exists",
                 id="clash"),
    pytest.param({"metadata": {"name": "n"}}, "status.capacity or status.allocatable", id="no-capacity"),
    pytest.param({"kind": "Pod", "metadata": {"name": "n"}}, "kind must be Node", id="kind"),
])
def test_bad_templates(tmpl: dict[str, Any], says: str) -> None:
    with pytest.raises(WhatIfError, match=says):
        template_nodes(tmpl, 1, existing=["a-1"])


def test_cordoned_node_gets_the_controllers_taint() -> None:
    cache = filled([make_node("a").obj()], [make_pod("p").node("a").obj()])
    (again,) = drain(cache, ["a"])
    node = cache.node_info("a")
    assert node is not None
    assert node.unschedulable
    assert UNSCHEDULABLE_TAINT in node.node.spec.taints
    assert again.key == "default/p"
    assert not again.spec.node_name
    assert cache.pod_count == 0


# --- output and the snapshot file -------------------------------------------------------------------


def test_json_and_table() -> None:
    sim = simulate(CONFIG, state([make_node("a").capacity(cpu="1")]), expand(pod("fits"), pod("no")))
    doc = to_dict(sim)
    assert [(p["pod"], p["node"]) for p in doc["pods"]] == [("shop/fits", "a"), ("shop/no", None)]
    assert {"pod", "node", "message"} <= set(doc["pods"][1])
    assert doc["pods"][1]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert doc["summary"] == {"pods": 2, "placed": 1, "unschedulable": 1}
    assert msgspec.json.decode(render_json(sim))["nodes"][0]["placed"] == ["shop/fits"]
    table = render_table(sim)
    assert "shop/no" in table
    assert "1 of 2 pod(s) placed, 1 unschedulable" in table


def test_snapshot_round_trip() -> None:
    nodes = [make_node("a").label("zone", "x").taint("k", "v")]
    pods = [make_pod("p").req(cpu="1").node("a").owner("ReplicaSet", "rs")]
    raw = encode(ClusterState({"nodes": [n.obj() for n in nodes], "pods": [p.obj() for p in pods]}, "https://s"))
    doc = msgspec.json.decode(raw)
    assert doc["kind"] == "ClusterSnapshot"
    assert doc["formatVersion"] == 1
    assert set(doc["objects"]) == set(KINDS)
    back = decode(raw)
    assert back.objects["nodes"] == [nodes[0].obj()]
    assert back.objects["pods"] == [pods[0].obj()]
    assert back.server == "https://s"


def test_snapshot_round_trip_of_dra_objects() -> None:
    """Claims (with opaque driver parameters), slices, classes and taint rules come back as they
    went, and feed DynamicResources' trackers."""
    from kubesched.model.objects import ObjectMeta
    from kubesched.model.resource import (
        DeviceClaimConfiguration,
        DeviceTaintRule,
        DeviceTaintRuleSpec,
        DeviceTaintSelector,
        OpaqueDeviceConfiguration,
    )
    from tests.unit.plugins.dynamic_resources.dra_builders import (
        ALLOCATED_CLAIM,
        DEVICE_CLASS,
        DEVICE_TAINT,
        WORKER_NODE_SLICE,
        from_claim,
    )

    claim = from_claim(ALLOCATED_CLAIM).obj()
    claim.spec.devices.config = [DeviceClaimConfiguration(["req-1"], OpaqueDeviceConfiguration(
        "some-driver", {"mode": "x", "n": [1, 2.5]}))]
    rule = DeviceTaintRule(ObjectMeta(name="r"), DeviceTaintRuleSpec(DeviceTaintSelector(device="instance-1"),
                                                                     DEVICE_TAINT))
    objects: dict[str, list[Any]] = {"resourceclaims": [claim], "resourceslices": [WORKER_NODE_SLICE],
                                     "deviceclasses": [DEVICE_CLASS], "devicetaintrules": [rule]}
    back = decode(encode(ClusterState(dict(objects))))
    assert {k: v for k, v in back.objects.items() if v} == objects
    dra = back.sources().dra
    assert dra.claims.list() == [claim]
    assert dra.slices.list()[0].spec.devices[0].taints == [DEVICE_TAINT]
    assert dra.classes.get(DEVICE_CLASS.metadata.name) == DEVICE_CLASS


@pytest.mark.parametrize(("doc", "says"), [
    pytest.param(b"{", "not JSON", id="not-json"),
    pytest.param(b'{"kind": "Other"}', "kind must be 'ClusterSnapshot'", id="kind"),
    pytest.param(b'{"kind": "ClusterSnapshot", "formatVersion": 99, "objects": {}}', "formatVersion 99", id="newer"),
    pytest.param(b'{"kind": "ClusterSnapshot", "formatVersion": 1, "objects": {"nodes": {}}}',
                 "objects.nodes must be a list", id="not-a-list"),
    pytest.param(b'{"kind": "ClusterSnapshot", "formatVersion": 1, "objects": {"pods": [{"spec": {"priority": "x"}}]}}',
                 r"objects.pods\[0\]", id="bad-object"),
])
def test_bad_snapshots(doc: bytes, says: str) -> None:
    with pytest.raises(SnapshotError, match=says):
        decode(doc, "cluster.json")


def test_unknown_kinds_are_left_out() -> None:
    got = decode(b'{"kind": "ClusterSnapshot", "formatVersion": 1, "objects": {"widgets": [{}], "nodes": []}}')
    assert got.ignored_kinds == ["widgets"]
    assert got.objects == {"nodes": []}


def test_static_sources_know_every_kind() -> None:
    sources = StaticSources({"nodes": [Node(), make_node("a").obj()]})
    assert sources.nodes.get("a") is not None
    assert sources.pods.list() == []
    with pytest.raises(ValueError, match="unknown kind"):
        StaticSources({"widgets": []})


def test_cronjob_pods_go_to_the_pool_through_their_expanded_job() -> None:
    """The CronJob pool follows Pod -> Job -> CronJob through the Job simulate adds to the stores;
    plain Job pods and Deployment pods stay off the pool node."""
    cj = {"kind": "CronJob", "metadata": {"name": "nightly"},
          "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"parallelism": 2,
                                                                      "template": template(restartPolicy="Never")}}}}
    job = {"kind": "Job", "metadata": {"name": "once"}, "spec": {"template": template(restartPolicy="Never")}}
    nodes = [make_node("pool").label("kubesched.io/pool", "cronjob").capacity(cpu="8"), make_node("plain")]
    sim = simulate(CONFIG, state(nodes), expand(cj, job, deployment(replicas=2)))
    where = {p.pod: p.node for p in sim.placements}
    assert [n for k, n in where.items() if "/nightly-" in k] == ["pool", "pool"]
    assert [n for k, n in where.items() if "/once-" in k or "/web-" in k] == ["plain"] * 3
