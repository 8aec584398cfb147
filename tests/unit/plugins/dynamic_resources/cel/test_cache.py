"""cel/cache.go's Cache: compiled once per expression, the most recent N kept, failures not kept."""

from __future__ import annotations

import pytest

from kubesched.model.resource import DeviceAttribute
from kubesched.plugins.dynamic_resources.cel.cache import Cache, CelSelectorCache, enhance_runtime_error
from kubesched.plugins.dynamic_resources.selectors import CelDevice, SelectorCompileError, SelectorRuntimeError


def test_compiled_once_and_lru() -> None:
    cache = Cache(max_entries=2)
    first = cache.get_or_compile("true")
    assert cache.get_or_compile("true") is first
    cache.get_or_compile("false")
    cache.get_or_compile("1 == 1")
    assert len(cache) == 2
    assert cache.get_or_compile("true") is not first


def test_compile_errors_are_not_kept() -> None:
    cache = Cache()
    assert cache.get_or_compile("noSuchVar").error is not None
    assert len(cache) == 0


def test_selector_cache_for_the_allocator() -> None:
    selectors = CelSelectorCache()
    assert isinstance(selectors.get("noSuchVar"), SelectorCompileError)
    compiled = selectors.get('device.attributes["d"].missing')
    assert not isinstance(compiled, SelectorCompileError)
    device = CelDevice("d", None, {"x": DeviceAttribute(int_value=1)}, {})
    with pytest.raises(SelectorRuntimeError) as e:
        compiled(device)
    assert str(e.value) == enhance_runtime_error("no such key: missing")
    assert str(e.value).endswith("guarding the check with has() for optional fields")


def test_selector_cache_hands_out_one_callable_per_kept_compilation() -> None:
    selectors = CelSelectorCache(Cache(max_entries=1))
    device = CelDevice("d", True, {}, {})
    first = selectors.get("device.allowMultipleAllocations == true")
    assert selectors.get("device.allowMultipleAllocations == true") is first
    assert not isinstance(first, SelectorCompileError)
    assert first(device)
    # Pushed out of the LRU, the expression is compiled again and gets a callable of its own.
    assert not isinstance(selectors.get("true"), SelectorCompileError)
    again = selectors.get("device.allowMultipleAllocations == true")
    assert again is not first
    assert not isinstance(again, SelectorCompileError)
    assert again(device)
