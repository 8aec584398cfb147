"""deploy/rbac.yaml gives kubesched every right it uses, its leader-election Lease included: run it with
the service account's token."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import yaml

from .conftest import KubeschedProcess
from .kube import Kube, wait_for

ROOT = Path(__file__).resolve().parents[2]
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"


def test_kubesched_runs_with_the_deploy_rbac(plane: Kube, tmp_path: Path,
                                            start_kubesched: Callable[..., KubeschedProcess]) -> None:
    plane.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
    token = plane.create("/api/v1/namespaces/kube-system/serviceaccounts/kubesched/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 3600}})["status"]["token"]
    ca = (Path(plane.cluster.dir) / "pki" / "ca.crt").read_bytes()
    kubeconfig = tmp_path / "sa.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "c", "cluster": {"server": plane.server,
                                               "certificate-authority-data": base64.b64encode(ca).decode()}}],
        "users": [{"name": "kubesched", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "kubesched"}}],
    }))
    # with leader election on its default lock, so the Lease rules are exercised too
    plane.delete(LEASE)
    proc = start_kubesched(f"--kubeconfig={kubeconfig}", "--scheduler-name=rbac-sched", "--leader-elect",
                           ready="became leader")
    ns = plane.namespace("rbac")
    # "too-big" must fit no node any test adds to the shared plane (some add 64-CPU nodes).
    for name, cpu in (("fits", "100m"), ("too-big", "100000")):
        plane.create(f"/api/v1/namespaces/{ns}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": "rbac-sched",
                     "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}})
    wait_for("the pod bound", lambda: plane.get(f"/api/v1/namespaces/{ns}/pods/fits")["spec"].get("nodeName"))
    wait_for("the Unschedulable condition", lambda: any(
        c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
        for c in plane.get(f"/api/v1/namespaces/{ns}/pods/too-big")["status"].get("conditions", [])))
    events = wait_for("both events", lambda: (
        items if len(items := plane.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]) >= 2 else None))
    assert {e["reason"] for e in events} == {"Scheduled", "FailedScheduling"}
    log = proc.log()
    assert "forbidden" not in log.lower(), log
    assert " 403" not in log, log
    assert proc.stop() == 0
    assert plane.get(LEASE)["spec"]["holderIdentity"] == ""  # released
    plane.delete(LEASE)
    for name in ("fits", "too-big"):
        plane.delete(f"/api/v1/namespaces/{ns}/pods/{name}?gracePeriodSeconds=0")
    # PodTopologySpread's owner informers: kubesched synced them before binding "fits"; the rights
    # come from system:kube-scheduler.
    for group, resource in (("", "services"), ("", "replicationcontrollers"), ("apps", "replicasets"),
                            ("apps", "statefulsets")):
        for verb in ("list", "watch"):
            review = plane.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", {
                "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": "system:serviceaccount:kube-system:kubesched",
                         "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                    "system:authenticated"],
                         "resourceAttributes": {"group": group, "resource": resource, "verb": verb}}})
            assert review["status"].get("allowed") is True, (resource, verb, review["status"])
