"""VolumeBinding on the real plane, with its real PV controller (kube-controller-manager), side by
side with the reference kube-scheduler: each scenario gives each scheduler its own copy of the
storage (a storage class, PVs and claims of its own, so that the two never compete for one PV),
then compares where the pods went, which PV each claim got, and the whole message when nothing fits.

The session plane's nodes: kind-control-plane (tainted), kind-worker, kind-worker2, kind-worker3;
every node has its kubernetes.io/hostname label, which the local PVs' node affinity names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    compare_failure_message,
    container,
    create_pod,
    get_pod,
    pod_manifest,
    poll,
    scheduled_condition,
    wait_bound,
)

NS = "volume-binding"
HOSTNAME = "kubernetes.io/hostname"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
WFFC = "WaitForFirstConsumer"
WORKERS = ("kind-worker", "kind-worker2", "kind-worker3")
SIDES = {"ref": None, "ours": KUBESCHED}  # side -> schedulerName (None: the default scheduler)


@pytest.fixture(scope="module")
def ns(plane: Kube, kubesched: KubeschedProcess) -> Iterator[str]:
    plane.namespace(NS)
    yield NS
    plane.delete(f"/api/v1/namespaces/{NS}")
    for pv in plane.get("/api/v1/persistentvolumes?labelSelector=test%3Dvolume-binding")["items"]:
        plane.delete(f"/api/v1/persistentvolumes/{pv['metadata']['name']}")


def storage_class(kube: Kube, name: str, mode: str = WFFC, provisioner: str = NO_PROVISIONER,
                  **extra: Any) -> str:
    kube.create("/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
        "provisioner": provisioner, "volumeBindingMode": mode, **extra})
    return name


def local_pv(kube: Kube, name: str, size: str, node: str, sc: str, modes: tuple[str, ...] = ("ReadWriteOnce",)) -> str:
    kube.create("/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {"test": "volume-binding"}},
        "spec": {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": sc,
                 "persistentVolumeReclaimPolicy": "Retain", "local": {"path": f"/mnt/{name}"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}}})
    return name


def claim_manifest(name: str, size: str, sc: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if sc is not None:
        spec["storageClassName"] = sc
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}, "spec": spec}


def claim(kube: Kube, ns: str, name: str, size: str, sc: str | None) -> str:
    kube.create(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim_manifest(name, size, sc))
    return name


def get_claim(kube: Kube, ns: str, name: str) -> dict[str, Any]:
    pvc: dict[str, Any] = kube.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")
    return pvc


def wait_claim_bound(kube: Kube, ns: str, name: str, timeout: float = 30) -> str:
    """The PV the PV controller bound the claim to."""
    def bound() -> str | None:
        pvc = get_claim(kube, ns, name)
        return pvc["spec"].get("volumeName") if pvc.get("status", {}).get("phase") == "Bound" else None
    return wait_for(f"claim {ns}/{name} Bound", bound, timeout=timeout)


def claim_pod(name: str, scheduler: str | None, *claims: str) -> dict[str, Any]:
    spec = {"containers": [container(cpu="10m", memory="16Mi")],
            "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]}
    return pod_manifest(name, scheduler, spec)


def test_plane_runs_the_pv_controller(plane: Kube, ns: str) -> None:
    # An Immediate claim and a PV that fits it: the PV controller binds them with no scheduler.
    sc = storage_class(plane, "vb-immediate-probe", mode="Immediate")
    local_pv(plane, "vb-probe", "1Gi", "kind-worker", sc)
    claim(plane, ns, "probe", "1Gi", sc)
    assert wait_claim_bound(plane, ns, "probe") == "vb-probe"


def test_bound_local_pv_pins_its_pod(plane: Kube, ns: str) -> None:
    # Immediate local PVs on kind-worker2, bound before any pod: the pod must follow its PV.
    sc = storage_class(plane, "vb-pinned", mode="Immediate")
    for side, scheduler in SIDES.items():
        local_pv(plane, f"vb-pinned-{side}", "1Gi", "kind-worker2", sc)
        claim(plane, ns, f"pinned-{side}", "1Gi", sc)
        wait_claim_bound(plane, ns, f"pinned-{side}")
        create_pod(plane, ns, claim_pod(f"pinned-{side}", scheduler, f"pinned-{side}"))
    assert wait_bound(plane, ns, "pinned-ref") == "kind-worker2"
    assert wait_bound(plane, ns, "pinned-ours") == "kind-worker2"


def test_bound_pv_on_no_usable_node_has_kube_schedulers_message(plane: Kube, ns: str) -> None:
    # Bound to PVs on the tainted control-plane node: the workers fail VolumeBinding, it fails its taint.
    sc = storage_class(plane, "vb-conflict", mode="Immediate")
    for side in SIDES:
        local_pv(plane, f"vb-conflict-{side}", "1Gi", "kind-control-plane", sc)
        claim(plane, ns, f"conflict-{side}", "1Gi", sc)
        wait_claim_bound(plane, ns, f"conflict-{side}")
    compare_failure_message(plane, ns, claim_pod("conflict-ref", None, "conflict-ref"),
                            claim_pod("conflict-ours", KUBESCHED, "conflict-ours"),
                            reasons=("3 node(s) didn't match PersistentVolume's node affinity",))


def _wffc_case(plane: Kube, ns: str, case: str, pvs: list[tuple[str, str, str]], size: str) -> dict[str, str]:
    """One WFFC class per side with the same PVs (name suffix, size, node) and a claim of `size` each;
    returns the class name per side."""
    classes = {}
    for side in SIDES:
        classes[side] = storage_class(plane, f"vb-{case}-{side}")
        for suffix, pv_size, node in pvs:
            local_pv(plane, f"vb-{case}-{side}-{suffix}", pv_size, node, classes[side])
        claim(plane, ns, f"{case}-{side}", size, classes[side])
    return classes


def test_wffc_claim_gets_the_smallest_pv_that_fits_on_its_node(plane: Kube, ns: str) -> None:
    _wffc_case(plane, ns, "smallest", [("small", "500Mi", "kind-worker"), ("fits", "2Gi", "kind-worker"),
                                       ("large", "5Gi", "kind-worker")], "1Gi")
    got = {}
    for side, scheduler in SIDES.items():
        create_pod(plane, ns, claim_pod(f"smallest-{side}", scheduler, f"smallest-{side}"))
    for side in SIDES:
        node = wait_bound(plane, ns, f"smallest-{side}", timeout=40)
        pv = wait_claim_bound(plane, ns, f"smallest-{side}")
        got[side] = (node, pv.removeprefix(f"vb-smallest-{side}-"))
    assert got["ref"] == ("kind-worker", "fits"), f"scenario broken: kube-scheduler chose {got['ref']}"
    assert got["ours"] == got["ref"]


def test_wffc_node_choice_follows_the_volumes_score(plane: Kube, ns: str) -> None:
    # One PV on each of two nodes: StorageCapacityScoring (on in v1.37) prefers the least utilized.
    _wffc_case(plane, ns, "score", [("w1", "2Gi", "kind-worker"), ("w2", "10Gi", "kind-worker2")], "1Gi")
    got = {}
    for side, scheduler in SIDES.items():
        create_pod(plane, ns, claim_pod(f"score-{side}", scheduler, f"score-{side}"))
    for side in SIDES:
        node = wait_bound(plane, ns, f"score-{side}", timeout=40)
        got[side] = (node, wait_claim_bound(plane, ns, f"score-{side}").removeprefix(f"vb-score-{side}-"))
    assert got["ours"] == got["ref"]


def test_no_pv_fits_has_kube_schedulers_message(plane: Kube, ns: str) -> None:
    _wffc_case(plane, ns, "nofit", [("a", "500Mi", "kind-worker"), ("b", "500Mi", "kind-worker2")], "1Gi")
    compare_failure_message(plane, ns, claim_pod("nofit-ref", None, "nofit-ref"),
                            claim_pod("nofit-ours", KUBESCHED, "nofit-ours"),
                            reasons=("node(s) didn't find available persistent volumes to bind",))
    # A PV that fits arrives: its event requeues the pods, which then get it.
    for side in SIDES:
        local_pv(plane, f"vb-nofit-{side}-c", "2Gi", "kind-worker3", f"vb-nofit-{side}")
    for side in SIDES:
        assert wait_bound(plane, ns, f"nofit-{side}", timeout=40) == "kind-worker3"
        assert wait_claim_bound(plane, ns, f"nofit-{side}") == f"vb-nofit-{side}-c"


def test_missing_claim_has_kube_schedulers_message(plane: Kube, ns: str) -> None:
    message = compare_failure_message(plane, ns, claim_pod("missing-ref", None, "no-such-claim"),
                                      claim_pod("missing-ours", KUBESCHED, "no-such-claim"))
    assert 'persistentvolumeclaim "no-such-claim" not found' in message


def test_unbound_immediate_claim_has_kube_schedulers_message(plane: Kube, ns: str) -> None:
    sc = storage_class(plane, "vb-unbound-immediate", mode="Immediate")
    claim(plane, ns, "unbound-immediate", "1Gi", sc)  # no PV: the PV controller cannot bind it
    compare_failure_message(plane, ns, claim_pod("immediate-ref", None, "unbound-immediate"),
                            claim_pod("immediate-ours", KUBESCHED, "unbound-immediate"),
                            reasons=("pod has unbound immediate PersistentVolumeClaims",))


def test_a_class_created_later_requeues_the_pods_of_its_claims(plane: Kube, ns: str) -> None:
    """The StorageClass queueing hint: a claim of a class that does not exist yet is read as an
    unbound Immediate one; the class, created later as WaitForFirstConsumer, requeues the pod
    (kube-scheduler's isSchedulableAfterStorageClassChange says Queue for a new class), which is then
    rejected for want of a PV; a PV that fits, created after, gets it scheduled on that PV's node."""
    for side in SIDES:
        claim(plane, ns, f"late-{side}", "1Gi", f"vb-late-{side}")
    compare_failure_message(plane, ns, claim_pod("late-ref", None, "late-ref"),
                            claim_pod("late-ours", KUBESCHED, "late-ours"),
                            reasons=("pod has unbound immediate PersistentVolumeClaims",))
    for side in SIDES:
        storage_class(plane, f"vb-late-{side}")

    def message(name: str) -> str:
        return str((scheduled_condition(get_pod(plane, ns, name)) or {}).get("message", ""))

    no_pv = "node(s) didn't find available persistent volumes to bind"
    want = wait_for("kube-scheduler's message after the class", lambda: no_pv in message("late-ref") and
                    message("late-ref"), timeout=30)
    assert poll(lambda: message("late-ours") == want, timeout=30), \
        f"kubesched {message('late-ours')!r}\n  kube-scheduler {want!r}"
    for side in SIDES:
        local_pv(plane, f"vb-late-{side}-pv", "2Gi", "kind-worker3", f"vb-late-{side}")
    for side in SIDES:
        assert wait_bound(plane, ns, f"late-{side}", timeout=40) == "kind-worker3"
        assert wait_claim_bound(plane, ns, f"late-{side}") == f"vb-late-{side}-pv"


def test_provisioned_claim_gets_the_selected_node(plane: Kube, ns: str) -> None:
    # A class for a provisioner that never comes, allowed on kind-worker2 only: both schedulers give
    # the claim volume.kubernetes.io/selected-node and then wait in PreBind; the pods stay unbound.
    topology = [{"matchLabelExpressions": [{"key": HOSTNAME, "values": ["kind-worker2"]}]}]
    for side, scheduler in SIDES.items():
        sc = storage_class(plane, f"vb-provisioned-{side}", provisioner="example.com/absent",
                           allowedTopologies=topology)
        claim(plane, ns, f"provisioned-{side}", "1Gi", sc)
        create_pod(plane, ns, claim_pod(f"provisioned-{side}", scheduler, f"provisioned-{side}"))

    def selected(side: str) -> str | None:
        return (get_claim(plane, ns, f"provisioned-{side}")["metadata"].get("annotations") or {}).get(
            "volume.kubernetes.io/selected-node")

    assert wait_for("kube-scheduler's selected node", lambda: selected("ref")) == "kind-worker2"
    assert wait_for("kubesched's selected node", lambda: selected("ours")) == "kind-worker2"
    for side in SIDES:
        assert not get_pod(plane, ns, f"provisioned-{side}")["spec"].get("nodeName")
        plane.delete(f"/api/v1/namespaces/{ns}/pods/provisioned-{side}?gracePeriodSeconds=0")


def _stateful_set(name: str, sc: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": 3, "serviceName": name, "selector": {"matchLabels": labels},
                     "podManagementPolicy": "Parallel",
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "schedulerName": KUBESCHED, "terminationGracePeriodSeconds": 0,
                         "containers": [container(cpu="10m", memory="16Mi",
                                                  volumeMounts=[{"name": "data", "mountPath": "/data"}])]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "storageClassName": sc,
                         "resources": {"requests": {"storage": "1Gi"}}}}]}}


def test_stateful_set_replicas_follow_their_local_pvs(plane: Kube, ns: str) -> None:
    sc = storage_class(plane, "vb-sts")
    for node in WORKERS:
        local_pv(plane, f"vb-sts-{node}", "1Gi", node, sc)
    plane.create(f"/apis/apps/v1/namespaces/{ns}/statefulsets", _stateful_set("db", sc))
    replicas = [f"db-{i}" for i in range(3)]

    def placement() -> dict[str, str] | None:
        pods = {p["metadata"]["name"]: p for p in plane.pods(ns, "app=db")}
        if set(pods) != set(replicas) or any(p.get("status", {}).get("phase") != "Running" for p in pods.values()):
            return None
        return {name: p["spec"]["nodeName"] for name, p in pods.items()}

    placed = wait_for("3 replicas Running", placement, timeout=90)
    for pod, node in placed.items():
        # Each replica's claim is Bound to the PV on the replica's own node.
        assert wait_claim_bound(plane, ns, f"data-{pod}") == f"vb-sts-{node}"
    assert sorted(placed.values()) == sorted(WORKERS)
    # A deleted replica comes back (a new pod of the same name), and its claim's PV brings it to the
    # same node.
    old_uid = get_pod(plane, ns, "db-1")["metadata"]["uid"]
    plane.delete(f"/api/v1/namespaces/{ns}/pods/db-1?gracePeriodSeconds=0")

    def replaced() -> str | None:
        status, pod = plane.request("GET", f"/api/v1/namespaces/{ns}/pods/db-1")
        if status != 200 or pod["metadata"]["uid"] == old_uid or pod.get("status", {}).get("phase") != "Running":
            return None
        return str(pod["spec"]["nodeName"])

    again = wait_for("a new db-1 Running", replaced, timeout=60)
    assert again == placed["db-1"]
    assert get_pod(plane, ns, "db-1")["spec"]["schedulerName"] == KUBESCHED
    pending = [p["metadata"]["name"] for p in plane.pods(ns, "app=db") if p["status"].get("phase") != "Running"]
    assert pending == []
