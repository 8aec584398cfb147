"""kubesched's /metrics against the reference kube-scheduler's on the same plane: every scheduler_* (and
process_*) family kubesched exports exists in kube-scheduler's with the same TYPE, label names and
histogram buckets, after each has scheduled one pod and left one unschedulable.

kube-scheduler serves /metrics over HTTPS with delegated authentication and authorization: the
plane's admin client certificate (system:masters) passes both."""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Callable
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from kubesched_dev.localcluster.procs import free_port
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for

REQUIRED = (
    "scheduler_schedule_attempts", "scheduler_scheduling_attempt_duration_seconds",
    "scheduler_scheduling_algorithm_duration_seconds", "scheduler_pending_pods",
    "scheduler_pod_scheduling_sli_duration_seconds", "scheduler_pod_scheduling_attempts",
    "scheduler_queue_incoming_pods", "scheduler_unschedulable_pods",
    "scheduler_framework_extension_point_duration_seconds", "scheduler_preemption_attempts",
    "scheduler_preemption_victims", "scheduler_cache_size", "scheduler_plugin_execution_duration_seconds",
    "process_cpu_seconds",
    "process_resident_memory_bytes", "process_start_time_seconds",
)

# family name -> (type, label names but le, bucket bounds)
Shape = tuple[str, frozenset[str], frozenset[float]]


def _shapes(text: str) -> dict[str, Shape]:
    shapes: dict[str, Shape] = {}
    for family in text_string_to_metric_families(text):
        labels = frozenset(k for s in family.samples for k in s.labels if k not in ("le", "quantile"))
        buckets = frozenset(float(s.labels["le"]) for s in family.samples if s.name.endswith("_bucket"))
        shapes[family.name] = (family.type, labels, buckets)
    return shapes


def _kube_scheduler_metrics(plane: Kube) -> str:
    pki = Path(plane.cluster.dir) / "pki"
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # its serving certificate is self-signed in its --cert-dir
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    port = plane.cluster.ports["kube-scheduler"]
    with opener.open(f"https://127.0.0.1:{port}/metrics", timeout=10) as resp:
        return str(resp.read().decode())


def _kubesched_metrics(base: str) -> str:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{base}/metrics", timeout=10) as resp:
        return str(resp.read().decode())


def _pods(plane: Kube, ns: str, scheduler: str) -> None:
    for name, cpu in (("fits", "10m"), ("too-big", "100000")):
        plane.create(f"/api/v1/namespaces/{ns}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{scheduler}-{name}"},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}})
    wait_for(f"{scheduler}'s pod bound",
             lambda: plane.get(f"/api/v1/namespaces/{ns}/pods/{scheduler}-fits")["spec"].get("nodeName"))


PLUGIN_METRIC = "scheduler_plugin_execution_duration_seconds"


def _until_plugins_sampled(plane: Kube, ns: str, base: str) -> None:
    """Both record plugin durations in one cycle in ten (sampled): schedule small pods with each
    until both show the family (one in a thousand such runs needs more than 60 pods each)."""
    for batch in range(12):
        if PLUGIN_METRIC in _kube_scheduler_metrics(plane) and PLUGIN_METRIC in _kubesched_metrics(base):
            return
        for scheduler in ("default-scheduler", "parity-sched"):
            for i in range(10):
                plane.create(f"/api/v1/namespaces/{ns}/pods", {
                    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{scheduler}-sample-{batch}-{i}"},
                    "spec": {"schedulerName": scheduler, "containers": [
                        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1m"}}}]}})
        names = [f"{s}-sample-{batch}-{i}" for s in ("default-scheduler", "parity-sched") for i in range(10)]

        def all_bound(names: list[str] = names) -> bool:
            return all(plane.get(f"/api/v1/namespaces/{ns}/pods/{n}")["spec"].get("nodeName") for n in names)

        wait_for("the sample pods bound", all_bound)
    raise AssertionError(f"{PLUGIN_METRIC} missing after 120 pods each")


def test_kubesched_metrics_are_kube_schedulers(plane: Kube, start_kubesched: Callable[..., KubeschedProcess]) -> None:
    port = free_port()
    start_kubesched("--scheduler-name=parity-sched", f"--serve-address=127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    ns = plane.namespace("metrics-parity")
    _pods(plane, ns, "default-scheduler")
    _pods(plane, ns, "parity-sched")
    _until_plugins_sampled(plane, ns, base)

    def both_failed_once(text: str, profile: str) -> bool:
        return f'scheduler_schedule_attempts_total{{profile="{profile}",result="unschedulable"}}' in text

    reference = _shapes(wait_for("kube-scheduler's metrics after its attempts", lambda: (
        text if both_failed_once(text := _kube_scheduler_metrics(plane), "default-scheduler")
        and "scheduler_cache_size" in text and "scheduler_pod_scheduling_sli_duration_seconds" in text
        else None)))
    ours = _shapes(wait_for("kubesched's metrics after its attempts", lambda: (
        text if both_failed_once(text := _kubesched_metrics(base), "parity-sched")
        and "scheduler_pod_scheduling_sli_duration_seconds_count" in text else None)))

    missing = [name for name in REQUIRED if name not in ours]
    assert not missing, f"kubesched lacks {missing}"
    problems = []
    for name, (kind, labels, buckets) in sorted(ours.items()):
        if not name.startswith(("scheduler_", "process_")):
            continue
        if name not in reference:
            problems.append(f"{name}: not in kube-scheduler's /metrics")
            continue
        ref_kind, ref_labels, ref_buckets = reference[name]
        if kind != ref_kind:
            problems.append(f"{name}: TYPE {kind}, kube-scheduler's {ref_kind}")
        if labels and ref_labels and labels != ref_labels:
            problems.append(f"{name}: labels {sorted(labels)}, kube-scheduler's {sorted(ref_labels)}")
        if buckets != ref_buckets:
            problems.append(f"{name}: buckets {sorted(buckets)}, kube-scheduler's {sorted(ref_buckets)}")
    assert not problems, "\n".join(problems)
    # The families kubesched must show with series, as kube-scheduler does after these pods.
    for name in ("scheduler_unschedulable_pods", "scheduler_framework_extension_point_duration_seconds",
                 "scheduler_queue_incoming_pods", "scheduler_cache_size"):
        assert ours[name][1] == reference[name][1], name
