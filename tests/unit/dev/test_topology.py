from __future__ import annotations

from typing import Any

import pytest

from kubesched_dev.localcluster.topology import TopologyError, parse, resolve, seed_kind, uniform


def test_seed_kind_matches_the_seed_cluster() -> None:
    topo = seed_kind()
    assert [n.name for n in topo.nodes] == ["kind-control-plane", "kind-worker", "kind-worker2", "kind-worker3"]
    assert [n.labels["tier"] for n in topo.nodes] == ["control", "normal", "normal", "cronjob"]
    assert topo.nodes[0].taints[0].effect == "NoSchedule"
    assert all(n.capacity == {"cpu": "4", "memory": "8Gi", "pods": "110"} for n in topo.nodes)


def test_uniform_nodes_are_benchmark_shaped() -> None:
    topo = uniform(1000)
    assert len(topo.nodes) == 1000
    assert topo.nodes[0].name == "node-000"
    assert topo.nodes[-1].capacity == {"cpu": "4", "memory": "32Gi", "pods": "110"}
    manifest = topo.nodes[0].manifest()
    assert manifest["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert manifest["status"]["allocatable"]["pods"] == "110"


def test_a_good_file_parses() -> None:
    topo = parse({"nodes": [{"name": "pool-1", "labels": {"kubesched.io/pool": "cronjob"},
                             "taints": [{"key": "kubesched.io/pool", "value": "cronjob", "effect": "NoSchedule"}],
                             "capacity": {"cpu": "8", "nvidia.com/gpu": 2}}]}, "t.yaml")
    node = topo.nodes[0]
    assert node.capacity == {"cpu": "8", "memory": "8Gi", "pods": "110", "nvidia.com/gpu": "2"}
    assert node.taints[0].value == "cronjob"


@pytest.mark.parametrize(("doc", "message"), [
    pytest.param([], r"\(top level\): must be a mapping", id="not-a-mapping"),
    pytest.param({"nodez": []}, r"nodez: unknown field; valid top-level fields: nodes", id="unknown-top"),
    pytest.param({"nodes": []}, r"nodes: Required value", id="no-nodes"),
    pytest.param({"nodes": [{"name": "A_b"}]}, r"nodes\[0\]\.name: Invalid value: 'A_b'", id="bad-name"),
    pytest.param({"nodes": [{"name": "a"}, {"name": "a"}]}, r"nodes\[1\]\.name: Duplicate value", id="dup"),
    pytest.param({"nodes": [{"name": "a", "cpu": 1}]}, r"nodes\[0\]\.cpu: unknown field", id="unknown-node"),
    pytest.param({"nodes": [{"name": "a", "labels": {"bad key!": "x"}}]}, r"labels\['bad key!'\]",
                 id="label-key"),
    pytest.param({"nodes": [{"name": "a", "labels": {"k": "-x"}}]}, r"labels\['k'\]: Invalid value: '-x'",
                 id="label-value"),
    pytest.param({"nodes": [{"name": "a", "taints": [{"key": "k", "effect": "Sometimes"}]}]},
                 r"taints\[0\]\.effect: Unsupported value: 'Sometimes': supported values: \"NoSchedule\"",
                 id="taint-effect"),
    pytest.param({"nodes": [{"name": "a", "capacity": {"cpu": "four"}}]},
                 r"capacity\.cpu: Invalid value: 'four'", id="capacity-number"),
    pytest.param({"nodes": [{"name": "a", "capacity": {"memory": "-1Gi"}}]},
                 r"capacity\.memory: Invalid value: '-1Gi': must be greater than or equal to 0", id="negative"),
])
def test_bad_files_name_the_field(doc: Any, message: str) -> None:
    with pytest.raises(TopologyError, match=message):
        parse(doc, "t.yaml")


def test_resolve_rejects_unknown_names_and_mixed_flags() -> None:
    with pytest.raises(TopologyError, match="neither a built-in topology"):
        resolve("no-such-thing", None)
    with pytest.raises(TopologyError, match="cannot be combined"):
        resolve("x.yaml", 3)
    with pytest.raises(TopologyError, match="at least 1"):
        resolve(None, 0)
