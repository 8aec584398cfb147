"""The scheduling cycle with extenders (framework/runtime/extenders.py), ported from kube-scheduler's
extender_test.go (TestSchedulerWithExtenders, TestIsInterested, TestConvertToVictims) and
schedule_one_test.go (TestFindNodesThatPassExtenders, the extender case of TestSchedulerSchedulePod),
with the fake extender of tests/unit/fake_extender.py."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from kubesched.framework import FitError, NodeCursor, PodInfo, ScheduleResult
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import (
    EXTENDER_NAME,
    ExtenderError,
    ExtenderManagedResource,
    Victims,
    bare_node_info,
    extender_score,
    interested,
    ordered,
    victims_from_meta,
)
from kubesched.framework.runtime.extenders import (
    call_extenders,
    extenders_binding,
    find_nodes_that_pass_extenders,
    schedule_pod_with_extenders,
)
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.runtime.schedule import select_host
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod
from tests.builders import make_node, make_pod
from tests.unit.fake_extender import (
    FakeExtender,
    error_predicate,
    error_prioritizer,
    false_predicate,
    only,
    prefer,
    true_predicate,
)
from tests.unit.scheduling_helpers import default_profile, snapshot_with


class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class FakeFilter:
    """Rejects the named nodes, as schedule_one_test.go's FakeFilterPlugin."""

    name = "FakeFilter"

    def __init__(self, *rejected: str) -> None:
        self.rejected = set(rejected)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.name in self.rejected:
            return Status(Code.UNSCHEDULABLE, f"injecting failure for pod {pod.pod.metadata.name}")
        return None


class Scorer:
    def __init__(self, name: str, scores: dict[str, int], default: int = 0) -> None:
        self.name = name
        self.scores = scores
        self.default = default

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo, snapshot: Any) -> int:
        return self.scores.get(node.name, self.default)


EQUAL = Scorer("EqualPrioritizerPlugin", {}, 1)
NODE2 = Scorer("Node2Prioritizer", {"node2": 100}, 10)


def profile(filters: Sequence[Any] = (TrueFilter(),), scores: Sequence[tuple[Any, int]] = ()) -> Profile:
    return Profile("s", filter=tuple(filters), score=tuple(scores))


async def run(prof: Profile, extenders: Sequence[Any], names: Sequence[str], pod: Pod | None = None,
              seed: int = 0) -> ScheduleResult | FitError:
    snapshot = snapshot_with([make_node(n) for n in names])
    return await schedule_pod_with_extenders(prof, snapshot, PodInfo(pod or make_pod("p").obj()),
                                             extenders=extenders, rng=random.Random(seed), cursor=NodeCursor())


NODES = ("node1", "node2")

# TestSchedulerWithExtenders: (profile, extenders, nodes, (host, evaluated, feasible) or "error"/"fit").
SCHEDULER_CASES = [
    pytest.param(profile(), [FakeExtender("FakeExtender1", [true_predicate]),
                             FakeExtender("FakeExtender2", [error_predicate])], NODES, "error", id="test 1"),
    pytest.param(profile(), [FakeExtender("FakeExtender1", [true_predicate]),
                             FakeExtender("FakeExtender2", [false_predicate])], NODES, "fit", id="test 2"),
    pytest.param(profile(scores=[(EQUAL, 1)]), [FakeExtender("FakeExtender1", [true_predicate]),
                                                FakeExtender("FakeExtender2", [only("node1")])], NODES,
                 ("node1", 2, 1), id="test 3"),
    pytest.param(profile(), [FakeExtender("FakeExtender1", [only("node2")]),
                             FakeExtender("FakeExtender2", [only("node1")])], NODES, "fit", id="test 4"),
    pytest.param(profile(), [FakeExtender("FakeExtender1", [true_predicate], [(error_prioritizer, 10)], weight=1)],
                 ("node1",), ("node1", 1, 1), id="test 5"),
    pytest.param(profile(), [FakeExtender("FakeExtender1", [true_predicate], [(prefer("node1"), 10)], weight=1),
                             FakeExtender("FakeExtender2", [true_predicate], [(prefer("node2"), 10)], weight=5)],
                 NODES, ("node2", 2, 2), id="test 6"),
    pytest.param(profile(scores=[(NODE2, 20)]),
                 [FakeExtender("FakeExtender1", [true_predicate], [(prefer("node1"), 10)], weight=1)],
                 NODES, ("node2", 2, 2), id="test 7"),
    pytest.param(profile(scores=[(NODE2, 1)]),
                 [FakeExtender("FakeExtender1", [error_predicate], [(error_prioritizer, 10)], uninterested=True)],
                 NODES, ("node2", 2, 2), id="test 8 - not interested: never asked"),
    pytest.param(profile(scores=[(EQUAL, 1)]), [FakeExtender("FakeExtender1", [error_predicate], ignorable=True),
                                                FakeExtender("FakeExtender2", [only("node1")])], NODES,
                 ("node1", 2, 1), id="test 9 - an ignorable extender's error is skipped"),
    pytest.param(profile(), [FakeExtender("FakeExtender1", [true_predicate]),
                             FakeExtender("FakeExtender2", [only("node1")])], NODES,
                 ("node1", 2, 1), id="test 10 - no scoring, extender filters: every feasible node evaluated"),
    pytest.param(profile(filters=()), [FakeExtender("FakeExtender1", binder=lambda pod, node: None)], NODES,
                 ("node1", 1, 1), id="test 11 - no scoring, no extender filters: one feasible node evaluated"),
]


@pytest.mark.parametrize(("prof", "extenders", "names", "want"), SCHEDULER_CASES)
async def test_scheduler_with_extenders(prof: Profile, extenders: list[FakeExtender], names: Sequence[str],
                                        want: Any) -> None:
    if want == "error":
        with pytest.raises(SchedulingError):
            await run(prof, extenders, names)
        return
    result = await run(prof, extenders, names)
    if want == "fit":
        assert isinstance(result, FitError)
        return
    assert isinstance(result, ScheduleResult), result
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == want
    for ext in extenders:
        if ext.uninterested:
            assert ext.calls == []


async def test_an_extender_error_is_the_cycle_error_message() -> None:
    with pytest.raises(SchedulingError) as info:
        await run(profile(), [FakeExtender("FakeExtender1", [error_predicate])], NODES)
    assert str(info.value) == "some error"
    assert info.value.status.code == Code.ERROR


async def test_extender_that_filters_out_every_node() -> None:
    """TestSchedulerSchedulePod "test with extender which filters out some Nodes": the extender's
    failed nodes join the filters' statuses in the diagnosis and the message; "Extender" is recorded."""
    result = await run(profile(filters=[FakeFilter("3")], scores=[(Scorer("NumericMap", {}), 1)]),
                       [FakeExtender("FakeExtender1", [false_predicate])], ("1", "2", "3"),
                       pod=make_pod("test-filter").uid("test-filter").obj())
    assert isinstance(result, FitError)
    statuses = result.diagnosis.node_to_status
    assert statuses == {"1": Status(Code.UNSCHEDULABLE, 'FakeExtender: node "1" failed'),
                        "2": Status(Code.UNSCHEDULABLE, 'FakeExtender: node "2" failed'),
                        "3": Status(Code.UNSCHEDULABLE, "injecting failure for pod test-filter", plugin="FakeFilter")}
    assert result.diagnosis.unschedulable_plugins == {"FakeFilter", EXTENDER_NAME}
    assert result.message() == ('0/3 nodes are available: 1 FakeExtender: node "1" failed, 1 FakeExtender: node "2" '
                                'failed, 1 injecting failure for pod test-filter.')


async def test_no_extender_rejection_records_no_extender_plugin() -> None:
    result = await run(profile(filters=[FakeFilter("node1", "node2")]), [FakeExtender("E", [true_predicate])], NODES)
    assert isinstance(result, FitError)
    assert result.diagnosis.unschedulable_plugins == {"FakeFilter"}


ABSENT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [PreFilter]")


def allowed(name: str) -> Any:
    """Only `name` passes; "b" fails, any other node fails unresolvably."""
    def predicate(pod: Pod, node: NodeInfo) -> Status | None:
        if node.name == name:
            return None
        code = Code.UNSCHEDULABLE if node.name == "b" else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return Status(code, f'node "{node.name}" is not allowed')
    return predicate


FAILED_B = Status(Code.UNSCHEDULABLE, 'FakeExtender: node "b" failed')
UNRESOLVABLE_C = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'FakeExtender: node "c" failed and unresolvable')

# TestFindNodesThatPassExtenders: (extenders, nodes, statuses before, nodes kept or "error", statuses after).
PASS_CASES = [
    pytest.param([FakeExtender("FakeExtender1", [error_predicate])], ["a"], {}, "error", {}, id="error"),
    pytest.param([FakeExtender("FakeExtender1", [true_predicate])], ["a"], {}, ["a"], {}, id="success"),
    pytest.param([FakeExtender("FakeExtender1", [only("a")])], ["a", "b"], {}, ["a"], {"b": FAILED_B},
                 id="unschedulable"),
    pytest.param([FakeExtender("FakeExtender1", [allowed("a")])], ["a", "b", "c"], {}, ["a"],
                 {"b": FAILED_B, "c": UNRESOLVABLE_C}, id="unschedulable and unresolvable"),
    pytest.param([FakeExtender("FakeExtender1", [allowed("a")])], ["a", "b"],
                 {"c": Status(Code.UNSCHEDULABLE, 'FakeFilterPlugin: node "c" failed')}, ["a"],
                 {"b": FAILED_B, "c": Status(Code.UNSCHEDULABLE, 'FakeFilterPlugin: node "c" failed')},
                 id="extender does not overwrite the previous statuses"),
    pytest.param([FakeExtender("FakeExtender1", [allowed("a")]), FakeExtender("FakeExtender1", [only("a")])],
                 ["a", "b", "c"], {}, ["a"], {"b": FAILED_B, "c": UNRESOLVABLE_C}, id="multiple extenders"),
]


@pytest.mark.parametrize(("extenders", "names", "before", "want", "after"), PASS_CASES)
async def test_find_nodes_that_pass_extenders(extenders: list[FakeExtender], names: list[str],
                                              before: dict[str, Status], want: Any, after: dict[str, Status]) -> None:
    nodes = [NodeInfo(make_node(n).obj()) for n in names]
    statuses = dict(before)
    if want == "error":
        with pytest.raises(ExtenderError):
            await find_nodes_that_pass_extenders(extenders, make_pod("1").uid("1").obj(), nodes, statuses)
        return
    got = await find_nodes_that_pass_extenders(extenders, make_pod("1").uid("1").obj(), nodes, statuses)
    assert [ni.name for ni in got] == want
    assert statuses == after


class Both:
    """An extender naming a node in both failed maps: FailedAndUnresolvableNodes wins."""

    def __init__(self) -> None:
        self.inner = FakeExtender("both")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        from kubesched.framework.extender import FilterResult
        return FilterResult([], {"a": "soft"}, {"a": "hard"})


async def test_unresolvable_takes_precedence_over_failed() -> None:
    statuses: dict[str, Status] = {}
    await find_nodes_that_pass_extenders([Both()], make_pod("p").obj(), [NodeInfo(make_node("a").obj())], statuses)
    assert statuses == {"a": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "hard")}


@pytest.mark.parametrize(("score", "weight", "want"), [
    pytest.param(10, 1, 100, id="max-priority-is-max-node-score"),
    pytest.param(3, 5, 150, id="weighted"),
    pytest.param(0, 7, 0, id="zero"),
    pytest.param(-2, 1, -20, id="negative-kept"),
    pytest.param(11, 1, 110, id="above-the-range-kept"),
    pytest.param(2**62, 4, 0, id="wraps-as-int64"),
])
def test_extender_score(score: int, weight: int, want: int) -> None:
    assert extender_score(score, weight) == want


@pytest.mark.parametrize(("pod", "want"), [
    pytest.param(make_pod("p").obj(), False, id="Managed memory, empty resources"),
    pytest.param(make_pod("p").req(memory="0").obj(), True, id="Managed memory, container memory with Requests"),
    pytest.param(make_pod("p").container().obj(), False, id="Managed memory, a container without resources"),
    pytest.param(make_pod("p").container().init_req(memory="0").obj(), True,
                 id="Managed memory, init container memory"),
])
def test_is_interested(pod: Pod, want: bool) -> None:
    assert interested(frozenset({"memory"}), pod) is want


def test_is_interested_with_limits_and_without_managed_resources() -> None:
    pod = make_pod("p").container().obj()
    pod.spec.containers[0].resources.limits["memory"] = "0"
    assert interested(frozenset({"memory"}), pod)
    assert interested(frozenset(), make_pod("p").obj())


def test_http_extender_interest_comes_from_managed_resources() -> None:
    from kubesched.framework.extender import ConfiguredExtender, ExtenderConfig
    gpu = ExtenderManagedResource("example.com/gpu")
    ext = ConfiguredExtender(ExtenderConfig("http://x", managed_resources=(gpu,)))
    assert not ext.is_interested(make_pod("p").req(cpu="1").obj())
    assert ext.is_interested(make_pod("p").req(example_com__gpu="1").obj())
    assert ext.name() == "http://x"


def test_ignorable_extenders_go_last() -> None:
    a, b, c = FakeExtender("a", ignorable=True), FakeExtender("b"), FakeExtender("c")
    assert [e.name() for e in ordered([a, b, c])] == ["b", "c", "a"]


@pytest.mark.parametrize(("totals", "randomizer", "want"), [
    pytest.param([5, 9, 9], [0, 1, 7], 2, id="higher-randomizer-wins-a-tie"),
    pytest.param([5, 9, 9], [0, 7, 1], 1, id="randomizer-order"),
    pytest.param([10, 9, 9], [0, 7, 8], 0, id="total-first"),
    pytest.param([1, 2, 10, 10], [0, 0, 0, 0], 3, id="equal-randomizers-keep-the-heap-order"),
    pytest.param([9, 9, 9], [0, 5, 5], 1, id="ties-of-randomizers-keep-the-heap-order"),
])
def test_select_host_with_randomizer(totals: list[int], randomizer: list[int], want: int) -> None:
    assert select_host(np.array(totals, dtype=np.int64), np.array(randomizer, dtype=np.int64)) == want


async def test_extender_scored_ties_are_broken_at_random() -> None:
    """Two equal nodes: without extenders always the same; with an extender scoring both, either."""
    ext = FakeExtender("E", [true_predicate], [(lambda pod, nodes: [(n.name, 0) for n in nodes], 1)], weight=1)
    picks = set()
    for seed in range(20):
        result = await run(profile(scores=[(EQUAL, 1)]), [ext], NODES, seed=seed)
        assert isinstance(result, ScheduleResult)
        picks.add(result.suggested_host)
    assert picks == {"node1", "node2"}


async def test_extender_scores_add_to_the_plugins_totals() -> None:
    ext = FakeExtender("E", [true_predicate], [(prefer("node1"), 1)], weight=2)
    result = await run(profile(scores=[(NODE2, 1)]), [ext], NODES)
    assert isinstance(result, ScheduleResult)
    # node1: 10 + 10*2*10; node2: 100 + 1*2*10
    assert result.total_scores() == {"node1": 210, "node2": 120}
    assert result.suggested_host == "node1"


class EchoNodes(FakeExtender):
    """An extender that does not cache nodes: it returns the Node objects, which the scheduler turns
    into new NodeInfos of their own."""

    async def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
        from kubesched.framework.extender import FilterResult
        return FilterResult([bare_node_info(ni.node) for ni in reversed(nodes)])


async def test_nodes_an_extender_sends_back_are_scored_without_their_pods() -> None:
    """kube-scheduler scores the NodeInfos it makes of returned Node objects: no pods, nothing
    requested, so a busy node scores as an empty one."""
    nodes: list[Any] = [make_node("busy").capacity(cpu="4"), make_node("idle").capacity(cpu="4")]
    filler: list[Any] = [make_pod("filler").node("busy").req(cpu="3")]
    snapshot = snapshot_with(nodes, filler)
    pod = PodInfo(make_pod("p").req(cpu="1").obj())
    plain = await schedule_pod_with_extenders(default_profile(), snapshot, pod, extenders=[FakeExtender("E")],
                                              rng=random.Random(0), cursor=NodeCursor())
    assert isinstance(plain, ScheduleResult)
    assert plain.total_scores()["idle"] > plain.total_scores()["busy"]
    echoed = await schedule_pod_with_extenders(default_profile(), snapshot, pod, extenders=[EchoNodes("E")],
                                               rng=random.Random(0), cursor=NodeCursor())
    assert isinstance(echoed, ScheduleResult)
    totals = echoed.total_scores()
    assert totals["idle"] == totals["busy"]


async def test_nominated_node_rejected_by_an_extender_falls_back_to_the_search() -> None:
    pod = make_pod("p").obj()
    pod.status.nominated_node_name = "node1"
    result = await run(profile(scores=[(EQUAL, 1)]), [FakeExtender("E", [only("node2")])], NODES, pod=pod)
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node2"


async def test_nominated_node_the_extender_keeps_is_taken() -> None:
    pod = make_pod("p").obj()
    pod.status.nominated_node_name = "node2"
    ext = FakeExtender("E", [true_predicate], [(prefer("node1"), 1)], weight=1)
    result = await run(profile(scores=[(EQUAL, 1)]), [ext], NODES, pod=pod)
    assert isinstance(result, ScheduleResult)
    assert (result.suggested_host, result.feasible_nodes) == ("node2", 1)
    assert ext.calls == ["filter"]


# TestSchedulerBinding's extender cases: which extender binds.
BINDING_CASES = [
    pytest.param([FakeExtender("a", managed=frozenset())], False, [], id="the extender is not a binder"),
    pytest.param([FakeExtender("a"), FakeExtender("b", binder=lambda pod, node: None)], True, [1],
                 id="one of the extenders is a binder and interested in pod"),
    pytest.param([FakeExtender("a"), FakeExtender("b", binder=lambda pod, node: None, uninterested=True)], False, [],
                 id="one of the extenders is a binder, but not interested in pod"),
]


@pytest.mark.parametrize(("extenders", "bound", "binders"), BINDING_CASES)
async def test_extenders_binding(extenders: list[FakeExtender], bound: bool, binders: list[int]) -> None:
    took, status = await extenders_binding(extenders, make_pod("pod0").obj(), "node1")
    assert (took, status) == (bound, None)
    assert [i for i, e in enumerate(extenders) if e.bound] == binders


def failing(pod: Pod, node: str) -> None:
    raise ExtenderError("bind failed")


async def test_ignore_when_extender_bind_failed() -> None:
    ext = FakeExtender("a", binder=failing, ignorable=True)
    took, status = await extenders_binding([ext], make_pod("p").obj(), "n")
    assert (took, status) == (False, None)


async def test_a_failing_binder_fails_the_bind() -> None:
    took, status = await extenders_binding([FakeExtender("a", binder=failing)], make_pod("p").obj(), "n")
    assert took
    assert status == Status(Code.ERROR, "bind failed")


def test_convert_to_victims() -> None:
    """TestConvertToVictims: the UIDs become the snapshot's pods, PDB violations kept."""
    pods: list[Any] = [make_pod(f"pod{i}").uid(f"uid{i}").node("node1" if i in (1, 3) else "node2")
                       for i in (1, 2, 3, 4)]
    snapshot = snapshot_with([make_node("node1"), make_node("node2")], pods)
    got = victims_from_meta("http://e", {"node1": (["uid1", "uid3"], 1), "node2": (["uid2", "uid4"], 2)}, snapshot)
    assert {n: ([p.pod.metadata.name for p in v.pods], v.num_pdb_violations) for n, v in got.items()} == {
        "node1": (["pod1", "pod3"], 1), "node2": (["pod2", "pod4"], 2)}


@pytest.mark.parametrize(("meta", "message"), [
    pytest.param({"node1": (["nope"], 0)}, "extender: http://e claims to preempt pod (UID: &{nope}) on node: node1, "
                 "but the pod is not found on that node", id="pod-not-there"),
    pytest.param({"ghost": (["uid1"], 0)}, 'nodeinfo not found for node name "ghost"', id="node-not-there"),
])
def test_convert_to_victims_errors(meta: dict[str, tuple[list[str], int]], message: str) -> None:
    snapshot = snapshot_with([make_node("node1")], [make_pod("pod1").uid("uid1").node("node1")])
    with pytest.raises(ExtenderError) as info:
        victims_from_meta("http://e", meta, snapshot)
    assert str(info.value) == message


def _victims(snapshot: Any, *nodes: str) -> dict[str, Victims]:
    return {n: Victims([next(iter(snapshot.node_infos[snapshot.index[n]].pods.values()))]) for n in nodes}


async def test_call_extenders_keeps_what_each_preempting_extender_keeps() -> None:
    snapshot = snapshot_with([make_node("a"), make_node("b")], [make_pod("va").node("a"), make_pod("vb").node("b")])
    victims = _victims(snapshot, "a", "b")
    kept = await call_extenders([FakeExtender("x", [only("b")], preempts=True), FakeExtender("y", [error_predicate])],
                                make_pod("p").obj(), victims, snapshot)
    assert isinstance(kept, dict)
    assert list(kept) == ["b"]


@pytest.mark.parametrize(("ignorable", "want"), [
    pytest.param(False, Status(Code.ERROR, 'expected at least one victim pod on node "a"'), id="an-error"),
    pytest.param(True, {}, id="ignorable-drops-the-node"),
])
async def test_call_extenders_needs_a_victim_per_node(ignorable: bool, want: Any) -> None:
    snapshot = snapshot_with([make_node("a")], [make_pod("va").node("a")])
    ext = FakeExtender("x", preempts=True, ignorable=ignorable,
                       preemption=lambda pod, v: {"a": Victims([], 0)})
    assert await call_extenders([ext], make_pod("p").obj(), _victims(snapshot, "a"), snapshot) == want


async def test_call_extenders_error_unless_ignorable() -> None:
    snapshot = snapshot_with([make_node("a")], [make_pod("va").node("a")])
    victims = _victims(snapshot, "a")
    assert await call_extenders([FakeExtender("x", [error_predicate], preempts=True)], make_pod("p").obj(), victims,
                                snapshot) == Status(Code.ERROR, "some error")
    kept = await call_extenders([FakeExtender("x", [error_predicate], preempts=True, ignorable=True)],
                                make_pod("p").obj(), victims, snapshot)
    assert kept == victims
