"""Extended resources backed by DRA, as NodeResourcesFit and DynamicResources both read them
(kube-scheduler's DeviceClassResolver over k8s.io/dynamic-resource-allocation's extended-resource
cache): which DeviceClass a resource name maps to, by the class's `spec.extendedResourceName` or
the implicit `deviceclass.resource.kubernetes.io/<class>`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.resources import is_extended_resource_name
from kubesched.model.objects import Node
from kubesched.model.resource import DeviceClass

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"

ClassMapping = Mapping[str, DeviceClass]


def is_dra_extended_resource_name(name: str) -> bool:
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def class_mapping(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """Resource name to class, as the extended-resource cache resolves it: of classes naming the same
    extendedResourceName the newest wins, then the lower name; the implicit name is unique."""
    out: dict[str, DeviceClass] = {}
    for c in classes:
        out[DEVICE_CLASS_PREFIX + c.metadata.name] = c
    explicit: dict[str, DeviceClass] = {}
    for c in classes:
        name = c.spec.extended_resource_name
        if not name:
            continue
        held = explicit.get(name)
        if held is None or _newer(c, held):
            explicit[name] = c
    out.update(explicit)
    return out


def _newer(c: DeviceClass, than: DeviceClass) -> bool:
    # RFC 3339 timestamps in UTC ("...Z") compare as strings.
    mine, theirs = c.metadata.creation_timestamp or "", than.metadata.creation_timestamp or ""
    if mine != theirs:
        return mine > theirs
    return c.metadata.name < than.metadata.name


def asks_for_dra_extended_resources(scalar: Mapping[str, int]) -> bool:
    """Whether a pod's requests name any resource a class could map (most pods: no)."""
    return any(q != 0 and is_dra_extended_resource_name(n) for n, q in scalar.items())


def has_mapped_extended_resource(scalar: Mapping[str, int], mapping: ClassMapping) -> bool:
    """hasDeviceClassMappedExtendedResource."""
    return any(q != 0 and is_dra_extended_resource_name(n) and n in mapping for n, q in scalar.items())


def mapped_resources(scalar: Mapping[str, int], mapping: ClassMapping) -> frozenset[str]:
    """The pod's requested resources that a class maps: NodeResourcesFit leaves each to
    DynamicResources on a node whose allocatable lacks it (shouldDelegateResourceToDRA)."""
    return frozenset(n for n, q in scalar.items() if q != 0 and is_dra_extended_resource_name(n) and n in mapping)


class DeviceTotals(Protocol):
    """One scoring cycle's view of the devices behind extended resources (kube-scheduler's
    draPreScoreState: the allocated state and the slices, gathered once in PreScore)."""

    def totals(self, resource: str, node: Node) -> tuple[int, int]:
        """(devices of the resource's class on the node, those allocated); (0, 0) when no class
        maps it or its selectors cannot be evaluated (upstream logs that and scores without it)."""
        ...


class DeviceScoring(Protocol):
    """What NodeResourcesFit and NodeResourcesBalancedAllocation score DRA-backed resources with."""

    def pre_score(self, resources: Sequence[str]) -> DeviceTotals | None:
        """getDRAPreScoredParams: None unless a class maps one of the scored resources."""
        ...


def write_cycle_devices(state: CycleState, key: str, scoring: DeviceScoring | None, resources: Sequence[str]) -> None:
    """PreScore's part: the cycle's device counts under `key` (False when none is needed)."""
    if scoring is not None:
        state.write(key, scoring.pre_score(resources) or False)


def cycle_devices(state: CycleState, key: str, scoring: DeviceScoring | None,
                  resources: Sequence[str]) -> DeviceTotals | None:
    """The cycle's device counts, gathered in PreScore, or here when Score runs without it (as
    upstream's Score does); None when no scored resource is backed by devices."""
    if scoring is None:
        return None
    found: DeviceTotals | bool | None = state.get(key)
    if found is None:
        write_cycle_devices(state, key, scoring, resources)
        found = state.get(key)
    return None if isinstance(found, bool) else found
