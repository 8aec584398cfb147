"""A named local control plane, kind-like: `up`, `down`, `status`, `list`.

Everything of a cluster lives in one directory (state file, certificates, kubeconfigs, etcd data,
logs) under $XDG_STATE_HOME/kubesched/clusters/<name>; `down` stops its processes and removes
that directory, so nothing is left behind. Ports are picked free at start, so several clusters
run side by side.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import msgspec
import yaml

from kubesched.model.objects import Node
from kubesched_dev.localcluster import procs
from kubesched_dev.localcluster.build import ensure_built
from kubesched_dev.localcluster.http import create_all, get, tls_context
from kubesched_dev.localcluster.paths import state_root
from kubesched_dev.localcluster.pki import CertificateAuthority, service_account_keys
from kubesched_dev.localcluster.topology import KWOK_ANNOTATION, Topology

Progress = Callable[[str], None]
START_ORDER = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


class ClusterError(RuntimeError):
    pass


@dataclass
class Cluster:
    name: str
    dir: str
    server: str = ""
    kubeconfig: str = ""
    ports: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    # Each component's command line, so `restart` can start it again exactly as `up` did.
    commands: dict[str, list[str]] = field(default_factory=dict)
    owner_pid: int = 0
    topology: str = ""
    node_count: int = 0
    default_scheduler: bool = True
    started_at: float = 0.0
    # `--feature-gates` for kube-apiserver, kube-controller-manager and kube-scheduler, and
    # kube-apiserver's `--runtime-config`, as given to `up` (K=V,...; empty: the defaults).
    feature_gates: str = ""
    runtime_config: str = ""
    # Admission plugins kube-apiserver runs without, beyond the two every plane drops.
    admission_off: tuple[str, ...] = ()
    # kube-controller-manager's `--controllers` (empty: its default, every on-by-default one).
    controllers: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return Path(self.dir)

    def log(self, component: str) -> Path:
        return self.path / "logs" / f"{component}.log"

    def running(self) -> dict[str, bool]:
        return {c: procs.alive(pid, self.dir) for c, pid in self.pids.items()}

    def save(self) -> None:
        tmp = self.path / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2))
        os.replace(tmp, self.path / "state.json")


def cluster_dir(name: str) -> Path:
    return state_root() / name


def load(name: str) -> Cluster | None:
    """The cluster's saved state; None when there is none or it is not a state object. Fields this
    version does not know (written by another kubesched version) are ignored, so one odd state
    file never breaks `cluster list` or a test session's clean-up."""
    try:
        data = json.loads((cluster_dir(name) / "state.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    known = {f.name for f in fields(Cluster)}
    try:
        return Cluster(**{k: v for k, v in data.items() if k in known})
    except TypeError:
        return None


def list_clusters() -> list[Cluster]:
    root = state_root()
    if not root.exists():
        return []
    found = (load(p.name) for p in sorted(root.iterdir()) if p.is_dir())
    return [c for c in found if c is not None]


def up(name: str, topology: Topology, *, default_scheduler: bool = True, api_port: int | None = None,
       progress: Progress = print, ready_timeout: float = 120.0, feature_gates: str = "",
       runtime_config: str = "", admission_off: tuple[str, ...] = (),
       controllers: tuple[str, ...] = ()) -> Cluster:
    """Start the cluster `name`. `feature_gates` (K=V,...) goes to kube-apiserver,
    kube-controller-manager and kube-scheduler, `runtime_config` (group/version=true,...) to
    kube-apiserver: a beta API such as scheduling.k8s.io/v1beta1 is served only when named there.
    `admission_off` names admission plugins kube-apiserver also runs without (scheduler_perf's
    apiserver has no Priority plugin, so its templates set spec.priority with no PriorityClass).
    `controllers` limits kube-controller-manager to those named (scheduler_perf runs only a few)."""
    _validate_name(name)
    feature_gates = _validate_pairs("--feature-gates", feature_gates)
    runtime_config = _validate_pairs("--runtime-config", runtime_config)
    existing = load(name)
    if existing is not None:
        if any(existing.running().values()):
            raise ClusterError(f"cluster {name!r} is already running (server {existing.server}, kubeconfig "
                               f"{existing.kubeconfig}); use it, or stop it with `kubesched cluster down "
                               f"--name {name}`, or pick another --name")
        progress(f"cluster {name!r}: removing the state of a stale run (its processes are gone)")
        _remove(existing, progress)
    elif cluster_dir(name).exists():
        shutil.rmtree(cluster_dir(name))
    if api_port is not None and procs.port_in_use(api_port):
        raise ClusterError(f"--api-port {api_port}: port {api_port} on 127.0.0.1 is already in use; "
                           "choose a free port, or omit --api-port to pick one automatically")
    bins = ensure_built(progress)
    cluster = Cluster(name=name, dir=str(cluster_dir(name)), owner_pid=os.getpid(), topology=topology.name,
                      node_count=len(topology.nodes), default_scheduler=default_scheduler,
                      started_at=time.time(), feature_gates=feature_gates, runtime_config=runtime_config,
                      admission_off=tuple(admission_off), controllers=tuple(controllers))
    cluster.path.mkdir(parents=True)
    try:
        _start(cluster, bins, topology, api_port, progress, ready_timeout)
    except BaseException:
        progress(f"cluster {name!r}: start failed; stopping what was started")
        _remove(cluster, progress)
        raise
    return cluster


def down(name: str, progress: Progress = print) -> bool:
    cluster = load(name)
    if cluster is None:
        if cluster_dir(name).exists():
            shutil.rmtree(cluster_dir(name))
            return True
        return False
    _remove(cluster, progress)
    return True


def restart(name: str, component: str, progress: Progress = print, ready_timeout: float = 120.0,
            down_for: float = 0.0) -> float:
    """Stop one component (SIGTERM, then SIGKILL), keep it down `down_for` seconds, start it again
    with the command line `up` gave it and wait until it is healthy; the rest of the plane keeps
    running. Returns the seconds it was unavailable. Clients of the apiserver see their connections
    drop and their watches end, as in a real control-plane upgrade."""
    cluster = load(name)
    if cluster is None:
        raise ClusterError(f"no cluster named {name!r}; `kubesched cluster list` shows the existing ones")
    if component not in cluster.pids:
        raise ClusterError(f"--component: Invalid value: {component!r}: cluster {name!r} runs "
                           f"{', '.join(c for c in START_ORDER if c in cluster.pids)}")
    args = cluster.commands.get(component)
    if not args:
        raise ClusterError(f"cluster {name!r} was started by an older kubesched that did not record how it "
                           f"started {component}; recreate it (`kubesched cluster down` then `up`) to restart it")
    began = time.monotonic()
    procs.stop([cluster.pids[component]], cluster.dir)
    port = cluster.ports.get(component)
    deadline = time.monotonic() + 15
    while port and procs.port_in_use(port):
        if time.monotonic() > deadline:
            raise ClusterError(f"{component}'s port {port} is still in use 15 s after it stopped")
        time.sleep(0.1)
    progress(f"cluster {name!r}: {component} stopped")
    if down_for > 0:
        time.sleep(down_for)
    cluster.pids[component] = procs.start(args, cluster.log(component), cluster.path)
    cluster.save()
    _wait(cluster, component, _health_check(cluster, component), ready_timeout, progress)
    took = time.monotonic() - began
    progress(f"cluster {name!r}: {component} restarted and healthy after {took:.1f} s")
    return took


def _health_check(cluster: Cluster, component: str) -> Callable[[], bool]:
    ports = cluster.ports
    if component == "etcd":
        return lambda: get(f"http://127.0.0.1:{ports['etcd']}/health", None)[0] == 200
    if component == "kube-apiserver":
        pki = cluster.path / "pki"
        admin = tls_context(pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
        return lambda: get(f"{cluster.server}/readyz", admin)[0] == 200
    if component == "kwok":
        return lambda: get(f"http://127.0.0.1:{ports['kwok']}/healthz", None)[0] == 200
    insecure = tls_context(None)
    return lambda: get(f"https://127.0.0.1:{ports[component]}/healthz", insecure)[0] == 200


def _remove(cluster: Cluster, progress: Progress) -> None:
    pids = [cluster.pids[c] for c in reversed(START_ORDER) if c in cluster.pids]
    procs.stop(pids, cluster.dir)
    deadline = time.monotonic() + 15
    while busy := [p for p in cluster.ports.values() if procs.port_in_use(p)]:
        if time.monotonic() > deadline:
            progress(f"cluster {cluster.name!r}: ports {busy} are still held by another process")
            break
        time.sleep(0.2)
    shutil.rmtree(cluster.path, ignore_errors=True)


def _validate_pairs(flag: str, value: str) -> str:
    """K=V,... with blanks around items dropped; a malformed item stops `up` before anything starts."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    for item in items:
        key, eq, val = item.partition("=")
        if not eq or not key.strip() or not val.strip():
            raise ClusterError(f"{flag}: Invalid value: {item!r}: use KEY=VALUE items separated by commas")
    return ",".join(items)


def _disabled_admission(cluster: Cluster) -> str:
    # TaintNodesByCondition taints every new node not-ready until the node lifecycle controller
    # sees it Ready; kwok's nodes are Ready at once, and lifting 5,000 such taints takes minutes.
    return "--disable-admission-plugins=" + ",".join(("ServiceAccount", "TaintNodesByCondition",
                                                      *cluster.admission_off))


def _gate_args(cluster: Cluster) -> list[str]:
    return [f"--feature-gates={cluster.feature_gates}"] if cluster.feature_gates else []


def _validate_name(name: str) -> None:
    if not name or len(name) > 63 or not all(ch.isalnum() or ch in "-_." for ch in name) or name[0] == ".":
        raise ClusterError(f"--name: Invalid value: {name!r}: use 1-63 letters, digits, '-', '_' or '.'")


# --- start-up ------------------------------------------------------------------------------------

def _start(cluster: Cluster, bins: Path, topology: Topology, api_port: int | None, progress: Progress,
           ready_timeout: float) -> None:
    started = time.monotonic()
    d = cluster.path
    pki_dir = d / "pki"
    pki_dir.mkdir()
    ca = CertificateAuthority(pki_dir)
    serving = ca.issue("apiserver", "kube-apiserver", server=True)
    admin = ca.issue("admin", "kubernetes-admin", "system:masters")
    # kubeadm gives each controller its own service account; one client in system:masters is the
    # simple equivalent for a local plane (its own role cannot update node taints).
    kcm = ca.issue("controller-manager", "system:kube-controller-manager", "system:masters")
    sched = ca.issue("scheduler", "system:kube-scheduler")
    sa = service_account_keys(pki_dir)
    ports = cluster.ports
    for comp in ("etcd", "etcd-peer", "kube-controller-manager", "kube-scheduler", "kwok"):
        ports[comp] = procs.free_port()
    ports["kube-apiserver"] = api_port or procs.free_port()
    cluster.server = f"https://127.0.0.1:{ports['kube-apiserver']}"
    cluster.kubeconfig = str(d / "kubeconfig")
    _write_kubeconfig(d / "kubeconfig", cluster, ca.cert_path, admin.cert, admin.key, embed=True)
    _write_kubeconfig(d / "controller-manager.kubeconfig", cluster, ca.cert_path, kcm.cert, kcm.key)
    _write_kubeconfig(d / "scheduler.kubeconfig", cluster, ca.cert_path, sched.cert, sched.key)
    cluster.save()

    etcd_url = f"http://127.0.0.1:{ports['etcd']}"
    peer_url = f"http://127.0.0.1:{ports['etcd-peer']}"
    _launch(cluster, "etcd", [
        str(bins / "etcd"), "--name=default", f"--data-dir={d / 'etcd'}", f"--listen-client-urls={etcd_url}",
        f"--advertise-client-urls={etcd_url}", f"--listen-peer-urls={peer_url}",
        f"--initial-advertise-peer-urls={peer_url}", f"--initial-cluster=default={peer_url}",
        "--unsafe-no-fsync", "--quota-backend-bytes=8589934592", "--log-level=warn"])
    _wait(cluster, "etcd", _health_check(cluster, "etcd"), ready_timeout, progress)

    admin_ctx = tls_context(ca.cert_path, admin.cert, admin.key)
    _launch(cluster, "kube-apiserver", [
        str(bins / "kube-apiserver"), f"--etcd-servers={etcd_url}", "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1", f"--secure-port={ports['kube-apiserver']}",
        f"--tls-cert-file={serving.cert}", f"--tls-private-key-file={serving.key}",
        f"--client-ca-file={ca.cert_path}", "--service-account-issuer=https://kubernetes.default.svc",
        f"--service-account-key-file={sa.cert}", f"--service-account-signing-key-file={sa.key}",
        "--service-cluster-ip-range=10.96.0.0/16", "--authorization-mode=Node,RBAC",
        "--endpoint-reconciler-type=none",
        _disabled_admission(cluster),
        "--max-requests-inflight=3000", "--max-mutating-requests-inflight=1000", "--allow-privileged=true",
        f"--cert-dir={pki_dir}", "--v=1", *_gate_args(cluster),
        *([f"--runtime-config={cluster.runtime_config}"] if cluster.runtime_config else [])])
    _wait(cluster, "kube-apiserver", _health_check(cluster, "kube-apiserver"), ready_timeout, progress)

    _launch(cluster, "kube-controller-manager", [
        str(bins / "kube-controller-manager"), f"--kubeconfig={d / 'controller-manager.kubeconfig'}",
        f"--authentication-kubeconfig={d / 'controller-manager.kubeconfig'}",
        f"--authorization-kubeconfig={d / 'controller-manager.kubeconfig'}",
        f"--service-account-private-key-file={sa.key}", f"--root-ca-file={ca.cert_path}",
        "--leader-elect=false", "--kube-api-qps=1000", "--kube-api-burst=2000", "--bind-address=127.0.0.1",
        f"--secure-port={ports['kube-controller-manager']}", f"--cert-dir={pki_dir / 'kcm'}",
        "--use-service-account-credentials=false", "--concurrent-job-syncs=20", "--v=1",
        *([f"--controllers={','.join(cluster.controllers)}"] if cluster.controllers else []),
        *_gate_args(cluster)])
    if cluster.default_scheduler:
        config = d / "kube-scheduler.yaml"
        config.write_text(yaml.safe_dump({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(d / "scheduler.kubeconfig"), "qps": 5000, "burst": 5000},
            "leaderElection": {"leaderElect": False},
        }))
        _launch(cluster, "kube-scheduler", [
            str(bins / "kube-scheduler"), f"--config={config}", "--bind-address=127.0.0.1",
            f"--secure-port={ports['kube-scheduler']}", f"--cert-dir={pki_dir / 'scheduler'}",
            f"--authentication-kubeconfig={d / 'scheduler.kubeconfig'}",
            f"--authorization-kubeconfig={d / 'scheduler.kubeconfig'}", "--v=1", *_gate_args(cluster)])
    _launch(cluster, "kwok", [
        str(bins / "kwok"), f"--kubeconfig={d / 'kubeconfig'}", f"--config={_kwok_config(d)}",
        "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
        "--cidr=10.244.0.1/16", "--node-ip=10.0.0.1", "--node-lease-duration-seconds=40",
        f"--server-address=127.0.0.1:{ports['kwok']}"])
    for component in ("kube-controller-manager", "kube-scheduler", "kwok"):
        if component in cluster.pids:
            _wait(cluster, component, _health_check(cluster, component), ready_timeout, progress)
    progress(f"cluster {cluster.name!r}: components healthy in {time.monotonic() - started:.1f} s; "
             f"creating {len(topology.nodes)} node(s)")
    asyncio.run(create_all(cluster.server, admin_ctx, "/api/v1/nodes", (n.manifest() for n in topology.nodes),
                           lambda n: progress(f"  {n}/{len(topology.nodes)} nodes created")))
    # kwok marked only ~15 nodes Ready a second at 5,000 nodes here (its leases and statuses for
    # the nodes already Ready compete): give big topologies the time that takes.
    _wait_nodes_ready(cluster, admin_ctx, len(topology.nodes), max(ready_timeout, len(topology.nodes) / 10),
                      progress)
    progress(f"cluster {cluster.name!r} ready in {time.monotonic() - started:.1f} s: server {cluster.server}, "
             f"kubeconfig {cluster.kubeconfig}")


def _kwok_config(d: Path) -> Path:
    # An empty config file keeps kwok from reading the user's ~/.kwok/kwok.yaml.
    path = d / "kwok.yaml"
    path.write_text("")
    return path


def _launch(cluster: Cluster, component: str, args: list[str]) -> None:
    cluster.pids[component] = procs.start(args, cluster.log(component), cluster.path)
    cluster.commands[component] = list(args)
    cluster.save()


def _wait(cluster: Cluster, component: str, check: Callable[[], bool], timeout: float,
          progress: Progress) -> None:
    deadline = time.monotonic() + timeout
    pid = cluster.pids[component]
    while True:
        code = procs.exited(pid)
        if code is not None or not procs.alive(pid, cluster.dir):
            raise ClusterError(f"{component} exited during start (exit code {code}); last lines of "
                               f"{cluster.log(component)}:\n{procs.tail(cluster.log(component))}")
        try:
            if check():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise ClusterError(f"{component} did not become healthy within {timeout:.0f} s; last lines of "
                               f"{cluster.log(component)}:\n{procs.tail(cluster.log(component))}")
        time.sleep(0.1)


def _wait_nodes_ready(cluster: Cluster, ctx: Any, want: int, timeout: float, progress: Progress) -> None:
    deadline = time.monotonic() + timeout
    last = -1
    while True:
        # From the watch cache (resourceVersion=0), decoded into slim structs, and less often for big
        # topologies: a full list of 5,000 nodes every 0.25 s would slow the very apiserver we wait for.
        status, body = get(f"{cluster.server}/api/v1/nodes?resourceVersion=0", ctx, timeout=30)
        if status != 200:
            raise ClusterError(f"listing nodes: HTTP {status}: {body[:300]!r}")
        ready = sum(1 for n in msgspec.json.decode(body, type=_NodeList).items if _node_ready(n))
        if ready >= want:
            return
        if ready != last and want >= 100:
            progress(f"  {ready}/{want} nodes Ready")
            last = ready
        if not procs.alive(cluster.pids["kwok"], cluster.dir):
            raise ClusterError(f"kwok exited; last lines of {cluster.log('kwok')}:\n{procs.tail(cluster.log('kwok'))}")
        if time.monotonic() > deadline:
            raise ClusterError(f"only {ready} of {want} nodes became Ready within {timeout:.0f} s; "
                               f"kwok log: {cluster.log('kwok')}")
        time.sleep(max(0.25, want / 2000))


class _NodeList(msgspec.Struct):
    items: list[Node] = []


def _node_ready(node: Node) -> bool:
    """Ready, and no node lifecycle taint left on it (schedulers see taints)."""
    return (any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)
            and not any(t.key.startswith("node.kubernetes.io/") for t in node.spec.taints))


def _write_kubeconfig(path: Path, cluster: Cluster, ca: Path, cert: Path, key: Path, *, embed: bool = False) -> None:
    ctx = f"kubesched-{cluster.name}"
    if embed:
        cluster_entry: dict[str, str] = {"server": cluster.server,
                                         "certificate-authority-data": _b64(ca)}
        user: dict[str, str] = {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)}
    else:
        cluster_entry = {"server": cluster.server, "certificate-authority": str(ca)}
        user = {"client-certificate": str(cert), "client-key": str(key)}
    doc = {
        "apiVersion": "v1", "kind": "Config", "current-context": ctx,
        "clusters": [{"name": ctx, "cluster": cluster_entry}],
        "users": [{"name": ctx, "user": user}],
        "contexts": [{"name": ctx, "context": {"cluster": ctx, "user": ctx}}],
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    path.chmod(0o600)


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()
