"""Extended resources backed by DRA in the resource scores (kube-scheduler v1.37.2
noderesources/resource_allocation.go: getDRAPreScoredParams, calculateDRAResourceTotals,
deviceMatchesClass): where a scored resource is no node's allocatable but a DeviceClass maps it,
NodeResourcesFit's strategies and NodeResourcesBalancedAllocation count the class's devices on the
node as its allocatable and those allocated as its requested.

Devices are counted per slice that applies to the node (by name, all nodes, or its node selector;
per device where the slice selects nodes per device), each matched against the class's CEL
selectors, every outcome kept by the selector cache as upstream keeps its deviceMatchCache."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kubesched.model.objects import Node
from kubesched.model.resource import Device, DeviceClass, ResourceSlice
from kubesched.plugins.dynamic_resources.cel.cache import CelSelectorCache
from kubesched.plugins.dynamic_resources.manager import DraManager
from kubesched.plugins.dynamic_resources.pools import AllocatorError, DeviceID, NodeView, node_matches
from kubesched.plugins.dynamic_resources.selectors import SelectorCache, SelectorCompileError, SelectorRuntimeError
from kubesched.plugins.dynamic_resources.state import AllocatedState
from kubesched.plugins.helper.dra_extended import class_mapping, is_dra_extended_resource_name

log = logging.getLogger(__name__)


class _Unscorable(Exception):
    pass


class CycleTotals:
    """The allocated state and slices of one scoring cycle."""

    def __init__(self, classes: dict[str, DeviceClass], allocated: AllocatedState, slices: Sequence[ResourceSlice],
                 selectors: SelectorCache) -> None:
        self._classes = classes
        self._allocated = allocated
        self._slices = slices
        self._selectors = selectors

    def totals(self, resource: str, node: Node) -> tuple[int, int]:
        device_class = self._classes.get(resource)
        if device_class is None:
            return 0, 0
        try:
            return self._count(device_class, NodeView(node.metadata.name, node.metadata.labels))
        except _Unscorable as e:
            log.warning("DRA extended resource %s not scored on node %s (class %s): %s", resource,
                        node.metadata.name, device_class.metadata.name, e)
            return 0, 0

    def _count(self, device_class: DeviceClass, node: NodeView) -> tuple[int, int]:
        capacity = allocated = 0
        for s in self._slices:
            spec = s.spec
            try:
                if spec.per_device_node_selection:
                    devices = [d for d in spec.devices
                               if node_matches(node, d.node_name or "", bool(d.all_nodes), d.node_selector)]
                elif node_matches(node, spec.node_name or "", bool(spec.all_nodes), spec.node_selector):
                    devices = spec.devices
                else:
                    continue
            except AllocatorError as e:
                raise _Unscorable(str(e)) from None
            for device in devices:
                if not self._matches(device_class, spec.driver, device):
                    continue
                capacity += 1
                if self._allocated.is_allocated(DeviceID(spec.driver, spec.pool.name, device.name)):
                    allocated += 1
        return capacity, allocated

    def _matches(self, device_class: DeviceClass, driver: str, device: Device) -> bool:
        for selector in device_class.spec.selectors:
            if selector.cel is None:
                continue
            expression = selector.cel.expression
            compiled = self._selectors.get(expression)
            if isinstance(compiled, SelectorCompileError):
                raise _Unscorable(str(compiled))
            try:
                if not self._selectors.matches(expression, compiled, driver, device):
                    return False
            except SelectorRuntimeError as e:
                raise _Unscorable(str(e)) from None
        return True


class DeviceScoring:
    """helper.dra_extended.DeviceScoring over the scheduler's DRA objects."""

    def __init__(self, dra: DraManager, selectors: SelectorCache | None = None) -> None:
        self._dra = dra
        self._selectors = selectors if selectors is not None else CelSelectorCache()

    def pre_score(self, resources: Sequence[str]) -> CycleTotals | None:
        if not any(is_dra_extended_resource_name(r) for r in resources):
            return None
        mapping = class_mapping(self._dra.classes.list())
        if not any(is_dra_extended_resource_name(r) and r in mapping for r in resources):
            return None
        return CycleTotals(mapping, self._dra.claims.gather_allocated_state(), self._dra.slices.list(),
                           self._selectors)
