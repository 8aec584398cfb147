"""kubesched's in-tree plugins and kube-scheduler's default profile restricted to them."""

from __future__ import annotations

import functools

from kubesched.config.types import PluginRef
from kubesched.framework.registry import Registry
from kubesched.plugins import (
    balanced_allocation,
    cronjob_pool,
    default_binder,
    image_locality,
    node_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    unsupported_fields,
)
from kubesched.plugins.pool_ownership import JobLookup


def in_tree_registry(jobs: JobLookup | None = None) -> Registry:
    """Every plugin kubesched ships. The CronJob pool reads Jobs from `jobs` (the scheduler's Job
    informer); without it every owner Job counts as gone."""
    return {
        priority_sort.NAME: priority_sort.new,
        scheduling_gates.NAME: scheduling_gates.new,
        node_name.NAME: node_name.new,
        node_unschedulable.NAME: node_unschedulable.new,
        taint_toleration.NAME: taint_toleration.new,
        node_affinity.NAME: node_affinity.new,
        node_ports.NAME: node_ports.new,
        node_resources_fit.NAME: node_resources_fit.new,
        balanced_allocation.NAME: balanced_allocation.new,
        image_locality.NAME: image_locality.new,
        default_binder.NAME: default_binder.new,
        unsupported_fields.NAME: unsupported_fields.new,
        cronjob_pool.NAME: functools.partial(cronjob_pool.new_cronjob_pool, jobs=jobs),
    }


def default_plugins() -> dict[str, tuple[PluginRef, ...]]:
    """kube-scheduler v1.37.2's default profile restricted to the plugins kubesched implements: kubesched's
    own default (kubesched.config) without the CronJob pool, for comparisons with kube-scheduler."""
    from kubesched.config import load  # the config package imports plugin args parsers from here

    plugins = load(None).profiles[0].plugins
    return {point: tuple(p for p in refs if p.name != cronjob_pool.NAME) for point, refs in plugins.items() if refs}
