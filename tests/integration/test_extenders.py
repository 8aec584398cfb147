"""Scheduler extenders, side by side: kubesched and a reference kube-scheduler (a second process of
the built binary, with its own --config and scheduler name) are configured with the same extenders —
a small HTTP extender this test serves on 127.0.0.1 and an ignorable one nobody listens for — on the
session plane (seed-kind: a tainted control plane and three equal workers).

The extender filters out DROP, prefers DROP then PREFER (so without its filter DROP would win) and
binds the pods itself through the apiserver; a pod labelled to be rejected everywhere is filtered
out of every node, and one labelled to fail gets a 500. Compared: the node chosen, the binding made by
the extender, and the whole FailedScheduling message and PodScheduled condition when every node is
filtered out and when the extender fails.
"""

from __future__ import annotations

import asyncio
import functools
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from kubesched_dev.localcluster import build, procs
from kubesched_dev.localcluster.http import get, tls_context
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    create_pod,
    get_pod,
    latest_event,
    pod_manifest,
    scheduled_condition,
    wait_bound,
)

REF = "ref-extender"
OURS = "kubesched-extender"
DROP, PREFER = "kind-worker", "kind-worker3"
REJECTED = "node(s) were rejected by the test extender"
REJECT_ALL = {"extender-test/reject": "all"}
FAIL = {"extender-test/reject": "error"}


@dataclass
class Extender:
    """The test's extender: what it was asked, by scheduler name, and the bindings it made."""

    kube: Kube
    port: int = 0
    asked: list[tuple[str, str, str]] = field(default_factory=list)  # (verb, schedulerName, "names"|"nodes")
    bound: dict[str, str] = field(default_factory=dict)  # "ns/pod" -> node

    @staticmethod
    def _names(args: dict[str, Any]) -> tuple[list[str], str]:
        if args.get("NodeNames") is not None:
            return list(args["NodeNames"]), "names"
        return [n["metadata"]["name"] for n in args["Nodes"]["items"]], "nodes"

    def _note(self, verb: str, args: dict[str, Any], mode: str) -> None:
        self.asked.append((verb, args["Pod"]["spec"].get("schedulerName", ""), mode))

    async def filter(self, request: web.Request) -> web.Response:
        args = await request.json()
        names, mode = self._names(args)
        self._note("filter", args, mode)
        labels = args["Pod"]["metadata"].get("labels") or {}
        if labels.get("extender-test/reject") == "error":
            return web.json_response({}, status=500)
        reject = set(names) if labels.get("extender-test/reject") == "all" else {DROP}
        keep = [n for n in names if n not in reject]
        answer: dict[str, Any] = {"FailedNodes": {n: REJECTED for n in names if n in reject}}
        if mode == "names":
            answer["NodeNames"] = keep
        else:
            answer["Nodes"] = {"items": [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in keep]}
        return web.json_response(answer)

    async def prioritize(self, request: web.Request) -> web.Response:
        args = await request.json()
        names, mode = self._names(args)
        self._note("prioritize", args, mode)
        scores = {DROP: 10, PREFER: 5}
        return web.json_response([{"Host": n, "Score": scores.get(n, 0)} for n in names])

    async def bind(self, request: web.Request) -> web.Response:
        args = await request.json()
        ns, name, node = args["PodNamespace"], args["PodName"], args["Node"]
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "uid": args["PodUID"]},
                "target": {"kind": "Node", "name": node}}
        status, reply = await asyncio.get_running_loop().run_in_executor(
            None, self.kube.request, "POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding", body)
        if status not in (200, 201):
            return web.json_response({"Error": f"binding {ns}/{name}: {status} {reply}"})
        self.bound[f"{ns}/{name}"] = node
        return web.json_response({"Error": ""})


@pytest.fixture(scope="module")
def extender(plane: Kube) -> Iterator[Extender]:
    ext = Extender(plane)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    runner: list[web.AppRunner] = []

    async def serve() -> None:
        app = web.Application()
        app.add_routes([web.post("/scheduler/filter", ext.filter), web.post("/scheduler/prioritize", ext.prioritize),
                        web.post("/scheduler/bind", ext.bind)])
        r = web.AppRunner(app, access_log=None)
        await r.setup()
        site = web.TCPSite(r, "127.0.0.1", 0)
        await site.start()
        ext.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        runner.append(r)
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(serve(), loop).result(timeout=10)
    assert started.is_set()
    yield ext
    asyncio.run_coroutine_threadsafe(runner[0].cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def config(name: str, ext: Extender, kubeconfig: str | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {"schedulerName": name}
    if kubeconfig is None:
        # kube-scheduler's plugins only, for kubesched too.
        profile["plugins"] = {"multiPoint": {"disabled": [{"name": "CronJobPool"}]}}
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [profile],
        "extenders": [
            {"urlPrefix": f"http://127.0.0.1:{ext.port}/scheduler", "filterVerb": "filter",
             "prioritizeVerb": "prioritize", "weight": 5, "bindVerb": "bind", "httpTimeout": "10s"},
            # Nothing listens there: an ignorable extender that fails is skipped.
            {"urlPrefix": f"http://127.0.0.1:{procs.free_port()}/", "filterVerb": "filter",
             "prioritizeVerb": "prioritize", "weight": 1, "ignorable": True},
        ],
    }
    if kubeconfig:
        doc["clientConnection"] = {"kubeconfig": kubeconfig}
    return doc


@pytest.fixture(scope="module")
def schedulers(plane: Kube, extender: Extender, start_kubesched: Callable[..., KubeschedProcess],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    d = tmp_path_factory.mktemp("extenders")
    ours = d / "kubesched.yaml"
    ours.write_text(yaml.safe_dump(config(OURS, extender)))
    start_kubesched(f"--config={ours}")
    cluster_dir = Path(plane.cluster.dir)
    ref = d / "kube-scheduler.yaml"
    ref.write_text(yaml.safe_dump(config(REF, extender, str(cluster_dir / "scheduler.kubeconfig"))))
    port = procs.free_port()
    log_path = d / "kube-scheduler.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [str(build.bin_dir() / "kube-scheduler"), f"--config={ref}", "--bind-address=127.0.0.1",
             f"--secure-port={port}", f"--cert-dir={d / 'certs'}",
             f"--authentication-kubeconfig={cluster_dir / 'scheduler.kubeconfig'}",
             f"--authorization-kubeconfig={cluster_dir / 'scheduler.kubeconfig'}", "--v=2"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    insecure = tls_context(None)

    def ready() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"kube-scheduler exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
        try:
            return get(f"https://127.0.0.1:{port}/readyz", insecure, timeout=1.0)[0] == 200
        except OSError:
            return False

    try:
        wait_for("the reference kube-scheduler to be ready", ready, timeout=60)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pod(name: str, scheduler: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return pod_manifest(name, scheduler, labels=labels)


def test_same_node_chosen_and_bound_by_the_extender(plane: Kube, extender: Extender, schedulers: None) -> None:
    ns = plane.namespace(f"ext-bind-{int(time.time())}")
    create_pod(plane, ns, pod("ref", REF))
    create_pod(plane, ns, pod("ours", OURS))
    ref_node = wait_bound(plane, ns, "ref", timeout=40)
    our_node = wait_bound(plane, ns, "ours", timeout=40)
    assert ref_node == PREFER, f"scenario broken: kube-scheduler chose {ref_node}"
    assert our_node == ref_node, f"kubesched chose {our_node}, kube-scheduler chose {ref_node}"
    # Both bound by the extender, not by a Bind plugin.
    assert extender.bound == {f"{ns}/ref": PREFER, f"{ns}/ours": PREFER}
    for name, controller in (("ref", REF), ("ours", OURS)):
        ev = wait_for(f"the Scheduled event of {name}", functools.partial(latest_event, plane, ns, name, "Scheduled"))
        assert ev["note"] == f"Successfully assigned {ns}/{name} to {PREFER}"
        assert ev.get("reportingController") == controller
    # Each sent the whole nodes (nodeCacheCapable is false) to filter and prioritize.
    ours = {(verb, mode) for verb, sched, mode in extender.asked if sched == OURS}
    assert ours == {("filter", "nodes"), ("prioritize", "nodes")}


def compare_failures(plane: Kube, ns: str, labels: dict[str, str]) -> str:
    """Create a pod for each scheduler with these labels; both must write the same PodScheduled=False
    condition and FailedScheduling note, and bind neither. Returns the message."""
    create_pod(plane, ns, pod("ref", REF, labels))
    create_pod(plane, ns, pod("ours", OURS, labels))

    def condition(name: str) -> dict[str, Any]:
        return scheduled_condition(get_pod(plane, ns, name)) or {}

    ref_cond = wait_for("kube-scheduler's PodScheduled condition",
                        lambda: condition("ref").get("message") and condition("ref"), timeout=40)
    want: str = ref_cond["message"]
    our_cond = wait_for("kubesched's PodScheduled condition",
                        lambda: condition("ours").get("message") and condition("ours"), timeout=40)
    assert our_cond["message"] == want
    assert (our_cond["status"], our_cond["reason"]) == ("False", ref_cond["reason"])
    for name, controller in (("ref", REF), ("ours", OURS)):
        ev = wait_for(f"the FailedScheduling event of {name}",
                      functools.partial(latest_event, plane, ns, name, "FailedScheduling"))
        assert ev["note"] == want
        assert ev.get("reportingController") == controller
        assert get_pod(plane, ns, name)["spec"].get("nodeName") is None
    return want


def test_same_failed_scheduling_when_the_extender_filters_out_every_node(plane: Kube, extender: Extender,
                                                                         schedulers: None) -> None:
    ns = plane.namespace(f"ext-none-{int(time.time())}")
    want = compare_failures(plane, ns, REJECT_ALL)
    assert f"3 {REJECTED}" in want, f"scenario broken: {want!r}"


def test_same_failed_scheduling_when_the_extender_fails(plane: Kube, extender: Extender, schedulers: None) -> None:
    ns = plane.namespace(f"ext-fail-{int(time.time())}")
    want = compare_failures(plane, ns, FAIL)
    assert want == f"failed filter with extender at URL http://127.0.0.1:{extender.port}/scheduler/filter, code 500"
    assert scheduled_condition(get_pod(plane, ns, "ours"))["reason"] == "SchedulerError"  # type: ignore[index]
