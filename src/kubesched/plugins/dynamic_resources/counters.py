"""Shared counters of partitionable devices (DRAPartitionableDevices, beta and on), as the
incubating allocator's checkAvailableCounters keeps them: a pool's counter sets (`sharedCounters`)
less what its allocated devices consume (`consumesCounters`), computed once per pool and attempt;
and, per Allocate call, what the devices picked so far consume. A device fits while no counter of
its pool is consumed past what is available.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from kubesched.model.quantity import parse_decimal
from kubesched.model.resource import Device
from kubesched.plugins.dynamic_resources.pools import DeviceID, Pool, PoolID

# counter set -> counter -> amount
CounterSets = dict[str, dict[str, Decimal]]


class CounterTracker:
    """The available counters of each pool, cached for the whole attempt (every node)."""

    def __init__(self, is_allocated: Callable[[DeviceID], bool]) -> None:
        self._is_allocated = is_allocated
        self._available: dict[PoolID, CounterSets] = {}

    def available(self, pool: Pool) -> CounterSets:
        found = self._available.get(pool.id)
        if found is not None:
            return found
        available: CounterSets = {name: {c: parse_decimal(v.value) for c, v in cs.counters.items()}
                                  for name, cs in pool.counter_sets.items()}
        for slices in (pool.device_slices_targeting_node, pool.device_slices_not_targeting_node):
            for s in slices:
                for d in s.spec.devices:
                    if not self._is_allocated(DeviceID(s.spec.driver, s.spec.pool.name, d.name)):
                        continue
                    for consumption in d.consumes_counters:
                        counters = available.get(consumption.counter_set, {})
                        for name, c in consumption.counters.items():
                            if name in counters:
                                counters[name] -= parse_decimal(c.value)
        self._available[pool.id] = available
        return available

    def start(self) -> RunCounters:
        return RunCounters(self)


class RunCounters:
    """What one Allocate call has taken so far."""

    def __init__(self, tracker: CounterTracker) -> None:
        self._tracker = tracker
        self._consumed: dict[PoolID, CounterSets] = {}

    def reserve(self, pool: Pool, device: Device) -> bool:
        """Take the device's counters; False (and nothing taken) when some counter would run out."""
        available = self._tracker.available(pool)
        consumed = self._consumed.setdefault(pool.id, {})
        for consumption in device.consumes_counters:
            counters = consumed.setdefault(consumption.counter_set, {})
            for name, c in consumption.counters.items():
                counters[name] = counters.get(name, Decimal(0)) + parse_decimal(c.value)
        for set_name, counters_available in available.items():
            counters_consumed = consumed.get(set_name, {})
            for name, amount in counters_available.items():
                if amount < counters_consumed.get(name, Decimal(0)):
                    self.release(pool, device)
                    return False
        return True

    def release(self, pool: Pool, device: Device) -> None:
        consumed = self._consumed.get(pool.id, {})
        for consumption in device.consumes_counters:
            counters = consumed.get(consumption.counter_set, {})
            for name, c in consumption.counters.items():
                counters[name] = counters.get(name, Decimal(0)) - parse_decimal(c.value)
