"""Strict, typed reads from the parsed YAML: every wrong type or unknown key becomes a FieldError.

kube-scheduler decodes its config strictly (unknown or duplicate fields are errors), so these readers
collect errors instead of raising, letting one run report every problem in the file at once.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from kubesched.framework.field_errors import FieldError, unknown_field, wrong_type

Errors = list[FieldError]


def child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def as_mapping(value: Any, path: str, errs: Errors) -> Mapping[str, Any] | None:
    """The value as a mapping; null counts as empty, as it does for Go's decoder."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        errs.append(wrong_type(path, value, "a mapping"))
        return None
    return value


def check_fields(obj: Mapping[str, Any], path: str, valid: Collection[str], errs: Errors) -> None:
    for key in obj:
        if key not in valid:
            errs.append(unknown_field(child(path, str(key)), valid))


def get_mapping(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> Mapping[str, Any] | None:
    if obj.get(key) is None:
        return None
    return as_mapping(obj[key], child(path, key), errs)


def get_list(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        errs.append(wrong_type(child(path, key), value, "a list"))
        return []
    return value


def get_int(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    # bool is an int in Python but not in the Go types this file was written for
    if isinstance(value, bool) or not isinstance(value, int):
        errs.append(wrong_type(child(path, key), value, "an integer"))
        return None
    return value


def get_float(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        errs.append(wrong_type(child(path, key), value, "a number"))
        return None
    return float(value)


def get_str(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        errs.append(wrong_type(child(path, key), value, "a string"))
        return None
    return value


def get_bool(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> bool | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        errs.append(wrong_type(child(path, key), value, "true or false"))
        return None
    return value


def get_str_list(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> list[str]:
    return [item for _, item in get_str_items(obj, key, path, errs)]


def get_str_items(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> list[tuple[int, str]]:
    """The strings of a list with their index in the file: the non-strings are dropped (and
    reported), so a later error about an item must use this index, not its place in what is left."""
    out: list[tuple[int, str]] = []
    for i, item in enumerate(get_list(obj, key, path, errs)):
        if isinstance(item, str):
            out.append((i, item))
        else:
            errs.append(wrong_type(index(child(path, key), i), item, "a string"))
    return out


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration string ("15s", "1m30s", "-2s", "0"); None if it is not one."""
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if body == "0":
        return 0.0
    if not body:
        return None
    total = 0.0
    pos = 0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None:
            return None
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    return sign * total


def get_duration(obj: Mapping[str, Any], key: str, path: str, errs: Errors) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    seconds = parse_duration(value) if isinstance(value, str) else None
    if seconds is None:
        errs.append(wrong_type(child(path, key), value, 'a duration such as "15s", "1m30s" or "500ms"'))
    return seconds


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def qualified_name_problem(name: str) -> str | None:
    """Why `name` is not a valid label key / resource name (Kubernetes' IsQualifiedName), or None."""
    prefix, _, local = name.rpartition("/")
    if "/" in local or name.count("/") > 1:
        return "a qualified name must consist of an optional DNS subdomain prefix and a name, separated by '/'"
    if "/" in name and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return "prefix part must be a lowercase DNS subdomain (e.g. 'example.com')"
    if not local:
        return "name part must be non-empty"
    if len(local) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME.match(local):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_VALUE.match(value):
        return (
            "a valid label value must be an empty string or consist of alphanumeric characters, '-', '_' "
            "or '.', and must start and end with an alphanumeric character"
        )
    return None
