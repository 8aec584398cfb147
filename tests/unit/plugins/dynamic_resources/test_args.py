"""DynamicResourcesArgs: kube-scheduler v1.37.2's defaults and ValidateDynamicResourcesArgs."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.fields import Errors
from kubesched.plugins.dynamic_resources.args import parse_args, seconds


@pytest.mark.parametrize(("raw", "want", "errors"), [
    pytest.param({}, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}, [], id="defaults"),
    pytest.param({"filterTimeout": "0s", "bindingTimeout": "1s"},
                 {"filterTimeout": "0s", "bindingTimeout": "1s"}, [],
                 id="zero-filter-timeout-and-shortest-binding-timeout"),
    pytest.param({"filterTimeout": "-1s"}, None,
                 ['args.filterTimeout: Invalid value: "-1s": must be zero or positive'], id="negative-filter-timeout"),
    pytest.param({"bindingTimeout": "500ms"}, None,
                 ['args.bindingTimeout: Invalid value: "500ms": must be at least 1 second'],
                 id="short-binding-timeout"),
])
def test_parse_args(raw: dict[str, Any], want: dict[str, Any] | None, errors: list[str]) -> None:
    errs: Errors = []
    got = parse_args(raw, "args", errs)
    assert [str(e) for e in errs] == errors
    if want is not None:
        assert got == want


def test_seconds() -> None:
    assert seconds({"filterTimeout": "1m30s"}, "filterTimeout", "10s") == 90.0
    assert seconds({}, "bindingTimeout", "10m0s") == 600.0
