"""`kubesched snapshot` and `kubesched simulate`: read the cluster (or a snapshot file) once, write
nothing to it."""

from __future__ import annotations

import asyncio
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

import click
import yaml

from kubesched.api import ApiClient, ApiConnectionError, ApiError
from kubesched.cmd.common import (
    cluster_config,
    connection_options,
    gates_option,
    load_scheduler_config,
    parse_gates,
    plugin_option,
)
from kubesched.config.types import SchedulerConfig
from kubesched.framework.runtime.profile import ProfileError
from kubesched.scheduler.sources import ClusterSources
from kubesched.tools.simulate.documents import load_documents
from kubesched.tools.simulate.expand import Expander, ExpandError
from kubesched.tools.simulate.render import render_json, render_table
from kubesched.tools.simulate.run import SimulationError
from kubesched.tools.simulate.run import simulate as run_simulation
from kubesched.tools.simulate.state import ClusterState, SnapshotError, decode, encode
from kubesched.tools.simulate.whatif import WhatIfError, template_nodes


def read_live(config: SchedulerConfig, kubeconfig: str | None, context: str | None,
              generic_workload: bool = False) -> ClusterState:
    """One list of every kind the scheduler's informers read (no watch, no write)."""
    cluster = cluster_config(config, kubeconfig, context)

    async def read() -> ClusterState:
        conn = config.client_connection
        async with ApiClient(cluster, qps=conn.qps, burst=conn.burst) as client:
            coscheduling = any(ref.name == "Coscheduling" for profile in config.profiles
                               for refs in profile.plugins.values() for ref in refs)
            sources = ClusterSources(client, generic_workload=generic_workload, coscheduling=coscheduling)
            await sources.list_once()
            objects = sources.objects()
            # The cluster's own pod groups, for its pods that join them (snapshot files carry them).
            if sources.pod_groups is not None:
                objects["podgroups"] = sources.pod_groups.list()
            if sources.co_pod_groups is not None:
                objects["copodgroups"] = sources.co_pod_groups.list()
            return ClusterState(objects, client.server,
                                dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))

    try:
        return asyncio.run(read())
    except (ApiError, ApiConnectionError) as exc:
        raise click.ClickException(f"reading the cluster failed: {exc}") from None


@click.command()
@connection_options
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="A KubeSchedulerConfiguration, for its clientConnection (kubeconfig, qps, burst); naming "
                   "Coscheduling, scheduler-plugins' PodGroups are read too.")
@gates_option
def snapshot(kubeconfig: str | None, context: str | None, config_path: str | None,
             feature_gates: tuple[str, ...]) -> None:
    """Write the cluster's state as the scheduler reads it (nodes, pods and what the plugins read:
    namespaces, Jobs, Services, ReplicaSets, ReplicationControllers, StatefulSets, volumes, DRA
    objects; PodGroups with GenericWorkload=true or a config naming Coscheduling) to stdout, as
    versioned JSON for `kubesched simulate --snapshot`. Reads only.

    \b
    Examples:
      kubesched snapshot > cluster.json
      kubesched snapshot --feature-gates GenericWorkload=true > cluster.json
    """
    gates = parse_gates(feature_gates)
    config, _ = load_scheduler_config(config_path, (), gates)
    sys.stdout.buffer.write(encode(read_live(config, kubeconfig, context, gates.generic_workload)))


def read_manifests(paths: tuple[str, ...]) -> list[Any]:
    """YAML or JSON documents from files, the *.yaml / *.yml / *.json files of directories (sorted
    by name), or stdin ("-"), in the order given."""
    docs: list[Any] = []
    for path in paths:
        if path == "-":
            sources = [("stdin", sys.stdin.read())]
        else:
            p = Path(path)
            if p.is_dir():
                files = sorted(f for f in p.iterdir() if f.suffix in (".yaml", ".yml", ".json"))
                if not files:
                    raise click.ClickException(f"-f {path}: the directory has no .yaml, .yml or .json file")
            elif p.exists():
                files = [p]
            else:
                raise click.ClickException(f"-f {path}: no such file or directory")
            sources = [(str(f), f.read_text()) for f in files]
        for name, text in sources:
            try:
                docs.extend(load_documents(text, name))
            except ExpandError as exc:
                raise click.ClickException(str(exc)) from None
            except yaml.YAMLError as exc:
                raise click.ClickException(f"{name}: not YAML or JSON: {exc}") from None
    return docs


@click.command()
@click.option("-f", "--filename", "paths", multiple=True, required=True, metavar="FILE|DIR|-",
              help="Pods and workloads (Pod, Deployment, ReplicaSet, ReplicationController, StatefulSet, Job, "
                   "CronJob; Services, Namespaces, PodGroups and Workloads join the cluster's) to place, in "
                   "order; a pod group's pods are placed together, all or nothing. Repeatable.")
@click.option("--snapshot", "snapshot_path", default=None, metavar="FILE",
              help="A `kubesched snapshot` file instead of the live cluster.")
@click.option("--add-nodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="First add N nodes like --node-template, named <template name>-1..N.")
@click.option("--node-template", default=None, metavar="FILE", help="A Node manifest (YAML or JSON) for --add-nodes.")
@click.option("--drain", "drain_nodes", multiple=True, metavar="NODE",
              help="First drain NODE: cordon it and place its pods again (DaemonSet and mirror pods stay). "
                   "Repeatable.")
@click.option("-n", "--namespace", default="default", show_default=True,
              help="Namespace of the manifests that name none.")
@click.option("--profile", "profile_name", default=None,
              help="Place every pod with this profile (default: the pod's schedulerName if it is a profile, "
                   "else the first).")
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="The KubeSchedulerConfiguration `kubesched run` uses (default: kubesched's default profile).")
@plugin_option
@gates_option
@connection_options
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seeds the generated name suffixes.")
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
def simulate(paths: tuple[str, ...], snapshot_path: str | None, add_nodes: int | None, node_template: str | None,
             drain_nodes: tuple[str, ...], namespace: str, profile_name: str | None, config_path: str | None,
             plugin_flags: tuple[str, ...], feature_gates: tuple[str, ...], kubeconfig: str | None,
             context: str | None, seed: int, output: str) -> None:
    """Place the given pods in order on the cluster (or a snapshot), each seeing the ones before it,
    with the same profiles as `kubesched run`; print per pod its node or its FailedScheduling message,
    then per node what it would hold. Writes nothing, ever.

    \b
    Examples:
      kubesched simulate -f deploy.yaml
      kubesched snapshot > cluster.json; kubesched simulate -f jobs/ --snapshot cluster.json -o json
      kubesched simulate -f deploy.yaml --add-nodes 3 --node-template big-node.yaml
      kubesched simulate -f /dev/null --drain worker-3
      kubesched simulate -f gang-job.yaml --feature-gates GenericWorkload=true
    """
    if (add_nodes is None) != (node_template is None):
        raise click.UsageError("--add-nodes and --node-template go together")
    gates = parse_gates(feature_gates)
    config, extra = load_scheduler_config(config_path, plugin_flags, gates)
    manifests = read_manifests(paths)
    if snapshot_path is not None:
        try:
            state = decode(Path(snapshot_path).read_bytes(), snapshot_path)
        except (OSError, SnapshotError) as exc:
            raise click.ClickException(str(exc)) from None
        for kind in state.ignored_kinds:
            click.echo(f"warning: {snapshot_path}: kind {kind!r} is not one this kubesched reads; left out",
                       err=True)
    else:
        state = read_live(config, kubeconfig, context, gates.generic_workload)
    try:
        batch = Expander(namespace, now=time.time).expand(manifests)
        added = []
        if add_nodes is not None and node_template is not None:
            docs = load_documents(Path(node_template).read_text(), f"--node-template {node_template}")
            template = docs[0] if len(docs) == 1 else None
            if not isinstance(template, dict):
                raise click.ClickException(f"--node-template {node_template}: expected a Node manifest")
            added = template_nodes(template, add_nodes, (n.metadata.name for n in state.objects.get("nodes", [])))
        sim = run_simulation(config, state, batch, add_nodes=added, drain_nodes=drain_nodes,
                             profile_name=profile_name, out_of_tree=extra, seed=seed,
                             generic_workload=gates.generic_workload)
    except (ExpandError, WhatIfError, SimulationError, OSError, yaml.YAMLError) as exc:
        raise click.ClickException(str(exc)) from None
    except ProfileError as exc:
        raise click.ClickException(f"{config_path or 'the default config'}: {exc}") from None
    click.echo(render_json(sim) if output == "json" else render_table(sim), nl=output == "json")
