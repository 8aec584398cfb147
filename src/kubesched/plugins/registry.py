"""kubesched's in-tree plugins and kube-scheduler's default profile restricted to them."""

from __future__ import annotations

from kubesched.config.types import PluginRef
from kubesched.framework.registry import Registry
from kubesched.plugins import (
    balanced_allocation,
    image_locality,
    node_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    node_unschedulable,
    priority_sort,
    scheduling_gates,
    taint_toleration,
)


def in_tree_registry() -> Registry:
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
    }


def default_plugins() -> dict[str, tuple[PluginRef, ...]]:
    """kube-scheduler v1.37.2's default multiPoint list expanded to the extension points, in its
    order, keeping the plugins kubesched implements (binding is DefaultBinder's, in the api layer)."""
    return {
        "preEnqueue": (PluginRef("SchedulingGates"),),
        "queueSort": (PluginRef("PrioritySort"),),
        "preFilter": (PluginRef("NodeName"), PluginRef("NodeUnschedulable"), PluginRef("TaintToleration"),
                      PluginRef("NodeAffinity"), PluginRef("NodePorts"), PluginRef("NodeResourcesFit")),
        "filter": (PluginRef("NodeName"), PluginRef("NodeUnschedulable"), PluginRef("TaintToleration"),
                   PluginRef("NodeAffinity"), PluginRef("NodePorts"), PluginRef("NodeResourcesFit")),
        "preScore": (PluginRef("TaintToleration"), PluginRef("NodeAffinity"), PluginRef("NodeResourcesFit"),
                     PluginRef("NodeResourcesBalancedAllocation")),
        "score": (PluginRef("TaintToleration", 3), PluginRef("NodeAffinity", 2),
                  PluginRef("NodeResourcesFit", 1), PluginRef("NodeResourcesBalancedAllocation", 1),
                  PluginRef("ImageLocality", 1)),
    }
