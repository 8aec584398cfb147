"""The DRA objects the plugin reads, shared by every profile (kube-scheduler's SharedDRAManager,
dra_manager.go): the claims with their assumed and in-flight allocations (tracker.py), the
ResourceSlices with DeviceTaintRules applied (slice_tracker.py), and the DeviceClasses.

The scheduler feeds the two trackers from its informers and forwards their changes to the queue;
`explain` and `simulate` fill them once from the objects they read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from kubesched.model.resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice
from kubesched.plugins.dynamic_resources.slice_tracker import SliceTracker
from kubesched.plugins.dynamic_resources.tracker import ClaimTracker


class ClassLister(Protocol):
    """DeviceClasses by name (an informer's store)."""

    def get(self, key: str) -> DeviceClass | None: ...

    def list(self) -> Sequence[DeviceClass]: ...


class _Classes:
    def __init__(self, classes: Iterable[DeviceClass]) -> None:
        self._by_name = {c.metadata.name: c for c in classes}

    def get(self, key: str) -> DeviceClass | None:
        return self._by_name.get(key)

    def list(self) -> Sequence[DeviceClass]:
        return list(self._by_name.values())


class DraManager:
    def __init__(self, claims: ClaimTracker | None = None, slices: SliceTracker | None = None,
                 classes: ClassLister | None = None) -> None:
        self.claims = claims if claims is not None else ClaimTracker()
        self.slices = slices if slices is not None else SliceTracker()
        self.classes: ClassLister = classes if classes is not None else _Classes(())

    @classmethod
    def of(cls, claims: Iterable[ResourceClaim] = (), slices: Iterable[ResourceSlice] = (),
           classes: Iterable[DeviceClass] = (), rules: Iterable[DeviceTaintRule] = ()) -> DraManager:
        """Over objects read once (a snapshot file, tests)."""
        return cls(ClaimTracker(claims), SliceTracker(slices, rules), _Classes(classes))
