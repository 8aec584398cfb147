"""Nominated pods: the queue's nominator (kube-scheduler nominator.go and its scheduling_queue_test.go
cases), the filters run with them (framework_test.go TestFilterPluginsWithNominatedPods), the
nominated node tried first (schedule_one.go evaluateNominatedNode) and the dry run honouring them."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

import pytest

from kubesched.backend.queue import PodNominator, SchedulingQueue
from kubesched.config import ProfileConfig, kube_scheduler_default_plugins
from kubesched.framework import CycleState, FitError, NodeCursor, PodInfo, Profile, ScheduleResult, build_profile
from kubesched.framework import schedule_pod as run_schedule
from kubesched.framework.handle import Handle
from kubesched.framework.runtime.nominated import run_filters_with_nominated_pods, yielded_to
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, SchedulingError, Status
from kubesched.model.objects import Pod
from kubesched.plugins.default_preemption import DefaultPreemption
from kubesched.plugins.registry import in_tree_registry
from tests.builders import NodeBuilder, PodBuilder, affinity_term, make_node, make_pod
from tests.unit.scheduling_helpers import pod_of, snapshot_with

HOSTNAME = "kubernetes.io/hostname"


def nominated(name: str, node: str, prio: int, cpu: str = "3", **labels: str) -> Pod:
    pod = make_pod(name).uid(name).priority(prio).req(cpu=cpu).labels(**labels).obj()
    pod.status.nominated_node_name = node
    return pod


def node(name: str, cpu: str = "4") -> NodeBuilder:
    return make_node(name).capacity(cpu=cpu).label(HOSTNAME, name)


def profile_with(snap: Snapshot, nominator: PodNominator) -> Profile:
    handle = Handle(snapshot=lambda: snap, nominator=nominator)
    return build_profile(ProfileConfig("kubesched", kube_scheduler_default_plugins()), in_tree_registry(), handle)


def schedule(nodes: list[NodeBuilder], pod: PodBuilder | Pod, noms: Sequence[Pod] = (),
             pods: Sequence[PodBuilder] = ()) -> ScheduleResult | FitError:
    snap = snapshot_with(list(nodes), list(pods))
    nominator = PodNominator()
    for p in noms:
        nominator.add(p)
    return run_schedule(profile_with(snap, nominator), snap, PodInfo(pod_of(pod)), rng=random.Random(0),
                        cursor=NodeCursor())


# --- the nominator --------------------------------------------------------------------------------

class Store:
    def __init__(self, *pods: Pod) -> None:
        self.pods = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}

    def get(self, key: str) -> Pod | None:
        return self.pods.get(key)


def names(nominator: PodNominator, node: str) -> list[str]:
    return [pi.pod.metadata.name for pi in nominator.nominated_pods_for_node(node)]


def test_pods_nominated_to_a_node_in_arrival_order() -> None:
    nominator = PodNominator()
    for p in (nominated("med", "node1", 5), nominated("unsched", "node1", 1), nominated("other", "node2", 9)):
        nominator.add(p)
    assert names(nominator, "node1") == ["med", "unsched"]
    assert names(nominator, "node2") == ["other"]
    assert names(nominator, "node3") == []
    assert set(nominator.nominated_nodes()) == {"node1", "node2"}


@pytest.mark.parametrize(("store", "want"), [
    pytest.param(True, 1, id="alive-pod-is-added"),
    pytest.param(False, 0, id="deleted-pod-is-not-added"),
])
def test_a_pod_gone_from_the_informer_is_not_nominated(store: bool, want: int) -> None:
    pod = nominated("p", "node1", 5)
    nominator = PodNominator(Store(pod) if store else Store())
    nominator.add(pod)
    assert len(nominator.nominated_pods_for_node("node1")) == want


def test_a_bound_pod_is_not_nominated() -> None:
    pod = nominated("p", "node1", 5)
    bound = make_pod("p").uid("p").node("node1").obj()
    nominator = PodNominator(Store(bound))
    nominator.add(pod)
    assert len(nominator) == 0


@pytest.mark.parametrize(("initial", "status", "override", "want"), [
    pytest.param(None, "", None, None, id="no-nomination-at-all"),
    pytest.param(None, "node1", None, "node1", id="from-the-status"),
    pytest.param(None, "node1", "node2", "node2", id="override-wins"),
    pytest.param("node1", "", "", None, id="override-empty-clears"),
    pytest.param("node1", "", None, None, id="noop-with-empty-status-clears"),
])
def test_add_modes(initial: str | None, status: str, override: str | None, want: str | None) -> None:
    nominator = PodNominator()
    pod = nominated("p", status, 5)
    if initial is not None:
        nominator.add(pod, initial)
    nominator.add(pod, override)
    assert nominator.node_of("p") == want
    assert "" not in nominator.nominated_nodes()


def test_an_update_keeps_a_nomination_made_in_memory_until_the_status_carries_one() -> None:
    nominator = PodNominator()
    old = nominated("p", "", 5)
    nominator.add(old, "node1")  # the failure handler, before the status patch comes back
    new = nominated("p", "", 5)
    new.metadata.labels = {"changed": "yes"}
    nominator.update(old, new)
    assert nominator.node_of("p") == "node1"
    moved = nominated("p", "node2", 5)
    nominator.update(new, moved)
    assert nominator.node_of("p") == "node2"
    nominator.update(moved, nominated("p", "", 5))  # the nomination cleared in the status
    assert nominator.node_of("p") is None


def test_the_queue_keeps_nominations_and_drops_them_with_the_pod() -> None:
    queue = SchedulingQueue()
    pod = nominated("p", "node1", 5)
    pod.spec.scheduler_name = "kubesched"
    queue.add(pod)
    assert names(queue.nominator, "node1") == ["p"]
    queue.delete(pod)
    assert names(queue.nominator, "node1") == []


# --- RunFilterPluginsWithNominatedPods ------------------------------------------------------------

def test_a_higher_priority_nominated_pod_keeps_its_room() -> None:
    # node1 has 4 cpu and a nominated pod of priority 10 needing 3: the 2-cpu pod goes to node2.
    result = schedule([node("node1"), node("node2", "2")], make_pod("low").priority(1).req(cpu="2"),
                      [nominated("high", "node1", 10)])
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node2"


def test_nominated_pods_of_equal_priority_count_too_and_the_message_says_why() -> None:
    result = schedule([node("node1")], make_pod("same").priority(10).req(cpu="2"), [nominated("high", "node1", 10)])
    assert isinstance(result, FitError)
    assert result.message() == "0/1 nodes are available: 1 Insufficient cpu."


@pytest.mark.parametrize(("prio", "uid"), [
    pytest.param(11, "other", id="lower-priority-nominated-pod-ignored"),
    pytest.param(10, "high", id="the-pod-itself-ignored"),
])
def test_nominated_pods_the_pod_need_not_yield_to(prio: int, uid: str) -> None:
    pod = make_pod("high" if uid == "high" else "p").uid(uid).priority(prio).req(cpu="2")
    result = schedule([node("node1")], pod, [nominated("high", "node1", 10)])
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node1"


def test_the_second_pass_runs_without_the_nominated_pods() -> None:
    # Pod affinity to app=x passes with the nominated app=x pod on node1 and fails without it: the
    # nominated pod may end up elsewhere, so the node is rejected.
    pod = make_pod("p").priority(1).req(cpu="1").affinity_term(
        affinity_term(match_labels={"app": "x"}, topology_key=HOSTNAME))
    result = schedule([node("node1")], pod, [nominated("x", "node1", 10, cpu="1", app="x")],
                      pods=[make_pod("y").node("node1").labels(app="y")])
    assert isinstance(result, FitError)
    assert result.diagnosis.node_to_status["node1"].reasons == ("node(s) didn't match pod affinity rules",)


class FailingAddPod:
    name = "FailingAddPod"

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> tuple[None, None]:
        return None, None

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, node: object) -> Status:
        return Status(Code.ERROR, "injected")


def test_an_add_pod_error_is_an_error() -> None:
    snap = snapshot_with([node("node1")], [])
    profile = profile_with(snap, PodNominator())
    profile = Profile(**{**profile.__dict__, "pre_filter": (FailingAddPod(),)})
    pod = PodInfo(make_pod("p").priority(1).req(cpu="1").obj())
    high = PodInfo(nominated("high", "node1", 10, cpu="1"))
    s = run_filters_with_nominated_pods(profile, CycleState(), pod, snap.node_infos[0], [high])
    assert s is not None
    assert s.code == Code.ERROR
    assert s.message() == 'running AddPod on PreFilter plugin "FailingAddPod": injected'
    nominator = PodNominator()
    nominator.add(high.pod)
    profile = Profile(**{**profile.__dict__, "handle": Handle(snapshot=lambda: snap, nominator=nominator)})
    with pytest.raises(SchedulingError):
        run_schedule(profile, snap, pod, rng=random.Random(0), cursor=NodeCursor())


def test_yielded_to() -> None:
    nominator = PodNominator()
    for p in (nominated("a", "n1", 5), nominated("b", "n1", 10), nominated("c", "n1", 20)):
        nominator.add(p)
    me = PodInfo(make_pod("b").uid("b").priority(10).obj())
    assert [pi.pod.metadata.name for pi in yielded_to(nominator, "n1", me)] == ["c"]
    assert yielded_to(nominator, "n2", me) == []


class CountingNominator(PodNominator):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def nominated_nodes(self) -> Collection[str]:
        self.calls += 1
        return super().nominated_nodes()


def test_no_nominations_cost_one_look() -> None:
    snap = snapshot_with([node(f"n{i}") for i in range(5)], [])
    nominator = CountingNominator()
    result = run_schedule(profile_with(snap, nominator), snap, PodInfo(make_pod("p").req(cpu="1").obj()),
                          rng=random.Random(0), cursor=NodeCursor())
    assert isinstance(result, ScheduleResult)
    assert nominator.calls == 1


# --- evaluateNominatedNode ------------------------------------------------------------------------

def test_the_nominated_node_is_taken_when_it_fits_without_scoring() -> None:
    # node1 is emptier (would score higher), but the pod was nominated to node2.
    pod = make_pod("p").uid("p").priority(10).req(cpu="1")
    pod.obj().status.nominated_node_name = "node2"
    result = schedule([node("node1"), node("node2")], pod, pods=[make_pod("busy").node("node2").req(cpu="2")])
    assert isinstance(result, ScheduleResult)
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("node2", 1, 1)


def test_a_nominated_node_that_does_not_fit_falls_back_to_the_search() -> None:
    pod = make_pod("p").uid("p").priority(10).req(cpu="3")
    pod.obj().status.nominated_node_name = "node2"
    result = schedule([node("node1"), node("node2")], pod, pods=[make_pod("busy").node("node2").req(cpu="2")])
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node1"


# --- the dry run ----------------------------------------------------------------------------------

def test_preemption_does_not_free_room_a_higher_priority_nominated_pod_holds() -> None:
    # Evicting "low" from node1 would free 3 cpu, but "high" (nominated there, priority 20) needs
    # them; node2's victim is the way.
    pods: list[Pod | PodBuilder] = [make_pod("low").uid("low").node("node1").priority(1).req(cpu="3"),
            make_pod("mid").uid("mid").node("node2").priority(5).req(cpu="3")]
    snap = snapshot_with([node("node1"), node("node2")], pods)
    nominator = PodNominator()
    nominator.add(nominated("high", "node1", 20, cpu="3"))
    profile = profile_with(snap, nominator)
    plugin = profile.plugin("DefaultPreemption")
    assert isinstance(plugin, DefaultPreemption)
    info = PodInfo(make_pod("p").uid("p").priority(10).req(cpu="2").obj())
    state = CycleState()
    fit = run_schedule(profile, snap, info, rng=random.Random(0), cursor=NodeCursor(), state=state)
    assert isinstance(fit, FitError)
    candidates, statuses, _ = plugin.find_candidates(state, info, snap.node_infos, fit.diagnosis)
    assert [(c.name, [v.pod.metadata.name for v in c.victims]) for c in candidates] == [("node2", ["mid"])]
    assert statuses["node1"].reasons == ("Insufficient cpu",)
