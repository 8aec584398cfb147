"""PodTopologySpread and `matchLabelKeys`. With MatchLabelKeysInPodTopologySpreadSelectorMerge (beta,
on in v1.37) the apiserver merges them into the stored labelSelector at create, and kube-scheduler
still merges the pod's current labels in as well (filterTopologySpreadConstraints). A pod relabelled
after its creation so needs both values: its constraint matches no pod.

The PreFilter counts of kube-scheduler's filtering_test.go TestPreFilterState cases with
matchLabelKeys (feature gate on) are ported as they are; the other cases add the stored merge."""

from __future__ import annotations

import pytest

from kubesched.model.objects import LabelSelector
from kubesched.plugins.pod_topology_spread import new
from kubesched.plugins.pod_topology_spread.filtering import PRE_FILTER_KEY, PreFilterState
from tests.builders import PodBuilder, label_selector
from tests.unit.pts_helpers import FOO, FOUR_NODES, P, nodes_of, pods_of, pre_filtered

# TestPreFilterState "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty".
ANDED = "p-a1@node-a foo, p-a2@node-a foo bar=a, p-b1@node-b foo, p-y1@node-y foo bar=a, p-y2@node-y bar"
ALL_A = "p-a1@node-a foo=a, p-a2@node-a foo=a, p-b1@node-b foo=a, p-y1@node-y foo=a, p-y2@node-y foo=a"
STORED_BAR_A = label_selector("foo", ("bar", "In", ["a"]))  # FOO with bar In [a] merged at create


def spread(pod: str, selector: LabelSelector | None, keys: tuple[str, ...]) -> PodBuilder:
    return P(pod).spread(1, "zone", selector=selector, match_label_keys=keys)


@pytest.mark.parametrize(("pod", "pods", "counts", "selects", "rejects"), [
    pytest.param(spread("p foo bar=a", FOO, ("bar",)), ANDED, {"zone1": 1, "zone2": 1},
                 {"foo": "", "bar": "a"}, {"foo": ""},
                 id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
    pytest.param(spread("p foo=a", label_selector(), ("foo",)), ALL_A, {"zone1": 3, "zone2": 2},
                 {"foo": "a"}, {"foo": "b"}, id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(spread("p foo", None, ("bar",)), ALL_A, {"zone1": 0, "zone2": 0}, None, {"foo": "a"},
                 id="key in matchLabelKeys is ignored when LabelSelector is nil"),
    pytest.param(spread("p foo", FOO, ("bar",)), ALL_A, {"zone1": 3, "zone2": 2}, {"foo": "a"}, {},
                 id="key in matchLabelKeys is ignored when it isn't exist in pod.labels"),
    pytest.param(spread("p foo bar=a", STORED_BAR_A, ("bar",)), ANDED, {"zone1": 1, "zone2": 1},
                 {"foo": "", "bar": "a"}, {"foo": "", "bar": "b"},
                 id="merged at create, labels unchanged: the scheduler's merge adds the same value"),
    pytest.param(spread("p foo bar=b", STORED_BAR_A, ("bar",)), ANDED + ", p-x1@node-x foo bar=b",
                 {"zone1": 0, "zone2": 0}, None, {"foo": "", "bar": "b"},
                 id="relabelled after create: the stored and the current value are both required"),
    pytest.param(spread("p foo", STORED_BAR_A, ("bar",)), ANDED, {"zone1": 1, "zone2": 1},
                 {"foo": "", "bar": "a"}, {"foo": ""},
                 id="key removed after create: the stored value alone"),
])
def test_pre_filter_merges_the_current_labels(pod: PodBuilder, pods: str, counts: dict[str, int],
                                              selects: dict[str, str] | None, rejects: dict[str, str]) -> None:
    plugin = new({"defaultingType": "List"})
    state, _, _ = pre_filtered(plugin, pod, nodes_of(FOUR_NODES), pods_of(pods))
    s = state.read(PRE_FILTER_KEY)
    assert isinstance(s, PreFilterState)
    assert s.tp_value_to_match_num == [counts]
    selector = s.constraints[0].selector
    if selects is not None:
        assert selector.matches(selects)
    assert not selector.matches(rejects)
