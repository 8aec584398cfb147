"""`kubesched shadow` beside the reference kube-scheduler on a plane of its own: the scenario table's
pods (those with one best node) are scheduled by kube-scheduler, and two shadows judge every bind —
kubesched's default profile must agree on all (same node, or a tie), a MostAllocated profile must
notice it would have chosen differently. Both only read."""

from __future__ import annotations

import functools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import parse
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import create_nodes, create_pod, delete_nodes, own_plane, pod_manifest, wait_bound
from tests.integration.test_scheduling_scenarios import SCENARIOS, Scenario, _node_manifest, _resolve

pytestmark = pytest.mark.integration

MOST_ALLOCATED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: most-allocated
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""

# (id, scenario) of the scenarios with one best node: kube-scheduler binds their pod.
BOUND: list[tuple[str, Scenario]] = [
    (str(p.id), s) for p in SCENARIOS if isinstance(s := p.values[0], Scenario) and s.expect is not None]


class ShadowProcess:
    def __init__(self, plane: Kube, tmp: Path, name: str, *args: str) -> None:
        self.log_path = tmp / f"{name}.log"
        self.disagreements = tmp / f"{name}.jsonl"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubesched", "shadow", f"--kubeconfig={plane.kubeconfig}", "--log-format=json",
             f"--disagreements={self.disagreements}", f"--serve-address=127.0.0.1:{self.port}", *args],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for(f"shadow {name} watching", lambda: "shadow watching binds" in self.log() or self.proc.poll(),
                 timeout=60)
        assert self.proc.poll() is None, self.log()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def records(self, message: str) -> list[dict[str, Any]]:
        out = []
        for line in self.log().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if str(rec.get("msg", "")).startswith(message):
                out.append(rec)
        return out

    def verdict(self, pod: str) -> dict[str, Any] | None:
        return next((r for r in self.records("shadow verdict") if r.get("pod") == pod), None)

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as resp:
            return str(resp.read().decode())

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


@pytest.fixture(scope="module")
def shadow_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kube, ShadowProcess, ShadowProcess]]:
    tmp = tmp_path_factory.mktemp("shadow")
    with own_plane("shadow", parse({"nodes": [{"name": "shadow-base"}]}, "shadow")) as kube:
        kube.delete("/api/v1/nodes/shadow-base")
        wait_for("the base node gone", lambda: not kube.get("/api/v1/nodes")["items"])
        kube.create("/apis/node.k8s.io/v1/runtimeclasses", {
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "overhead"},
            "handler": "runc", "overhead": {"podFixed": {"cpu": "1500m", "memory": "64Mi"}}})
        config = tmp / "most.yaml"
        config.write_text(MOST_ALLOCATED)
        default = ShadowProcess(kube, tmp, "default")
        most = ShadowProcess(kube, tmp, "most", f"--config={config}")
        try:
            yield kube, default, most
        finally:
            default.stop()
            most.stop()


def _run(kube: Kube, scenario: Scenario, sid: str) -> str:
    ns = kube.namespace(f"sh-{sid}")
    names = {n.short: f"{sid}-{n.short}" for n in scenario.nodes}
    create_nodes(kube, [_node_manifest(n, names[n.short]) for n in scenario.nodes])
    for i, occ in enumerate(scenario.occupants):
        create_pod(kube, ns, pod_manifest(f"occupant-{i}", "nobody", {**occ.spec, "nodeName": names[occ.node]}))
    create_pod(kube, ns, pod_manifest("ref", None, _resolve(scenario.pod, names)))
    node = wait_bound(kube, ns, "ref")
    assert node == names[scenario.expect or ""], f"scenario broken: kube-scheduler chose {node}"
    return f"{ns}/ref"


def _cleanup(kube: Kube, ns: str, nodes: list[str]) -> None:
    kube.delete(f"/api/v1/namespaces/{ns}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {ns} gone", lambda: not kube.pods(ns), timeout=30)
    delete_nodes(kube, nodes)


def test_shadow_beside_kube_scheduler(shadow_plane: tuple[Kube, ShadowProcess, ShadowProcess]) -> None:
    kube, default, most = shadow_plane
    verdicts: dict[str, tuple[str, str]] = {}
    for sid, scenario in BOUND:
        key = _run(kube, scenario, sid)
        try:
            ours = wait_for(f"the default shadow's verdict on {key}", functools.partial(default.verdict, key))
            theirs = wait_for(f"the MostAllocated shadow's verdict on {key}", functools.partial(most.verdict, key))
            verdicts[sid] = (ours["verdict"], theirs["verdict"])
        finally:
            _cleanup(kube, key.split("/")[0], [f"{sid}-{n.short}" for n in scenario.nodes])
    disagreeing = {sid: v for sid, (v, _) in verdicts.items() if v not in ("same", "tie")}
    assert not disagreeing, f"kubesched's default profile disagrees with kube-scheduler: {disagreeing}"
    different = [sid for sid, (_, v) in verdicts.items() if v == "different"]
    assert different, f"MostAllocated never chose differently: {verdicts}"

    # Metrics, the disagreements file, and the summary on SIGUSR1 and on exit.
    agreeing = sum(1 for v, _ in verdicts.values() if v in ("same", "tie"))
    page = default.metrics()
    counted = sum(float(line.rsplit(" ", 1)[1]) for line in page.splitlines()
                  if line.startswith("kubesched_shadow_decisions_total{") and
                  ('verdict="same"' in line or 'verdict="tie"' in line))
    assert counted == agreeing == len(BOUND)
    lines = [json.loads(line) for line in most.disagreements.read_text().splitlines()]
    assert {d["pod"].split("/")[0].removeprefix("sh-") for d in lines} >= set(different)
    assert all(d["verdict"] == "different" and d["bestTotal"] is not None for d in lines if d["verdict"] == "different")
    assert not default.disagreements.exists() or default.disagreements.read_text() == ""
    os.kill(default.proc.pid, signal.SIGUSR1)
    wait_for("the SIGUSR1 summary", lambda: default.records("shadow summary (SIGUSR1)"))
    assert default.stop() == 0
    (summary,) = default.records("shadow summary (exit)")
    assert summary["binds"] == len(BOUND)
    assert summary["agreement"] == 1.0

    # Read-only: every pod the shadows watched was bound by kube-scheduler, none by them, and they
    # wrote no event.
    time.sleep(0.5)
    reporters = {e.get("reportingController") for e in kube.get("/apis/events.k8s.io/v1/events")["items"]}
    assert "kubesched" not in reporters
    assert "most-allocated" not in reporters
