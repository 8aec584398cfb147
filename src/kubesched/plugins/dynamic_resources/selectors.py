"""Device selectors, pluggable: the allocator asks a `SelectorCache` for the compiled form of a CEL
expression and calls it with the device. No CEL is evaluated here: the evaluator
(cel/) plugs in as a SelectorCache.

What upstream's CEL environment gives a selector (k8s.io/dynamic-resource-allocation v0.37.2,
cel/compile.go, on top of k8s.io/apiserver's base environment at the default compatibility
version, 1.36 for a 1.37 binary):

- One variable, `device`, an object `kubernetes.DRADevice` with:
  - `device.driver` (string);
  - `device.allowMultipleAllocations` (bool; declared only with DRAConsumableCapacity, on);
  - `device.attributes`: map of domain -> map of identifier -> value, where a qualified name
    `domain/id` is split at its first slash and a name without a domain gets the driver as domain
    (`device.attributes["dra.example.com"].model`). Values are int, bool, string, or a semver
    version (`semver` type); the list types of DRAListTypeAttributes (alpha, off) are not declared.
    Looking up an unknown domain gives an empty map, so `device.attributes["x"].y` is a "no such
    key" runtime error, and `"y" in device.attributes["x"]` is false;
  - `device.capacity`: the same two-level map with `Quantity` values (the device's capacity value).
- Libraries: cel-go's standard macros and functions (has, all, exists, exists_one, map, filter,
  size, matches, string functions ...); ext.Strings v2 (charAt, indexOf, lowerAscii, replace, split,
  substring, trim, upperAscii, join, quote, format ...); ext.Sets (sets.contains, sets.equivalent,
  sets.intersects); ext.Lists v3 (slice, flatten, distinct, range, reverse, sort, sortBy ...);
  ext.TwoVarComprehensions; ext.Bindings (`cel.bind(name, value, expr)`); optional types
  (`?.`, `.orValue()`); cross-type numeric comparisons; homogeneous aggregate literals.
- Kubernetes libraries: Quantity (`quantity("1Gi")`, `isQuantity`, `q.compareTo(q2)`, `q.add`,
  `q.sub`, `q.isGreaterThan`, `q.isLessThan`, `q.asInteger`, `q.asApproximateFloat`, `q.sign`,
  `q.isInteger`); Semver v1 (`semver("1.2.3")`, `isSemver`, `major`, `minor`, `patch`,
  `compareTo`, `isGreaterThan`, `isLessThan`, with the normalize option); k8s Lists v0 (isSorted,
  sum, min, max, indexOf, lastIndexOf); Regex (`find`, `findAll`); URLs; IP and CIDR; Format;
  Authz and AuthzSelectors (declared, useless here).
- Before evaluating, every attribute of the device is converted (getAttributeValue): a list value
  first (ints, bools, strings, versions: passed even though DRAListTypeAttributes, off, does not
  declare the list types), else the scalar; an attribute with no value is the runtime error
  "unsupported attribute value", a version that is not semver "parse semantic version: ...". So
  one bad attribute fails every selector on that device, whatever the expression reads.
- Limits: a runtime cost limit of 1,000,000 per evaluation (resourceapi.CELSelectorExpressionMaxCost),
  with the Kubernetes cost estimator; exceeding it is a runtime error. An expression is compiled
  once and cached by its text (cel.Cache), never per node. A compile error, a runtime error or a
  non-bool result is an error of the whole scheduling attempt, not a "device does not match".

The evaluator is `cel.cache.CelSelectorCache` (cel-expr-python, the CEL project's binding of
cel-cpp); cel/compile.py says where it differs from upstream and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kubesched.model.resource import Device, DeviceAttribute, DeviceCapacity


class SelectorCompileError(Exception):
    pass


class SelectorRuntimeError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class CelDevice:
    """What upstream passes to a selector (cel.Device): attribute and capacity names as in the slice."""

    driver: str
    allow_multiple_allocations: bool | None
    attributes: Mapping[str, DeviceAttribute]
    capacity: Mapping[str, DeviceCapacity]


# A compiled selector: True if the device matches; raises SelectorRuntimeError.
CompiledSelector = Callable[[CelDevice], bool]
# Compiles an expression; raises SelectorCompileError.
SelectorCompiler = Callable[[str], CompiledSelector]


# Outcomes kept for this many (expression, device) pairs, then all forgotten at once.
MAX_KEPT_OUTCOMES = 200_000


class SelectorCache:
    """Each expression compiled once; a compile error is cached too.

    What an expression says of a device is kept too: it depends on nothing but the device, and a
    device of a slice is the same object until the slice changes (its update is a new object), so
    one pod's allocator asks the same question of the same device on every node it tries, and every
    pod of a burst asks it again. Upstream evaluates each time; the answers, runtime errors
    included, are the same."""

    def __init__(self, compiler: SelectorCompiler) -> None:
        self._compile = compiler
        self._cache: dict[str, CompiledSelector | SelectorCompileError] = {}
        # Keyed by id(device), the device kept beside its outcome so the id cannot be reused.
        self._outcomes: dict[tuple[str, int], tuple[Device, bool | SelectorRuntimeError]] = {}

    def matches(self, expression: str, compiled: CompiledSelector, driver: str, device: Device) -> bool:
        """`compiled` on `device` (of a slice of `driver`), evaluated once while the device lives;
        raises SelectorRuntimeError."""
        key = (expression, id(device))
        kept = self._outcomes.get(key)
        if kept is not None and kept[0] is device:
            outcome = kept[1]
        else:
            try:
                outcome = compiled(CelDevice(driver, device.allow_multiple_allocations, device.attributes,
                                             device.capacity))
            except SelectorRuntimeError as e:
                outcome = e
            if len(self._outcomes) >= MAX_KEPT_OUTCOMES:
                self._outcomes.clear()
            self._outcomes[key] = (device, outcome)
        if isinstance(outcome, SelectorRuntimeError):
            raise SelectorRuntimeError(str(outcome))
        return outcome

    def get(self, expression: str) -> CompiledSelector | SelectorCompileError:
        found = self._cache.get(expression)
        if found is None:
            try:
                found = self._compile(expression)
            except SelectorCompileError as e:
                found = e
            self._cache[expression] = found
        return found
