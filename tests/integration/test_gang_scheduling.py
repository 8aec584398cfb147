"""Gang scheduling on the Workload API (GenericWorkload), side by side with the reference
kube-scheduler on a plane with the gate on: each scenario runs once under kube-scheduler and once
under kubesched, one after the other on the same nodes (the seed's three 4-CPU workers; the
control-plane node is tainted), and both must end the same way, with the same PodGroup condition
and the same messages on the pods."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import NodeSpec
from tests.integration.conftest import GATED_FEATURES, KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    DEFAULT,
    KUBESCHED,
    bound_pods,
    container,
    create_nodes,
    delete_nodes,
    node_manifest,
    pod_manifest,
    scheduled_condition,
)

SCHEDULERS = (DEFAULT, KUBESCHED)
EXAMPLES = Path(__file__).parents[2] / "examples" / "coscheduling"
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
_names = itertools.count()


@pytest.fixture(scope="module")
def gang_kubesched(gated_plane: Kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeschedProcess]:
    log = tmp_path_factory.mktemp("gang") / "kubesched.log"
    proc = KubeschedProcess(gated_plane, [f"--feature-gates={GATED_FEATURES}"], log)
    try:
        yield proc
    finally:
        proc.stop()


def _namespace(kube: Kube, scheduler: str) -> str:
    return kube.namespace(f"gang-{'ref' if scheduler == DEFAULT else 'ks'}-{next(_names)}")


def _pod_group(kube: Kube, ns: str, name: str, min_count: int | None) -> None:
    policy: dict[str, Any] = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    kube.create(PODGROUPS.format(ns=ns), {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                          "metadata": {"name": name}, "spec": {"schedulingPolicy": policy}})


def _member(kube: Kube, ns: str, name: str, group: str, scheduler: str, cpu: str) -> None:
    manifest = pod_manifest(name, scheduler, {"containers": [container(cpu=cpu)],
                                              "schedulingGroup": {"podGroupName": group}})
    kube.create(f"/api/v1/namespaces/{ns}/pods", manifest)


def _condition(kube: Kube, ns: str, group: str) -> dict[str, Any]:
    pg = kube.get(f"{PODGROUPS.format(ns=ns)}/{group}")
    for c in (pg.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodGroupInitiallyScheduled":
            return {k: c.get(k, "") for k in ("type", "status", "reason", "message")}
    return {}


def _messages(kube: Kube, ns: str) -> list[str]:
    return sorted((scheduled_condition(p) or {}).get("message", "") for p in kube.pods(ns))


def _clear(kube: Kube, ns: str) -> None:
    """Free the nodes for the next scheduler's run: the namespace's pods gone, not only terminating."""
    for p in kube.pods(ns):
        kube.delete(f"/api/v1/namespaces/{ns}/pods/{p['metadata']['name']}?gracePeriodSeconds=0")
    wait_for(f"the pods of {ns} to be gone", lambda: not kube.pods(ns), timeout=30)


def _all_have_messages(kube: Kube, ns: str, count: int) -> bool:
    pods = kube.pods(ns)
    return len(pods) == count and all((scheduled_condition(p) or {}).get("message") for p in pods)


def test_a_gang_waits_for_min_count_then_binds_whole(gated_plane: Kube, gang_kubesched: KubeschedProcess) -> None:
    kube = gated_plane

    def run(scheduler: str) -> tuple[Any, ...]:
        ns = _namespace(kube, scheduler)
        _pod_group(kube, ns, "g", 4)
        for i in range(3):
            _member(kube, ns, f"p{i}", "g", scheduler, "100m")
        time.sleep(3)
        waiting = (len(bound_pods(kube, ns)), _messages(kube, ns), _condition(kube, ns, "g"))
        _member(kube, ns, "p3", "g", scheduler, "100m")
        wait_for(f"{scheduler}: all four bound", lambda: len(bound_pods(kube, ns)) == 4, timeout=30)
        wait_for(f"{scheduler}: the PodGroup condition", lambda: _condition(kube, ns, "g"), timeout=10)
        result = (waiting, _condition(kube, ns, "g"))
        _clear(kube, ns)
        return result

    seen = {scheduler: run(scheduler) for scheduler in SCHEDULERS}
    assert seen[DEFAULT][0] == (0, ["", "", ""], {}), seen
    assert seen[KUBESCHED] == seen[DEFAULT], gang_kubesched.log()[-3000:]
    assert seen[KUBESCHED][1] == {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled",
                                  "message": ""}


def test_room_for_three_of_four_binds_none_until_room_is_freed(gated_plane: Kube,
                                                               gang_kubesched: KubeschedProcess) -> None:
    kube = gated_plane
    extra = NodeSpec("gang-extra", {}, (), {"cpu": "4", "memory": "8Gi", "pods": "110"})

    def run(scheduler: str) -> tuple[Any, ...]:
        ns = _namespace(kube, scheduler)
        _pod_group(kube, ns, "g", 4)
        for i in range(4):
            _member(kube, ns, f"p{i}", "g", scheduler, "3")
        wait_for(f"{scheduler}: every pod told why", lambda: _all_have_messages(kube, ns, 4), timeout=30)
        wait_for(f"{scheduler}: the PodGroup condition", lambda: _condition(kube, ns, "g"), timeout=10)
        time.sleep(1)
        failed = (len(bound_pods(kube, ns)), _messages(kube, ns), _condition(kube, ns, "g"))
        create_nodes(kube, [node_manifest(extra)])
        try:
            wait_for(f"{scheduler}: all four bound once a node is added",
                     lambda: len(bound_pods(kube, ns)) == 4, timeout=60)
            wait_for(f"{scheduler}: the PodGroup scheduled",
                     lambda: _condition(kube, ns, "g").get("status") == "True", timeout=10)
            result = (failed, _condition(kube, ns, "g"))
            _clear(kube, ns)
        finally:
            delete_nodes(kube, [extra.name])
            wait_for("the extra node gone", lambda: kube.request("GET", f"/api/v1/nodes/{extra.name}")[0] == 404)
        return result

    seen = {scheduler: run(scheduler) for scheduler in SCHEDULERS}
    assert seen[DEFAULT][0][0] == 0, seen
    assert seen[KUBESCHED] == seen[DEFAULT], gang_kubesched.log()[-3000:]


def test_two_gangs_with_room_for_one_place_exactly_one(gated_plane: Kube,
                                                       gang_kubesched: KubeschedProcess) -> None:
    kube = gated_plane

    def run(scheduler: str) -> list[int]:
        ns = _namespace(kube, scheduler)
        for group in ("a", "b"):
            _pod_group(kube, ns, group, 3)
        for i in range(3):
            for group in ("a", "b"):
                _member(kube, ns, f"{group}{i}", group, scheduler, "3")
        wait_for(f"{scheduler}: one gang bound", lambda: len(bound_pods(kube, ns)) == 3, timeout=30)
        time.sleep(3)
        per_group = sorted(sum(1 for p in bound_pods(kube, ns) if p["metadata"]["name"].startswith(g))
                           for g in ("a", "b"))
        _clear(kube, ns)
        return per_group

    seen = {scheduler: run(scheduler) for scheduler in SCHEDULERS}
    assert seen == {DEFAULT: [0, 3], KUBESCHED: [0, 3]}, gang_kubesched.log()[-3000:]


def test_a_basic_group_schedules_pod_by_pod(gated_plane: Kube, gang_kubesched: KubeschedProcess) -> None:
    kube = gated_plane

    def run(scheduler: str) -> tuple[Any, ...]:
        ns = _namespace(kube, scheduler)
        _pod_group(kube, ns, "g", None)
        for i in range(4):
            _member(kube, ns, f"p{i}", "g", scheduler, "3")
        wait_for(f"{scheduler}: three bound", lambda: len(bound_pods(kube, ns)) == 3, timeout=30)
        wait_for(f"{scheduler}: the fourth told why",
                 lambda: sum(bool((scheduled_condition(p) or {}).get("message")) for p in kube.pods(ns)) == 1,
                 timeout=30)
        wait_for(f"{scheduler}: the PodGroup condition", lambda: _condition(kube, ns, "g"), timeout=10)
        result = (len(bound_pods(kube, ns)), [m for m in _messages(kube, ns) if m], _condition(kube, ns, "g"))
        _clear(kube, ns)
        return result

    seen = {scheduler: run(scheduler) for scheduler in SCHEDULERS}
    assert seen[KUBESCHED] == seen[DEFAULT], gang_kubesched.log()[-3000:]


# --- scheduler-plugins' Coscheduling on its PodGroup CRD (kube-scheduler has no such plugin) ------

COSCHED = "cosched"
CO_PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"


@pytest.fixture(scope="module")
def cosched(gated_plane: Kube, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeschedProcess]:
    gated_plane.kubectl("apply", "-f", str(EXAMPLES / "crd.yaml"))
    wait_for("the PodGroup CRD served", lambda: gated_plane.request(
        "GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups")[0] == 200, timeout=30)
    config = tmp_path_factory.mktemp("cosched") / "config.yaml"
    config.write_text((EXAMPLES / "scheduler-config.yaml").read_text().replace("schedulerName: kubesched",
                                                                                f"schedulerName: {COSCHED}"))
    proc = KubeschedProcess(gated_plane, [f"--config={config}"], config.with_name("kubesched.log"))
    try:
        yield proc
    finally:
        proc.stop()


def _co_member(kube: Kube, ns: str, name: str, group: str, cpu: str) -> None:
    manifest = pod_manifest(name, COSCHED, {"containers": [container(cpu=cpu)]},
                            labels={"scheduling.x-k8s.io/pod-group": group})
    kube.create(f"/api/v1/namespaces/{ns}/pods", manifest)


def _co_group(kube: Kube, ns: str, name: str, min_member: int) -> None:
    kube.create(CO_PODGROUPS.format(ns=ns), {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                                             "metadata": {"name": name}, "spec": {"minMember": min_member}})


def test_coscheduling_waits_for_min_member_then_binds_the_group(gated_plane: Kube, cosched: KubeschedProcess) -> None:
    kube = gated_plane
    ns = kube.namespace(f"cosched-{next(_names)}")
    _co_group(kube, ns, "g", 3)
    _co_member(kube, ns, "p0", "g", "100m")
    _co_member(kube, ns, "p1", "g", "100m")
    wait_for("the first two told why", lambda: _all_have_messages(kube, ns, 2), timeout=30)
    assert not bound_pods(kube, ns)
    assert all("cannot find enough sibling pods" in m for m in _messages(kube, ns)), _messages(kube, ns)
    _co_member(kube, ns, "p2", "g", "100m")
    wait_for("all three bound", lambda: len(bound_pods(kube, ns)) == 3, timeout=60)
    _clear(kube, ns)


def test_coscheduling_room_for_three_of_four_binds_none(gated_plane: Kube, cosched: KubeschedProcess) -> None:
    kube = gated_plane
    ns = kube.namespace(f"cosched-{next(_names)}")
    _co_group(kube, ns, "g", 4)
    for i in range(4):
        _co_member(kube, ns, f"p{i}", "g", "3")
    # No pod may ever be bound, through the rejection and past permitWaitingTimeSeconds (10 s).
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert not bound_pods(kube, ns), cosched.log()[-3000:]
        time.sleep(0.5)
    wait_for("every pod told why", lambda: _all_have_messages(kube, ns, 4), timeout=30)
    _clear(kube, ns)


def test_a_gang_preempts_for_all_its_pods(gated_plane: Kube, gang_kubesched: KubeschedProcess) -> None:
    kube = gated_plane
    status, body = kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gang-high"},
        "value": 1000})
    assert status in (201, 409), body
    workers = ("kind-worker", "kind-worker2", "kind-worker3")

    def run(scheduler: str) -> tuple[Any, ...]:
        ns = _namespace(kube, scheduler)
        for i, node in enumerate(workers):
            kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
                f"victim{i}", None, {"nodeName": node, "containers": [container(cpu="3")]}))
        kube.create(PODGROUPS.format(ns=ns), {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
            "spec": {"priorityClassName": "gang-high", "schedulingPolicy": {"gang": {"minCount": 3}}}})
        for i in range(3):
            kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
                f"g{i}", scheduler, {"containers": [container(cpu="3")], "priorityClassName": "gang-high",
                                     "schedulingGroup": {"podGroupName": "g"}}))
        wait_for(f"{scheduler}: the gang bound", lambda: sorted(
            p["metadata"]["name"] for p in bound_pods(kube, ns)) == ["g0", "g1", "g2"], timeout=60)
        seen = [e for e in kube.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]]
        preempted = sorted(e["regarding"]["name"] for e in seen if e.get("reason") == "Preempted")
        first_failures = sorted({e["note"] for e in seen if e.get("reason") == "FailedScheduling"})
        _clear(kube, ns)
        return preempted, first_failures

    seen = {scheduler: run(scheduler) for scheduler in SCHEDULERS}
    assert seen[DEFAULT][0] == ["victim0", "victim1", "victim2"], seen
    assert seen[KUBESCHED] == seen[DEFAULT], gang_kubesched.log()[-3000:]


def test_a_gang_spares_the_victims_a_disruption_budget_protects(gated_plane: Kube,
                                                               gang_kubesched: KubeschedProcess) -> None:
    """On each worker a low-priority victim a PodDisruptionBudget protects (disruptionsAllowed 0) and
    a more important one it does not; the gang's two pods need half of two workers each. Both
    schedulers reprieve the protected victims first, so they preempt two unprotected ones (which
    two depends on the nodes picked among equals); without the budget it would be two protected."""
    kube = gated_plane
    for name, value in (("gang-high", 1000), ("gang-mid", 10)):
        status, body = kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value})
        assert status in (201, 409), body
    workers = ("kind-worker", "kind-worker2", "kind-worker3")

    def run(scheduler: str) -> list[str]:
        ns = _namespace(kube, scheduler)
        kube.create(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "protected"},
            "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "protected"}}}})
        for i, node in enumerate(workers):
            kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
                f"protected{i}", None, {"nodeName": node, "containers": [container(cpu="2")]},
                labels={"app": "protected"}))
            kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
                f"mid{i}", None, {"nodeName": node, "containers": [container(cpu="2")],
                                  "priorityClassName": "gang-mid"}))
        wait_for("the disruption controller's status on the budget", lambda: (kube.get(
            f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/protected").get("status") or {}).get(
            "observedGeneration"), timeout=30)
        kube.create(PODGROUPS.format(ns=ns), {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
            "spec": {"priorityClassName": "gang-high", "schedulingPolicy": {"gang": {"minCount": 2}}}})
        for i in range(2):
            kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
                f"g{i}", scheduler, {"containers": [container(cpu="2")], "priorityClassName": "gang-high",
                                     "schedulingGroup": {"podGroupName": "g"}}))
        wait_for(f"{scheduler}: the gang bound", lambda: sorted(
            p["metadata"]["name"] for p in bound_pods(kube, ns) if p["metadata"]["name"] in ("g0", "g1")) == [
            "g0", "g1"], timeout=60)
        seen = kube.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
        preempted = sorted(e["regarding"]["name"] for e in seen if e.get("reason") == "Preempted")
        _clear(kube, ns)
        return preempted

    seen = {scheduler: run(scheduler) for scheduler in SCHEDULERS}
    for preempted in seen.values():
        assert len(preempted) == 2, seen
        assert all(name.startswith("mid") for name in preempted), (seen, gang_kubesched.log()[-3000:])


def test_coscheduling_two_gangs_with_room_for_one_place_exactly_one(gated_plane: Kube,
                                                                    cosched: KubeschedProcess) -> None:
    """Room for one gang of two and one pod more: the other gang's first pod would fit, but kubesched
    places a group whole or not at all, so it holds no node (scheduler-plugins holds it at Permit
    until the group is rejected), a lone pod takes the room at once, and the other gang binds
    whole once the first is gone."""
    kube = gated_plane
    ns = kube.namespace(f"cosched-{next(_names)}")
    for group in ("a", "b"):
        _co_group(kube, ns, group, 2)
    for i in range(2):
        for group in ("a", "b"):
            _co_member(kube, ns, f"{group}{i}", group, "3")
    wait_for("one gang bound", lambda: len(bound_pods(kube, ns)) == 2, timeout=60)
    first = sorted(p["metadata"]["name"] for p in bound_pods(kube, ns))
    assert first in (["a0", "a1"], ["b0", "b1"]), (first, cosched.log()[-3000:])
    kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest("lone", COSCHED, {"containers": [container(cpu="3")]}))
    wait_for("the lone pod bound on the node left", lambda: "lone" in {
        p["metadata"]["name"] for p in bound_pods(kube, ns)}, timeout=5)
    deadline = time.monotonic() + 12  # past permitWaitingTimeSeconds (10 s)
    while time.monotonic() < deadline:
        names = sorted(p["metadata"]["name"] for p in bound_pods(kube, ns))
        assert names == sorted([*first, "lone"]), (names, cosched.log()[-3000:])
        time.sleep(0.5)
    for name in [*first, "lone"]:
        kube.delete(f"/api/v1/namespaces/{ns}/pods/{name}?gracePeriodSeconds=0")
    other = ["b0", "b1"] if first == ["a0", "a1"] else ["a0", "a1"]
    wait_for("the other gang bound whole", lambda: sorted(
        p["metadata"]["name"] for p in bound_pods(kube, ns)) == other, timeout=60)
    _clear(kube, ns)


def test_coscheduling_a_gang_preempts_for_all_its_pods(gated_plane: Kube, cosched: KubeschedProcess) -> None:
    """Every worker full of a low-priority pod; a gang of three high-priority pods that need a
    worker each: all three victims go, and the gang binds whole on the room they leave."""
    kube = gated_plane
    status, body = kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gang-high"},
        "value": 1000})
    assert status in (201, 409), body
    ns = kube.namespace(f"cosched-{next(_names)}")
    for i, node in enumerate(("kind-worker", "kind-worker2", "kind-worker3")):
        kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
            f"victim{i}", None, {"nodeName": node, "containers": [container(cpu="3")]}))
    _co_group(kube, ns, "g", 3)
    for i in range(3):
        kube.create(f"/api/v1/namespaces/{ns}/pods", pod_manifest(
            f"g{i}", COSCHED, {"containers": [container(cpu="3")], "priorityClassName": "gang-high"},
            labels={"scheduling.x-k8s.io/pod-group": "g"}))
    wait_for("the gang bound", lambda: sorted(
        p["metadata"]["name"] for p in bound_pods(kube, ns)) == ["g0", "g1", "g2"], timeout=60)
    events = kube.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    assert sorted(e["regarding"]["name"] for e in events if e.get("reason") == "Preempted") == [
        "victim0", "victim1", "victim2"], cosched.log()[-3000:]
    _clear(kube, ns)
