"""Extended resources backed by DRA, as NodeResourcesFit and DynamicResources both read them
(kube-scheduler's DeviceClassResolver over k8s.io/dynamic-resource-allocation's extended-resource
cache): which DeviceClass a resource name maps to, by the class's `spec.extendedResourceName` or
the implicit `deviceclass.resource.kubernetes.io/<class>`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kubesched.framework.resources import is_extended_resource_name
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
