"""Semantic versions as github.com/blang/semver/v4 parses and orders them (the type behind the
Kubernetes CEL semver library and DRA's version attributes), with the library's `normalize` option
(k8s.io/apiserver v0.37.2, pkg/cel/library/semverlib.go). Error messages are blang's, word for word."""

from __future__ import annotations

from dataclasses import dataclass

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Version:
    major: int
    minor: int
    patch: int
    # Each identifier an int (numeric) or a str.
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def compare(self, o: Version) -> int:
        for a, b in ((self.major, o.major), (self.minor, o.minor), (self.patch, o.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre or not o.pre:
            return (len(self.pre) < len(o.pre)) - (len(self.pre) > len(o.pre))
        for x, y in zip(self.pre, o.pre, strict=False):
            c = _compare_pre(x, y)
            if c:
                return c
        return (len(self.pre) > len(o.pre)) - (len(self.pre) < len(o.pre))

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def key(self) -> str:
        """What Version.EQ compares: everything but the build metadata."""
        return str(Version(self.major, self.minor, self.patch, self.pre))


def _compare_pre(a: int | str, b: int | str) -> int:
    if isinstance(a, int) != isinstance(b, int):
        return -1 if isinstance(a, int) else 1
    return (a > b) - (a < b)  # type: ignore[operator]


def _only(s: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in s)


def _uint(s: str) -> int:
    """strconv.ParseUint(s, 10, 64) on a string of digits (or empty)."""
    if not s:
        raise SemverError(f'strconv.ParseUint: parsing "{s}": invalid syntax')
    v = int(s)
    if v > _UINT64_MAX:
        raise SemverError(f'strconv.ParseUint: parsing "{s}": value out of range')
    return v


def _number(part: str, what: str) -> int:
    if not _only(part, _NUMBERS):
        raise SemverError(f'Invalid character(s) found in {what} number "{part}"')
    if len(part) > 1 and part[0] == "0":
        raise SemverError(f'{what.capitalize()} number must not contain leading zeroes "{part}"')
    return _uint(part)


def parse(s: str) -> Version:
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_str = parts[2]
    build: list[str] = []
    pre_strs: list[str] = []
    if "+" in patch_str:
        i = patch_str.index("+")
        build = patch_str[i + 1:].split(".")
        patch_str = patch_str[:i]
    if "-" in patch_str:
        i = patch_str.index("-")
        pre_strs = patch_str[i + 1:].split(".")
        patch_str = patch_str[:i]
    patch = _number(patch_str, "patch")
    pre: list[int | str] = []
    for p in pre_strs:
        if not p:
            raise SemverError("Prerelease is empty")
        if _only(p, _NUMBERS):
            if len(p) > 1 and p[0] == "0":
                raise SemverError(f'Numeric PreRelease version must not contain leading zeroes "{p}"')
            pre.append(_uint(p))
        elif _only(p, _ALPHANUM):
            pre.append(p)
        else:
            raise SemverError(f'Invalid character(s) found in prerelease "{p}"')
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not _only(b, _ALPHANUM):
            raise SemverError(f'Invalid character(s) found in build meta data "{b}"')
    return Version(major, minor, patch, tuple(pre), tuple(build))


def normalize_and_parse(s: str) -> Version:
    """semver(s, true): a leading v, leading zeroes and missing minor or patch are forgiven."""
    s = s.removeprefix("v")
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))
