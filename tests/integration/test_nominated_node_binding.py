"""status.nominatedNodeName during binding (NominatedNodeNameForExpectation, on in v1.37), side by
side with the reference kube-scheduler on the session plane: a pod whose WaitForFirstConsumer claim
PreBind has to bind gets its node as nominatedNodeName before spec.nodeName is set, and the
apiserver clears it at the binding (ClearingNominatedNodeNameAfterBinding); a pod with nothing to
do before its binding is never nominated. A watch on the namespace records every version of each
pod; compared are the (spec.nodeName, status.nominatedNodeName) steps they went through and what
each scheduler leaves at the end.

The session plane's nodes: kind-control-plane (tainted), kind-worker, kind-worker2, kind-worker3;
each side's local PV is on kind-worker2 alone, so both must choose it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    PodWatch,
    container,
    create_pod,
    get_pod,
    pod_manifest,
    scheduled_condition,
    wait_bound,
)

NS = "nominated-binding"
LABEL = "test=nominated-binding"
NODE = "kind-worker2"
SIDES = {"ref": None, "ours": KUBESCHED}  # side -> schedulerName (None: the default scheduler)

Step = tuple[str, str]  # (spec.nodeName, status.nominatedNodeName)


@pytest.fixture(scope="module")
def ns(plane: Kube, kubesched: KubeschedProcess) -> Iterator[str]:
    plane.namespace(NS)
    yield NS
    plane.delete(f"/api/v1/namespaces/{NS}")
    for pv in plane.get(f"/api/v1/persistentvolumes?labelSelector={LABEL.replace('=', '%3D')}")["items"]:
        plane.delete(f"/api/v1/persistentvolumes/{pv['metadata']['name']}")


def wffc_storage(kube: Kube, ns: str, side: str) -> str:
    """A WaitForFirstConsumer class, a local PV on NODE and an unbound claim of it; the claim's name."""
    sc = f"nb-wffc-{side}"
    kube.create("/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": sc},
        "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    kube.create("/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f"nb-{side}", "labels": {"test": "nominated-binding"}},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                 "persistentVolumeReclaimPolicy": "Retain", "local": {"path": f"/mnt/nb-{side}"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}]}}}})
    claim = f"data-{side}"
    kube.create(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "storageClassName": sc}})
    return claim


def claim_pod(name: str, scheduler: str | None, claim: str) -> dict[str, Any]:
    return pod_manifest(name, scheduler, {"containers": [container(cpu="10m", memory="16Mi")],
                                          "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]})


def steps(versions: list[dict[str, Any]]) -> list[Step]:
    """The (nodeName, nominatedNodeName) of each version, repeats dropped."""
    out: list[Step] = []
    for o in versions:
        step = (o["spec"].get("nodeName") or "", (o.get("status") or {}).get("nominatedNodeName") or "")
        if not out or out[-1] != step:
            out.append(step)
    return out


def trace(versions: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Every version as (resourceVersion, nodeName, nominatedNodeName), for the failure message."""
    return [(o["metadata"]["resourceVersion"], o["spec"].get("nodeName") or "",
             (o.get("status") or {}).get("nominatedNodeName") or "") for o in versions]


def watch_until_bound(plane: Kube, ns: str, pods: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Create the pods (side -> manifest) under a watch; every version of each until it is bound
    and the watch has seen the binding."""
    watch = PodWatch(plane, ns)
    try:
        for manifest in pods.values():
            create_pod(plane, ns, manifest)
        for manifest in pods.values():
            name: str = manifest["metadata"]["name"]
            wait_bound(plane, ns, name, timeout=60)

            def seen_bound(n: str = name) -> bool:
                return any(o["spec"].get("nodeName") for o in watch.versions(n))

            wait_for(f"the watch to see {name} bound", seen_bound, timeout=20)
    finally:
        watch.close()
    return {side: watch.versions(m["metadata"]["name"]) for side, m in pods.items()}


def test_a_wffc_claim_nominates_the_node_before_the_binding(plane: Kube, ns: str) -> None:
    claims = {side: wffc_storage(plane, ns, side) for side in SIDES}
    pods = {side: claim_pod(f"wffc-{side}", scheduler, claims[side]) for side, scheduler in SIDES.items()}
    versions = watch_until_bound(plane, ns, pods)
    got = {side: steps(v) for side, v in versions.items()}
    traces = {side: trace(v) for side, v in versions.items()}
    # kube-scheduler: nominated (PreBind has a claim to bind), then bound, the nomination cleared.
    assert got["ref"] == [("", ""), ("", NODE), (NODE, "")], f"scenario broken: {traces}"
    assert got["ours"] == got["ref"], traces
    # What each leaves: the pod bound with no nomination, its claim bound to its PV, the same condition.
    left = {}
    for side in SIDES:
        pod = get_pod(plane, ns, f"wffc-{side}")
        claim = plane.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{claims[side]}")
        cond = scheduled_condition(pod) or {}
        left[side] = (pod["spec"].get("nodeName"), pod["status"].get("nominatedNodeName"),
                      claim["spec"].get("volumeName", "").removesuffix(f"-{side}"),
                      cond.get("status"), cond.get("reason"))
    assert left["ref"] == (NODE, None, "nb", "True", None), left
    assert left["ours"] == left["ref"]


def test_a_pod_with_nothing_to_do_before_its_binding_is_never_nominated(plane: Kube, ns: str) -> None:
    pods = {side: pod_manifest(f"plain-{side}", scheduler, {"containers": [container(cpu="10m", memory="16Mi")]})
            for side, scheduler in SIDES.items()}
    versions = watch_until_bound(plane, ns, pods)
    nominated = {side: [s for s in steps(v) if s[1]] for side, v in versions.items()}
    assert nominated == {"ref": [], "ours": []}, {side: trace(v) for side, v in versions.items()}
