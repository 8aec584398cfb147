"""The kubesched command line."""

from __future__ import annotations

import click

from . import __version__
from .cli_cluster import cluster
from .cli_pool import pool
from .cli_run import run


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


main.add_command(run)
main.add_command(cluster)
main.add_command(pool)
