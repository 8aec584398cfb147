"""The versions a feature's MaxVersion is compared with (apimachinery util/version: Parse, GreaterThan).

A feature past its MaxVersion is taken to be on every node, so no pod is said to need it; the
comparison must therefore be the library's, pre-releases included: "1.39.0-alpha.2" is greater than
"1.38.0" but less than "1.39.0".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$", re.DOTALL)
_EXTRA = re.compile(r"^(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$")


@dataclass(frozen=True, slots=True)
class Version:
    components: tuple[int, ...]
    semver: bool = True
    pre_release: str = ""
    build_metadata: str = ""

    def compare(self, other: Version) -> int:
        """-1, 0 or 1, as the library's compareInternal: numeric components first (missing ones
        count as zeros), then, when both are semantic, the pre-release (none is greater)."""
        for a, b in zip(self.components, other.components, strict=False):
            if a != b:
                return 1 if a > b else -1
        n, m = len(self.components), len(other.components)
        if m < n and any(self.components[m:]):
            return 1
        if n < m and any(other.components[n:]):
            return -1
        if not self.semver or not other.semver:
            return 0
        mine, theirs = self.pre_release, other.pre_release
        if mine == theirs:
            return 0
        if not mine:
            return 1
        if not theirs:
            return -1
        return _compare_pre_release(mine.split("."), theirs.split("."))

    def greater_than(self, other: Version) -> bool:
        return self.compare(other) == 1


def _compare_pre_release(mine: list[str], theirs: list[str]) -> int:
    for a, b in zip(mine, theirs, strict=False):
        if a.isdigit() and b.isdigit():
            if int(a) != int(b):
                return 1 if int(a) > int(b) else -1
            continue
        if a != b:
            return 1 if a > b else -1
    if len(mine) != len(theirs):
        return 1 if len(mine) > len(theirs) else -1
    return 0


def _parse(text: str, semver: bool) -> Version:
    match = _VERSION.match(text)
    if match is None:
        raise ValueError(f"could not parse {text!r} as version")
    numbers, extra = match.group(1), match.group(2)
    parts = numbers.split(".")
    if (semver and len(parts) != 3) or (not semver and len(parts) < 2):
        raise ValueError(f"illegal version string {text!r}")
    for i, part in enumerate(parts):
        if (i == 0 or semver) and part.startswith("0") and part != "0":
            raise ValueError(f"illegal zero-prefixed version component {part!r} in {text!r}")
    pre = build = ""
    if semver and extra:
        found = _EXTRA.match(extra)
        if found is None:
            raise ValueError(f"could not parse pre-release/metadata ({extra}) in version {text!r}")
        pre, build = found.group(1) or "", found.group(2) or ""
        for part in pre.split("."):
            if part.isdigit() and part.startswith("0") and part != "0":
                raise ValueError(f"illegal zero-prefixed version component {part!r} in {text!r}")
    return Version(tuple(int(p) for p in parts), semver, pre, build)


def parse(text: str) -> Version:
    """Semantic if it reads as one (keeps the pre-release), else generic (`1.37`)."""
    try:
        return _parse(text, True)
    except ValueError:
        return _parse(text, False)
