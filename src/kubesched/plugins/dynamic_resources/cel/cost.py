"""A worst-case cost estimate of a checked selector, in cel-go's cost units, shaped like cel-go's
checker estimate with the Kubernetes size declarations (cel/compile.go's sizeEstimator): a variable,
field or index costs 1 (`device.x` 2), a function call 1 plus its arguments, `&&` and `||` the sum of both sides,
and a comprehension its range and initialiser plus (condition + step) times the range's largest size.

It is simpler than upstream's in three ways, all towards estimating less: constants and string
sizes add nothing, and a range whose size is not declared (a function's result) counts as one
element. It only decides whether an evaluation could pass the runtime cost limit (see compile.py),
so an estimate at or below upstream's never refuses an expression that upstream runs.
"""

from __future__ import annotations

from kubesched.plugins.dynamic_resources.cel.checked import CheckedExpr, Node

# resourceapi.ResourceSliceMaxAttributesAndCapacitiesPerDevice: the entries of each device map.
MAX_DEVICE_MAP_ENTRIES = 32
# max(DeviceAttributeMaxValueLength, ResourceSliceMaxAttributeValuesPerDevice): an attribute's value.
MAX_ATTRIBUTE_ELEMENTS = 64
_DEVICE_MAPS = ("device.attributes", "device.capacity")


def estimate(checked: CheckedExpr) -> int:
    return _cost(checked, checked.root, {})


def _variable(checked: CheckedExpr, n: Node) -> str:
    ref = checked.references.get(n.id)
    if ref is not None and ref[0]:
        return ref[0]
    if n.kind == "ident":
        return n.name
    return ""


def _size(checked: CheckedExpr, n: Node | None, sizes: dict[str, int]) -> int:
    """The largest number of elements n can have."""
    if n is None:
        return 1
    if n.kind in ("list", "struct"):
        return max(1, len(n.children) // (2 if n.kind == "struct" else 1))
    var = _variable(checked, n)
    if var in _DEVICE_MAPS:
        return MAX_DEVICE_MAP_ENTRIES
    if var in sizes:
        return sizes[var]
    if n.kind == "call" and n.name == "_[_]" and n.children:
        inner = n.children[0]
        if _variable(checked, inner) in _DEVICE_MAPS:
            return MAX_DEVICE_MAP_ENTRIES
        return MAX_ATTRIBUTE_ELEMENTS if _is_device_map_entry(checked, inner) else 1
    if n.kind == "select" and n.children:
        inner = n.children[0]
        if _variable(checked, inner) in _DEVICE_MAPS:
            return MAX_DEVICE_MAP_ENTRIES
        return MAX_ATTRIBUTE_ELEMENTS if _is_device_map_entry(checked, inner) else 1
    return 1


def _is_device_map_entry(checked: CheckedExpr, n: Node) -> bool:
    """device.attributes[domain] (or .domain): its values are attribute values."""
    if n.kind == "call" and n.name == "_[_]" and n.children:
        return _variable(checked, n.children[0]) in _DEVICE_MAPS
    if n.kind == "select" and n.children:
        return _variable(checked, n.children[0]) in _DEVICE_MAPS
    return False


def _cost(checked: CheckedExpr, n: Node | None, sizes: dict[str, int]) -> int:
    if n is None:
        return 0
    if n.kind == "const":
        return 0
    if n.kind == "ident":
        return 1
    if n.kind == "select":
        if _variable(checked, n) in (*_DEVICE_MAPS, "device.driver", "device.allowMultipleAllocations"):
            return 2  # `device`, then its field
        return (0 if n.test_only else 1) + sum(_cost(checked, c, sizes) for c in n.children)
    if n.kind in ("list", "struct"):
        return 10 + sum(_cost(checked, c, sizes) for c in n.children)
    if n.kind == "call":
        own = 0 if n.name in ("_&&_", "_||_", "_?_:_", "!_") else 1
        return own + sum(_cost(checked, c, sizes) for c in n.children)
    if n.kind == "comprehension":
        iterations = _size(checked, n.iter_range, sizes)
        inner = dict(sizes)
        # A loop variable over a device map is a key; over an attribute list an element.
        inner[n.iter_var] = 1
        per_iteration = _cost(checked, n.loop_condition, inner) + _cost(checked, n.loop_step, inner)
        return (_cost(checked, n.iter_range, sizes) + _cost(checked, n.accu_init, sizes)
                + iterations * per_iteration + _cost(checked, n.result, inner))
    return 1
