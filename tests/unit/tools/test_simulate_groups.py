"""`kubesched simulate` with pod groups: a Workload API PodGroup (GenericWorkload) or a
scheduler-plugins PodGroup (Coscheduling) is placed all or nothing, reported per group; a CronJob's
gang lands whole in its pool or not at all."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kubesched.config import load
from kubesched.config.load import from_dict
from kubesched.config.types import SchedulerConfig
from kubesched.tools.simulate.expand import ExpandError
from kubesched.tools.simulate.render import render_table, to_dict
from kubesched.tools.simulate.run import simulate
from kubesched.tools.simulate.state import decode, encode
from tests.builders import make_node
from tests.unit.tools.test_simulate import expand, placed, pod, state

GATED = load(None, gates={"GenericWorkload"})
COSCHED = from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                     "profiles": [{"schedulerName": "kubesched", "plugins": {
                         "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                         "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}}}]},
                    source="test")


def pod_group(name: str, min_count: int | None) -> dict[str, Any]:
    policy: dict[str, Any] = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": policy}}


def co_group(name: str, min_member: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"minMember": min_member}}


def member(name: str, group: str, cpu: str = "3") -> dict[str, Any]:
    return pod(name, cpu, schedulingGroup={"podGroupName": group})


def co_member(name: str, group: str, cpu: str = "3") -> dict[str, Any]:
    m = pod(name, cpu)
    m["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    return m


def gang_job(name: str, group: str, count: int, cpu: str = "3", **template_spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"parallelism": count, "completions": count, "template": {"spec": {
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
                "schedulingGroup": {"podGroupName": group}, **template_spec}}}}


NODES = [make_node(f"n{i}").capacity(cpu="4") for i in range(3)]
MIN4 = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"


@pytest.mark.parametrize(("config", "manifests", "want", "group_message"), [
    pytest.param(GATED, [pod_group("g", 3), *(member(f"p{i}", "g") for i in range(3))],
                 {"p0": "n", "p1": "n", "p2": "n"}, "", id="gang-fits-whole"),
    pytest.param(GATED, [pod_group("g", 4), *(member(f"p{i}", "g") for i in range(4))],
                 {"p0": None, "p1": None, "p2": None, "p3": None}, MIN4, id="room-for-3-of-4-places-none"),
    pytest.param(GATED, [pod_group("g", None), *(member(f"p{i}", "g") for i in range(4))],
                 {"p0": "n", "p1": "n", "p2": "n", "p3": None}, "", id="basic-group-pod-by-pod"),
    pytest.param(COSCHED, [co_group("g", 3), *(co_member(f"p{i}", "g") for i in range(3))],
                 {"p0": "n", "p1": "n", "p2": "n"}, "", id="coscheduling-fits-whole"),
    pytest.param(COSCHED, [co_group("g", 4), *(co_member(f"p{i}", "g") for i in range(4))],
                 {"p0": None, "p1": None, "p2": None, "p3": None},
                 "minMember (4) cannot be satisfied: 3 scheduled, 0 remaining", id="coscheduling-room-for-3-of-4"),
])
def test_a_group_is_placed_all_or_nothing(config: SchedulerConfig, manifests: list[dict[str, Any]],
                                          want: dict[str, str | None], group_message: str) -> None:
    sim = simulate(config, state(NODES), expand(*manifests), generic_workload=config is GATED)
    got = placed(sim)
    assert {k: (v[0] if v else None) for k, v in got.items()} == want
    assert [g.message for g in sim.groups] == [group_message]
    assert sim.groups[0].placed == (not group_message)
    assert all(p.group == "shop/g" for p in sim.placements)
    if group_message:
        # Nothing is left assumed: the nodes hold none of the group's pods.
        assert all(not n.placed for n in sim.nodes)


def test_the_pods_of_a_failed_gang_are_told_why() -> None:
    sim = simulate(GATED, state(NODES), expand(pod_group("g", 4), *(member(f"p{i}", "g") for i in range(4))),
                   generic_workload=True)
    messages = {p.pod: p.message for p in sim.placements}
    assert messages == {
        "shop/p0": f"pod group is unschedulable, {MIN4}", "shop/p1": f"pod group is unschedulable, {MIN4}",
        "shop/p2": f"pod group is unschedulable, {MIN4}", "shop/p3": "0/3 nodes are available: 3 Insufficient cpu."}
    verdict = sim.groups[0]
    assert [(m.pod, m.fits) for m in verdict.members] == [("shop/p0", True), ("shop/p1", True), ("shop/p2", True),
                                                          ("shop/p3", False)]
    doc = to_dict(sim)
    assert doc["groups"][0]["message"] == MIN4
    assert doc["pods"][0]["group"] == "shop/g"
    table = render_table(sim)
    assert "shop/g  PodGroup  4    3/4  no      " + MIN4 in table, table


def test_a_group_below_min_count_is_gated() -> None:
    sim = simulate(GATED, state(NODES), expand(pod_group("g", 3), member("p0", "g"), member("p1", "g")),
                   generic_workload=True)
    assert [(p.reason, p.message) for p in sim.placements] == [
        ("Gated", "waiting for minCount pods from a gang to appear in scheduling queue")] * 2


def test_a_group_that_fits_is_seen_by_the_pods_after_it() -> None:
    sim = simulate(GATED, state(NODES), expand(pod_group("g", 3), *(member(f"p{i}", "g") for i in range(3)),
                                               pod("after", "2")), generic_workload=True)
    assert placed(sim)["after"] is None


def test_a_job_gang_is_placed_whole_and_other_pods_keep_their_order() -> None:
    sim = simulate(GATED, state(NODES), expand(pod("first", "2"), pod_group("g", 3), gang_job("train", "g", 3)),
                   generic_workload=True)
    assert sim.placements[0].pod == "shop/first"
    assert sim.placements[0].node is not None
    # 4 CPUs left on two nodes, 2 on the third: the gang of three 3-CPU pods cannot fit.
    assert [p.node for p in sim.placements[1:]] == [None, None, None]
    assert sim.groups[0].message == "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"


def test_without_the_gate_pods_are_placed_one_by_one_with_a_note() -> None:
    sim = simulate(load(None), state(NODES), expand(pod_group("g", 4), *(member(f"p{i}", "g") for i in range(4))))
    assert [p.node is not None for p in sim.placements] == [True, True, True, False]
    assert not sim.groups
    assert any("GenericWorkload=true" in n for n in sim.notes), sim.notes


POOL = "kubesched.io/pool"
POOL_NODES = [make_node("general-1").capacity(cpu="8"), make_node("general-2").capacity(cpu="8"),
              make_node("pool-1").capacity(cpu="4").label(POOL, "cronjob").taint(POOL, "cronjob"),
              make_node("pool-2").capacity(cpu="4").label(POOL, "cronjob").taint(POOL, "cronjob")]


def cronjob_gang(count: int) -> dict[str, Any]:
    job = gang_job("unused", "g", count)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "train"},
            "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": job["spec"]}}}


@pytest.mark.parametrize("fallback", ["never", "general"])
@pytest.mark.parametrize(("count", "want_placed"), [
    pytest.param(2, True, id="pool-has-room-for-the-gang"),
    pytest.param(3, False, id="pool-too-small-none-placed-none-outside"),
])
def test_a_cronjob_gang_lands_whole_in_its_pool_or_not_at_all(fallback: str, count: int, want_placed: bool) -> None:
    config = from_dict({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "profiles": [{"schedulerName": "kubesched", "pluginConfig": [
                            {"name": "CronJobPool", "args": {"pools": [{"name": "cronjob", "fallback": fallback}]}}]}]},
                       source="test", gates={"GenericWorkload"})
    sim = simulate(config, state(POOL_NODES), expand(pod_group("g", count), cronjob_gang(count)),
                   generic_workload=True)
    nodes = [p.node for p in sim.placements]
    if want_placed:
        assert all(n is not None and n.startswith("pool-") for n in nodes), nodes
    else:
        assert nodes == [None] * count
        assert any("outside the pod's cronjob pool" in p.message for p in sim.placements)


def test_a_pod_group_of_an_unknown_api_is_refused() -> None:
    with pytest.raises(ExpandError, match=r"apiVersion 'example.com/v1'"):
        expand({"apiVersion": "example.com/v1", "kind": "PodGroup", "metadata": {"name": "g"}})


@pytest.mark.parametrize(("config", "group", "members", "plural", "message"), [
    pytest.param(GATED, pod_group("g", 4), [member(f"p{i}", "g") for i in range(4)], "podgroups", MIN4,
                 id="workload-api-podgroup"),
    pytest.param(COSCHED, co_group("g", 4), [co_member(f"p{i}", "g") for i in range(4)], "copodgroups",
                 "minMember (4) cannot be satisfied: 3 scheduled, 0 remaining", id="coscheduling-podgroup"),
])
def test_a_snapshot_file_carries_the_cluster_s_pod_groups(config: SchedulerConfig, group: dict[str, Any],
                                                          members: list[dict[str, Any]], plural: str,
                                                          message: str) -> None:
    """`kubesched snapshot` of a cluster holding the PodGroup, then `simulate --snapshot` of its pods:
    the group is the snapshot's, and decides as if it came with the manifests."""
    live = state(NODES)
    live.objects[plural] = expand(group).objects[plural]
    raw = encode(live)
    assert [g["metadata"]["name"] for g in msgspec.json.decode(raw)["objects"][plural]] == ["g"]
    back = decode(raw)
    assert back.ignored_kinds == []
    sim = simulate(config, back, expand(*members), generic_workload=config is GATED)
    assert set(placed(sim).values()) == {None}
    assert [(g.group, g.message) for g in sim.groups] == [("shop/g", message)]


def test_a_snapshot_without_pod_groups_writes_no_group_keys() -> None:
    assert not {"podgroups", "copodgroups"} & msgspec.json.decode(encode(state(NODES)))["objects"].keys()
