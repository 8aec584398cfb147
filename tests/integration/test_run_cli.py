"""`kubesched run` as a user meets it: probes and metrics, config errors, the unimplemented warning."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kubesched import __version__
from kubesched_dev.localcluster.procs import free_port
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for


def _get(url: str) -> tuple[int, str]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_probes_and_metrics(plane: Kube, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    port = free_port()
    start_kubesched("--scheduler-name=metrics-sched", f"--serve-address=127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    assert _get(f"{base}/healthz") == (200, "ok")
    assert _get(f"{base}/readyz") == (200, "ok")
    ns = plane.namespace("run-metrics")
    plane.create(f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"schedulerName": "metrics-sched", "containers": [{"name": "c", "image": "pause"}]}})
    wait_for("the pod bound", lambda: plane.get(f"/api/v1/namespaces/{ns}/pods/p")["spec"].get("nodeName"))
    body = wait_for("the scheduled counter", lambda: (
        text if 'scheduler_schedule_attempts_total{profile="metrics-sched",result="scheduled"} 1.0'
        in (text := _get(f"{base}/metrics")[1]) else None))
    assert 'scheduler_pending_pods{queue="active"}' in body
    assert "scheduler_scheduling_algorithm_duration_seconds_count 1.0" in body


def test_unimplemented_fields_are_named_in_one_warning(plane: Kube, tmp_path: Path,
                                                       start_kubesched: Callable[..., KubeschedProcess]) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n  - schedulerName: warned\n    plugins:\n      multiPoint:\n        enabled:\n"
        "          - name: PodGroupPodsCount\n          - name: PodTopologySpread\n          - name: InterPodAffinity\n"
        "          - name: VolumeBinding\n")
    proc = start_kubesched(f"--config={config}")
    warnings = [line for line in proc.log().splitlines() if "does not implement" in line]
    assert len(warnings) == 1, proc.log()
    assert "PodGroupPodsCount" in warnings[0]
    assert "VolumeBinding" not in warnings[0]  # implemented now
    assert "PodTopologySpread" not in warnings[0]  # implemented now
    assert "InterPodAffinity" not in warnings[0]  # implemented now


def test_bad_config_stops_with_the_field_path(plane: Kube, tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "percentageOfNodesToScore: 150\n")
    proc = subprocess.run([sys.executable, "-m", "kubesched", "run", f"--kubeconfig={plane.kubeconfig}",
                           f"--config={config}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "percentageOfNodesToScore" in proc.stderr, proc.stderr
    assert "150" in proc.stderr, proc.stderr


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "kubesched", "version"], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith(f"kubesched {__version__} (local control plane: Kubernetes v1.37.2")
