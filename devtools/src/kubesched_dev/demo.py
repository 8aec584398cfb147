"""`kubesched demo`: the seed's story on a real local control plane.

The seed's kind cluster (seed-kind topology), kubesched running with the seed's config
(examples/config/seed.yaml: profile `my-custom-scheduler`, kind-worker3 the CronJob pool,
tier=control nodes excluded), the seed's manifests applied unchanged (nginx Deployment, three
CronJobs), and the placement shown by the real kubectl. The examples travel with kubesched-dev:
devtools/examples/ in a checkout, kubesched_dev/_examples in its wheel (paths.examples finds them).
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from kubesched import logs
from kubesched.api import ApiClient, load_kubeconfig
from kubesched.config import load
from kubesched.model.objects import Pod
from kubesched.scheduler.scheduler import Scheduler
from kubesched_dev.localcluster import build, plane
from kubesched_dev.localcluster.paths import examples
from kubesched_dev.localcluster.topology import seed_kind

CLUSTER = "kubesched-demo"

Say = Callable[[str], None]


class _PodList(msgspec.Struct):
    items: list[Pod]


def _kubectl(cluster: plane.Cluster, *args: str) -> str:
    proc = subprocess.run([str(build.bin_dir() / "kubectl"), f"--kubeconfig={cluster.kubeconfig}", *args],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


async def _pods(client: ApiClient) -> list[Pod]:
    body = await client.get("/api/v1/namespaces/default/pods")
    return msgspec.json.decode(body, type=_PodList).items


def _owner_kind(pod: Pod) -> str:
    refs = pod.metadata.owner_references
    return refs[0].kind if refs else ""


async def _wait(what: str, check: Callable[[list[Pod]], bool], client: ApiClient, say: Say,
                limit: float) -> None:
    started = time.monotonic()
    last_note = started
    while not check(await _pods(client)):
        now = time.monotonic()
        if now - started > limit:
            raise RuntimeError(f"timed out after {limit:.0f} s waiting for {what}")
        if now - last_note >= 15:
            say(f"  still waiting for {what} ({now - started:.0f} s)")
            last_note = now
        await asyncio.sleep(0.5)


async def _run(cluster: plane.Cluster, say: Say, wait_cronjob: bool) -> None:
    shipped = examples()
    config = load(str(shipped / "config" / "seed.yaml"))
    async with ApiClient(load_kubeconfig(cluster.kubeconfig)) as client:
        scheduler = Scheduler(client, config)
        task = asyncio.create_task(scheduler.run(), name="kubesched")
        await scheduler.ready.wait()
        say("kubesched is running with examples/config/seed.yaml (profile my-custom-scheduler; "
            "kind-worker3 is the CronJob pool; tier=control gets nothing)")
        say("applying the seed's manifests unchanged: examples/seed/nginx-deployment.yaml, examples/seed/cronjobs.yaml")
        _kubectl(cluster, "apply", "-f", str(shipped / "seed"))
        say("and one CronJob of our own without any nodeSelector: examples/demo/report-cronjob.yaml")
        _kubectl(cluster, "apply", "-f", str(shipped / "demo" / "report-cronjob.yaml"))
        await _wait("the 3 nginx pods to be bound",
                    lambda pods: sum(1 for p in pods if p.metadata.labels.get("app") == "nginx"
                                     and p.spec.node_name) == 3, client, say, 60)
        if wait_cronjob:
            wait = 120 - time.time() % 120
            say(f"waiting for the CronJobs (*/2 * * * *) to fire: about {wait:.0f} s")
            await _wait("the CronJobs' pods to be bound",
                        lambda pods: sum(1 for p in pods if _owner_kind(p) == "Job" and p.spec.node_name) >= 4,
                        client, say, wait + 60)
        await scheduler.stop()
        await task


def run_demo(say: Say, *, keep: bool, wait_cronjob: bool) -> None:
    existing = plane.load(CLUSTER)
    if existing is not None:
        say(f"removing the previous demo cluster {CLUSTER!r}")
        plane.down(CLUSTER, say)
    cluster = plane.up(CLUSTER, seed_kind(), progress=say)
    # kubesched's own log goes to a file, so the terminal shows the story.
    log_file = Path(cluster.dir) / "logs" / "kubesched.log"
    logs.setup("text", "info")
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logs.TextFormatter())
    logging.getLogger().handlers[:] = [handler]
    try:
        asyncio.run(_run(cluster, say, wait_cronjob))
        say("")
        say("$ kubectl get nodes -L tier")
        print(_kubectl(cluster, "get", "nodes", "-L", "tier"), flush=True)
        say("$ kubectl get pods -o wide")
        print(_kubectl(cluster, "get", "pods", "-o", "wide"), flush=True)
    finally:
        if keep:
            say(f"kubesched's log: {log_file}")
            say(f"the cluster keeps running: export KUBECONFIG={cluster.kubeconfig}; kubesched run --config "
                f"{examples() / 'config' / 'seed.yaml'}; `kubesched cluster down --name {CLUSTER}` removes it")
        else:
            plane.down(CLUSTER, say)
            say(f"demo cluster {CLUSTER!r} removed (use --keep to leave it running)")
