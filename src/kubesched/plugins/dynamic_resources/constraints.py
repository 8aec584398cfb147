"""Claim constraints (structured/internal/incubating: matchAttributeConstraint in the allocator,
distinctAttributeConstraint in constraint.go): every device picked for the constraint's requests
(all of the claim's when it names none) must have the attribute, with one value for matchAttribute,
with pairwise different values for distinctAttribute.
"""

from __future__ import annotations

from typing import Protocol

from kubesched.model.resource import Device, DeviceAttribute, DeviceConstraint
from kubesched.plugins.dynamic_resources.pools import DeviceID


class Constraint(Protocol):
    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> bool: ...

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> None: ...


def new_constraint(c: DeviceConstraint) -> Constraint | None:
    if c.match_attribute is not None:
        return MatchAttribute(frozenset(c.requests), c.match_attribute)
    if c.distinct_attribute is not None:
        return DistinctAttribute(frozenset(c.requests), c.distinct_attribute)
    return None


def lookup_attribute(device: Device, device_id: DeviceID, name: str) -> DeviceAttribute | None:
    """The attribute by its fully qualified name, or by its short name when the domain is the driver."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, short = name.partition("/")
    if not sep or domain != device_id.driver:
        return None
    return device.attributes.get(short)


def _applies(names: frozenset[str], request: str, sub_request: str) -> bool:
    if not names:
        return True
    if not sub_request:
        return request in names
    return request in names or f"{request}/{sub_request}" in names


def _scalar(attr: DeviceAttribute) -> tuple[str, object] | None:
    """The attribute's kind and value, checked in upstream's order (string, int, bool, version)."""
    if attr.string_value is not None:
        return "string", attr.string_value
    if attr.int_value is not None:
        return "int", attr.int_value
    if attr.bool_value is not None:
        return "bool", attr.bool_value
    if attr.version_value is not None:
        return "version", attr.version_value
    return None


_Value = tuple[str, object] | None


class _AttributeConstraint:
    """What both constraints share: which requests they apply to, and the attribute lookup."""

    def __init__(self, names: frozenset[str], attribute: str) -> None:
        self.names = names
        self.attribute_name = attribute

    def add(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> bool:
        if not _applies(self.names, request, sub_request):
            return True
        attr = lookup_attribute(device, device_id, self.attribute_name)
        return attr is not None and self._add(_scalar(attr))

    def remove(self, request: str, sub_request: str, device: Device, device_id: DeviceID) -> None:
        if _applies(self.names, request, sub_request):
            self._remove()

    def _add(self, value: _Value) -> bool:
        raise NotImplementedError

    def _remove(self) -> None:
        raise NotImplementedError


class MatchAttribute(_AttributeConstraint):
    def __init__(self, names: frozenset[str], attribute: str) -> None:
        super().__init__(names, attribute)
        self.value: _Value = None
        self.num_devices = 0

    def _add(self, value: _Value) -> bool:
        if self.num_devices == 0:
            # The first device sets the value, whatever its type (even one with no scalar).
            self.value = value
            self.num_devices = 1
            return True
        if value is None or value != self.value:
            return False
        self.num_devices += 1
        return True

    def _remove(self) -> None:
        self.num_devices -= 1


class DistinctAttribute(_AttributeConstraint):
    def __init__(self, names: frozenset[str], attribute: str) -> None:
        super().__init__(names, attribute)
        self.values: list[_Value] = []

    def _add(self, value: _Value) -> bool:
        if self.values and (value is None or value in self.values):
            return False
        self.values.append(value)
        return True

    def _remove(self) -> None:
        self.values.pop()
