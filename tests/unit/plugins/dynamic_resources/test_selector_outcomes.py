"""A selector's outcome on a device is evaluated once while that device object lives."""

import pytest

from kubesched.plugins.dynamic_resources import selectors
from kubesched.plugins.dynamic_resources.selectors import CelDevice, SelectorCache, SelectorRuntimeError
from tests.unit.plugins.dynamic_resources.allocator_fixtures import attrs, device


class Counting:
    def __init__(self, answer: bool | str = True) -> None:
        self.calls: list[str] = []
        self.answer = answer

    def __call__(self, d: CelDevice) -> bool:
        self.calls.append(d.driver)
        if isinstance(self.answer, str):
            raise SelectorRuntimeError(self.answer)
        return self.answer


def cache() -> SelectorCache:
    return SelectorCache(lambda expression: Counting())


def test_the_same_device_is_evaluated_once_for_every_node_and_pod() -> None:
    c, compiled, gpu = cache(), Counting(), device("gpu-0", attributes=attrs(model="a100"))
    assert all(c.matches("true", compiled, "dra.example.com", gpu) for _ in range(5))
    assert compiled.calls == ["dra.example.com"]


def test_an_updated_slice_s_device_is_a_new_object_and_evaluated_again() -> None:
    c, compiled = cache(), Counting()
    c.matches("true", compiled, "d", device("gpu-0"))
    c.matches("true", compiled, "d", device("gpu-0"))
    assert len(compiled.calls) == 2


def test_each_expression_is_asked_on_its_own() -> None:
    c, yes, no, gpu = cache(), Counting(True), Counting(False), device("gpu-0")
    assert c.matches("a", yes, "d", gpu) is True
    assert c.matches("b", no, "d", gpu) is False
    assert (len(yes.calls), len(no.calls)) == (1, 1)


def test_a_runtime_error_is_kept_and_raised_each_time() -> None:
    c, failing, gpu = cache(), Counting("no such key: model"), device("gpu-0")
    for _ in range(2):
        with pytest.raises(SelectorRuntimeError, match="no such key: model"):
            c.matches("x", failing, "d", gpu)
    assert len(failing.calls) == 1


def test_outcomes_are_forgotten_at_once_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selectors, "MAX_KEPT_OUTCOMES", 2)
    c, compiled = cache(), Counting()
    devices = [device(f"gpu-{i}") for i in range(3)]
    for d in devices:
        c.matches("true", compiled, "d", d)
    c.matches("true", compiled, "d", devices[0])  # forgotten when the third came
    assert len(compiled.calls) == 4
