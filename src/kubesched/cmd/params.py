"""Click parameter types for kube-scheduler's flag values."""

from __future__ import annotations

from typing import Any

import click

from kubesched.framework.fields import parse_duration


class Duration(click.ParamType[float]):
    """A Go duration ("15s", "1m30s", "500ms"), in seconds."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        seconds = parse_duration(str(value))
        if seconds is None:
            self.fail(f'{value!r}: expected a duration such as "15s", "1m30s" or "500ms"', param, ctx)
        return seconds
