"""deploy/rbac.yaml gives kubesched every right it uses, its leader-election Lease included (run it with
the service account's token), and nothing else (asked of the apiserver's SubjectAccessReview)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kubesched_dev.localcluster.procs import free_port
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for

ROOT = Path(__file__).resolve().parents[2]
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"
SA = "system:serviceaccount:kube-system:kubesched"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]

# (group, resource, subresource, verb, namespace, name): every API call kubesched run makes.
ALLOWED = [
    *((group, resource, "", verb, "", "")
      for group, resource in (("", "pods"), ("", "nodes"), ("", "namespaces"), ("", "services"),
                              ("", "replicationcontrollers"), ("apps", "replicasets"),
                              ("apps", "statefulsets"), ("batch", "jobs"),
                              ("", "persistentvolumes"), ("", "persistentvolumeclaims"),
                              ("storage.k8s.io", "storageclasses"), ("storage.k8s.io", "csinodes"),
                              ("storage.k8s.io", "csidrivers"), ("storage.k8s.io", "csistoragecapacities"),
                              ("storage.k8s.io", "volumeattachments"),
                              ("policy", "poddisruptionbudgets"), ("resource.k8s.io", "resourceclaims"),
                              ("resource.k8s.io", "resourceslices"), ("resource.k8s.io", "deviceclasses"),
                              ("resource.k8s.io", "devicetaintrules"))
      for verb in ("list", "watch")),
    ("resource.k8s.io", "resourceclaims", "", "get", "some-ns", "some-claim"),
    ("resource.k8s.io", "resourceclaims", "", "patch", "some-ns", "some-claim"),
    ("resource.k8s.io", "resourceclaims", "status", "patch", "some-ns", "some-claim"),
    ("resource.k8s.io", "resourceclaims", "binding", "patch", "", ""),
    ("resource.k8s.io", "resourceclaims", "", "create", "some-ns", ""),  # extended resources backed by DRA
    ("resource.k8s.io", "resourceclaims", "", "delete", "some-ns", "some-claim"),
    ("", "pods", "binding", "create", "some-ns", "some-pod"),
    ("", "pods", "status", "patch", "some-ns", "some-pod"),
    ("", "pods", "", "delete", "some-ns", "some-pod"),
    ("", "persistentvolumes", "", "patch", "", "some-pv"),
    ("", "persistentvolumeclaims", "", "patch", "some-ns", "some-claim"),
    ("events.k8s.io", "events", "", "create", "some-ns", ""),
    ("events.k8s.io", "events", "", "patch", "some-ns", "some-event"),
    ("coordination.k8s.io", "leases", "", "create", "kube-system", ""),
    ("coordination.k8s.io", "leases", "", "get", "kube-system", "kubesched"),
    ("coordination.k8s.io", "leases", "", "update", "kube-system", "kubesched"),
    ("authentication.k8s.io", "tokenreviews", "", "create", "", ""),
    ("authorization.k8s.io", "subjectaccessreviews", "", "create", "", ""),
    ("", "configmaps", "", "get", "kube-system", "extension-apiserver-authentication"),
]
# What kube-scheduler's roles would grant, or a scheduler never needs.
DENIED = [
    ("", "nodes", "", "delete", "", "some-node"),
    ("", "nodes", "", "patch", "", "some-node"),  # only the optional, unbound kubesched-pool-taint role
    ("", "secrets", "", "get", "some-ns", "some-secret"),
    ("", "secrets", "", "list", "", ""),
    ("", "pods", "", "create", "some-ns", ""),
    ("", "pods", "", "get", "some-ns", "some-pod"),
    ("", "pods", "", "update", "some-ns", "some-pod"),
    ("apps", "deployments", "", "update", "some-ns", "some-deployment"),
    ("", "configmaps", "", "get", "kube-system", "some-config"),
    ("", "events", "", "create", "some-ns", ""),  # core/v1 events: kubesched writes events.k8s.io
    ("", "persistentvolumeclaims", "", "get", "some-ns", "some-claim"),  # the informers' stores answer
    ("", "persistentvolumes", "", "get", "", "some-pv"),
    ("", "persistentvolumes", "", "update", "", "some-pv"),  # PreBind patches, it never PUTs
    ("", "persistentvolumeclaims", "", "update", "some-ns", "some-claim"),
    ("", "persistentvolumeclaims", "", "delete", "some-ns", "some-claim"),
    ("storage.k8s.io", "csinodes", "", "update", "", "some-node"),
    ("storage.k8s.io", "storageclasses", "", "create", "", ""),
    ("storage.k8s.io", "volumeattachments", "", "delete", "", "some-attachment"),
    ("policy", "poddisruptionbudgets", "", "update", "some-ns", "some-pdb"),  # read only
    ("", "pods", "eviction", "create", "some-ns", "some-pod"),  # victims are deleted, not evicted
    ("coordination.k8s.io", "leases", "", "get", "kube-system", "kube-scheduler"),
    ("coordination.k8s.io", "leases", "", "update", "kube-system", "kube-scheduler"),
    ("coordination.k8s.io", "leases", "", "create", "default", ""),
    ("resource.k8s.io", "resourceclaims", "", "update", "some-ns", "some-claim"),  # patched, never PUT
    ("resource.k8s.io", "resourceclaims", "", "deletecollection", "some-ns", ""),
    ("resource.k8s.io", "resourceslices", "", "patch", "", "some-slice"),
]


def test_kubesched_runs_with_the_deploy_rbac(plane: Kube, tmp_path: Path,
                                            start_kubesched: Callable[..., KubeschedProcess]) -> None:
    # the bindings to kube-scheduler's roles an earlier deploy/rbac.yaml made, were they still there
    plane.kubectl("delete", "clusterrolebinding", "kubesched-as-kube-scheduler", "kubesched-as-volume-scheduler",
                  "--ignore-not-found")
    plane.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
    kubeconfig = plane.service_account_kubeconfig("kube-system", "kubesched", tmp_path / "sa.kubeconfig")
    token = json.loads(kubeconfig.read_text())["users"][0]["user"]["token"]
    # with leader election on its default lock, so the Lease rules are exercised too
    plane.delete(LEASE)
    port = free_port()  # the secure port, so its reviews and client CA lookup run under the role too
    proc = start_kubesched(f"--kubeconfig={kubeconfig}", "--scheduler-name=rbac-sched", "--leader-elect",
                           f"--secure-port={port}", "--bind-address=127.0.0.1", ready="became leader")
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
    # its own token: the TokenReview passes (else 401) and the SubjectAccessReview answers (else 500)
    assert _metrics_status(port, token) == 403
    log = proc.log()
    assert "forbidden" not in log.lower(), log
    assert " 403" not in log, log
    assert proc.stop() == 0
    assert plane.get(LEASE)["spec"]["holderIdentity"] == ""  # released
    plane.delete(LEASE)
    for name in ("fits", "too-big"):
        plane.delete(f"/api/v1/namespaces/{ns}/pods/{name}?gracePeriodSeconds=0")
    # Beside the run above: every right it used is granted, and nothing more (PodTopologySpread's owner
    # informers included: kubesched synced them before binding "fits").
    assert [a for a in ALLOWED if not _allowed(plane, *a)] == []
    assert [d for d in DENIED if _allowed(plane, *d)] == []


def _metrics_status(port: int, token: str) -> int:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    req = urllib.request.Request(f"https://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {token}"})
    try:
        with opener.open(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _allowed(plane: Kube, group: str, resource: str, subresource: str, verb: str, namespace: str,
             name: str) -> bool:
    attributes = {"group": group, "resource": resource, "subresource": subresource, "verb": verb,
                  "namespace": namespace, "name": name}
    review = plane.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": SA, "groups": SA_GROUPS,
                 "resourceAttributes": {k: v for k, v in attributes.items() if v}}})
    return review["status"].get("allowed") is True
