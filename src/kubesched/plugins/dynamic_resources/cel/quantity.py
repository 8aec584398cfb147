"""resource.Quantity as the Kubernetes CEL quantity library sees it (k8s.io/apimachinery v0.37.2,
pkg/api/resource): ParseQuantity with its error messages, exact comparison, add and subtract, and the
conversions the library offers.

A value is kept exactly as `unscaled * 10**-scale`. ParseQuantity's two representations (an int64
with a decimal scale, or an arbitrary-precision decimal) only matter here for the rounding and the
cap they imply, which are applied on parsing; `as_int64` answers from the exact value, so it differs
from upstream only for a quantity that upstream holds as a big decimal or with a milli-like scale
(`quantity("1000m").isInteger()` is false upstream, true here).
"""

from __future__ import annotations

from dataclasses import dataclass

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + _SPLIT_RE + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NANO = 9


class QuantityParseError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Quantity:
    unscaled: int
    scale: int  # value = unscaled * 10**-scale

    def normalized(self) -> Quantity:
        u, s = self.unscaled, self.scale
        if u == 0:
            return Quantity(0, 0)
        while u % 10 == 0:
            u //= 10
            s -= 1
        return Quantity(u, s)

    def canonical(self) -> str:
        n = self.normalized()
        return f"{n.unscaled}e{-n.scale}"

    def _aligned(self, other: Quantity) -> tuple[int, int, int]:
        s = max(self.scale, other.scale)
        return self.unscaled * 10 ** (s - self.scale), other.unscaled * 10 ** (s - other.scale), s

    def cmp(self, other: Quantity) -> int:
        a, b, _ = self._aligned(other)
        return (a > b) - (a < b)

    def add(self, other: Quantity) -> Quantity:
        a, b, s = self._aligned(other)
        return Quantity(a + b, s)

    def sub(self, other: Quantity) -> Quantity:
        a, b, s = self._aligned(other)
        return Quantity(a - b, s)

    def sign(self) -> int:
        return (self.unscaled > 0) - (self.unscaled < 0)

    def as_int64(self) -> int | None:
        n = self.normalized()
        if n.scale > 0:
            return None
        v = n.unscaled * 10 ** (-n.scale)
        return v if INT64_MIN <= v <= INT64_MAX else None

    def as_approximate_float(self) -> float:
        if self.scale == 0:
            return float(self.unscaled)
        return float(self.unscaled) * 10.0 ** (-self.scale)


def from_canonical(text: str) -> Quantity:
    unscaled, _, exponent = text.partition("e")
    return Quantity(int(unscaled), -int(exponent or "0"))


def from_int(i: int) -> Quantity:
    return Quantity(i, 0)


def _split(s: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix)."""
    positive, pos, end = True, 0, len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] == "+"
        pos += 1
    while True:
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1
    i = pos
    while i < end and s[i].isascii() and s[i].isdigit():
        i += 1
    if i >= end:
        return positive, s, s[pos:], "", ""
    num, pos = s[pos:i] or "0", i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i].isascii() and s[i].isdigit():
            i += 1
        if i >= end:
            return positive, s, num, s[pos:], ""
        denom, pos = s[pos:i], i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    pos = i
    if s[pos] in "+-":
        pos += 1
    i = pos
    while i < end and s[i].isascii() and s[i].isdigit():
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    raise QuantityParseError(ERR_FORMAT_WRONG)


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """(base, exponent, format) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], "DecimalSI"
    if suffix in _BINARY:
        return 2, _BINARY[suffix], "BinarySI"
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in ("+", "-") else digits
        if body and body.isascii() and body.isdigit() and INT64_MIN <= int(digits) <= INT64_MAX:
            return 10, int(digits), "DecimalExponent"
    return None


def parse(text: str) -> Quantity:
    """resource.ParseQuantity; raises QuantityParseError with upstream's message."""
    if not text:
        raise QuantityParseError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, 0)
    positive, _, num, denom, suffix = _split(text)
    found = _interpret(suffix)
    if found is None:
        raise QuantityParseError(ERR_SUFFIX)
    base, exponent, fmt = found
    # inf.Dec's SetString never fails on what parseQuantityString leaves, so ERR_NUMERIC is unused.
    unscaled, scale = int(num + denom), len(denom)
    if base == 10:
        scale -= exponent
    else:
        unscaled <<= exponent
    negative = not positive
    if unscaled != 0 and scale > _NANO:
        # Rounded up to the nano, away from zero.
        q, r = divmod(unscaled, 10 ** (scale - _NANO))
        unscaled, scale = q + (1 if r else 0), _NANO
    if fmt == "BinarySI" and Quantity(unscaled, scale).cmp(Quantity(INT64_MAX, 0)) > 0:
        unscaled, scale = INT64_MAX, 0
    return Quantity(-unscaled if negative else unscaled, scale)

