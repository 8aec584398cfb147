"""Field errors in kube-scheduler's style (`path: Invalid value: x: detail`) and the error `load` raises.

Here, not in kubesched.config, because plugins validate their own args with them (and the config
loader imports the plugins' parsers); the framework and the plugins never import kubesched.config.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


def show(value: Any) -> str:
    """A value as a user would type it in the file: strings quoted, numbers bare, the rest as JSON."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


@dataclass(frozen=True)
class FieldError:
    path: str
    message: str  # everything after "path: "

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {show(value)}: {detail}")


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value" + (f": {detail}" if detail else ""))


def unsupported(path: str, value: Any, supported: Iterable[str], note: str = "") -> FieldError:
    listed = ", ".join(json.dumps(s) for s in supported)
    return FieldError(path, f"Unsupported value: {show(value)}: supported values: {listed}{note}")


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {show(value)}")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}")


def unknown_field(path: str, valid: Iterable[str]) -> FieldError:
    valid = sorted(valid)
    close = difflib.get_close_matches(path.rpartition(".")[2], valid, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return FieldError(path, f"Unknown field{hint}: valid fields here are: {', '.join(valid)}")


def wrong_type(path: str, value: Any, expected: str) -> FieldError:
    return FieldError(path, f"Invalid value: {show(value)}: must be {expected}")


class ConfigError(ValueError):
    """A configuration that kubesched refuses to start with; the message names the file and every bad field."""

    def __init__(self, source: str, errors: Sequence[FieldError]) -> None:
        self.source = source
        self.errors = tuple(errors)
        if len(self.errors) == 1:
            text = f"{source}: {self.errors[0]}"
        else:
            lines = "".join(f"\n  - {e}" for e in self.errors)
            text = f"{source}: {len(self.errors)} errors:{lines}"
        super().__init__(text)
