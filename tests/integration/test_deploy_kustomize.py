"""`kubectl apply -k deploy/` as the apiserver sees it (a server-side dry run: admission and validation of
every object, nothing created), and kubesched started as the Deployment starts it: the generated
ConfigMap's config and the container's args. deploy/rbac.yaml's rights under that identity are
test_deploy_rbac.py's."""

from __future__ import annotations

import json
import ssl
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kubesched_dev.localcluster.procs import free_port
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube
from tests.integration.sched_helpers import create_pod, pod_manifest, wait_bound

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"


def _rendered(plane: Kube) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(plane.kubectl("kustomize", str(DEPLOY))) if d]


def _deployed_args(plane: Kube, tmp_path: Path) -> list[str]:
    """The container's `kubesched run` args, --config pointing at a copy of the generated ConfigMap's
    file (where the pod mounts it is a path of the pod's)."""
    docs = _rendered(plane)
    [config_map] = [d for d in docs if d["kind"] == "ConfigMap"]
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    config = tmp_path / "config.yaml"
    config.write_text(config_map["data"]["config.yaml"])
    assert container["args"][0] == "run"
    return [f"--config={config}" if a.startswith("--config=") else a for a in container["args"][1:]]


def test_apply_k_passes_the_apiservers_dry_run(plane: Kube) -> None:
    out = json.loads(plane.kubectl("apply", "-k", str(DEPLOY), "--dry-run=server", "-o", "json"))
    objects = out["items"] if out.get("kind") == "List" else [out]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
            "Deployment", "PodDisruptionBudget"} <= by_kind.keys()
    [config_map] = by_kind["ConfigMap"]
    [deployment] = by_kind["Deployment"]
    assert config_map["metadata"]["name"].startswith("kubesched-config-")  # content hash added
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    assert {"name": "config", "configMap": {"name": config_map["metadata"]["name"], "defaultMode": 420}} in volumes
    # the apiserver defaulted and kept every field of the locked-down pod (an unknown one would be dropped)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["livenessProbe"]["httpGet"]["scheme"] == "HTTPS"
    assert by_kind["PodDisruptionBudget"][0]["spec"] == {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "kubesched"}},
        "unhealthyPodEvictionPolicy": "AlwaysAllow"}
    # a dry run: none of the namespaced objects exists afterwards
    for path in ("/apis/apps/v1/namespaces/kube-system/deployments/kubesched",
                 "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets/kubesched",
                 f"/api/v1/namespaces/kube-system/configmaps/{config_map['metadata']['name']}"):
        assert plane.request("GET", path)[0] == 404, path


def test_kubesched_runs_with_the_deployments_config_and_args(
        plane: Kube, tmp_path: Path, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    args = _deployed_args(plane, tmp_path)
    plane.delete(LEASE)
    # Its profile renamed, so the session's own kubesched keeps its pods; --leader-elect=true is the
    # config's value (the fixture turns election off when no such flag is given).
    proc = start_kubesched(*args, "--scheduler-name=deployed", "--leader-elect=true", ready="became leader")
    try:
        ns = plane.namespace("deployed")
        create_pod(plane, ns, pod_manifest("p", "deployed"))
        wait_bound(plane, ns, "p")
        assert plane.get(LEASE)["spec"]["holderIdentity"]
        assert "does not implement" not in proc.log(), proc.log()
        assert proc.stop() == 0
        assert plane.get(LEASE)["spec"]["holderIdentity"] == ""  # released on SIGTERM: a rollout fails over
        plane.delete(f"/api/v1/namespaces/{ns}/pods/p?gracePeriodSeconds=0")
    finally:
        proc.stop()
        plane.delete(LEASE)


def test_the_probes_answer_over_https_without_a_token(
        plane: Kube, tmp_path: Path, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    # as the kubelet probes: HTTPS, the certificate not verified, no credentials. The port is a free one
    # (10259 is one per machine); the address and everything else are the Deployment's.
    port = free_port()
    start_kubesched(*_deployed_args(plane, tmp_path), "--scheduler-name=probed", f"--secure-port={port}")
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=insecure))
    for path in ("/livez", "/readyz"):
        with opener.open(f"https://127.0.0.1:{port}{path}", timeout=10) as resp:
            assert resp.status == 200, path
