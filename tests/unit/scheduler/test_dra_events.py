"""DynamicResources' informers reach the queue as kube-scheduler's resource.k8s.io events: a claim
change through the claim tracker (with the plugin's hint), a slice change through the slice tracker
(taint rules applied), a DeviceClass change straight from its informer."""

from __future__ import annotations

from kubesched.api.client import ApiClient
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load
from kubesched.model.objects import ObjectMeta, Pod
from kubesched.model.resource import DeviceClass
from kubesched.scheduler.scheduler import Scheduler
from tests.unit.plugins.dynamic_resources.dra_builders import (
    ALLOCATED_CLAIM,
    PENDING_CLAIM,
    WORKER_NODE_SLICE,
    from_claim,
    make_claim,
    pod_with_claim_name,
    pod_with_claim_template,
)

PROFILE = "kubesched"


def _scheduler() -> Scheduler:
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    return Scheduler(client, load(None))


def _rejected(sched: Scheduler, pod: Pod) -> None:
    sched.queue.add(pod)
    info = sched.queue.pop_nowait()
    assert info is not None
    info.unschedulable_plugins = {"DynamicResources"}
    assert sched.queue.add_unschedulable_if_not_present(info)


def _waiting(sched: Scheduler, pod: Pod) -> bool:
    return sched.queue.where(pod.metadata.uid) == "unschedulable"


def test_claims_slices_and_classes_move_pods_the_plugin_rejected() -> None:
    sched = _scheduler()
    sources = sched.sources
    pod = pod_with_claim_name().scheduler(PROFILE).obj()
    # Its claim does not exist yet: PreEnqueue holds it back.
    sched.queue.add(pod)
    assert _waiting(sched, pod)
    assert sched.queue.pop_nowait() is None
    # An unrelated claim appears: its hint says skip.
    sources.resource_claims.handler.on_add(make_claim("other").obj())
    assert _waiting(sched, pod)
    # The pod's own claim appears: queued.
    sources.resource_claims.handler.on_add(PENDING_CLAIM)
    assert not _waiting(sched, pod)
    assert sched.queue.pop_nowait() is not None
    assert sources.dra.claims.get("default", PENDING_CLAIM.metadata.name) is PENDING_CLAIM

    sched.queue.done(pod.metadata.uid)
    for event in ("slice", "class", "deallocation"):
        sched.queue.delete(pod)
        _rejected(sched, pod)
        if event == "slice":
            sources.resource_slices.handler.on_add(WORKER_NODE_SLICE)
            assert sources.dra.slices.list() == [WORKER_NODE_SLICE]
        elif event == "class":
            sources.device_classes.handler.on_add(DeviceClass(ObjectMeta(name="c")))
        else:
            allocated = from_claim(ALLOCATED_CLAIM).resource_version("2").obj()
            allocated.metadata.name = "elsewhere"
            sources.resource_claims.handler.on_add(allocated)
            sched.queue.delete(pod)
            _rejected(sched, pod)
            sources.resource_claims.handler.on_update(allocated, from_claim(allocated).allocation(None)
                                                      .resource_version("3").obj())
        assert not _waiting(sched, pod), event


def test_a_template_pod_comes_back_when_its_status_names_the_claim() -> None:
    """The resourceclaim controller creates the claim, then names it in the pod's status: the claim's
    event finds the pod not schedulable yet (its status names no claim), the pod's own update
    (UpdatePodGeneratedResourceClaim) queues it."""
    sched = _scheduler()
    pod = pod_with_claim_template().scheduler(PROFILE).obj()
    sched.handlers.pod_added(pod)
    assert _waiting(sched, pod)
    sched.sources.resource_claims.handler.on_add(PENDING_CLAIM)
    assert _waiting(sched, pod)
    updated = pod_with_claim_template().scheduler(PROFILE).claim_status("my-resource",
                                                                         PENDING_CLAIM.metadata.name).obj()
    sched.handlers.pod_updated(pod, updated)
    assert not _waiting(sched, pod)
    info = sched.queue.pop_nowait()
    assert info is not None
    assert info.pod is updated
