"""The kubesched command line."""

from __future__ import annotations

import importlib

import click

from kubesched import __version__

# Each command's module, imported only when that command runs: `kubesched run` then loads the
# scheduler and not the bench, the control plane or the simulator too (~1.4 s of a restart's time
# to its first bind, seen on a loaded machine with -X importtime).
LAZY_COMMANDS = {
    "run": "run", "cluster": "cluster", "pool": "pool", "bench": "bench", "chaos": "chaos",
    "explain": "explain", "snapshot": "simulate", "simulate": "simulate", "shadow": "shadow",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = LAZY_COMMANDS.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(f"{__package__}.{module}"), cmd_name)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """kubesched: a Kubernetes scheduler in Python that decides like kube-scheduler,
    with node pools dedicated to CronJob pods."""


@main.command()
def version() -> None:
    """Print kubesched's version and the control-plane versions it builds."""
    from kubesched.localcluster.versions import ETCD_VERSION, KUBERNETES_VERSION, KWOK_VERSION

    click.echo(f"kubesched {__version__} (local control plane: Kubernetes {KUBERNETES_VERSION}, "
               f"etcd {ETCD_VERSION}, kwok {KWOK_VERSION})")


@main.command()
@click.option("--keep", is_flag=True, help="Leave the demo cluster running afterwards.")
@click.option("--no-wait-cronjob", is_flag=True, help="Do not wait (up to 2 minutes) for the CronJobs to fire.")
def demo(keep: bool, no_wait_cronjob: bool) -> None:
    """The seed's story, for real: a local seed-kind cluster (built on first use), kubesched with the
    seed's config, the seed's nginx Deployment and CronJobs, and where their pods landed."""
    from kubesched.demo import run_demo
    from kubesched.localcluster import build, plane

    try:
        run_demo(lambda m: click.echo(m, err=True), keep=keep, wait_cronjob=not no_wait_cronjob)
    except (plane.ClusterError, build.BuildError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None

