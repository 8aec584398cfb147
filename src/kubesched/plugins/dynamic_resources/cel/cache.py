"""Compiled selectors by expression (k8s.io/dynamic-resource-allocation v0.37.2 cel/cache.go): an LRU
of the most recent successful compilations, ten in kube-scheduler's DynamicResources plugin; a
failed compilation is not kept and is compiled again next time, as upstream does. An expression is
compiled once and shared by every device and node, never per node.

`CelSelectorCache` is what the structured allocator takes (selectors.SelectorCache)."""

from __future__ import annotations

from collections import OrderedDict

from kubesched.plugins.dynamic_resources.cel.compile import CelRuntimeError, CompilationResult, compile_expression
from kubesched.plugins.dynamic_resources.selectors import (
    CelDevice,
    CompiledSelector,
    SelectorCache,
    SelectorCompileError,
    SelectorRuntimeError,
)

# kube-scheduler's DynamicResources: cel.NewCache(10, ...)
SCHEDULER_CACHE_ENTRIES = 10
_ENHANCED_SUFFIX = (". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
                    "with has() for optional fields")


class Cache:
    def __init__(self, max_entries: int = SCHEDULER_CACHE_ENTRIES) -> None:
        self._max = max_entries
        self._entries: OrderedDict[str, CompilationResult] = OrderedDict()

    def get_or_compile(self, expression: str) -> CompilationResult:
        found = self._entries.get(expression)
        if found is not None:
            self._entries.move_to_end(expression)
            return found
        result = compile_expression(expression)
        if result.error is None:
            self._entries[expression] = result
            if len(self._entries) > self._max:
                self._entries.popitem(last=False)
        return result

    def holds(self, expression: str, result: CompilationResult) -> bool:
        """Whether `result` is still the kept compilation of `expression` (the LRU untouched)."""
        return self._entries.get(expression) is result

    def __len__(self) -> int:
        return len(self._entries)


def enhance_runtime_error(message: str) -> str:
    """cel.EnhanceRuntimeError, which the allocator applies to a selector's runtime error."""
    if "no such key:" in message and not message.endswith(_ENHANCED_SUFFIX):
        return message + _ENHANCED_SUFFIX
    return message


class CelSelectorCache(SelectorCache):
    """The allocator's selector cache, evaluating with CEL."""

    def __init__(self, cache: Cache | None = None) -> None:
        super().__init__(_never)
        self._cel = cache if cache is not None else Cache()
        # The callable made for each compilation the LRU holds: the allocator asks for it once per
        # device and node, and a new closure each time was a sixth of a full cluster's attempt.
        self._callables: dict[str, tuple[CompilationResult, CompiledSelector]] = {}

    def get(self, expression: str) -> CompiledSelector | SelectorCompileError:
        result = self._cel.get_or_compile(expression)
        if result.error is not None:
            return SelectorCompileError(result.error)
        made = self._callables.get(expression)
        if made is not None and made[0] is result:
            return made[1]

        def matches(d: CelDevice) -> bool:
            try:
                return result.device_matches(d.driver, d.allow_multiple_allocations, d.attributes, d.capacity)
            except CelRuntimeError as e:
                raise SelectorRuntimeError(enhance_runtime_error(str(e))) from None
        if len(self._callables) >= len(self._cel) + SCHEDULER_CACHE_ENTRIES:
            # Only what the LRU still holds can be asked for again as the same compilation.
            self._callables = {e: m for e, m in self._callables.items() if self._cel.holds(e, m[0])}
        self._callables[expression] = (result, matches)
        return matches


def _never(expression: str) -> CompiledSelector:
    raise AssertionError("CelSelectorCache compiles through its CEL cache")
