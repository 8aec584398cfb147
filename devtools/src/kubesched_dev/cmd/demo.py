"""`kubesched demo`: the seed's story on a local control plane."""

from __future__ import annotations

import click


@click.command()
@click.option("--keep", is_flag=True, help="Leave the demo cluster running afterwards.")
@click.option("--no-wait-cronjob", is_flag=True, help="Do not wait (up to 2 minutes) for the CronJobs to fire.")
def demo(keep: bool, no_wait_cronjob: bool) -> None:
    """The seed's story, for real: a local seed-kind cluster (built on first use), kubesched with the
    seed's config, the seed's nginx Deployment and CronJobs, and where their pods landed."""
    from kubesched_dev.demo import run_demo
    from kubesched_dev.localcluster import build, plane

    try:
        run_demo(lambda m: click.echo(m, err=True), keep=keep, wait_cronjob=not no_wait_cronjob)
    except (plane.ClusterError, build.BuildError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
