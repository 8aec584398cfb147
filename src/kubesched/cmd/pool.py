"""`kubesched pool taint|untaint`: put the pools' taints on their nodes, or take them off.

The taint is what keeps kube-scheduler and every other scheduler off a pool's nodes; kubesched
tolerates it for the pool's own pods. Both commands are idempotent: a node that already has (or
lacks) the exact taint is left alone. Nodes are patched with their resourceVersion as a
precondition, so a concurrent change to the node's taints is never overwritten (409: read again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import click
import orjson

from kubesched.api.client import MERGE_PATCH, ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.api.kubeconfig import KubeconfigError, load_config
from kubesched.config import ConfigError, load
from kubesched.plugins.cronjob_pool.config import PoolSpec, typed, validate
from kubesched.plugins.cronjob_pool.plugin import NAME

CONFLICT_RETRIES = 5
Echo = Callable[[str], None]
RawTaint = dict[str, Any]


def pools_from_config(path: str | None) -> list[PoolSpec]:
    """The pools of every profile that enables CronJobPool in the file; the default pool without one."""
    if path is None:
        parsed, _ = validate({})
        return list(typed(parsed).pools)
    config = load(path)
    found: dict[str, PoolSpec] = {}
    for profile in config.profiles:
        enabled = any(ref.name == NAME for refs in profile.plugins.values() for ref in refs)
        args = profile.plugin_args.get(NAME)
        if not enabled or args is None:
            continue
        for spec in typed(args).pools:
            other = found.setdefault(spec.name, spec)
            if other != spec:
                raise click.ClickException(f"{path}: pool {spec.name!r} is defined differently in two profiles")
    if not found:
        raise click.ClickException(f"{path}: no profile enables {NAME}, so there is no pool to taint")
    return list(found.values())


def _same(a: RawTaint, taint: RawTaint) -> bool:
    return all(a.get(k, "") == taint[k] for k in ("key", "value", "effect"))


def with_taint(taints: Sequence[RawTaint], taint: RawTaint) -> list[RawTaint] | None:
    """The node's taints with `taint` added, or None when it is already there."""
    if any(_same(t, taint) for t in taints):
        return None
    return [*taints, taint]


def without_taint(taints: Sequence[RawTaint], taint: RawTaint) -> list[RawTaint] | None:
    """The node's taints without `taint`, or None when it is not there; other taints keep every field."""
    kept = [t for t in taints if not _same(t, taint)]
    return None if len(kept) == len(taints) else kept


def _raw_taint(spec: PoolSpec) -> RawTaint | None:
    t = spec.taint
    if t is None:
        return None
    return {"key": t.key, "value": t.value, "effect": t.effect} if t.value else {"key": t.key, "effect": t.effect}


def _show(taint: RawTaint) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint['key']}{value}:{taint['effect']}"


async def _list_nodes(client: ApiClient, label_selector: str) -> list[dict[str, Any]]:
    params = {"labelSelector": label_selector} if label_selector else None
    body = orjson.loads(await client.get("/api/v1/nodes", params))
    items: list[dict[str, Any]] = body.get("items") or []
    return items


async def _patch_node(client: ApiClient, node: dict[str, Any], taint: RawTaint, remove: bool) -> bool:
    """Add or remove the taint on one node; False when there was nothing to do."""
    name = node["metadata"]["name"]
    path = f"/api/v1/nodes/{quote(name, safe='')}"
    for _ in range(CONFLICT_RETRIES):
        taints = node.get("spec", {}).get("taints") or []
        new = without_taint(taints, taint) if remove else with_taint(taints, taint)
        if new is None:
            return False
        body = {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]}, "spec": {"taints": new}}
        try:
            await client.patch(path, body, content_type=MERGE_PATCH)
            return True
        except ApiError as exc:
            if exc.status != 409:
                raise
        node = orjson.loads(await client.get(path))
    raise click.ClickException(f"node/{name}: its taints kept changing; {CONFLICT_RETRIES} attempts failed")


async def apply_pools(client: ApiClient, pools: Sequence[PoolSpec], *, remove: bool, dry_run: bool,
                      echo: Echo) -> int:
    """Taint (or untaint) the pools' nodes; returns how many nodes changed (or would change).

    Untaint looks at every node, not only those the selector matches now, so a node that left the
    pool (its labels changed) loses the pool's taint too."""
    changed = 0
    for spec in pools:
        taint = _raw_taint(spec)
        if taint is None:
            echo(f"pool {spec.name}: no taint configured (taint: null), nothing to do")
            continue
        nodes = await _list_nodes(client, "" if remove else spec.nodes.query())
        if not nodes and not remove:
            echo(f"pool {spec.name}: no node matches {spec.nodes.query()}")
        verb = "untainted" if remove else "tainted"
        for node in nodes:
            name = node["metadata"]["name"]
            taints = node.get("spec", {}).get("taints") or []
            todo = (without_taint if remove else with_taint)(taints, taint) is not None
            if not todo:
                if not remove:
                    echo(f"node/{name} unchanged ({_show(taint)})")
                continue
            if dry_run:
                echo(f"node/{name} {verb} ({_show(taint)}) (dry run)")
                changed += 1
                continue
            if await _patch_node(client, node, taint, remove):
                echo(f"node/{name} {verb} ({_show(taint)})")
                changed += 1
    return changed


def _run(config_path: str | None, pool_names: tuple[str, ...], kubeconfig: str | None, context: str | None,
         dry_run: bool, remove: bool) -> None:
    try:
        pools = pools_from_config(config_path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if pool_names:
        known = {p.name for p in pools}
        unknown = [n for n in pool_names if n not in known]
        if unknown:
            raise click.ClickException(f"no pool named {', '.join(unknown)}; pools: {', '.join(sorted(known))}")
        pools = [p for p in pools if p.name in pool_names]
    try:
        cluster = load_config(kubeconfig, context)
    except KubeconfigError as exc:
        raise click.ClickException(str(exc)) from exc

    async def main() -> int:
        async with ApiClient(cluster, max_connections=4, user_agent="kubesched-pool") as client:
            return await apply_pools(client, pools, remove=remove, dry_run=dry_run, echo=click.echo)

    try:
        changed = asyncio.run(main())
    except (ApiError, ApiConnectionError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{changed} node(s) {'would change' if dry_run else 'changed'}", err=True)


_options = [
    click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                 help="A KubeSchedulerConfiguration whose CronJobPool args define the pools "
                      "(default: the one cronjob pool, nodes kubesched.io/pool=cronjob)."),
    click.option("--pool", "pool_names", multiple=True, metavar="NAME", help="Only this pool (repeatable)."),
    click.option("--kubeconfig", default=None,
                 help="kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)."),
    click.option("--context", default=None, help="kubeconfig context."),
    click.option("--dry-run", is_flag=True, help="Print what would change; change nothing."),
]


def _with_options(fn: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_options):
        fn = option(fn)
    return fn


@click.group()
def pool() -> None:
    """Dedicated node pools (the CronJobPool plugin): manage the taint that keeps other pods, and other
    schedulers, off a pool's nodes."""


@pool.command()
@_with_options
def taint(config_path: str | None, pool_names: tuple[str, ...], kubeconfig: str | None, context: str | None,
          dry_run: bool) -> None:
    """Add each pool's taint to every node its `nodes` selector matches (idempotent)."""
    _run(config_path, pool_names, kubeconfig, context, dry_run, remove=False)


@pool.command()
@_with_options
def untaint(config_path: str | None, pool_names: tuple[str, ...], kubeconfig: str | None, context: str | None,
            dry_run: bool) -> None:
    """Remove each pool's taint from every node that carries it (idempotent)."""
    _run(config_path, pool_names, kubeconfig, context, dry_run, remove=True)
