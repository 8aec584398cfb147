"""ResourceSlices with their DeviceTaintRules applied (k8s.io/dynamic-resource-allocation v0.37.2
resourceslice/tracker; DRADeviceTaintRules is GA and on in 1.37, and resource.k8s.io/v1 serves
DeviceTaintRules by default): each device a rule selects gets the rule's taint appended to its own.
A rule without a device selector selects nothing; a selector's unset driver, pool or device matches
any.

The allocator reads the patched slices. Each change of a patched slice is reported to the listeners
as (old, new) — the ResourceSlice events kube-scheduler's queue sees: every change of a slice
itself, and a rule's change only where it changed some device's taints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from kubesched.model.resource import DeviceTaintRule, ResourceSlice
from kubesched.plugins.dynamic_resources.slice_layout import SliceLayout, slice_layout

SliceListener = Callable[[ResourceSlice | None, ResourceSlice | None], None]


def _applies(rule: DeviceTaintRule, s: ResourceSlice) -> bool:
    selector = rule.spec.device_selector
    if selector is None:
        return False
    if selector.driver is not None and selector.driver != s.spec.driver:
        return False
    return selector.pool is None or selector.pool == s.spec.pool.name


def apply_rules(s: ResourceSlice, rules: Iterable[DeviceTaintRule]) -> ResourceSlice:
    """applyPatches: the slice itself when no rule selects any of its devices, else a copy."""
    patched = s
    for rule in rules:
        if not _applies(rule, s):
            continue
        selector = rule.spec.device_selector
        assert selector is not None
        for i, device in enumerate(s.spec.devices):
            if selector.device is not None and selector.device != device.name:
                continue
            if patched is s:
                patched = _copy(s)
            d = patched.spec.devices[i]
            d.taints = [*d.taints, rule.spec.taint]
    return patched


def _copy(s: ResourceSlice) -> ResourceSlice:
    devices = [msgspec.structs.replace(d) for d in s.spec.devices]
    return msgspec.structs.replace(s, spec=msgspec.structs.replace(s.spec, devices=devices))


class SliceTracker:
    def __init__(self, slices: Iterable[ResourceSlice] = (), rules: Iterable[DeviceTaintRule] = ()) -> None:
        self._slices: dict[str, ResourceSlice] = {}
        self._rules: dict[str, DeviceTaintRule] = {r.metadata.name: r for r in rules}
        self._patched: dict[str, ResourceSlice] = {}
        self.listeners: list[SliceListener] = []
        # Counts every change of the patched slices: what an allocation on a node saw stays valid
        # while it is unchanged (node_outcomes.py).
        self.version = 0
        self._layout: tuple[int, SliceLayout] | None = None
        for s in slices:
            self.add_slice(s)

    def list(self) -> list[ResourceSlice]:
        """ListPatchedResourceSlices."""
        return list(self._patched.values())

    def layout(self) -> SliceLayout:
        """list() by node, kept while the slices do not change."""
        if self._layout is None or self._layout[0] != self.version:
            self._layout = (self.version, slice_layout(self._patched.values()))
        return self._layout[1]

    def __len__(self) -> int:
        return len(self._patched)

    # --- slices ------------------------------------------------------------------------------------

    def add_slice(self, s: ResourceSlice) -> None:
        self._slices[s.metadata.name] = s
        self._sync(s.metadata.name, always=True)

    def update_slice(self, old: ResourceSlice, new: ResourceSlice) -> None:
        self.add_slice(new)

    def delete_slice(self, s: ResourceSlice) -> None:
        self._slices.pop(s.metadata.name, None)
        self._sync(s.metadata.name, always=True)

    # --- rules -------------------------------------------------------------------------------------

    def add_rule(self, rule: DeviceTaintRule) -> None:
        self._rules[rule.metadata.name] = rule
        self._sync_for(rule)

    def update_rule(self, old: DeviceTaintRule, new: DeviceTaintRule) -> None:
        self._rules[new.metadata.name] = new
        names = self._names_for(old) | self._names_for(new)
        for name in sorted(names):
            self._sync(name, always=False)

    def delete_rule(self, rule: DeviceTaintRule) -> None:
        self._rules.pop(rule.metadata.name, None)
        self._sync_for(rule)

    def _sync_for(self, rule: DeviceTaintRule) -> None:
        for name in sorted(self._names_for(rule)):
            self._sync(name, always=False)

    def _names_for(self, rule: DeviceTaintRule) -> set[str]:
        selector = rule.spec.device_selector
        out: set[str] = set()
        for name, s in self._slices.items():
            if not _applies(rule, s):
                continue
            if selector is not None and selector.device is not None and \
                    not any(d.name == selector.device for d in s.spec.devices):
                continue
            out.add(name)
        return out

    def _sync(self, name: str, always: bool) -> None:
        """syncSlice: recompute one patched slice; a rule's change is an event only where some
        device's taints changed."""
        self.version += 1
        old = self._patched.get(name)
        s = self._slices.get(name)
        if s is None:
            if old is not None:
                del self._patched[name]
                self._emit(old, None)
            return
        patched = apply_rules(s, self._rules.values())
        self._patched[name] = patched
        if always or (old is not None and any(
                a.taints != b.taints for a, b in zip(old.spec.devices, patched.spec.devices, strict=False))):
            self._emit(old, patched)

    def _emit(self, old: ResourceSlice | None, new: ResourceSlice | None) -> None:
        for listener in self.listeners:
            listener(old, new)
