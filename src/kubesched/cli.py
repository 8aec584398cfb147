"""The kubesched command line."""

from __future__ import annotations

import click

from . import __version__
from .cli_bench import bench
from .cli_chaos import chaos
from .cli_cluster import cluster
from .cli_explain import explain
from .cli_pool import pool
from .cli_run import run
from .cli_shadow import shadow
from .cli_simulate import simulate, snapshot


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """kubesched: a Kubernetes scheduler in Python that decides like kube-scheduler,
    with node pools dedicated to CronJob pods."""


@main.command()
def version() -> None:
    """Print kubesched's version and the control-plane versions it builds."""
    from .localcluster.versions import ETCD_VERSION, KUBERNETES_VERSION, KWOK_VERSION

    click.echo(f"kubesched {__version__} (local control plane: Kubernetes {KUBERNETES_VERSION}, "
               f"etcd {ETCD_VERSION}, kwok {KWOK_VERSION})")


@main.command()
@click.option("--keep", is_flag=True, help="Leave the demo cluster running afterwards.")
@click.option("--no-wait-cronjob", is_flag=True, help="Do not wait (up to 2 minutes) for the CronJobs to fire.")
def demo(keep: bool, no_wait_cronjob: bool) -> None:
    """The seed's story, for real: a local seed-kind cluster (built on first use), kubesched with the
    seed's config, the seed's nginx Deployment and CronJobs, and where their pods landed."""
    from .demo import run_demo
    from .localcluster import build, plane

    try:
        run_demo(lambda m: click.echo(m, err=True), keep=keep, wait_cronjob=not no_wait_cronjob)
    except (plane.ClusterError, build.BuildError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None


main.add_command(run)
main.add_command(cluster)
main.add_command(pool)
main.add_command(bench)
main.add_command(chaos)
main.add_command(explain)
main.add_command(snapshot)
main.add_command(simulate)
main.add_command(shadow)
