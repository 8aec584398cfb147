"""Objects and faults from real clusters that used to stop kubesched or lose pods, on the real plane:
pods with pod (anti-)affinity anywhere, a node image without names, a pod bound by hand with a
request past int64, a kubeconfig with a quoted boolean, credentials that break mid-run."""

from __future__ import annotations

import base64
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.model.quantity import milli_value
from kubesched_dev.localcluster.topology import NodeSpec
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import container, create_nodes, create_pod, delete_nodes, pod_manifest, wait_bound

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
AFFINITIES = {
    "required-affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]}},
    "preferred-affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": TERM}]}},
    "required-anti-affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**TERM, "namespaceSelector": {}}]}},
    "preferred-anti-affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {**TERM, "namespaces": ["kube-system"],
                                            "matchLabelKeys": ["pod-template-hash"]}}]}},
}


def _problems(proc: KubeschedProcess) -> list[str]:
    words = ("skipped", "retrying", "Traceback", "relisted")
    return [line for line in proc.log().splitlines() if any(w in line for w in words)]


def test_pods_with_pod_affinity_elsewhere_leave_kubesched_scheduling(
        plane: Kube, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    other = plane.namespace("odd-affinity-others")
    for name, affinity in AFFINITIES.items():
        # For a scheduler nobody runs: they stay pending, in the list every kubesched reads.
        create_pod(plane, other, pod_manifest(name, "nobody", {"affinity": affinity}, labels={"app": "web"}))
    proc = start_kubesched("--scheduler-name=affinity-sched")  # lists them at start
    ns = plane.namespace("odd-affinity")
    create_pod(plane, ns, pod_manifest("mine", "affinity-sched"))
    wait_bound(plane, ns, "mine")
    # And through the watch: more such pods while it runs, then another pod of its own.
    for name, affinity in AFFINITIES.items():
        create_pod(plane, other, pod_manifest(f"{name}-late", "nobody", {"affinity": affinity}))
    create_pod(plane, ns, pod_manifest("mine-too", "affinity-sched"))
    wait_bound(plane, ns, "mine-too")
    assert _problems(proc) == []
    assert proc.proc.poll() is None


@pytest.fixture
def odd_node(plane: Kube) -> Iterator[str]:
    spec = NodeSpec("odd-node", capacity={"cpu": "8", "memory": "16Gi", "pods": "110"})
    manifest = spec.manifest()
    manifest["status"]["images"] = [{"names": None, "sizeBytes": 1},
                                    {"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 2}]
    create_nodes(plane, [manifest])
    try:
        yield spec.name
    finally:
        delete_nodes(plane, [spec.name])


def test_odd_node_and_huge_bound_pod_leave_scheduling_correct(
        plane: Kube, odd_node: str, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    raw = plane.kubectl("get", "--raw", f"/api/v1/nodes/{odd_node}")
    assert '{"names":null,"sizeBytes":1}' in raw  # as Go writes it: no omitempty on names
    ns = plane.namespace("odd-huge")
    create_pod(plane, ns, pod_manifest("huge", None, {"nodeName": odd_node, "containers": [
        container(cpu="10P", memory="100Pi", extra={"example.com/widgets": "9223372036854775807"})]}))
    proc = start_kubesched("--scheduler-name=huge-sched")
    names = [f"p{i}" for i in range(12)]
    for name in names:
        create_pod(plane, ns, pod_manifest(name, "huge-sched", {"containers": [container(cpu="100m")]}))
    placed = {name: wait_bound(plane, ns, name) for name in names}
    assert odd_node not in placed.values(), placed  # its cpu is taken: 10P on 8 cpus
    # No node holds more cpu than it has, counting every bound pod of every namespace.
    nodes = {n["metadata"]["name"]: milli_value(n["status"]["allocatable"]["cpu"])
             for n in plane.get("/api/v1/nodes")["items"]}
    used: dict[str, int] = {}
    for p in plane.get("/api/v1/pods")["items"]:
        node = p["spec"].get("nodeName")
        if node and node != odd_node and p["status"].get("phase") not in ("Succeeded", "Failed"):
            for c in p["spec"]["containers"]:
                used[node] = used.get(node, 0) + milli_value(
                    ((c.get("resources") or {}).get("requests") or {}).get("cpu", "0"))
    assert all(used[n] <= nodes[n] for n in used), (used, nodes)
    assert _problems(proc) == []
    plane.delete(f"/api/v1/namespaces/{ns}/pods/huge?gracePeriodSeconds=0")


def _kubeconfig(plane: Kube, path: Path, user: dict[str, Any], **cluster: Any) -> Path:
    ca = (Path(plane.cluster.dir) / "pki" / "ca.crt").read_bytes()
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "c", "cluster": {"server": plane.server,
                                               "certificate-authority-data": base64.b64encode(ca).decode(),
                                               **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
    }))
    return path


def test_a_quoted_false_is_refused_not_trusted(plane: Kube, tmp_path: Path) -> None:
    kubeconfig = _kubeconfig(plane, tmp_path / "quoted.kubeconfig", {"token": "t"},
                             **{"insecure-skip-tls-verify": "false"})
    proc = subprocess.run([sys.executable, "-m", "kubesched", "run", f"--kubeconfig={kubeconfig}"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "insecure-skip-tls-verify" in proc.stderr, proc.stderr
    assert "boolean" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


EXEC_PLUGIN = """#!/bin/sh
# An exec credential plugin whose tokens last 3 s; it fails while the file `broken` exists.
dir=$(dirname "$0")
if [ -e "$dir/broken" ]; then echo "token service unreachable" >&2; exit 1; fi
exp=$(date -u -d @$(( $(date +%s) + 3 )) +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",'
printf '"status":{"token":"%s","expirationTimestamp":"%s"}}' "$(cat "$dir/token")" "$exp"
"""


def test_broken_credentials_mid_run_recover_or_exit_non_zero(
        plane: Kube, tmp_path: Path, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    plane.kubectl("apply", "-f", str(ROOT / "deploy" / "rbac.yaml"))
    token = plane.create("/api/v1/namespaces/kube-system/serviceaccounts/kubesched/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 3600}})["status"]["token"]
    (tmp_path / "token").write_text(token)
    plugin = tmp_path / "get-token"
    plugin.write_text(EXEC_PLUGIN)
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    kubeconfig = _kubeconfig(plane, tmp_path / "exec.kubeconfig", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin), "interactiveMode": "Never"}})
    proc = start_kubesched(f"--kubeconfig={kubeconfig}", "--scheduler-name=cred-sched",
                           "--failure-exit-after=10")
    ns = plane.namespace("odd-credentials")
    create_pod(plane, ns, pod_manifest("before", "cred-sched"))
    wait_bound(plane, ns, "before")

    # Broken for a while, then mended: the pod that came meanwhile is bound, the process lives.
    broken = tmp_path / "broken"
    broken.touch()
    time.sleep(4)  # the last good token has expired
    create_pod(plane, ns, pod_manifest("during", "cred-sched"))
    wait_for("a failed binding", lambda: "binding failed" in proc.log(), timeout=20)
    broken.unlink()
    wait_bound(plane, ns, "during", timeout=30)
    assert proc.proc.poll() is None

    # Broken for good: not a live process that schedules nothing, but a non-zero exit.
    broken.touch()
    time.sleep(4)
    create_pod(plane, ns, pod_manifest("after", "cred-sched"))
    wait_for("kubesched to exit", lambda: proc.proc.poll() is not None, timeout=60)
    assert proc.proc.returncode == 1
    assert "kubesched stopped: no credentials for" in proc.log(), proc.log()[-3000:]
