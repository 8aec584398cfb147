"""On the real plane: UnsupportedPodFields holds back no pod now. Pods with PVC and ephemeral
volumes are VolumeBinding's (here their claims are unbound Immediate ones, so they stay Pending with
kube-scheduler's message for that, not UnsupportedPodFields'), a plain pod next to them is bound,
and so are pods with pod (anti-)affinity (InterPodAffinity evaluates those) and a pod with
topologySpreadConstraints (PodTopologySpread evaluates them). Pods with DRA resource claims are
DynamicResources', side by side with kube-scheduler in test_dynamic_resources.py. Uses the session
kubesched; adds no nodes, and deletes its namespace."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    container,
    create_pod,
    get_pod,
    latest_event,
    pod_manifest,
    wait_bound,
    wait_event,
    wait_unschedulable,
)

NS = "unsupported-fields"
# The claims have no class and no PV: Immediate, and the PV controller cannot bind them. The tail is
# kube-scheduler's DynamicResources PostFilter's, after an unresolvable PreFilter rejection.
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_HOSTNAME = "kubernetes.io/hostname"
_TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": _HOSTNAME}
_CLAIM_TEMPLATE = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}

# pod name -> (spec fields, VolumeBinding's reason)
PODS: dict[str, tuple[dict[str, Any], str]] = {
    "pvc": ({"volumes": [{"name": "tmp", "emptyDir": {}},
                         {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
            UNBOUND_IMMEDIATE),
    # The ephemeral-volume controller creates its claim ephemeral-scratch, which requeues it.
    "ephemeral": ({"volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": _CLAIM_TEMPLATE}}]},
                  UNBOUND_IMMEDIATE),
    "several": ({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
                 "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": _HOSTNAME,
                                                "whenUnsatisfiable": "ScheduleAnyway",
                                                "labelSelector": {"matchLabels": {"app": "web"}}}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                             {"name": "scratch", "ephemeral": {"volumeClaimTemplate": _CLAIM_TEMPLATE}}]},
                UNBOUND_IMMEDIATE),
}
# Evaluated by InterPodAffinity, not held back: `affinity` joins the bound plain pod (app=web) on its
# node, `anti-affinity` only prefers to avoid it.
EVALUATED: dict[str, dict[str, Any]] = {
    "affinity": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}}},
    "anti-affinity": {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": _TERM}]}}},
}


# Evaluated by PodTopologySpread now: no longer rejected. It spreads pods of its own label, so the
# app=web pods above (the affinity ones bound on a worker) cannot make it unsatisfiable.
SPREAD = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": _HOSTNAME, "whenUnsatisfiable": "DoNotSchedule",
                                         "labelSelector": {"matchLabels": {"app": "spread"}}}]}


def _manifest(name: str, spec: dict[str, Any], app: str = "web") -> dict[str, Any]:
    return pod_manifest(name, KUBESCHED, {"containers": [container(cpu="10m", memory="16Mi")], **spec},
                        labels={"app": app})


def _message(reason: str) -> re.Pattern[str]:
    return re.compile(r"0/(\d+) nodes are available: " + re.escape(reason) + r"\. not found")


@pytest.fixture(scope="module")
def created(plane: Kube, kubesched: KubeschedProcess) -> Any:
    plane.namespace(NS)
    # The claim exists, unbound and Immediate (no class): VolumeBinding's PreFilter rejects its pods.
    plane.create(f"/api/v1/namespaces/{NS}/persistentvolumeclaims", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                 "resources": {"requests": {"storage": "1Gi"}}}})
    for name, (spec, _) in PODS.items():
        create_pod(plane, NS, _manifest(name, spec))
    create_pod(plane, NS, _manifest("plain", {}))
    wait_bound(plane, NS, "plain", timeout=30)
    for name, spec in EVALUATED.items():
        create_pod(plane, NS, _manifest(name, spec))
    create_pod(plane, NS, _manifest("spread", SPREAD, app="spread"))
    try:
        yield plane
    finally:
        plane.delete(f"/api/v1/namespaces/{NS}/pods?gracePeriodSeconds=0")
        wait_for(f"pods of {NS} gone", lambda: not plane.pods(NS), timeout=60)
        plane.delete(f"/api/v1/namespaces/{NS}")  # its PVCs (the ephemeral volume's) go with it


def test_plain_pod_is_bound(created: Kube) -> None:
    assert wait_bound(created, NS, "plain", timeout=30)


def test_topology_spread_pod_is_bound(created: Kube) -> None:
    assert wait_bound(created, NS, "spread", timeout=30)
    assert latest_event(created, NS, "spread", "FailedScheduling") is None


def test_pod_affinity_is_evaluated_not_held(created: Kube) -> None:
    plain = wait_bound(created, NS, "plain", timeout=30)
    assert wait_bound(created, NS, "affinity", timeout=30) == plain
    assert wait_bound(created, NS, "anti-affinity", timeout=30)


@pytest.mark.parametrize("name", list(PODS))
def test_pod_with_claims_is_volume_bindings(created: Kube, name: str) -> None:
    want = _message(PODS[name][1])
    # The ephemeral pods first wait for their claim to be created; then the claim's event requeues them.
    cond = wait_for(f"VolumeBinding's message on {name}",
                    lambda: (c := wait_unschedulable(created, NS, name, timeout=30)) and
                    want.fullmatch(c["message"]) and c, timeout=30)
    assert cond["reason"] == "Unschedulable"
    # The event may still carry the first attempt's message: a later one of the same pod version
    # only counts up its series, keeping its note (as events.k8s.io series do).
    allowed = [want]
    if any("ephemeral" in v for v in PODS[name][0]["volumes"]):
        allowed.append(_message("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                f'"{name}-scratch"'))
    ev = wait_event(created, NS, name, "FailedScheduling", timeout=30)
    assert any(m.fullmatch(ev["note"]) for m in allowed), ev["note"]
    assert ev["reportingController"] == KUBESCHED
    assert not get_pod(created, NS, name)["spec"].get("nodeName")


def test_rejected_pod_is_not_retried_in_a_loop(created: Kube) -> None:
    wait_event(created, NS, "pvc", "FailedScheduling", timeout=30)
    time.sleep(5)  # backoff is 1-10 s: a pod requeued on every event would have failed again by now
    ev = latest_event(created, NS, "pvc", "FailedScheduling")
    assert ev is not None
    assert (ev.get("series") or {}).get("count", 1) <= 2, ev
    assert not get_pod(created, NS, "pvc")["spec"].get("nodeName")
