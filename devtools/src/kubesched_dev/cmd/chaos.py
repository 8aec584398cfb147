"""`kubesched chaos SCENARIO`: the reliability runs (issue 15), each on a fresh local plane."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from kubesched_dev.bench import chaos_gangs
from kubesched_dev.bench.chaos import SCENARIOS, ChaosOptions, run
from kubesched_dev.bench.gang_stress import GangPlan


@click.command()
@click.argument("scenario", type=click.Choice((*SCENARIOS, "gangs")))
@click.option("--nodes", type=click.IntRange(1), default=None,
              help="General kwok nodes.  [default: 20; gangs: 100]")
@click.option("--pool-nodes", type=click.IntRange(0), default=2, show_default=True,
              help="Nodes of the CronJob pool (labelled and tainted kubesched.io/pool=cronjob).")
@click.option("--slots", type=click.IntRange(1), default=110, show_default=True, help="Pods a node takes.")
@click.option("--fill", type=click.FloatRange(0.01, 1.0), default=0.95, show_default=True,
              help="Share of every node's slots the run's pods take (a pool pod in the same share).")
@click.option("--rate", type=click.FloatRange(min=0), default=300.0, show_default=True,
              help="Pods created a second (0: as fast as the apiserver takes them; soak: 50 if 0).")
@click.option("--kill-every", type=click.FloatRange(min=0.5), default=5.0, show_default=True, metavar="SECONDS",
              help="kill: SIGKILL each kubesched process this long after its caches synced, and start another.")
@click.option("--restarts", type=click.IntRange(1), default=2, show_default=True,
              help="apiserver: kube-apiserver restarts, evenly through the pods' creation.")
@click.option("--kills", type=click.IntRange(1), default=10, show_default=True,
              help="failover: times the leader is SIGKILLed.")
@click.option("--duration", type=click.FloatRange(min=10), default=1800.0, show_default=True, metavar="SECONDS",
              help="soak: how long pods are created (and, once the cluster is at --fill, deleted).")
@click.option("--sample-every", type=click.FloatRange(min=1), default=10.0, show_default=True, metavar="SECONDS",
              help="soak: how often RSS and the internal map sizes are read.")
@click.option("--timeout", type=click.FloatRange(min=10), default=900.0, show_default=True, metavar="SECONDS",
              help="The run's own limit once the plane is up (soak: on top of --duration).")
@click.option("--gangs", "gang_count", type=click.IntRange(1), default=50, show_default=True,
              help="gangs: PodGroups (gang policy), created together with all their pods.")
@click.option("--gang-size", type=click.IntRange(1), default=8, show_default=True,
              help="gangs: pods of a gang, and its minCount.")
@click.option("--room", type=click.IntRange(1), default=20, show_default=True,
              help="gangs: nodes with one CPU (a gang pod requests 1); the others have 500m.")
@click.option("--hold", type=click.FloatRange(min=0), default=3.0, show_default=True, metavar="SECONDS",
              help="gangs: how long a whole gang runs before its pods are deleted.")
@click.option("--stall", type=click.FloatRange(min=1), default=120.0, show_default=True, metavar="SECONDS",
              help="gangs: no gang completing this long, with gangs left, is a deadlock.")
@click.option("--settle", type=click.FloatRange(min=0), default=5.0, show_default=True, metavar="SECONDS",
              help="gangs: a gang partly bound this long (its binds are one POST each) is a partial gang.")
@click.option("--contenders", "gang_contenders", default="kube-scheduler,kubesched", show_default=True,
              help="gangs: who runs the workload, in this order (comma-separated: kube-scheduler, kubesched).")
@click.option("--rounds", type=click.IntRange(1), default=1, show_default=True,
              help="gangs: kube-scheduler then kubesched, this many times.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory for the JSON and the kubesched logs (default: bench-results/chaos-<scenario>-<time>).")
def chaos(scenario: str, nodes: int | None, pool_nodes: int, slots: int, fill: float, rate: float,
          kill_every: float, restarts: int, kills: int, duration: float, sample_every: float, timeout: float,
          gang_count: int, gang_size: int, room: int, hold: float, stall: float, settle: float,
          gang_contenders: str, rounds: int, out: Path | None) -> None:
    """A fault injected again and again through a run of kubesched on a nearly full cluster with a
    CronJob pool; then every pod must be bound, no node over capacity and the pool kept.

    \b
    kill       R1: kubesched SIGKILLed every --kill-every seconds and started again
    apiserver  R2: kube-apiserver restarted --restarts times mid-run; kubesched never restarted
    failover   R4: two replicas with leader election; the leader SIGKILLed --kills times
    soak       R6: --duration seconds at --rate pods/s with churn; RSS and map sizes sampled
    gangs      --gangs PodGroups of --gang-size pods (GenericWorkload gate on) arriving together
               with room for --room pods; a gang's pods deleted --hold s after all are bound;
               no partial gang, no deadlock; kube-scheduler then kubesched on the same workload

    \b
    Examples:
      kubesched chaos kill --nodes 90 --pool-nodes 5 --fill 0.96      # ~10,000 pods
      kubesched chaos apiserver
      kubesched chaos failover --kills 10
      kubesched chaos soak --duration 1800 --rate 50
      kubesched chaos gangs                       # 50 gangs of 8, 100 nodes, room for 20
    """
    out = out or Path("bench-results") / f"chaos-{scenario}-{time.strftime('%Y%m%d-%H%M%S')}"
    began = time.monotonic()

    def progress(msg: str) -> None:
        click.echo(f"[chaos {time.monotonic() - began:6.1f}s] {msg}", err=True)

    if scenario == "gangs":
        if room > (nodes or 100):
            raise click.BadParameter(f"{room} is more than --nodes ({nodes or 100}): the room is that many of the "
                                     "nodes", param_hint="--room")
        contenders = tuple(c.strip() for c in gang_contenders.split(",") if c.strip())
        unknown = [c for c in contenders if c not in chaos_gangs.CONTENDERS]
        if unknown or not contenders:
            raise click.BadParameter(f"{gang_contenders!r}: each must be one of {', '.join(chaos_gangs.CONTENDERS)}",
                                     param_hint="--contenders")
        _gangs(chaos_gangs.GangChaosOptions(out=out, nodes=nodes or 100, room=room, rounds=rounds,
                                            contenders=contenders, plan=GangPlan(
            gangs=gang_count, size=gang_size, hold=hold, stall=stall, settle=settle, timeout=timeout)), progress)
        return
    nodes = nodes or 20
    opts = ChaosOptions(scenario=scenario, out=out, nodes=nodes, pool_nodes=pool_nodes, slots=slots, fill=fill,
                        rate=rate, kill_every=kill_every, restarts=restarts, kills=kills, duration=duration,
                        sample_every=sample_every, timeout=timeout)
    result = run(opts, progress)
    click.echo(result.summary())
    path = out / "chaos.json"
    path.write_text(json.dumps(result.as_dict(), indent=2))
    click.echo(f"JSON: {path}")
    if not result.ok:
        raise click.ClickException(f"{scenario}: the invariants did not hold (see above and {out})")


def _gangs(opts: chaos_gangs.GangChaosOptions, progress: chaos_gangs.Progress) -> None:
    result = chaos_gangs.run(opts, progress)
    click.echo(result.summary())
    opts.out.mkdir(parents=True, exist_ok=True)
    path = opts.out / "chaos.json"
    path.write_text(json.dumps(result.as_dict(), indent=2))
    click.echo(f"JSON: {path}")
    if not result.ok:
        raise click.ClickException(f"gangs: the invariants did not hold (see above and {opts.out})")


__all__ = ["chaos"]
