"""Which unschedulable pods a cluster event moves: only those a plugin that rejected them registered
the event for (kube-scheduler EventsToRegister), so a completed Job pod does not requeue everything."""

from __future__ import annotations

import pytest

from kubesched.api.client import ApiClient
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load
from kubesched.framework import events
from kubesched.model.objects import Job, Node, ObjectMeta, OwnerReference, Pod
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import NodeBuilder, PodBuilder, label_selector, make_node, make_pod

PROFILE = "kubesched"


def _scheduler() -> Scheduler:
    """The default profile, never started: only its informer handlers, cache and queue are used."""
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    return Scheduler(client, load(None))


def _pending(name: str) -> PodBuilder:
    return make_pod(name).scheduler(PROFILE).req(cpu="1")


def _reject(sched: Scheduler, pod: Pod, *plugins: str) -> None:
    sched.queue.add(pod)
    info = sched.queue.pop_nowait()
    assert info is not None
    assert info.uid == pod.metadata.uid
    info.unschedulable_plugins = set(plugins)
    assert sched.queue.add_unschedulable_if_not_present(info)
    assert sched.queue.where(info.uid) == "unschedulable"


def _moved(sched: Scheduler, pods: list[Pod]) -> list[str]:
    return [p.metadata.name for p in pods if sched.queue.where(p.metadata.uid) != "unschedulable"]


def test_assigned_pod_delete_moves_only_the_pod_waiting_for_resources() -> None:
    sched = _scheduler()
    sched.handlers.node_added(make_node("n").obj())
    done = make_pod("job-pod").node("n").req(cpu="1").obj()
    sched.handlers.pod_added(done)
    waiting = [_pending(f"tainted-{i}").obj() for i in range(1000)]
    for pod in waiting:
        _reject(sched, pod, "TaintToleration")
    fit = _pending("needs-cpu").obj()
    _reject(sched, fit, "NodeResourcesFit")
    sched.handlers.pod_deleted(done)
    assert _moved(sched, [*waiting, fit]) == ["needs-cpu"]


_NODE = make_node("n").label("zone", "a").taint("k", "v")


def _node(b: NodeBuilder) -> Node:
    return b.obj()


# (rejecting plugins, what happens, moved?)
_CASES = [
    pytest.param(("NodeResourcesFit",), "delete-pod", True, id="fit-assigned-pod-delete"),
    pytest.param(("NodePorts",), "delete-pod", True, id="ports-assigned-pod-delete"),
    pytest.param(("TaintToleration",), "delete-pod", False, id="taint-assigned-pod-delete"),
    pytest.param(("NodeAffinity",), "delete-pod", False, id="affinity-assigned-pod-delete"),
    pytest.param(("NodeName",), "delete-pod", False, id="node-name-assigned-pod-delete"),
    pytest.param(("NodeUnschedulable",), "delete-pod", False, id="cordon-assigned-pod-delete"),
    pytest.param(("TaintToleration", "NodeResourcesFit"), "delete-pod", True, id="any-rejector-counts"),
    pytest.param(("TaintToleration",), "untaint", True, id="taint-node-taint-change"),
    pytest.param(("NodeAffinity",), "untaint", False, id="affinity-node-taint-change"),
    pytest.param(("NodeUnschedulable",), "uncordon", True, id="cordon-uncordon"),
    pytest.param(("NodeUnschedulable",), "cordon", False, id="cordon-cordoned-again"),
    pytest.param(("NodeAffinity",), "relabel", True, id="affinity-node-label-change"),
    pytest.param(("NodeResourcesFit",), "relabel", False, id="fit-node-label-change"),
    pytest.param(("NodeResourcesFit",), "grow", True, id="fit-allocatable-change"),
    pytest.param(("NodeResourcesFit",), "same-allocatable-spelled-differently", False,
                 id="fit-allocatable-same-quantity"),
    pytest.param(("NodeResourcesFit",), "images", False, id="fit-image-change"),
    pytest.param(("TaintToleration",), "heartbeat", False, id="taint-heartbeat"),
    pytest.param(("TaintToleration",), "add-node", True, id="taint-node-add"),
    pytest.param(("NodeName",), "add-node", True, id="node-name-node-add"),
    pytest.param(("NodeResourcesFit",), "resize-down", True, id="fit-assigned-pod-scale-down"),
    pytest.param(("NodePorts",), "resize-down", False, id="ports-assigned-pod-scale-down"),
    pytest.param(("NodeResourcesFit",), "resize-up", False, id="fit-assigned-pod-scale-up"),
    pytest.param(("NodeResourcesFit",), "status-only", False, id="fit-assigned-pod-status-update"),
    pytest.param(("NodeResourcesFit",), "relabel-pod", False, id="fit-assigned-pod-label-change"),
    pytest.param(("NodeResourcesFit",), "bind", False, id="fit-assigned-pod-add"),
    # kube-scheduler's registrations (AssignedPod Add/UpdatePodLabel/Delete, Node Add/UpdateNodeLabel)
    # with its queueing hints: a pod with no pod (anti-)affinity of its own, rejected for another
    # pod's anti-affinity, waits for that pod to go or its own labels to change, so none of these
    # moves it (_HINTED_CASES has pods with terms).
    pytest.param(("InterPodAffinity",), "bind", False, id="pod-affinity-assigned-pod-add"),
    pytest.param(("InterPodAffinity",), "delete-pod", False, id="pod-affinity-assigned-pod-delete"),
    pytest.param(("InterPodAffinity",), "relabel-pod", False, id="pod-affinity-assigned-pod-label-change"),
    pytest.param(("InterPodAffinity",), "add-node", False, id="pod-affinity-node-add"),
    pytest.param(("InterPodAffinity",), "relabel", False, id="pod-affinity-node-label-change"),
    pytest.param(("InterPodAffinity",), "untaint", False, id="pod-affinity-node-taint-change"),
    # The fields it rejects are immutable: no cluster event can change its verdict.
    pytest.param(("UnsupportedPodFields",), "add-node", False, id="unsupported-fields-node-add"),
    pytest.param(("UnsupportedPodFields",), "delete-pod", False, id="unsupported-fields-assigned-pod-delete"),
    pytest.param(("UnsupportedPodFields",), "relabel", False, id="unsupported-fields-node-label-change"),
    pytest.param(("UnsupportedPodFields",), "bind", False, id="unsupported-fields-assigned-pod-add"),
    # A node declaring a feature, with the plugin's queueing hint asked about the node's old and new objects.
    pytest.param(("NodeDeclaredFeatures",), "declare", True, id="declared-features-node-declares"),
    pytest.param(("NodeDeclaredFeatures",), "add-node", True, id="declared-features-node-add"),
    pytest.param(("NodeDeclaredFeatures",), "relabel", False, id="declared-features-node-label-change"),
    pytest.param(("NodeDeclaredFeatures",), "delete-pod", False, id="declared-features-assigned-pod-delete"),
    pytest.param(("NodeAffinity",), "declare", False, id="affinity-node-declares"),
]


def _happen(sched: Scheduler, what: str) -> None:
    node = _node(_NODE)
    running = make_pod("running").node("n").req(cpu="2").container_status("c0", allocated={"cpu": "2"})
    if what == "add-node":
        sched.handlers.node_added(make_node("n2").obj())
        return
    if what in ("delete-pod", "resize-down", "resize-up", "status-only", "relabel-pod"):
        old = running.obj()
        sched.handlers.pod_added(old)
        new_pod = {
            "delete-pod": None,
            # The user lowered the spec and the kubelet allocated it: the pod now counts 1 cpu.
            "resize-down": make_pod("running").node("n").req(cpu="1").container_status("c0", allocated={"cpu": "1"}),
            "resize-up": make_pod("running").node("n").req(cpu="3").container_status("c0", allocated={"cpu": "3"}),
            "status-only": make_pod("running").node("n").req(cpu="2").container_status("c0", allocated={"cpu": "2"},
                                                                                      actuated={"cpu": "2"}),
            "relabel-pod": running.label("app", "x"),
        }[what]
        if new_pod is None:
            sched.handlers.pod_deleted(old)
        else:
            sched.handlers.pod_updated(old, new_pod.obj())
        return
    if what == "bind":
        pod = make_pod("other").req(cpu="1").obj()
        bound = make_pod("other").node("n").req(cpu="1").obj()
        sched.handlers.pod_updated(pod, bound)
        return
    new_node = {
        "untaint": make_node("n").label("zone", "a"),
        "uncordon": make_node("n").label("zone", "a").taint("k", "v"),
        "cordon": make_node("n").label("zone", "a").taint("k", "v").unschedulable(),
        "relabel": make_node("n").label("zone", "b").taint("k", "v"),
        "grow": make_node("n").capacity(cpu="8").label("zone", "a").taint("k", "v"),
        "same-allocatable-spelled-differently": make_node("n").capacity(cpu="4000m").label("zone", "a").taint("k", "v"),
        "images": make_node("n").label("zone", "a").taint("k", "v").image(100, "nginx:latest"),
        "heartbeat": make_node("n").label("zone", "a").taint("k", "v"),
        "declare": make_node("n").label("zone", "a").taint("k", "v").declared_features(
            "RestartAllContainersOnContainerExits"),
    }[what].obj()
    if what == "uncordon":
        node = _node(make_node("n").label("zone", "a").taint("k", "v").unschedulable())
    sched.handlers.node_updated(node, new_node)


@pytest.mark.parametrize(("plugins", "what", "moved"), _CASES)
def test_event_moves_only_pods_its_plugins_registered_for(plugins: tuple[str, ...], what: str,
                                                          moved: bool) -> None:
    sched = _scheduler()
    node = _node(_NODE)
    if what == "uncordon":
        node = _node(make_node("n").label("zone", "a").taint("k", "v").unschedulable())
    sched.handlers.node_added(node)
    pod = _pending("p").obj()
    _reject(sched, pod, *plugins)
    _happen(sched, what)
    assert bool(_moved(sched, [pod])) is moved


# --- InterPodAffinity's and PodTopologySpread's queueing hints, asked with the objects each handler
# reports (kube-scheduler: the bound pod added, old and new on an update, the deleted pod or node)

_ZONE = "zone"


def _running(app: str) -> Pod:
    return make_pod(f"running-{app}").node("n").req(cpu="1").label("app", app).obj()


_AFFINITY = _pending("p").pod_affinity(topology_key=_ZONE, app="web")
_ANTI = _pending("p").pod_affinity(anti=True, topology_key=_ZONE, app="web")
_SPREAD = _pending("p").spread(topology_key=_ZONE, selector=label_selector(app="web"))
_SPREAD_REGION = _pending("p").spread(topology_key="region", selector=label_selector(app="web"))


def _existing(sched: Scheduler, what: str) -> None:
    """What is there before the pod is rejected."""
    if what in ("delete-web", "relabel-web-to-db"):
        sched.handlers.pod_added(_running("web"))
    elif what == "relabel-db-to-web":
        sched.handlers.pod_added(_running("db"))


def _hinted_event(sched: Scheduler, what: str) -> None:
    if what in ("bind-web", "bind-db"):
        app = what.removeprefix("bind-")
        sched.handlers.pod_updated(make_pod(f"running-{app}").req(cpu="1").label("app", app).obj(), _running(app))
    elif what == "delete-web":
        sched.handlers.pod_deleted(_running("web"))
    elif what in ("relabel-web-to-db", "relabel-db-to-web"):
        old, new = what.removeprefix("relabel-").split("-to-")
        sched.handlers.pod_updated(_running(old), make_pod(f"running-{old}").node("n").req(cpu="1")
                                   .label("app", new).obj())
    elif what == "add-node-zone":
        sched.handlers.node_added(make_node("n2").label(_ZONE, "b").obj())
    elif what == "add-node-bare":
        sched.handlers.node_added(make_node("n2").obj())
    elif what == "delete-node":
        sched.handlers.node_deleted(_node(_NODE))
    else:
        sched.handlers.node_updated(_node(_NODE), {
            "relabel-node-zone": make_node("n").label("zone", "b").taint("k", "v"),
            "relabel-node-other": make_node("n").label("zone", "a").label("tier", "x").taint("k", "v"),
            "retaint-node": make_node("n").label("zone", "a").taint("k2", "v"),
        }[what].obj())


# (the pending pod, the plugin that rejected it, what happens, moved?)
_HINTED_CASES = [
    pytest.param(_AFFINITY, "bind-web", True, id="affinity-matching-pod-bound"),
    pytest.param(_AFFINITY, "bind-db", False, id="affinity-other-pod-bound"),
    pytest.param(_AFFINITY, "relabel-db-to-web", True, id="affinity-bound-pod-relabelled-to-match"),
    pytest.param(_AFFINITY, "relabel-web-to-db", False, id="affinity-bound-pod-relabelled-not-to-match"),
    pytest.param(_AFFINITY, "delete-web", False, id="affinity-matching-pod-deleted"),
    pytest.param(_AFFINITY, "add-node-zone", True, id="affinity-node-with-topology-key-added"),
    pytest.param(_AFFINITY, "add-node-bare", False, id="affinity-node-without-topology-key-added"),
    pytest.param(_AFFINITY, "relabel-node-zone", True, id="affinity-node-moved-to-another-zone"),
    pytest.param(_AFFINITY, "relabel-node-other", False, id="affinity-node-relabelled-unrelated"),
    pytest.param(_ANTI, "delete-web", True, id="anti-affinity-matching-pod-deleted"),
    pytest.param(_ANTI, "relabel-web-to-db", True, id="anti-affinity-bound-pod-relabelled-not-to-match"),
    pytest.param(_ANTI, "relabel-db-to-web", False, id="anti-affinity-bound-pod-relabelled-to-match"),
    pytest.param(_ANTI, "bind-web", False, id="anti-affinity-pod-bound"),
    pytest.param(_ANTI, "add-node-bare", True, id="anti-affinity-node-added"),
    pytest.param(_SPREAD, "bind-web", True, id="spread-matching-pod-bound"),
    pytest.param(_SPREAD, "bind-db", False, id="spread-other-pod-bound"),
    pytest.param(_SPREAD, "delete-web", True, id="spread-matching-pod-deleted"),
    pytest.param(_SPREAD, "relabel-db-to-web", True, id="spread-bound-pod-relabelled-to-match"),
    pytest.param(_SPREAD, "add-node-zone", True, id="spread-node-with-topology-key-added"),
    pytest.param(_SPREAD, "add-node-bare", False, id="spread-node-without-topology-key-added"),
    pytest.param(_SPREAD, "delete-node", True, id="spread-node-with-topology-key-deleted"),
    pytest.param(_SPREAD_REGION, "delete-node", False, id="spread-node-without-topology-key-deleted"),
    pytest.param(_SPREAD, "retaint-node", True, id="spread-node-taints-changed"),
    pytest.param(_SPREAD, "relabel-node-other", False, id="spread-node-relabelled-unrelated"),
]


@pytest.mark.parametrize(("pending", "what", "moved"), _HINTED_CASES)
def test_pod_affinity_and_spread_hints_decide_which_events_move_a_pod(pending: PodBuilder, what: str,
                                                                      moved: bool) -> None:
    plugin = "PodTopologySpread" if pending.obj().spec.topology_spread_constraints else "InterPodAffinity"
    sched = _scheduler()
    sched.handlers.node_added(_node(_NODE))
    _existing(sched, what)
    pod = pending.obj()
    _reject(sched, pod, plugin)
    _hinted_event(sched, what)
    assert bool(_moved(sched, [pod])) is moved


def test_job_add_moves_only_pods_the_pool_holds_for_it() -> None:
    sched = _scheduler()
    waiting = _pending("waits").obj()
    tainted = _pending("tainted").obj()
    _reject(sched, waiting, "CronJobPool")
    _reject(sched, tainted, "TaintToleration")
    moved = sched.queue.move_all_to_active_or_backoff(events.JOB_ADD)
    assert moved == 1
    assert _moved(sched, [waiting, tainted]) == ["waits"]


def test_job_add_moves_only_the_pods_of_that_job() -> None:
    # Through the handler, as the Job informer calls it: the pool's queueing hint picks the Job's pods.
    sched = _scheduler()
    mine = _pending("mine").obj()
    mine.metadata.owner_references = [OwnerReference(kind="Job", name="late", controller=True)]
    other = _pending("other").obj()
    other.metadata.owner_references = [OwnerReference(kind="Job", name="other", controller=True)]
    _reject(sched, mine, "CronJobPool")
    _reject(sched, other, "CronJobPool")
    late = Job(metadata=ObjectMeta(name="late", namespace=mine.metadata.namespace))
    sched.handlers.job_changed(late)
    assert _moved(sched, [mine, other]) == ["mine"]


def test_event_during_a_cycle_only_counts_if_it_concerns_the_pod() -> None:
    sched = _scheduler()
    sched.handlers.node_added(_node(_NODE))
    done = make_pod("job-pod").node("n").req(cpu="1").obj()
    sched.handlers.pod_added(done)
    for name, plugin, expected in (("a", "TaintToleration", "unschedulable"), ("b", "NodeResourcesFit", "backoff")):
        pod = _pending(name).obj()
        sched.queue.add(pod)
        info = sched.queue.pop_nowait()
        assert info is not None
        # Another pod completes while this one's cycle runs.
        sched.handlers.pod_deleted(done)
        info.unschedulable_plugins = {plugin}
        assert sched.queue.add_unschedulable_if_not_present(info)
        assert sched.queue.where(info.uid) == expected, name


# --- a nominated pod that goes away (kube-scheduler deletePodFromSchedulingQueue and
# updatePodInSchedulingQueue: AssignedPodDelete for the pods of lower or equal priority)


def _nominated(name: str = "preemptor", priority: int = 10, node: str = "n") -> PodBuilder:
    return _pending(name).priority(priority).nominated(node)


# (what happens to the nominated pod of priority 10, the waiting pod's priority, its rejector, moved?)
_NOMINATED_CASES = [
    pytest.param("delete", 5, "NodeResourcesFit", True, id="deleted-lower-priority-fit"),
    pytest.param("delete", 10, "NodeResourcesFit", True, id="deleted-equal-priority-fit"),
    pytest.param("delete", 11, "NodeResourcesFit", False, id="deleted-higher-priority-stays"),
    pytest.param("delete", 5, "TaintToleration", False, id="deleted-taint-stays"),
    pytest.param("delete", 5, "NodePorts", True, id="deleted-ports"),
    pytest.param("delete-not-nominated", 5, "NodeResourcesFit", False, id="deleted-without-nomination"),
    pytest.param("clear", 5, "NodeResourcesFit", True, id="nomination-cleared"),
    pytest.param("move", 5, "NodeResourcesFit", True, id="nominated-elsewhere"),
    pytest.param("clear", 11, "NodeResourcesFit", False, id="nomination-cleared-higher-priority-stays"),
    pytest.param("nominate", 5, "NodeResourcesFit", False, id="newly-nominated"),
    pytest.param("relabel", 5, "NodeResourcesFit", False, id="same-nomination"),
]


@pytest.mark.parametrize(("what", "priority", "plugin", "moved"), _NOMINATED_CASES)
def test_a_nominated_pod_gone_moves_the_pods_of_lower_or_equal_priority(what: str, priority: int, plugin: str,
                                                                       moved: bool) -> None:
    sched = _scheduler()
    sched.handlers.node_added(_node(_NODE))
    waiting = _pending("waiting").priority(priority).obj()
    _reject(sched, waiting, plugin)
    old = (_pending("preemptor").priority(10) if what in ("delete-not-nominated", "nominate")
           else _nominated()).obj()
    sched.handlers.pod_added(old)
    if what.startswith("delete"):
        sched.handlers.pod_deleted(old)
    else:
        new = {"clear": _pending("preemptor").priority(10), "move": _nominated(node="n2"),
               "nominate": _nominated(), "relabel": _nominated().label("app", "x")}[what].obj()
        sched.handlers.pod_updated(old, new)
    assert bool(_moved(sched, [waiting])) is moved


def test_a_nominated_pod_of_another_scheduler_moves_nobody() -> None:
    sched = _scheduler()
    waiting = _pending("waiting").obj()
    _reject(sched, waiting, "NodeResourcesFit")
    sched.handlers.pod_deleted(make_pod("other").scheduler("someone-else").req(cpu="1").nominated("n").obj())
    assert _moved(sched, [waiting]) == []


# --- an unschedulable pod's own update (kube-scheduler PodSchedulingPropertiesChange on TargetPod,
# asked of the plugins that rejected it)



def _spread(taints: str | None = None) -> PodBuilder:
    return _pending("p").spread(selector=label_selector(app="x"), node_taints_policy=taints)


# (the rejecting plugins, the pod before, the pod after, moved?)
_UPDATE_CASES = [
    pytest.param(("NodeResourcesFit",), _pending("p"), _pending("p").annotation("a", "b"), False,
                 id="fit-annotation"),
    pytest.param(("NodeResourcesFit",), _pending("p"), _pending("p").label("app", "x"), False, id="fit-label"),
    pytest.param(("NodeResourcesFit",), _pending("p"), make_pod("p").scheduler(PROFILE).req(cpu="500m"), True,
                 id="fit-scale-down"),
    pytest.param(("NodeResourcesFit",), _pending("p"), make_pod("p").scheduler(PROFILE).req(cpu="2"), False,
                 id="fit-scale-up"),
    pytest.param(("NodeResourcesFit",), _pending("p"), _pending("p").phase("Pending"), False, id="fit-status"),
    pytest.param(("TaintToleration",), _pending("p"), _pending("p").toleration("k", "v", "NoSchedule"), True,
                 id="taint-toleration-added"),
    pytest.param(("TaintToleration",), _pending("p"), _pending("p").label("app", "x"), False, id="taint-label"),
    pytest.param(("NodeUnschedulable",), _pending("p"), _pending("p").toleration("k", "v", "NoSchedule"), False,
                 id="cordon-unrelated-toleration-added"),
    pytest.param(("NodeUnschedulable",), _pending("p"),
                 _pending("p").toleration("node.kubernetes.io/unschedulable", "", "NoSchedule", "Exists"), True,
                 id="cordon-toleration-added"),
    pytest.param(("InterPodAffinity",), _pending("p"), _pending("p").label("app", "x"), True,
                 id="pod-affinity-label"),
    pytest.param(("InterPodAffinity",), _pending("p"), _pending("p").annotation("a", "b"), False,
                 id="pod-affinity-annotation"),
    # PodTopologySpread's hint: a label change that makes the pod match a hard constraint, or not; a
    # toleration when a constraint honours taints.
    pytest.param(("PodTopologySpread",), _spread(), _spread().label("app", "x"), True, id="spread-label-matters"),
    pytest.param(("PodTopologySpread",), _spread(), _spread().label("tier", "x"), False,
                 id="spread-label-unrelated"),
    pytest.param(("PodTopologySpread",), _pending("p"), _pending("p").label("app", "x"), False,
                 id="spread-label-no-hard-constraint"),
    pytest.param(("PodTopologySpread",), _spread(), _spread().toleration("k", "v", "NoSchedule"), False,
                 id="spread-toleration-taints-ignored"),
    pytest.param(("PodTopologySpread",), _spread("Honor"), _spread("Honor").toleration("k", "v", "NoSchedule"), True,
                 id="spread-toleration-taints-honoured"),
    pytest.param(("NodeAffinity",), _pending("p"), _pending("p").label("app", "x"), False, id="affinity-label"),
    pytest.param(("NodePorts",), _pending("p"), _pending("p").label("app", "x"), False, id="ports-label"),
    pytest.param(("TaintToleration", "InterPodAffinity"), _pending("p"), _pending("p").label("app", "x"), True,
                 id="any-rejector-counts"),
    # kubesched's own plugin re-checks the fields on any update of the pod (the general Update).
    pytest.param(("UnsupportedPodFields",), _pending("p"), _pending("p").annotation("a", "b"), True,
                 id="unsupported-fields-annotation"),
]


@pytest.mark.parametrize(("plugins", "old", "new", "moved"), _UPDATE_CASES)
def test_an_update_of_an_unschedulable_pod_moves_it_only_if_a_rejector_registered_its_event(
        plugins: tuple[str, ...], old: PodBuilder, new: PodBuilder, moved: bool) -> None:
    sched = _scheduler()
    before = old.obj()
    before.metadata.resource_version = "1"
    _reject(sched, before, *plugins)
    after = new.obj()
    after.metadata.resource_version = "2"
    sched.handlers.pod_updated(before, after)
    assert bool(_moved(sched, [before])) is moved
    (info,) = [i for i in sched.queue.pending_pods() if i.uid == after.metadata.uid]
    assert info.pod is after  # where it is, it is the new object


def test_removing_the_scheduling_gates_lets_a_gated_pod_go_and_nothing_else_does() -> None:
    sched = _scheduler()
    gated = _pending("p").gate("wait").obj()
    sched.handlers.pod_added(gated)
    assert sched.queue.where(gated.metadata.uid) == "unschedulable"
    relabelled = _pending("p").gate("wait").label("app", "x").obj()
    sched.handlers.pod_updated(gated, relabelled)
    assert sched.queue.pending_counts()["gated"] == 1
    open_ = _pending("p").label("app", "x").obj()
    sched.handlers.pod_updated(relabelled, open_)
    assert sched.queue.where(open_.metadata.uid) == "active"
