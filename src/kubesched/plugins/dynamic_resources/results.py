"""Where an allocation can be used: the node selector the allocator writes into a claim's
allocation (createNodeSelector): the node's name when a device is local to a node (a slice or,
with perDeviceNodeSelection, a device with a nodeName, or a device that binds to its node), else
the union of the requirements of the single-term node selectors of the devices' slices (or
devices), else none (available everywhere)."""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.model.resource import Device, ResourceSlice
from kubesched.plugins.dynamic_resources.pools import AllocatorError


def allocation_node_selector(picked: Sequence[tuple[ResourceSlice, Device]], node_name: str,
                             claim_name: str) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for s, device in picked:
        if s.spec.per_device_node_selection:
            name, selector = device.node_name, device.node_selector
        else:
            name, selector = s.spec.node_name, s.spec.node_selector
        if name is not None or device.binds_to_node:
            return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_fields=[NodeSelectorRequirement(
                key="metadata.name", operator="In", values=[node_name])])])
        if selector is not None:
            terms = selector.node_selector_terms
            if len(terms) == 1:
                _add_requirements(terms[0].match_fields, fields)
                _add_requirements(terms[0].match_expressions, expressions)
            elif len(terms) > 1:
                raise AllocatorError(f"create NodeSelector for claim {claim_name}: "
                                     f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if fields or expressions:
        return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=expressions,
                                                                  match_fields=fields)])
    return None


def _add_requirements(source: list[NodeSelectorRequirement], target: list[NodeSelectorRequirement]) -> None:
    for requirement in source:
        values = set(requirement.values)
        if not any(r.key == requirement.key and r.operator == requirement.operator and set(r.values) == values
                   for r in target):
            target.append(requirement)
