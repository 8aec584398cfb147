"""The kubesched command line."""

from __future__ import annotations

import importlib
from importlib import metadata

import click

from kubesched import __version__

# Each command's module, imported only when that command runs: `kubesched run` then loads the
# scheduler and not the bench, the control plane or the simulator too (~1.4 s of a restart's time
# to its first bind, seen on a loaded machine with -X importtime).
LAZY_COMMANDS = {
    "run": "run", "pool": "pool", "explain": "explain", "snapshot": "simulate", "simulate": "simulate",
    "shadow": "shadow",
}
# Commands of other installed packages: entry name = command name, value = module:attr of a click
# command. kubesched-dev (devtools/) adds `cluster`, `bench`, `chaos` and `demo` so. Each is imported
# only when it runs, and the scan happens only for `--help` or a name kubesched does not know, so
# `kubesched run` neither reads the entry points nor imports the dev tools. kubesched's own commands
# win over a plugged-in one of the same name.
COMMANDS_GROUP = "kubesched.commands"
# What `kubesched version` adds: entry name = what it describes, value = module:attr of a function
# returning one phrase (kubesched-dev's: the control-plane versions it builds).
VERSIONS_GROUP = "kubesched.versions"


def plugged_commands() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=COMMANDS_GROUP)}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS, *plugged_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = LAZY_COMMANDS.get(cmd_name)
        if module is not None:
            command = getattr(importlib.import_module(f"{__package__}.{module}"), cmd_name)
            assert isinstance(command, click.Command)
            return command
        own = super().get_command(ctx, cmd_name)
        if own is not None:
            return own
        entry = plugged_commands().get(cmd_name)
        if entry is None:
            return None
        plugged = entry.load()
        if not isinstance(plugged, click.Command):
            raise click.ClickException(f"the {COMMANDS_GROUP} entry point {cmd_name} = {entry.value} "
                                       f"is a {type(plugged).__name__}, not a click command")
        return plugged


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """kubesched: a Kubernetes scheduler in Python that decides like kube-scheduler,
    with node pools dedicated to CronJob pods."""


@main.command()
def version() -> None:
    """Print kubesched's version (and, with kubesched-dev installed, the control-plane versions it builds)."""
    entries = {ep.name: ep for ep in metadata.entry_points(group=VERSIONS_GROUP)}
    extra = "; ".join(str(entries[name].load()()) for name in sorted(entries))
    click.echo(f"kubesched {__version__} ({extra})" if extra else f"kubesched {__version__}")
