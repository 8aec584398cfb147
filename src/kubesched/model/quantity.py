"""Kubernetes resource quantities as integers.

CPU is kept in millicores and everything else in whole units (bytes for memory), rounded up the
way the apiserver's `Quantity.MilliValue()` / `Value()` round, so that sums never under-count.

The apiserver accepts any request >= 0, so an amount can exceed int64. Go's Quantity then returns
garbage (MilliValue of 10P cpu overflows to 0; binary quantities past 2^63-1 are capped), which would
hide the pod from its node. kubesched saturates every amount at int64 max instead: such a pod fills
its node, and the snapshot's int64 columns can always hold it.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1),
            "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
            "P": Decimal("1e15"), "E": Decimal("1e18")}

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_cache: dict[tuple[str, bool], int] = {}


class QuantityError(ValueError):
    pass


def parse_decimal(text: str) -> Decimal:
    """Parse a quantity string such as ``100m``, ``1.5Gi`` or ``1e3`` into a Decimal of base units."""
    s = text.strip()
    if not s:
        raise QuantityError(f"quantity {text!r} is empty; expected a number with an optional suffix like 100m or 1Gi")
    for suffix, mult in _BINARY.items():
        if s.endswith(suffix):
            return _number(s[: -len(suffix)], text) * mult
    # An exponent (1e3, 1E-2) must be tried before the single-letter suffixes E and m.
    lowered = s.lower()
    if "e" in lowered and lowered[-1].isdigit():
        return _number(s, text)
    if s[-1].isalpha():
        suffix = s[-1]
        if suffix not in _DECIMAL:
            raise QuantityError(f"quantity {text!r} has unknown suffix {suffix!r}; valid: "
                                "n u m k M G T P E Ki Mi Gi Ti Pi Ei")
        return _number(s[:-1], text) * _DECIMAL[suffix]
    return _number(s, text)


def _number(s: str, original: str) -> Decimal:
    try:
        value = Decimal(s)
    except InvalidOperation:
        raise QuantityError(f"quantity {original!r} is not a number with an optional suffix "
                            "(like 100m, 0.5, 2Gi)") from None
    if not value.is_finite():
        raise QuantityError(f"quantity {original!r} is not finite")
    return value


def saturate_int64(i: int) -> int:
    return INT64_MAX if i > INT64_MAX else INT64_MIN if i < INT64_MIN else i


def ceil_int64(d: Decimal) -> int:
    """ceil(d), saturated to int64 (see the module docstring)."""
    i = int(d)
    return saturate_int64(i + 1 if d > i else i)


def milli_value(text: str) -> int:
    """Millicores (or milli-units), rounded up like Quantity.MilliValue()."""
    key = (text, True)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = ceil_int64(parse_decimal(text) * 1000)
    return hit


def value(text: str) -> int:
    """Whole units (bytes for memory), rounded up like Quantity.Value()."""
    key = (text, False)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = ceil_int64(parse_decimal(text))
    return hit


def resource_amount(name: str, text: str) -> int:
    """The integer kube-scheduler compares for this resource: millicores for cpu, units otherwise."""
    return milli_value(text) if name == "cpu" else value(text)
