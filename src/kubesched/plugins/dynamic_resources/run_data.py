"""The data of one run of the structured allocator (allocator.py): each request's class and
candidate devices, the devices picked so far, and the fields of the run that the device checks
(device_choice.py) and the results (claim_results.py) read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from kubesched.model.resource import (
    Device,
    DeviceClass,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.plugins.dynamic_resources.capacity import (
    ConsumedCapacity,
)
from kubesched.plugins.dynamic_resources.constraints import Constraint
from kubesched.plugins.dynamic_resources.counters import RunCounters
from kubesched.plugins.dynamic_resources.pools import (
    DeviceID,
    NodeView,
    Pool,
)
from kubesched.plugins.dynamic_resources.selectors import (
    SelectorCache,
)
from kubesched.plugins.dynamic_resources.state import (
    AllocatedState,
    Features,
    Request,
)


@dataclass(slots=True)
class _DeviceWithID:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@dataclass(slots=True)
class _RequestData:
    request: Request
    parent: Request | None
    device_class: DeviceClass | None = None
    num_devices: int = 0
    # The subrequest picked (kept on the first subrequest's entry, as upstream does; upstream reads it
    # only to copy class config into the result, which kubesched does not write).
    selected_sub_request_index: int = 0
    all_devices: list[_DeviceWithID] = field(default_factory=list)


@dataclass(slots=True)
class _Result:
    request: str
    parent_request: str
    id: DeviceID
    device: Device
    slice: ResourceSlice
    request_data: _RequestData
    share_id: str | None = None
    consumed_capacity: dict[str, Decimal] = field(default_factory=dict)
    admin_access: bool | None = None


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: unwinds to the next subrequest or claim boundary."""


Key = tuple[int, int, int]  # claim, request, subrequest


class _AllocatorView(Protocol):
    """What a run reads of its Allocator."""

    allocated: AllocatedState
    selectors: SelectorCache
    new_share_id: Callable[[], str]


class _RunFields:
    """The fields of a run (_Run.__init__ sets them), shared by its parts."""

    a: _AllocatorView
    features: Features
    node: NodeView
    claims: Sequence[ResourceClaim]
    pools: list[Pool]
    matches: dict[tuple[DeviceID, Key], bool]
    constraints: list[list[Constraint]]
    request_data: dict[Key, _RequestData]
    allocating_devices: dict[DeviceID, set[int]]
    allocating_capacity: dict[DeviceID, ConsumedCapacity]
    results: list[list[_Result]]
    counters: RunCounters
