"""kubesched's in-tree plugins (kube-scheduler's default profile restricted to them is
kubesched.config.kube_scheduler_default_plugins)."""

from __future__ import annotations

import functools

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

