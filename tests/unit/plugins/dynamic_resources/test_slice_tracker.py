"""ResourceSlices with DeviceTaintRules applied, as upstream's resourceslice tracker patches them,
and the slice events the queue gets from it."""

from __future__ import annotations

import pytest

from kubesched.model.objects import ObjectMeta
from kubesched.model.resource import DeviceTaint, DeviceTaintRule, DeviceTaintRuleSpec, DeviceTaintSelector
from kubesched.plugins.dynamic_resources.slice_tracker import SliceTracker, apply_rules
from tests.unit.plugins.dynamic_resources.dra_builders import DRIVER, DRIVER2, NODE_NAME, make_slice

TAINT = DeviceTaint(key="k", value="v", effect="NoSchedule")
SLICE = make_slice(NODE_NAME, DRIVER).device("instance-1").device("instance-2").obj()


def rule(name: str = "rule", driver: str | None = None, pool: str | None = None, device: str | None = None,
         selector: bool = True, taint: DeviceTaint = TAINT) -> DeviceTaintRule:
    return DeviceTaintRule(ObjectMeta(name=name), DeviceTaintRuleSpec(
        device_selector=DeviceTaintSelector(driver, pool, device) if selector else None, taint=taint))


@pytest.mark.parametrize(("r", "tainted"), [
    pytest.param(rule(selector=False), [], id="no-selector-selects-nothing"),
    pytest.param(rule(), ["instance-1", "instance-2"], id="empty-selector-selects-all"),
    pytest.param(rule(driver=DRIVER), ["instance-1", "instance-2"], id="driver"),
    pytest.param(rule(driver=DRIVER2), [], id="other-driver"),
    pytest.param(rule(pool=NODE_NAME), ["instance-1", "instance-2"], id="pool"),
    pytest.param(rule(pool="other"), [], id="other-pool"),
    pytest.param(rule(device="instance-2"), ["instance-2"], id="device"),
    pytest.param(rule(driver=DRIVER, pool=NODE_NAME, device="instance-3"), [], id="no-such-device"),
])
def test_apply_rules(r: DeviceTaintRule, tainted: list[str]) -> None:
    patched = apply_rules(SLICE, [r])
    assert [d.name for d in patched.spec.devices if d.taints == [TAINT]] == tainted
    assert all(not d.taints for d in SLICE.spec.devices)  # the informer's slice is left alone
    if not tainted:
        assert patched is SLICE


def test_taints_are_appended_to_the_devices_own() -> None:
    own = DeviceTaint(key="own", effect="NoExecute")
    s = make_slice(NODE_NAME, DRIVER).device("instance-1", taints=[own]).obj()
    assert apply_rules(s, [rule()]).spec.devices[0].taints == [own, TAINT]


def test_events() -> None:
    seen: list[tuple[str | None, int, int]] = []
    tracker = SliceTracker()
    tracker.listeners.append(lambda old, new: seen.append((
        None if new is None else new.metadata.name, 0 if old is None else sum(len(d.taints) for d in old.spec.devices),
        0 if new is None else sum(len(d.taints) for d in new.spec.devices))))
    tracker.add_slice(SLICE)
    tracker.add_rule(rule(device="instance-1"))
    tracker.add_rule(rule("elsewhere", driver=DRIVER2))  # taints nothing: no event
    tracker.update_rule(rule(device="instance-1"), rule(device="instance-1", taint=DeviceTaint(key="k2")))
    tracker.delete_rule(rule(device="instance-1"))
    tracker.update_slice(SLICE, SLICE)
    tracker.delete_slice(SLICE)
    assert seen == [(SLICE.metadata.name, 0, 0), (SLICE.metadata.name, 0, 1), (SLICE.metadata.name, 1, 1),
                    (SLICE.metadata.name, 1, 0), (SLICE.metadata.name, 0, 0), (None, 0, 0)]
    assert tracker.list() == []


def test_rules_known_first_apply_to_slices_added_later() -> None:
    tracker = SliceTracker([], [rule()])
    tracker.add_slice(SLICE)
    assert [len(d.taints) for d in tracker.list()[0].spec.devices] == [1, 1]


def test_the_layout_is_kept_until_a_slice_changes() -> None:
    tracker = SliceTracker([SLICE])
    first = tracker.layout()
    assert tracker.layout() is first
    assert first.on_node == {NODE_NAME: [SLICE]}
    assert first.shared == []
    other = make_slice("node-2", DRIVER).device("instance-1").obj()
    tracker.add_slice(other)
    second = tracker.layout()
    assert second is not first
    assert second.on_node == {NODE_NAME: [SLICE], "node-2": [other]}
    tracker.add_rule(rule())
    tainted = tracker.layout()
    assert all(d.taints == [TAINT] for s in tainted.all for d in s.spec.devices)
    tracker.delete_slice(other)
    assert list(tracker.layout().on_node) == [NODE_NAME]
