"""`kubesched explain`: every node's filter verdicts and scores for one pod, read-only."""

from __future__ import annotations

import asyncio

import click

from kubesched.api import ApiClient, ApiConnectionError, ApiError
from kubesched.cmd.common import (
    cluster_config,
    connection_options,
    gates_option,
    load_scheduler_config,
    parse_gates,
    plugin_option,
)
from kubesched.framework.status import SchedulingError
from kubesched.framework.types import PodInfo
from kubesched.tools.explain.cluster import ExplainError, choose_profile, read_cluster
from kubesched.tools.explain.evaluate import explain as evaluate
from kubesched.tools.explain.group import explain_group
from kubesched.tools.explain.model import Explanation
from kubesched.tools.explain.render import render_json, render_table, render_yaml


@click.command()
@click.argument("pod")
@click.option("-n", "--namespace", default="default", show_default=True)
@click.option("--profile", "profile_name", default=None,
              help="Profile to explain with (default: the pod's schedulerName if it is a profile, else the first).")
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="The KubeSchedulerConfiguration `kubesched run` uses (default: kubesched's default profile).")
@connection_options
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@click.option("--all", "show_all", is_flag=True, help="Table: one row per node instead of groups.")
@plugin_option
@gates_option
def explain(pod: str, namespace: str, profile_name: str | None, config_path: str | None, kubeconfig: str | None,
            context: str | None, output: str, show_all: bool, plugin_flags: tuple[str, ...],
            feature_gates: tuple[str, ...]) -> None:
    """Why POD goes (or would go) where it does: each node's verdict from every filter plugin, the
    scores of the feasible nodes, and the node(s) with the best total or the FailedScheduling
    message. Reads the cluster once and writes nothing; a bound pod is explained as if pending.
    A pod of a pod group also gets its group's verdict: where each of its queued pods would go, and
    why the group as a whole would not be placed.

    \b
    Examples:
      kubesched explain web-0 -n shop
      kubesched explain web-0 -n shop -o json --config my-kube-scheduler.yaml
      kubesched explain train-0 -n ml --feature-gates GenericWorkload=true
    """
    gates = parse_gates(feature_gates)
    config, extra = load_scheduler_config(config_path, plugin_flags, gates)
    cluster = cluster_config(config, kubeconfig, context)

    async def read() -> Explanation:
        conn = config.client_connection
        async with ApiClient(cluster, qps=conn.qps, burst=conn.burst) as client:
            view = await read_cluster(client, config, namespace, pod, extra, generic_workload=gates.generic_workload)
        profile = choose_profile(view.profiles, view.pod, profile_name)
        percentage = config.percentage_of_nodes_to_score
        found = evaluate(profile, view.snapshot, PodInfo(view.pod), percentage_of_nodes_to_score=percentage)
        if view.group is not None:
            found.group, notes = explain_group(profile, view.group, view.pod, percentage_of_nodes_to_score=percentage)
            found.notes.extend(notes)
        return found

    try:
        found = asyncio.run(read())
    except ExplainError as exc:
        raise click.ClickException(str(exc)) from None
    except (ApiError, ApiConnectionError) as exc:
        raise click.ClickException(f"reading the cluster failed: {exc}") from None
    except SchedulingError as exc:
        # What kubesched's cycle reports too (reason SchedulerError): there is no placement to explain.
        raise click.ClickException(f"the scheduling cycle fails for this pod: {exc}") from None
    if output == "json":
        click.echo(render_json(found))
    elif output == "yaml":
        click.echo(render_yaml(found), nl=False)
    else:
        click.echo(render_table(found, show_all=show_all), nl=False)
