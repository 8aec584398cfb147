"""`kubesched cluster ...`: the embedded control plane, kind-like."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import click

from kubesched_dev.localcluster import build, plane
from kubesched_dev.localcluster.topology import TopologyError, resolve


def say(message: str) -> None:
    click.echo(message, err=True)


def fail(message: str) -> None:
    raise click.ClickException(message)


name_option = click.option("--name", default="kubesched", show_default=True, help="Cluster name.")


@click.group()
def cluster() -> None:
    """A local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
    kwok fake nodes) built from Go modules and run on loopback, like kind without Docker."""


@cluster.command("build")
def build_cmd() -> None:
    """Build (or find in the cache) the control-plane binaries."""
    try:
        path = build.ensure_built(say)
    except build.BuildError as exc:
        fail(str(exc))
    say(f"binaries in {path}")


@cluster.command()
@name_option
@click.option("--topology", "topology_name", default=None, metavar="NAME|FILE",
              help="seed-kind (default: the seed's kind cluster) or a YAML topology file.")
@click.option("--nodes", type=int, default=None, help="N identical nodes (4 CPU, 32Gi, 110 pods) instead.")
@click.option("--no-default-scheduler", is_flag=True, help="Do not run the reference kube-scheduler.")
@click.option("--api-port", type=int, default=None, help="kube-apiserver port (default: a free one).")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds to wait per component.")
@click.option("--feature-gates", default="", metavar="K=V,...",
              help="Feature gates for kube-apiserver, kube-controller-manager and kube-scheduler, "
                   "e.g. GenericWorkload=true.")
@click.option("--runtime-config", default="", metavar="GROUP/VERSION=true,...",
              help="APIs kube-apiserver serves beyond its defaults, e.g. scheduling.k8s.io/v1beta1=true.")
def up(name: str, topology_name: str | None, nodes: int | None, no_default_scheduler: bool,
       api_port: int | None, timeout: float, feature_gates: str, runtime_config: str) -> None:
    """Start a cluster and return when it is ready; it keeps running in the background."""
    try:
        topology = resolve(topology_name, nodes)
        c = plane.up(name, topology, default_scheduler=not no_default_scheduler, api_port=api_port,
                     progress=say, ready_timeout=timeout, feature_gates=feature_gates,
                     runtime_config=runtime_config)
    except (TopologyError, plane.ClusterError, build.BuildError) as exc:
        fail(str(exc))
    say(f"use it with: export KUBECONFIG={c.kubeconfig}")


@cluster.command()
@name_option
def down(name: str) -> None:
    """Stop a cluster and remove all its data."""
    if plane.down(name, say):
        say(f"cluster {name!r} stopped and removed")
    else:
        say(f"no cluster named {name!r}")


@cluster.command()
@name_option
@click.option("--component", required=True, type=click.Choice(plane.START_ORDER),
              help="The component to restart.")
@click.option("--down-for", type=click.FloatRange(min=0), default=0.0, show_default=True, metavar="SECONDS",
              help="Keep it stopped this long before starting it again.")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds to wait until it is healthy.")
def restart(name: str, component: str, down_for: float, timeout: float) -> None:
    """Stop one component of a running cluster and start it again as `up` did (the others keep
    running): kubesched cluster restart --component kube-apiserver."""
    try:
        plane.restart(name, component, say, ready_timeout=timeout, down_for=down_for)
    except plane.ClusterError as exc:
        fail(str(exc))


@cluster.command()
@name_option
def status(name: str) -> None:
    """Show a cluster's components, ports and health."""
    c = plane.load(name)
    if c is None:
        fail(f"no cluster named {name!r}; `kubesched cluster list` shows the existing ones")
        return
    running = c.running()
    state = "running" if all(running.values()) else "degraded" if any(running.values()) else "stopped (stale)"
    click.echo(f"cluster {c.name}: {state}, up {time.time() - c.started_at:.0f} s")
    click.echo(f"  server      {c.server}\n  kubeconfig  {c.kubeconfig}\n  topology    {c.topology} "
               f"({c.node_count} nodes)")
    if c.feature_gates:
        click.echo(f"  features    {c.feature_gates}")
    if c.runtime_config:
        click.echo(f"  runtime     {c.runtime_config}")
    for comp, pid in c.pids.items():
        port = c.ports.get(comp)
        click.echo(f"  {comp:<24} pid {pid:<8} {'running' if running[comp] else 'NOT RUNNING'}"
                   + (f"  port {port}" if port else ""))
    if not all(running.values()):
        sys.exit(1)


@cluster.command()
@name_option
def kubeconfig(name: str) -> None:
    """Print the admin kubeconfig of a cluster."""
    c = plane.load(name)
    if c is None:
        fail(f"no cluster named {name!r}")
        return
    with open(c.kubeconfig) as f:
        click.echo(f.read(), nl=False)


@cluster.command("list")
def list_cmd() -> None:
    """List clusters."""
    for c in plane.list_clusters():
        running = c.running()
        state = "running" if running and all(running.values()) else "stale"
        click.echo(f"{c.name}\t{state}\t{c.server}")


@cluster.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@name_option
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def kubectl(name: str, args: tuple[str, ...]) -> None:
    """Run the built kubectl against a cluster: kubesched cluster kubectl -- get pods -o wide."""
    c = plane.load(name)
    if c is None:
        fail(f"no cluster named {name!r}")
        return
    binary = build.bin_dir() / "kubectl"
    sys.exit(subprocess.call([str(binary), f"--kubeconfig={c.kubeconfig}", *args],
                             env=dict(os.environ, KUBECONFIG=c.kubeconfig)))


__all__ = ["cluster"]
