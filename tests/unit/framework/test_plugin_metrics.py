"""scheduler_plugin_execution_duration_seconds: which cycles record (kube-scheduler's 10 %), that an
unsampled cycle never touches the recorder, and the labels each extension point records with, on a
fake recorder whose clock advances one second a reading."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubesched.framework import CycleState, PodInfo
from kubesched.framework.plugin_metrics import PLUGIN_METRICS_SAMPLE_PERCENT, sampled
from kubesched.framework.runtime.framework import (
    run_bind,
    run_permit,
    run_post_bind,
    run_pre_bind,
    run_reserve,
    run_unreserve,
)
from kubesched.framework.runtime.schedule import NodeCursor, schedule_pod
from kubesched.framework.status import Code
from kubesched.framework.waiting import WaitingPods
from kubesched.metrics import PLUGIN_BUCKETS, Metrics
from kubesched.model.objects import Node
from tests.builders import NodeBuilder, make_node, make_pod
from tests.unit.framework.test_framework_runtime import POD, UNSCHED, Recorder, framework
from tests.unit.scheduler.test_metrics import PROFILE, _pop, _setup
from tests.unit.scheduling_helpers import default_profile, snapshot_with


class FakeRecorder:
    def __init__(self) -> None:
        self.t = 0.0
        self.seen: list[tuple[str, str, int, float, int]] = []

    def now(self) -> float:
        self.t += 1.0
        return self.t

    def observe(self, plugin: str, extension_point: str, code: int, seconds: float, count: int = 1) -> None:
        self.seen.append((plugin, extension_point, code, seconds, count))

    def points(self) -> Counter[tuple[str, str]]:
        calls: Counter[tuple[str, str]] = Counter()
        for plugin, point, _, _, n in self.seen:
            calls[(plugin, point)] += n
        return calls


class FixedRng(random.Random):
    def __init__(self, value: int) -> None:
        super().__init__()
        self.value = value

    def randrange(self, *_: Any, **__: Any) -> int:
        return self.value


def test_ten_percent_of_cycles_record() -> None:
    rec = FakeRecorder()
    assert PLUGIN_METRICS_SAMPLE_PERCENT == 10
    assert sampled(rec, FixedRng(9)) is rec
    assert sampled(rec, FixedRng(10)) is None
    assert sampled(None, FixedRng(0)) is None
    rng = random.Random(7)
    hits = sum(sampled(rec, rng) is not None for _ in range(10_000))
    assert 900 < hits < 1100


async def test_binding_cycle_points_are_timed_per_plugin() -> None:
    rec = FakeRecorder()
    profile = framework({"a": {}, "b": {"reserve": UNSCHED}}, Recorder(),
                        ("reserve", "permit", "preBind", "bind", "postBind"))
    state = CycleState(rec)
    run_reserve(profile, state, POD, "n1")
    run_unreserve(profile, state, POD, "n1")
    run_permit(profile, state, POD, "n1", WaitingPods())
    await run_pre_bind(profile, state, POD, "n1")
    await run_bind(profile, state, POD, "n1")
    run_post_bind(profile, state, POD, "n1")
    assert [(p, e, c) for p, e, c, _, _ in rec.seen] == [
        ("a", "Reserve", Code.SUCCESS), ("b", "Reserve", Code.UNSCHEDULABLE),
        ("b", "Unreserve", Code.SUCCESS), ("a", "Unreserve", Code.SUCCESS),
        ("a", "Permit", Code.SUCCESS), ("b", "Permit", Code.SUCCESS),
        ("a", "PreBind", Code.SUCCESS), ("b", "PreBind", Code.SUCCESS),
        ("a", "Bind", Code.SUCCESS),  # the first binder that does not Skip ends the chain
        ("a", "PostBind", Code.SUCCESS), ("b", "PostBind", Code.SUCCESS),
    ]
    assert all(seconds == 1.0 and count == 1 for *_, seconds, count in rec.seen)


@pytest.mark.parametrize(("draw", "recorded"), [
    pytest.param(9, True, id="sampled"),
    pytest.param(10, False, id="not-sampled"),
])
async def test_cycles_sample_the_whole_cycle_binding_included(draw: int, recorded: bool) -> None:
    cycles, queue, _, metrics, store = _setup()
    cycles.sample_rng = FixedRng(draw)
    pod = make_pod("p").scheduler(PROFILE).req(cpu="1").obj()
    store[pod.key] = pod
    queue.add(pod)
    cycles.schedule_one(_pop(queue))
    await cycles.binds.wait()
    name = "scheduler_plugin_execution_duration_seconds_count"
    for plugin, point in (("NodeResourcesFit", "Filter"), ("Recording", "Bind")):
        count = metrics.registry.get_sample_value(name, {"plugin": plugin, "extension_point": point,
                                                         "status": "Success"})
        assert count == (1.0 if recorded else None), (plugin, point)


def test_scheduling_cycle_points_are_timed_per_plugin_and_node() -> None:
    rec = FakeRecorder()
    nodes: list[Node | NodeBuilder] = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi") for i in range(3)]
    nodes.append(make_node("tainted").capacity(cpu="4", memory="8Gi").taint("k", "v", "NoSchedule"))
    schedule_pod(default_profile(), snapshot_with(nodes), PodInfo(make_pod("p").req(cpu="1").obj()),
                 rng=random.Random(0), cursor=NodeCursor(), state=CycleState(rec))
    points = rec.points()
    for plugin in ("NodeResourcesFit", "TaintToleration", "NodeAffinity"):
        assert points[(plugin, "PreFilter")] == 1, plugin
    # every node the filters evaluated counts as one Filter call
    assert points[("TaintToleration", "Filter")] == 4
    filter_codes = {c: n for p, e, c, _, n in rec.seen if (p, e) == ("TaintToleration", "Filter")}
    assert filter_codes == {Code.SUCCESS: 3, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: 1}  # its own verdict's code
    # three feasible nodes scored by each score plugin, then its NormalizeScore if it has one
    assert points[("NodeResourcesFit", "Score")] == 3
    assert points[("TaintToleration", "PreScore")] == 1
    assert points[("TaintToleration", "ScoreExtensionNormalize")] == 1
    assert all(e in {"PreFilter", "Filter", "PreScore", "Score", "ScoreExtensionNormalize"} for _, e, *_ in rec.seen)


def test_exported_with_kube_schedulers_name_labels_and_buckets() -> None:
    m = Metrics(["p"], lambda: {}, process=False)
    assert "scheduler_plugin_execution_duration_seconds" not in m.exposition().decode()  # no series yet
    m.plugins.observe("NodeName", "Filter", Code.SUCCESS, 0.00002, 3)
    m.plugins.observe("NodeName", "Filter", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0.00002)
    (family,) = [f for f in text_string_to_metric_families(m.exposition().decode())
                 if f.name == "scheduler_plugin_execution_duration_seconds"]
    assert family.type == "histogram"
    counts = {s.labels["status"]: s.value for s in family.samples if s.name.endswith("_count")}
    assert counts == {"Success": 3.0, "UnschedulableAndUnresolvable": 1.0}
    bounds = sorted({float(s.labels["le"]) for s in family.samples if s.name.endswith("_bucket")})
    assert bounds[:-1] == list(PLUGIN_BUCKETS)
    assert len(PLUGIN_BUCKETS) == 20
    assert PLUGIN_BUCKETS[0] == 0.00001
    assert {k for s in family.samples for k in s.labels} == {"plugin", "extension_point", "status", "le"}


@pytest.mark.parametrize(("draw", "expected"), [
    pytest.param(0, [("SchedulingGates", "PreEnqueue", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 1.0, 1)], id="sampled"),
    pytest.param(10, [], id="not-sampled"),
])
def test_the_queue_samples_pre_enqueue_runs(draw: int, expected: list[tuple[str, str, int, float, int]]) -> None:
    from kubesched.backend.queue import FakeClock as QueueClock
    from kubesched.backend.queue import SchedulingQueue
    from kubesched.model.objects import SchedulingGate
    from kubesched.plugins.scheduling_gates import SchedulingGates
    from tests.unit.backend.test_queue import make_pod as queue_pod

    q = SchedulingQueue(QueueClock(), pre_enqueue={"kubesched": [SchedulingGates()]})
    rec = FakeRecorder()
    q.plugin_recorder = rec
    q.sample_rng = FixedRng(draw)
    q.add(queue_pod("g", scheduling_gates=[SchedulingGate("wait")]))
    assert rec.seen == expected
