"""Consumable capacity (DRAConsumableCapacity, beta and on): how much of a device's capacity a
request consumes and whether it still fits, as structured/internal/incubating/consumable_capacity.go
of k8s.io/dynamic-resource-allocation v0.37.2 computes it.

Quantities are exact Decimals of base units (Go's resource.Quantity is exact too). `Value()` and
`MilliValue()` round up, as Go's do.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from decimal import Decimal

from kubesched.model.quantity import parse_decimal
from kubesched.model.resource import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity

INT64_MAX = 2**63 - 1

# Consumed (or already allocated) capacity of one device: capacity name -> amount.
ConsumedCapacity = dict[str, Decimal]


class CapacityError(ValueError):
    pass


@functools.lru_cache(maxsize=4096)
def q(text: str) -> Decimal:
    """A quantity's exact value; cached, since every check of a device parses its capacities."""
    return parse_decimal(text)


def _value(d: Decimal) -> int:
    return math.ceil(d)


def _milli_value(d: Decimal) -> int:
    return math.ceil(d * 1000)


def _safe_milli_value(d: Decimal) -> int | None:
    milli = d * 1000
    return int(milli) if milli == milli.to_integral_value() else None


def cmp_request_over_capacity(current: Mapping[str, Decimal], requests: Mapping[str, str] | None,
                              capacity: Mapping[str, DeviceCapacity], allocating: Mapping[str, Decimal],
                              fractional_capacity_range: bool) -> bool:
    """CmpRequestOverCapacity: does the request fit the device, given what is allocated and what
    this allocation round already took? Raises CapacityError where upstream returns an error."""
    if requests and any(name not in capacity for name in requests):
        return False
    consumed: dict[str, Decimal] = {}
    for name, cap in capacity.items():
        requested = requests.get(name) if requests else None
        try:
            amount = calculate_consumed_capacity(None if requested is None else q(requested), cap,
                                                 fractional_capacity_range)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}') from None
        if amount < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        consumed[name] = amount
    total = dict(current)
    for name, cap in capacity.items():
        amount = consumed[name]
        if _violates_policy(amount, cap.request_policy, fractional_capacity_range):
            return False
        total[name] = total.get(name, Decimal(0)) + amount + allocating.get(name, Decimal(0))
        if total[name] > q(cap.value):
            return False
    return True


def consumed_capacity_from_request(requests: Mapping[str, str] | None, capacity: Mapping[str, DeviceCapacity],
                                   fractional_capacity_range: bool) -> ConsumedCapacity:
    """GetConsumedCapacityFromRequest: the amount of every capacity of the device a request takes."""
    result: ConsumedCapacity = {}
    for name, cap in capacity.items():
        requested = requests.get(name) if requests else None
        try:
            result[name] = calculate_consumed_capacity(None if requested is None else q(requested), cap,
                                                       fractional_capacity_range)
        except CapacityError as e:
            raise CapacityError(f'capacity "{name}": {e}') from None
    return result


def calculate_consumed_capacity(requested: Decimal | None, cap: DeviceCapacity,
                                fractional_capacity_range: bool) -> Decimal:
    policy = cap.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return q(policy.default)
        return q(cap.value)
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return _round_up_range(requested, policy.valid_range, fractional_capacity_range)
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested <= q(valid):
                return q(valid)
        return requested
    return requested


def _use_milli(r: CapacityRequestPolicyRange, fractional_capacity_range: bool) -> bool:
    if not fractional_capacity_range:
        return False
    for i, text in enumerate((r.min, r.max, r.step)):
        if text is None:
            continue
        milli = _safe_milli_value(q(text))
        if milli is None:
            return False
        if i == 2 and milli < 1:
            return False
    return True


def _round_up_range(requested: Decimal, r: CapacityRequestPolicyRange, fractional_capacity_range: bool) -> Decimal:
    assert r.min is not None
    minimum = q(r.min)
    if requested < minimum:
        return minimum
    if r.step is None:
        return requested
    step = q(r.step)
    if _use_milli(r, fractional_capacity_range):
        requested_milli = _safe_milli_value(requested)
        if requested_milli is None:
            raise CapacityError("capacity request cannot be represented in the device's range arithmetic: "
                                f"request {requested} is not a representable milli value")
        step_milli, min_milli = _milli_value(step), _milli_value(minimum)
        n = -(-(requested_milli - min_milli) // step_milli)
        if n > (INT64_MAX - min_milli) // step_milli:
            raise CapacityError("capacity request cannot be represented in the device's range arithmetic: "
                                f"rounding request {requested} up to the next step passes the milli-value range")
        return Decimal(min_milli + step_milli * n) / 1000
    if requested > INT64_MAX:
        raise CapacityError("capacity request cannot be represented in the device's range arithmetic: "
                            f"request {requested} exceeds MaxInt64")
    requested_int, step_int, min_int = _value(requested), _value(step), _value(minimum)
    added = requested_int - min_int
    n = added // step_int if added >= 0 else -(-added // step_int)  # Go's truncating division
    if added % step_int != 0:
        n += 1
    if min_int >= 0 and n > (INT64_MAX - min_int) // step_int:
        raise CapacityError("capacity request cannot be represented in the device's range arithmetic: "
                            f"rounding request {requested} up to the next step passes MaxInt64")
    return Decimal(min_int + step_int * n)


def _violates_policy(amount: Decimal, policy: CapacityRequestPolicy | None, fractional_capacity_range: bool) -> bool:
    if policy is None:
        return False
    # Go compares the Quantity structs; equal amounts are what that finds in practice.
    if policy.default is not None and amount == q(policy.default):
        return False
    if policy.valid_range is not None:
        r = policy.valid_range
        if r.max is not None and amount > q(r.max):
            return True
        if r.step is not None:
            minimum = q(r.min) if r.min is not None else Decimal(0)
            if _use_milli(r, fractional_capacity_range):
                milli = _safe_milli_value(amount)
                if milli is None:
                    return True
                requested, step, low = milli, _milli_value(q(r.step)), _milli_value(minimum)
            else:
                requested, step, low = _value(amount), _value(q(r.step)), _value(minimum)
            return (requested - low) % step != 0
        return False
    if policy.valid_values:
        return all(amount != q(v) for v in policy.valid_values)
    return False
