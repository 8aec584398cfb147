"""DefaultPreemption side by side with the reference kube-scheduler, on a plane of two nodes (2 cpu
each): victims chosen by priority then count, PodDisruptionBudgets respected (avoided where another
node allows it, the fewest violations when none does), `preemptionPolicy: Never`, and a nominated
pod holding its node against a lower-priority pod.

Each scenario runs twice, once per scheduler, each time in a fresh namespace on empty nodes: the
occupants are bound through spec.nodeName by no scheduler; kwok removes a deleted pod at once, so a
watch on the namespace records what happened on the way. Compared: the nomination, the victims,
the first FailedScheduling note (whole), the victims' DisruptionTarget condition and Preempted
event, and where the preemptor is bound.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kubesched_dev.localcluster.topology import NodeSpec, Topology
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    DEFAULT,
    KUBESCHED,
    PodWatch,
    compare_failure_message,
    container,
    create_pod,
    events,
    get_pod,
    latest_event,
    own_plane,
    pod_manifest,
    poll,
)

NODES = ("n1", "n2")
CAPACITY = {"cpu": "2", "memory": "8Gi", "pods": "110"}
GUARDED = {"app": "guarded"}
CLASSES = {"pt-low": 10, "pt-mid": 20, "pt-high": 1000}


@dataclass(frozen=True)
class Occupant:
    name: str
    node: str
    priority: str  # a PriorityClass name
    cpu: str
    guarded: bool = False  # selected by the scenario's PodDisruptionBudget


@dataclass(frozen=True)
class Case:
    occupants: tuple[Occupant, ...]
    preemptor_cpu: str
    nominated: str  # where kube-scheduler must nominate the preemptor (the scenario's check)
    victims: tuple[str, ...]
    pdb: bool = False  # a PDB over the guarded occupants with minAvailable = their number (0 allowed)


def occ(name: str, node: str, priority: str, cpu: str, guarded: bool = False) -> Occupant:
    return Occupant(name, node, priority, cpu, guarded)


CASES = [
    # n1's victims have the lower highest priority: both go, though n2 would need one only.
    pytest.param(Case((occ("a1", "n1", "pt-low", "1"), occ("a2", "n1", "pt-low", "1"),
                       occ("b", "n2", "pt-mid", "2")), "2", "n1", ("a1", "a2")), id="lowest-priority-first"),
    # Equal priorities: the smaller sum of priorities (fewer victims) wins.
    pytest.param(Case((occ("a1", "n1", "pt-low", "1"), occ("a2", "n1", "pt-low", "1"),
                       occ("b", "n2", "pt-low", "2")), "2", "n2", ("b",)), id="fewer-victims-at-equal-priority"),
    # On the node, the more important victim is reprieved: only the low one goes.
    pytest.param(Case((occ("low", "n1", "pt-low", "1"), occ("mid", "n1", "pt-mid", "1"),
                       occ("full", "n2", "pt-high", "2")), "1", "n1", ("low",)), id="least-important-victim"),
    # n1's victim is protected by a budget that allows no disruption; n2's breaks none.
    pytest.param(Case((occ("a", "n1", "pt-low", "2", guarded=True), occ("b", "n2", "pt-mid", "2")),
                      "2", "n2", ("b",), pdb=True), id="pdb-avoided"),
    # Every candidate breaks the budget: the node with fewer violations (n2: one, n1: two) wins,
    # though n1's victims have the lower priority.
    pytest.param(Case((occ("a1", "n1", "pt-low", "1", guarded=True), occ("a2", "n1", "pt-low", "1", guarded=True),
                       occ("b", "n2", "pt-mid", "2", guarded=True)), "2", "n2", ("b",), pdb=True),
                 id="pdb-fewest-violations"),
]


@pytest.fixture(scope="module")
def preemption_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    nodes = tuple(NodeSpec(n, {}, (), dict(CAPACITY)) for n in NODES)
    with own_plane("preempt", Topology("two-nodes", nodes)) as kube:
        for name, value in CLASSES.items():
            kube.create("/apis/scheduling.k8s.io/v1/priorityclasses", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value})
        kube.create("/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pt-high-never"},
            "value": 1000, "preemptionPolicy": "Never"})
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("preempt")) / "kubesched.log")
        try:
            yield kube
        finally:
            proc.stop()


def _pod(name: str, priority: str, cpu: str, scheduler: str | None, node: str | None = None,
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container(cpu=cpu, memory="64Mi")], "priorityClassName": priority}
    if node is not None:
        spec["nodeName"] = node
    return pod_manifest(name, scheduler, spec, labels)


def earliest_event(kube: Kube, ns: str, pod: str, reason: str) -> dict[str, Any] | None:
    found = [e for e in events(kube, ns, pod) if e.get("reason") == reason]
    found.sort(key=lambda e: e.get("eventTime") or "")
    return found[0] if found else None


def _clean(kube: Kube, ns: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    kube.delete(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/guard")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=60)
    # Both schedulers see the nodes empty before the next run.
    time.sleep(1.0)


def _setup(kube: Kube, ns: str, case: Case) -> None:
    for o in case.occupants:
        create_pod(kube, ns, _pod(o.name, o.priority, o.cpu, "nobody", o.node,
                                  GUARDED if o.guarded else {"app": "free"}))
    wait_for("occupants running", lambda: len([p for p in kube.pods(ns) if p.get("status", {}).get("phase")
                                                == "Running"]) == len(case.occupants), timeout=30)
    if case.pdb:
        guarded = sum(o.guarded for o in case.occupants)
        kube.create(f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
            "spec": {"minAvailable": guarded, "selector": {"matchLabels": dict(GUARDED)}}})
        path = f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/guard"
        wait_for("the PDB's status", lambda: (s := kube.get(path).get("status") or {}).get("observedGeneration")
                 == 1 and s.get("currentHealthy") == guarded, timeout=30)
    # Both schedulers' informers catch up with the occupants (and the PDB).
    time.sleep(1.0)


def _run(kube: Kube, ns: str, scheduler: str, case: Case) -> dict[str, Any]:
    """One scheduler's preemption in this scenario; what it did, with its own names taken out."""
    _setup(kube, ns, case)
    watch = PodWatch(kube, ns)
    try:
        pre = create_pod(kube, ns, _pod("preemptor", "pt-high", case.preemptor_cpu,
                                        None if scheduler == DEFAULT else scheduler))
        uid = pre["metadata"]["uid"]
        bound = wait_for(f"{scheduler} binding the preemptor",
                         lambda: get_pod(kube, ns, "preemptor")["spec"].get("nodeName"), timeout=30)
        poll(lambda: len(watch.deleted()) >= len(case.victims), timeout=5)
        time.sleep(0.5)
    finally:
        watch.close()
    victims = watch.deleted()
    ev = wait_for("the preemptor's FailedScheduling event", lambda: earliest_event(kube, ns, "preemptor",
                                                                                    "FailedScheduling"))
    out: dict[str, Any] = {"nominated": watch.first_nomination("preemptor"), "victims": victims, "bound": bound,
                           "note": ev["note"], "conditions": {}, "events": {}}
    for v in victims:
        cond = watch.condition(v, "DisruptionTarget")
        out["conditions"][v] = (cond.get("status"), cond.get("reason"),
                                (cond.get("message") or "").replace(scheduler, "<scheduler>"))
        e = wait_for(f"the Preempted event of {v}", functools.partial(latest_event, kube, ns, v, "Preempted"))
        out["events"][v] = (e["type"], e["action"], e["note"].replace(uid, "<uid>"),
                            (e.get("related") or {}).get("name"), e["reportingController"] == scheduler)
    return out


T = TypeVar("T")


def _side_by_side(kube: Kube, tag: str, run: Callable[[Kube, str, str], T]) -> dict[str, T]:
    """`run(kube, namespace, scheduler)` for kube-scheduler ("ref") then kubesched ("ours"), each in
    a namespace of its own, cleaned up after."""
    seen: dict[str, T] = {}
    for who, scheduler in (("ref", DEFAULT), ("ours", KUBESCHED)):
        ns = kube.namespace(f"pr-{tag}-{who}")
        try:
            seen[who] = run(kube, ns, scheduler)
        finally:
            _clean(kube, ns)
    return seen


@pytest.mark.parametrize("case", CASES)
def test_preemption_scenario(preemption_plane: Kube, case: Case, request: pytest.FixtureRequest) -> None:
    sid: str = request.node.callspec.id
    seen = _side_by_side(preemption_plane, sid, functools.partial(_run, case=case))
    ref, ours = seen["ref"], seen["ours"]
    print(f"kube-scheduler: {ref}")
    assert (ref["nominated"], tuple(ref["victims"])) == (case.nominated, case.victims), f"scenario broken: {ref}"
    assert ref["bound"] == case.nominated, f"scenario broken: {ref}"
    assert all(c == ("True", "PreemptionByScheduler", "<scheduler>: preempting to accommodate a higher priority pod")
               for c in ref["conditions"].values()), ref
    assert all(e == ("Normal", "Preempting", f"Preempted by pod <uid> on node {case.nominated}", None, True)
               for e in ref["events"].values()), ref
    assert ours == ref


def test_preemption_policy_never(preemption_plane: Kube) -> None:
    kube = preemption_plane
    ns = kube.namespace("pr-never")
    case = Case((occ("low", "n1", "pt-low", "2"), occ("low2", "n2", "pt-low", "2")), "2", "", ())
    try:
        _setup(kube, ns, case)
        want = compare_failure_message(kube, ns, _pod("ref", "pt-high-never", "2", None),
                                       _pod("ours", "pt-high-never", "2", KUBESCHED),
                                       ("preemption: not eligible due to preemptionPolicy=Never.",))
        assert want == ("0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to "
                        "preemptionPolicy=Never.")
        assert sorted(p["metadata"]["name"] for p in kube.pods(ns)) == ["low", "low2", "ours", "ref"]
    finally:
        _clean(kube, ns)


def _run_nominated(kube: Kube, ns: str, scheduler: str) -> tuple[str, str | None, str | None]:
    """(the lower pod's first FailedScheduling note, where it is bound, its nomination)."""
    name = None if scheduler == DEFAULT else scheduler
    _setup(kube, ns, Case((occ("full", "n2", "pt-high", "2"),), "2", "", ()))
    # A high-priority pod nominated to the empty n1 (as preemption leaves it), held back by a gate.
    held = _pod("nominated", "pt-high", "2", name)
    held["spec"]["schedulingGates"] = [{"name": "kubesched.test/hold"}]
    create_pod(kube, ns, held)
    kube.request("PATCH", f"/api/v1/namespaces/{ns}/pods/nominated/status",
                 {"status": {"nominatedNodeName": "n1"}}, content_type="application/merge-patch+json")
    time.sleep(1.0)
    create_pod(kube, ns, _pod("lower", "pt-mid", "1", name))
    ev = wait_for("the lower pod's FailedScheduling", lambda: earliest_event(kube, ns, "lower", "FailedScheduling"))
    time.sleep(1.0)
    lower = get_pod(kube, ns, "lower")
    return ev["note"], lower["spec"].get("nodeName"), lower["status"].get("nominatedNodeName")


def test_a_nominated_pod_holds_its_node_against_a_lower_priority_pod(preemption_plane: Kube) -> None:
    """A pod nominated to n1 (gated, so it stays there) holds n1's room: a lower-priority pod that
    fits n1 must not take it (RunFilterPluginsWithNominatedPods), and its preemption finds nothing."""
    seen = _side_by_side(preemption_plane, "nominated", _run_nominated)
    assert seen["ref"] == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                           "2 No preemption victims found for incoming pod.", None, None), seen
    assert seen["ours"] == seen["ref"]
