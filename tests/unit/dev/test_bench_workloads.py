"""The bench's workloads: what each plan builds, the placement checks, the report and stall texts. Pure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched_dev.bench import report, validity, workload, workloads
from kubesched_dev.bench.pending import _Condition, _Meta, _Pod, _Status, describe
from kubesched_dev.bench.report import RunResult
from kubesched_dev.bench.workloads import WorkloadError, build
from kubesched_dev.localcluster import plane


def _spec(pod: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = pod["spec"]
    return spec


def test_basic_plan_is_the_original_bench() -> None:
    plan = build("basic", 3, 5)
    assert plan.names == workload.pod_names(5)
    assert [n.name for n in plan.topology.nodes] == ["node-0", "node-1", "node-2"]
    assert all(workloads.ZONE_KEY not in n.labels for n in plan.topology.nodes)
    assert plan.manifest("pause-0", "s") == workload.pod_manifest("pause-0", "s")
    assert plan.setup == []
    assert plan.pv_node == {}
    assert plan.fill == {}
    assert validity.check(plan, {"pause-0": "node-0"}) is None


def test_spread_plan_zones_groups_and_constraints() -> None:
    plan = build("spread", 20, 100, group_size=30)
    zones = [n.labels[workloads.ZONE_KEY] for n in plan.topology.nodes]
    assert zones[:11] == [f"zone-{i}" for i in range(10)] + ["zone-0"]
    assert [plan.group_of(n) for n in ("pause-00", "pause-29", "pause-30", "pause-99")] == [0, 0, 1, 3]
    pod = plan.manifest("pause-31", "bench-x")
    assert pod["metadata"]["labels"] == {"app": "bench", workloads.GROUP_LABEL: "g1"}
    sel = {"matchLabels": {workloads.GROUP_LABEL: "g1"}}
    assert _spec(pod)["topologySpreadConstraints"] == [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": sel},
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": sel}]
    assert _spec(pod)["schedulerName"] == "bench-x"


def test_brief_sizes_give_five_groups_of_a_thousand() -> None:
    plan = build("spread", *workloads.sizes("spread", None, None, quick=False))
    assert (plan.nodes, plan.pods, plan.group_size) == (1000, 5000, 1000)
    assert len(set(plan.zone_of.values())) == 10
    assert {plan.group_of(n) for n in plan.names} == {0, 1, 2, 3, 4}


def test_anti_affinity_pod_has_a_required_hostname_term_on_its_group() -> None:
    plan = build("anti-affinity", 20, 100)
    assert plan.group_size == 20
    pod = plan.manifest("pause-45", "s")
    assert _spec(pod)["affinity"] == {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {workloads.GROUP_LABEL: "g2"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def test_preemption_plan_fills_every_node_and_preemptors_need_three_victims() -> None:
    plan = build("preemption", 3, 2)
    assert len(plan.fill) == 3 * workloads.FILL_PER_NODE
    assert sorted(set(plan.fill.values())) == ["node-0", "node-1", "node-2"]
    kinds = [o.body["kind"] for o in plan.setup]
    assert kinds[:2] == ["Namespace", "PriorityClass"]
    assert kinds[2:] == ["Pod"] * 12
    fill = plan.setup[2].body
    assert fill["metadata"]["namespace"] == workloads.FILL_NAMESPACE
    assert _spec(fill)["nodeName"] == "node-0"
    assert "priorityClassName" not in _spec(fill)
    pre = plan.manifest("pause-0", "s")
    assert _spec(pre)["priorityClassName"] == workloads.HIGH_PRIORITY_CLASS
    # 4 x 900m leave 400m of 4 CPU; 3000m needs three of them gone, and a second preemptor never fits.
    assert _spec(pre)["containers"][0]["resources"]["requests"]["cpu"] == "3000m"


def test_pv_plan_pins_each_claim_to_one_node_round_robin() -> None:
    plan = build("pv", 3, 4)
    assert plan.pv_node == {"pause-0": "node-0", "pause-1": "node-1", "pause-2": "node-2", "pause-3": "node-0"}
    assert _spec(plan.manifest("pause-1", "s"))["volumes"] == [
        {"name": "vol", "persistentVolumeClaim": {"claimName": "claim-pause-1"}}]
    pvc = workloads.claim("pause-1")
    assert pvc.body["metadata"]["annotations"] == {workloads.BIND_COMPLETED: "yes"}
    assert pvc.body["spec"]["volumeName"] == "bench-vol-pause-1"
    assert pvc.status is not None
    assert pvc.status["phase"] == "Bound"
    pv = workloads.volume("pause-1", "node-1", "uid-1")
    assert pv.body["spec"]["claimRef"]["uid"] == "uid-1"
    assert pv.body["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]


def test_gang_batch_plan_has_a_pod_group_a_gang_and_pods_naming_it() -> None:
    plan = build("gang-batch", 5, 25)
    assert plan.group_size == 5  # the default gang of 10, capped at the node count
    plan = build("gang-batch", 50, 25)
    assert plan.group_size == 10
    assert workloads.group_sizes(plan) == [10, 10, 5]
    groups = [o.body for o in plan.setup]
    assert [o.path for o in plan.setup] == ["/apis/scheduling.k8s.io/v1beta1/namespaces/bench/podgroups"] * 3
    assert [(g["metadata"]["name"], g["spec"]["schedulingPolicy"]["gang"]["minCount"]) for g in groups] == [
        ("gang-0", 10), ("gang-1", 10), ("gang-2", 5)]
    pod = plan.manifest(plan.names[24], "bench-kubesched")
    assert _spec(pod)["schedulingGroup"] == {"podGroupName": "gang-2"}
    assert _spec(pod)["schedulerName"] == "bench-kubesched"
    assert _spec(pod)["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}
    assert dict(workloads.KINDS["gang-batch"].feature_gates) == {"GenericWorkload": True}
    with pytest.raises(WorkloadError, match="knows no gangs"):
        workloads.contenders_for("gang-batch", ["limit"], ("limit",))


@pytest.mark.parametrize(("placed", "ok", "text"), [
    pytest.param(25, True, "every gang whole or not placed (3/3 whole)", id="all-placed"),
    pytest.param(20, True, "every gang whole or not placed (2/3 whole)", id="last-gang-not-placed"),
    pytest.param(15, False, "1 violation(s) of every gang whole or not placed (1/3 whole): "
                 "gang gang-1: 5 of 10 pods placed", id="half-a-gang"),
])
def test_gangs_whole_check(placed: int, ok: bool, text: str) -> None:
    plan = build("gang-batch", 50, 25)
    v = validity.check(plan, dict.fromkeys(plan.names[:placed], "node-0"))
    assert v is not None
    assert (v.ok, v.message()) == (ok, text)


@pytest.mark.parametrize(("kind", "nodes", "pods", "group", "field"), [
    pytest.param("nope", 1, 1, None, "--workload", id="unknown-workload"),
    pytest.param("preemption", 5, 6, None, "--pods", id="more-preemptors-than-nodes"),
    pytest.param("anti-affinity", 5, 20, 6, "--group-size", id="group-bigger-than-nodes"),
    pytest.param("spread", 5, 20, 0, "--group-size", id="empty-group"),
])
def test_sizes_a_workload_cannot_run_are_refused(kind: str, nodes: int, pods: int, group: int | None,
                                                  field: str) -> None:
    with pytest.raises(WorkloadError, match=field):
        build(kind, nodes, pods, group)


@pytest.mark.parametrize(("kind", "given", "want"), [
    pytest.param("basic", None, ["limit", "kube-scheduler", "kubesched"], id="basic-default"),
    pytest.param("spread", None, ["limit", "kube-scheduler", "kubesched"], id="spread-default"),
    pytest.param("preemption", None, ["kube-scheduler", "kubesched"], id="preemption-drops-limit"),
    pytest.param("pv", ["kubesched"], ["kubesched"], id="pv-given"),
])
def test_contenders_for(kind: str, given: list[str] | None, want: list[str]) -> None:
    assert workloads.contenders_for(kind, given, ("limit", "kube-scheduler", "kubesched")) == want


def test_limit_cannot_run_preemption() -> None:
    with pytest.raises(WorkloadError, match="does not preempt"):
        workloads.contenders_for("preemption", ["limit"], ("limit",))
    with pytest.raises(WorkloadError, match="bogus: choose from"):
        workloads.parse_kinds("spread,bogus")
    assert workloads.parse_kinds("spread, pv,spread") == ["spread", "pv"]


def _spread_placements(per_zone: list[int], group: int = 0) -> dict[str, str]:
    """`per_zone[z]` pods of `group` on zone z's first node (nodes 0..9 are zones 0..9)."""
    out: dict[str, str] = {}
    i = group * 1000
    for z, n in enumerate(per_zone):
        for _ in range(n):
            out[f"pause-{i:04d}"] = f"node-{z:02d}"
            i += 1
    return out


SPREAD = build("spread", 20, 2000, group_size=1000)


@pytest.mark.parametrize(("placements", "ok", "text"), [
    pytest.param(_spread_placements([1] * 10), True, "zone skew <= 1 in 1 group(s) (max 0)", id="even"),
    pytest.param(_spread_placements([2] * 5 + [1] * 5), True, "(max 1)", id="skew-one"),
    pytest.param(_spread_placements([3] + [1] * 9), False, "group g0: zone skew 2 (zone-0 has 3, zone-1 has 1)",
                 id="skew-two"),
    # An empty zone is a domain too: 1 pod in each of 9 zones and none in the tenth is skew 1, fine;
    # 2 in one zone with another empty is skew 2.
    pytest.param(_spread_placements([1] * 9 + [0]), True, "(max 1)", id="empty-zone-counts"),
    pytest.param(_spread_placements([2] + [1] * 8 + [0]), False, "zone skew 2", id="empty-zone-skew-two"),
    pytest.param({**_spread_placements([1] * 10), **_spread_placements([3, 1, 1, 1, 1, 1, 1, 1, 1, 1], group=1)},
                 False, "group g1", id="second-group-named"),
])
def test_zone_spread_check(placements: dict[str, str], ok: bool, text: str) -> None:
    v = validity.zone_spread(SPREAD, placements)
    assert v.ok is ok
    assert text in v.message()


ANTI = build("anti-affinity", 5, 10, group_size=5)


@pytest.mark.parametrize(("placements", "ok", "text"), [
    pytest.param({f"pause-{i}": f"node-{i % 5}" for i in range(10)}, True,
                 "one pod a node per group in 2 group(s) (max 1)", id="valid"),
    pytest.param({"pause-0": "node-0", "pause-1": "node-0", "pause-5": "node-0"}, False,
                 "1 violation(s) of one pod a node per group in 2 group(s) (max 2): group g0: 2 pods on node-0",
                 id="two-of-a-group-on-a-node"),
])
def test_anti_affinity_check(placements: dict[str, str], ok: bool, text: str) -> None:
    v = validity.anti_affinity(ANTI, placements)
    assert v.ok is ok
    assert v.message() == text


def test_preemption_check_counts_victims_and_needs_one_on_each_preemptors_node() -> None:
    plan = build("preemption", 3, 2)
    left = {p: n for p, n in plan.fill.items() if not (n in ("node-0", "node-1") and not p.endswith("-3"))}
    v = validity.preemption(plan, {"pause-0": "node-0", "pause-1": "node-1"}, left)
    assert v.ok
    assert v.victims == 6
    assert v.summary == "every preemptor preempted: 2 bound, 6 victim(s) (3.0 a preemptor)"
    bad = validity.preemption(plan, {"pause-0": "node-0", "pause-1": "node-2"}, left)
    assert not bad.ok
    assert "1 preemptor(s) on node-2, which lost no low-priority pod" in bad.message()


def test_pv_check_and_long_violation_lists_are_cut() -> None:
    plan = build("pv", 2, 8)
    assert validity.volumes(plan, {p: n for p, n in plan.pv_node.items()}).ok
    wrong = {p: ("node-1" if n == "node-0" else "node-0") for p, n in plan.pv_node.items()}
    v = validity.volumes(plan, wrong)
    assert not v.ok
    assert v.message().startswith("8 violation(s) of each pod on its PV's node (8 pod(s)): pause-0 on node-1, "
                                  "its PV is on node-0;")
    assert v.message().endswith("; 3 more")


def _run(**kw: Any) -> RunResult:
    base: dict[str, Any] = {"contender": "kubesched", "round": 1, "mode": "batch", "nodes": 2, "pods": 2, "bound": 2,
                            "all_bound": True, "pods_per_s": 10.0}
    return RunResult(**{**base, **kw})


def test_basic_table_has_no_workload_column_and_plain_ok() -> None:
    text = report.table([_run()])
    assert not text.startswith("workload")
    assert text.splitlines()[2].endswith("  ok")
    assert "kubesched/" not in text


def test_table_with_workloads_shows_each_with_its_check_and_per_workload_ratios() -> None:
    runs = [_run(contender="kube-scheduler", workload="spread", validity="zone skew <= 1 in 1 group(s) (max 1)"),
            _run(workload="spread", pods_per_s=20.0, validity="zone skew <= 1 in 1 group(s) (max 1)"),
            _run(workload="anti-affinity", invalid="1 violation(s) of ...: group g0: 2 pods on node-0")]
    text = report.table(runs)
    lines = text.splitlines()
    assert lines[0].startswith("workload       contender")
    assert lines[2].startswith("spread         kube-scheduler")
    assert lines[2].endswith("ok: zone skew <= 1 in 1 group(s) (max 1)")
    assert lines[4].endswith("FAIL: invalid placements: 1 violation(s) of ...: group g0: 2 pods on node-0")
    assert "spread: kubesched/kube-scheduler throughput: 2.00x" in text
    assert not runs[2].correct
    # A basic run's ratio keys have no prefix, as before workloads.
    basic = report.summarize([_run(contender="kube-scheduler"), _run(pods_per_s=20.0)])
    assert report.ratios(basic) == {"kubesched/kube-scheduler throughput": 2.0}


def test_pending_pods_are_described_by_their_commonest_reason() -> None:
    def pod(name: str, message: str | None) -> _Pod:
        conds = [] if message is None else [_Condition("PodScheduled", "False", "Unschedulable", message)]
        return _Pod(_Meta(name), _Status(conds))

    text = describe([pod("a", "0/2 nodes are available: x."), pod("b", "0/2 nodes are available: x."), pod("c", None)])
    assert text == ("3 pending; 2 with Unschedulable: 0/2 nodes are available: x. (e.g. a); "
                    "1 with no PodScheduled condition (never attempted?) (e.g. c)")
    assert describe([]) == "0 pending"


def test_a_plane_written_by_a_newer_kubesched_still_lists(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    d = plane.cluster_dir("other")
    d.mkdir(parents=True)
    (d / "state.json").write_text(json.dumps({"name": "other", "dir": str(d), "commands": {"etcd": ["x"]}}))
    assert [c.name for c in plane.list_clusters()] == ["other"]
