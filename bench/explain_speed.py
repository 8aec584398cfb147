"""How long `kubesched explain`'s evaluation and rendering take at 1,000 and 5,000 nodes.

Nodes: 4 CPU, 32Gi, 110 pods, three zones, 10 pods bound to each; one node in ten tainted, one in
twenty with too little cpu. The pod asks 1 CPU / 1Gi, prefers a labelled disk, and uses the default
profile (every filter and score plugin), so every node gets every filter's verdict and the ~85%
feasible ones every score. Evaluation is explain() (schedule_pod, the cycle's PreFilter, search and
scoring over all nodes, and every filter's verdict on every node); rendering is the table and JSON.

    uv run python bench/explain_speed.py
"""

from __future__ import annotations

import time

from kubesched.backend.cache import Cache
from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import PodInfo, build_profile
from kubesched.model.objects import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Taint,
)
from kubesched.plugins.registry import in_tree_registry
from kubesched.tools.explain.evaluate import explain
from kubesched.tools.explain.render import render_json, render_table


def node(i: int) -> Node:
    labels = {"topology.kubernetes.io/zone": f"z{i % 3}", "kubernetes.io/hostname": f"n{i:05d}"}
    if i % 4 == 0:
        labels["disk"] = "ssd"
    cap = {"cpu": "1" if i % 20 == 7 else "4", "memory": "32Gi", "pods": "110"}
    taints = [Taint(key="dedicated", value="gpu", effect="NoSchedule")] if i % 10 == 3 else []
    return Node(metadata=ObjectMeta(name=f"n{i:05d}", uid=f"node-{i}", labels=labels),
                spec=NodeSpec(taints=taints), status=NodeStatus(capacity=cap, allocatable=cap))


def pod(name: str, cpu: str, memory: str, node_name: str = "") -> Pod:
    c = Container(name="c", image="pause", resources=ResourceRequirements(requests={"cpu": cpu, "memory": memory}))
    return Pod(metadata=ObjectMeta(name=name, namespace="bench", uid=f"uid-{name}"),
               spec=PodSpec(node_name=node_name, containers=[c]))


def measure(n: int, repeat: int = 5) -> None:
    cache = Cache()
    for i in range(n):
        cache.add_node(node(i))
        for k in range(10):
            cache.add_pod(pod(f"b{i}-{k}", "100m", "256Mi", f"n{i:05d}"))
    snapshot = cache.snapshot()
    profile = build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry())
    target = pod("explained", "1", "1Gi")
    ssd = NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key="disk", operator="In", values=["ssd"])])
    target.spec.affinity = Affinity(node_affinity=NodeAffinity(preferred=[PreferredSchedulingTerm(weight=10,
                                                                                                   preference=ssd)]))
    best_eval = best_render = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        e = explain(profile, snapshot, PodInfo(target))
        t1 = time.perf_counter()
        render_table(e)
        render_json(e)
        t2 = time.perf_counter()
        best_eval, best_render = min(best_eval, t1 - t0), min(best_render, t2 - t1)
    print(f"{n:>5} nodes ({len(e.feasible)} feasible): evaluation {best_eval * 1000:.0f} ms, "
          f"table + JSON {best_render * 1000:.0f} ms (best of {repeat})")


if __name__ == "__main__":
    for n in (1000, 5000):
        measure(n)
