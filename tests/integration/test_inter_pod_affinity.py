"""InterPodAffinity on the shared plane, decided by kubesched and by the reference kube-scheduler side
by side: where one node is the only best, both must choose it; where nothing fits, kubesched must
write kube-scheduler's whole message, its ` preemption:` part included.

The shared plane is seed-kind: `kind-control-plane` (tainted NoSchedule) and the workers `kind-worker`,
`kind-worker2` (tier=normal) and `kind-worker3` (tier=cronjob). kind-worker3 is no CronJob pool node
here (it has no kubesched.io/pool label), so the session kubesched's CronJobPool leaves these pods
alone on every node. Each scenario runs in a namespace of its own: the pods already there are bound by
hand (spec.nodeName, for no scheduler) before the incoming pod is created, once for kube-scheduler
(`ref`) and once for kubesched (`ours`), with the same labels. Where a pod is placed, `ref` is deleted
before `ours` is created: a bound `ref` would count as an existing pod for `ours` (its labels, its own
terms, its requests). Where nothing fits, both stay Pending side by side and neither affects the other.

A pod is relabelled as `kubectl label --overwrite` does it (a merge patch of metadata.labels): the
apiserver merged its matchLabelKeys into the stored labelSelector when it created the pod, from the
labels of then, and kube-scheduler reads that stored selector. An incoming pod to relabel is created
with a scheduling gate, relabelled, then released.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    compare_failure_message,
    container,
    create_pod,
    delete_pod_now,
    latest_event,
    pod_manifest,
    wait_bound,
)

pytestmark = pytest.mark.integration

HOSTNAME = "kubernetes.io/hostname"
OS = "kubernetes.io/os"  # the same on every node: one topology domain for the whole plane
KEY = "ipa"  # the label the scenarios' pods carry and select on
# A namespace other than the scenarios', selected by its labels through namespaceSelector.
TEAM_NS = "ipa-team-blue"
TEAM_LABELS = {"ipa-team": "blue"}


@dataclass(frozen=True)
class Existing:
    """A pod already on `node`, bound by hand; in the scenario's namespace unless `namespace` says."""

    node: str
    app: str
    cpu: str = "100m"
    affinity: dict[str, Any] | None = None
    namespace: str | None = None
    relabel: str | None = None  # its label value once created, overwritten


@dataclass(frozen=True)
class Case:
    app: str  # the incoming pod's label value
    affinity: dict[str, Any]
    expect: str | None  # the only best node, or None when nothing fits
    existing: tuple[Existing, ...] = ()
    reasons: tuple[str, ...] = ()  # parts kube-scheduler's message must contain
    relabel: str | None = None  # the incoming pod's label value once created (gated), overwritten


def term(app: str, topology_key: str = HOSTNAME, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {KEY: app}}, "topologyKey": topology_key, **extra}


def own_value_term() -> dict[str, Any]:
    """Every pod with the owner's value of KEY, as a Deployment's pods select their own revision
    (matchLabelKeys: [pod-template-hash]); the apiserver adds `KEY In (<value>)` at create."""
    return {"labelSelector": {}, "matchLabelKeys": [KEY], "topologyKey": HOSTNAME}


def required(*terms: dict[str, Any], anti: bool = False) -> dict[str, Any]:
    return {"podAntiAffinity" if anti else "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(weight: int, t: dict[str, Any], anti: bool = False) -> dict[str, Any]:
    return {"podAntiAffinity" if anti else "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": t}]}}


# A pod no term selects, holding 1 cpu of a node: makes the other feasible nodes the better ones.
def filler(node: str) -> Existing:
    return Existing(node, "filler", cpu="1")


TAINTED = "1 node(s) had untolerated taint(s)"
# With only kind-worker's 100m pod and these, kind-worker is the best node, kind-worker2 the next.
SECOND_BEST = (Existing("kind-worker2", "filler", cpu="500m"), filler("kind-worker3"))

CASES = [
    pytest.param(Case("web", required(term("db")), "kind-worker2", existing=(Existing("kind-worker2", "db"),)),
                 id="required-affinity-one-node"),
    pytest.param(Case("web", required(term("nothing")), None,
                      reasons=(TAINTED, "3 node(s) didn't match pod affinity rules")),
                 id="required-affinity-unsatisfiable"),
    pytest.param(Case("client", required(term("web"), anti=True), "kind-worker2",
                      existing=(Existing("kind-worker", "web"), filler("kind-worker3"))),
                 id="required-anti-affinity-hostname"),
    pytest.param(Case("intruder", {}, "kind-worker2",
                      existing=(Existing("kind-worker", "guard", affinity=required(term("intruder"), anti=True)),
                                filler("kind-worker3"))),
                 id="existing-anti-affinity-hostname"),
    pytest.param(Case("intruder", {}, None,
                      existing=(Existing("kind-worker", "guard",
                                         affinity=required(term("intruder", OS), anti=True)),),
                      reasons=(TAINTED, "3 node(s) didn't satisfy existing pods anti-affinity rules")),
                 id="existing-anti-affinity-rejects"),
    pytest.param(Case("group", required(term("group")), "kind-worker2",
                      existing=(filler("kind-worker"), filler("kind-worker3"))),
                 id="self-affine-first-pod"),
    pytest.param(Case("web", preferred(100, term("cache")), "kind-worker3",
                      existing=(Existing("kind-worker3", "cache", cpu="500m"),)),
                 id="preferred-affinity"),
    pytest.param(Case("web", required(term("db", namespaceSelector={"matchLabels": TEAM_LABELS})), "kind-worker",
                      # The scenario's own namespace is not labelled: its db pod does not count.
                      existing=(Existing("kind-worker", "db", namespace=TEAM_NS), Existing("kind-worker2", "db"))),
                 id="namespace-selector"),
    pytest.param(Case("web", required(term("db", namespaceSelector={"matchLabels": {"ipa-team": "red"}})), None,
                      existing=(Existing("kind-worker", "db", namespace=TEAM_NS),),
                      reasons=(TAINTED, "3 node(s) didn't match pod affinity rules")),
                 id="namespace-selector-no-match"),
    # kube-scheduler keeps the guard's stored `KEY In (a)`: the incoming pod, app=a, stays off its
    # node. Merged again from the guard's labels of now, the term would need a and b, match nothing.
    pytest.param(Case("a", {}, "kind-worker2",
                      existing=(Existing("kind-worker", "a", affinity=required(own_value_term(), anti=True),
                                         relabel="b"), *SECOND_BEST)),
                 id="existing-relabelled-match-label-keys"),
    pytest.param(Case("a", required(own_value_term(), anti=True), "kind-worker2", relabel="b",
                      existing=(Existing("kind-worker", "a"), *SECOND_BEST)),
                 id="incoming-relabelled-match-label-keys"),
]


def _delete_all_pods(kube: Kube, ns: str) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=30)


@pytest.fixture(scope="module")
def team_ns(plane: Kube, kubesched: KubeschedProcess) -> Iterator[str]:
    # Created once, long before any pod selects it: both schedulers' namespace watches have it by then.
    plane.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": TEAM_NS, "labels": TEAM_LABELS}})
    try:
        yield TEAM_NS
    finally:
        _delete_all_pods(plane, TEAM_NS)
        plane.delete(f"/api/v1/namespaces/{TEAM_NS}")


def _pod(name: str, scheduler: str | None, case: Case) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [container(cpu="100m", memory="64Mi")]}
    if case.affinity:
        spec["affinity"] = case.affinity
    if case.relabel is not None:
        spec["schedulingGates"] = [{"name": HOLD}]
    return pod_manifest(name, scheduler, spec, labels={KEY: case.app})


HOLD = "kubesched.test/relabel-first"
MERGE_PATCH = "application/merge-patch+json"


def _patch(kube: Kube, ns: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    status, pod = kube.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}", body, content_type=MERGE_PATCH)
    assert status == 200, f"PATCH {ns}/{name}: {status} {pod}"
    patched: dict[str, Any] = pod
    return patched


def _relabel(kube: Kube, ns: str, name: str, created_with: str, value: str) -> None:
    """`kubectl label --overwrite pod <name> KEY=<value>`; the stored terms keep the value merged at create."""
    pod = _patch(kube, ns, name, {"metadata": {"labels": {KEY: value}}})
    assert pod["metadata"]["labels"][KEY] == value
    terms = [t for group in pod["spec"]["affinity"].values()
             for t in group.get("requiredDuringSchedulingIgnoredDuringExecution", ())]
    merged = [x for t in terms if t.get("matchLabelKeys") for x in t["labelSelector"]["matchExpressions"]]
    assert merged == [{"key": KEY, "operator": "In", "values": [created_with]}], terms


@pytest.mark.parametrize("case", CASES)
def test_inter_pod_affinity(plane: Kube, team_ns: str, case: Case, request: pytest.FixtureRequest) -> None:
    sid: str = request.node.callspec.id
    ns = plane.namespace(f"ipa-{sid}")
    try:
        for i, ex in enumerate(case.existing):
            spec: dict[str, Any] = {"containers": [container(cpu=ex.cpu, memory="64Mi")], "nodeName": ex.node}
            if ex.affinity:
                spec["affinity"] = ex.affinity
            create_pod(plane, ex.namespace or ns, pod_manifest(f"{sid}-existing-{i}", "nobody", spec,
                                                               labels={KEY: ex.app}))
            if ex.relabel is not None:
                _relabel(plane, ex.namespace or ns, f"{sid}-existing-{i}", ex.app, ex.relabel)
        if case.expect is not None:
            _compare_choice(plane, ns, case, case.expect)
        else:
            message = compare_failure_message(plane, ns, _pod("ref", None, case), _pod("ours", KUBESCHED, case),
                                              case.reasons, timeout=10)
            assert message.startswith("0/4 nodes are available: "), message
    finally:
        _delete_all_pods(plane, ns)
        _delete_all_pods(plane, team_ns)
        plane.delete(f"/api/v1/namespaces/{ns}")


def _create_incoming(kube: Kube, ns: str, name: str, scheduler: str | None, case: Case) -> None:
    create_pod(kube, ns, _pod(name, scheduler, case))
    if case.relabel is not None:
        _relabel(kube, ns, name, case.app, case.relabel)
        _patch(kube, ns, name, {"spec": {"schedulingGates": None}})


def _compare_choice(kube: Kube, ns: str, case: Case, expect: str) -> None:
    _create_incoming(kube, ns, "ref", None, case)
    ref_node = wait_bound(kube, ns, "ref")
    assert ref_node == expect, (
        f"scenario broken: kube-scheduler chose {ref_node}, the scenario expects {expect} as the only best")
    delete_pod_now(kube, ns, "ref")
    _create_incoming(kube, ns, "ours", KUBESCHED, case)
    our_node = wait_bound(kube, ns, "ours")
    assert our_node == ref_node, f"kubesched chose {our_node}, kube-scheduler chose {ref_node}"
    scheduled = wait_for("kubesched's Scheduled event", lambda: latest_event(kube, ns, "ours", "Scheduled"))
    assert scheduled["reportingController"] == KUBESCHED
    assert scheduled["note"] == f"Successfully assigned {ns}/ours to {our_node}"


