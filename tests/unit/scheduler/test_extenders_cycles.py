"""The scheduler with extenders: the cycle awaits them, their failures reach the FailedScheduling
message as kube-scheduler words it, a binder extender binds, and a pod extenders rejected comes back
on any cluster event. Driven without I/O (fake extenders, a scripted client)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework import events
from kubesched.framework.extender import EXTENDER_NAME
from kubesched.model.objects import Pod
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import make_node, make_pod
from tests.unit.fake_extender import FakeExtender, error_predicate, false_predicate, only, prefer, true_predicate
from tests.unit.scheduler.test_scheduler_binding import (
    FakeConditions,
    FakeEvents,
    created,
    enqueue,
    make_scheduler,
    pop,
)


def with_fakes(**kw: Any) -> tuple[Scheduler, FakeEvents, FakeConditions, Any]:
    sched, client = make_scheduler(created, **kw)
    sched.cache.add_node(make_node("n2").capacity(cpu="1").obj())
    ev, cond = FakeEvents(), FakeConditions()
    sched.cycles.events = ev
    sched.cycles.conditions = cond
    return sched, ev, cond, client


def pod(name: str = "p") -> Pod:
    return make_pod(name).scheduler("kubesched").req(cpu="500m").obj()


async def cycle(sched: Scheduler, p: Pod) -> None:
    enqueue(sched, p)
    await sched.cycles.schedule_one_with_extenders(pop(sched))
    await sched.binds.wait()


async def test_the_extenders_choice_is_bound() -> None:
    ext = FakeExtender("E", [only("n2")])
    sched, ev, _, client = with_fakes(extenders=[ext])
    await cycle(sched, pod())
    assert ev.seen == [("Scheduled", "p n2")]
    assert ("POST", "/api/v1/namespaces/default/pods/p/binding") in client.calls


async def test_extender_priorities_choose_among_the_feasible_nodes() -> None:
    ext = FakeExtender("E", [true_predicate], [(prefer("n1"), 1)], weight=5)
    sched, ev, _, _ = with_fakes(extenders=[ext])
    await cycle(sched, pod())
    assert ev.seen == [("Scheduled", "p n1")]


@pytest.mark.parametrize(("ext", "message", "reason"), [
    pytest.param(FakeExtender("E", [error_predicate]), "some error", "SchedulerError", id="extender-error"),
    pytest.param(FakeExtender("E", [false_predicate]),
                 '0/2 nodes are available: 1 FakeExtender: node "n1" failed, 1 FakeExtender: node "n2" failed. '
                 "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
                 "Unschedulable", id="every-node-filtered-out"),
])
async def test_failed_scheduling_message(ext: FakeExtender, message: str, reason: str) -> None:
    sched, ev, cond, _ = with_fakes(extenders=[ext])
    await cycle(sched, pod())
    assert ev.seen == [("FailedScheduling", message)]
    assert cond.written == [("p", message, reason)]


async def test_a_pod_extenders_rejected_comes_back_on_any_event() -> None:
    sched, _, _, _ = with_fakes(extenders=[FakeExtender("E", [false_predicate])])
    p = pod()
    await cycle(sched, p)
    assert sched.queue.where(p.metadata.uid) == "unschedulable"
    # An event no in-tree plugin that could reject this pod registers.
    sched.queue.move_all_to_active_or_backoff(events.ClusterEvent(events.EventResource.PERSISTENT_VOLUME,
                                                                  events.ActionType.ADD))
    assert sched.queue.where(p.metadata.uid) in ("active", "backoff")


async def test_without_extenders_the_pod_waits_for_its_plugins_events() -> None:
    sched, _, _, _ = with_fakes()
    p = make_pod("p").scheduler("kubesched").req(cpu="2").obj()
    enqueue(sched, p)
    sched.schedule_one(pop(sched))
    assert sched.queue.where(p.metadata.uid) == "unschedulable"
    sched.queue.move_all_to_active_or_backoff(events.ClusterEvent(events.EventResource.PERSISTENT_VOLUME,
                                                                  events.ActionType.ADD))
    assert sched.queue.where(p.metadata.uid) == "unschedulable"
    assert EXTENDER_NAME not in sched.queue._events.plugin_events["kubesched"]  # type: ignore[index]


async def test_an_interested_binder_extender_binds_instead_of_the_bind_plugins() -> None:
    bound: list[str] = []
    ext = FakeExtender("E", binder=lambda p, node: bound.append(f"{p.metadata.name}->{node}"))
    sched, ev, _, client = with_fakes(extenders=[ext])
    await cycle(sched, pod())
    assert len(bound) == 1
    assert ev.seen == [("Scheduled", f"p {bound[0].split('->')[1]}")]
    assert not any(path.endswith("/binding") for _, path in client.calls)


async def test_a_failing_binder_extender_fails_the_binding_with_its_error() -> None:
    def refuse(p: Pod, node: str) -> None:
        from kubesched.framework.extender import ExtenderError
        raise ExtenderError("failed bind with extender at URL http://e/bind, code 500")

    sched, ev, cond, _ = with_fakes(extenders=[FakeExtender("E", binder=refuse)])
    p = pod()
    await cycle(sched, p)
    assert ev.seen == [("FailedScheduling", "failed bind with extender at URL http://e/bind, code 500")]
    assert cond.written[-1][2] == "SchedulerError"
    assert not sched.cache.is_assumed(p)


async def test_the_loop_takes_the_awaiting_cycle_only_with_extenders() -> None:
    plain, _, _, _ = with_fakes()
    assert not plain.extenders
    ext = FakeExtender("E", ignorable=True)
    other = FakeExtender("F")
    sched, _, _, _ = with_fakes(extenders=[ext, other])
    assert [e.name() for e in sched.extenders] == ["F", "E"]
    assert sched.handle.extenders is sched.extenders
    assert [e.name() for e in sched.cycles.extenders] == ["F", "E"]


IGNORED = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
           "extenders:\n  - urlPrefix: http://e\n    managedResources:\n      - name: example.com/gpu\n"
           "        ignoredByScheduler: true\n      - name: example.com/fpga\n")


def test_resources_an_extender_manages_and_the_scheduler_ignores_replace_fit_ignored_resources() -> None:
    from kubesched.config import loads
    from kubesched.scheduler.profiles import extenders_ignored_resources
    config = loads(IGNORED + "profiles:\n  - schedulerName: s\n    pluginConfig:\n      - name: NodeResourcesFit\n"
                   "        args:\n          ignoredResources: [example.com/other]\n")
    [profile] = extenders_ignored_resources(config)
    assert profile.plugin_args["NodeResourcesFit"]["ignoredResources"] == ["example.com/gpu"]
    assert config.profiles[0].plugin_args["NodeResourcesFit"]["ignoredResources"] == ["example.com/other"]


async def test_a_pod_asking_for_an_ignored_resource_fits_nodes_without_it() -> None:
    from kubesched.config import load, loads
    sched, _ = make_scheduler(created)
    config = loads(IGNORED)
    plain = Scheduler(sched.client, load(None))
    ignoring = Scheduler(sched.client, config)
    p = make_pod("p").scheduler("kubesched").req(example_com__gpu="1").obj()
    for s, want in ((plain, "unschedulable"), (ignoring, "in-flight")):
        s.cache.add_node(make_node("n1").capacity(cpu="1").obj())
        enqueue(s, p)
        s.schedule_one(pop(s))
        assert s.queue.where(p.metadata.uid) == want, s
        assert s.cache.is_assumed(p) is (want == "in-flight")
        await s.binds.wait()


def test_a_profile_without_fit_args_cannot_ignore_resources() -> None:
    from kubesched.config import loads
    from kubesched.framework import ProfileError
    from kubesched.scheduler.profiles import extenders_ignored_resources
    config = loads(IGNORED + "profiles:\n  - schedulerName: s\n    plugins:\n      multiPoint:\n"
                   "        disabled:\n          - name: NodeResourcesFit\n")
    with pytest.raises(ProfileError, match="can't find NodeResourcesFitArgs in plugin config"):
        extenders_ignored_resources(config)
