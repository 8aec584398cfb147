"""`kubesched simulate` with pods that reference ResourceClaims, against a snapshot file holding the
claims, the ResourceSlices and the DeviceClasses (and claims made from ResourceClaimTemplates among
the manifests, as the resourceclaim controller would): each pod gets a node with a free device, a device
allocated in flight to an earlier pod of the run is not handed out again, and a pod no device is left
for gets kube-scheduler's message."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import load
from kubesched.model.objects import ObjectMeta
from kubesched.model.resource import DeviceClass, DeviceClassSpec
from kubesched.tools.simulate.claims import POD_CLAIM_NAME_ANNOTATION, generate_name
from kubesched.tools.simulate.expand import Expander
from kubesched.tools.simulate.run import simulate
from kubesched.tools.simulate.state import ClusterState, decode, encode
from tests.builders import make_node
from tests.unit.plugins.dynamic_resources.dra_builders import (
    CLASS_NAME,
    DEVICE_CLASS,
    DRIVER,
    make_claim,
    make_slice,
)

CONFIG = load(None)
NS = "shop"


def _pod(name: str, claim: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
                     "containers": [{"name": "c", "image": "x", "resources": {
                         "requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}]}}


def _snapshot_file() -> bytes:
    nodes = [make_node(n).label("kubernetes.io/hostname", n).capacity().obj() for n in ("a", "b", "c")]
    objects: dict[str, list[Any]] = {
        "nodes": nodes,
        "resourceclaims": [make_claim(f"claim-{i}", NS).request(CLASS_NAME).obj() for i in range(1, 4)],
        # One device on a, one on b, none on c.
        "resourceslices": [make_slice(n, DRIVER).device("gpu-0").obj() for n in ("a", "b")],
        "deviceclasses": [DEVICE_CLASS]}
    return encode(ClusterState(objects, "https://s"))


def test_pods_with_claims_placed_against_a_snapshot_file() -> None:
    state = decode(_snapshot_file(), "cluster.json")
    batch = Expander(NS, now=lambda: 0.0).expand([_pod(f"p{i}", f"claim-{i}") for i in range(1, 4)])
    sim = simulate(CONFIG, state, batch)
    first, second, third = sim.placements
    assert {first.node, second.node} == {"a", "b"}, sim.placements
    assert third.node is None
    assert third.message == ("0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are "
                             "available: 3 Preemption is not helpful for scheduling.")


def test_a_missing_claim_keeps_the_pod_out_of_the_cycle() -> None:
    state = decode(_snapshot_file(), "cluster.json")
    batch = Expander(NS, now=lambda: 0.0).expand([_pod("lost", "no-such-claim")])
    (placed,) = simulate(CONFIG, state, batch).placements
    assert placed.node is None
    assert placed.reason == "Gated"
    assert placed.message == 'could not find ResourceClaim "shop/no-such-claim"'


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu"},
            "spec": {"metadata": {"labels": {"team": "ml"}},
                     "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {
                         "deviceClassName": CLASS_NAME}}]}}}}


def _deployment(replicas: int, template: str = "one-gpu") -> dict[str, Any]:
    pod = _pod("x", "unused")
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "train"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "train"}},
                     "template": {"metadata": {"labels": {"app": "train"}}, "spec": pod["spec"]}}}


def test_claims_made_from_a_template_as_the_resourceclaim_controller_would() -> None:
    state = decode(_snapshot_file(), "cluster.json")
    # The template after the workload that uses it: claims are made once every document is read.
    batch = Expander(NS, now=lambda: 0.0).expand([_deployment(3), TEMPLATE])
    made = batch.objects["resourceclaims"]
    assert len(made) == 3
    for pod, claim in zip(batch.pods, made, strict=True):
        (status,) = pod.status.resource_claim_statuses or []
        assert (status.name, status.resource_claim_name) == ("gpu", claim.metadata.name)
        assert claim.metadata.name.startswith(f"{pod.metadata.name}-gpu-")
        assert len(claim.metadata.name) == len(f"{pod.metadata.name}-gpu-") + 5
        assert claim.metadata.namespace == NS
        assert claim.metadata.annotations == {POD_CLAIM_NAME_ANNOTATION: "gpu"}
        assert claim.metadata.labels == {"team": "ml"}
        (owner,) = claim.metadata.owner_references
        assert (owner.kind, owner.name, owner.uid, owner.controller) == ("Pod", pod.metadata.name, pod.metadata.uid,
                                                                         True)
        assert claim.spec.devices.requests[0].exactly is not None
    sim = simulate(CONFIG, state, batch)
    assert sorted(p.node or "" for p in sim.placements) == ["", "a", "b"]
    (left,) = sim.unschedulable
    assert left.message.startswith("0/3 nodes are available: 3 cannot allocate all claims.")


def test_a_template_not_given_leaves_the_pod_waiting_for_its_claim() -> None:
    state = decode(_snapshot_file(), "cluster.json")
    batch = Expander(NS, now=lambda: 0.0).expand([_deployment(1, "absent"), TEMPLATE])
    assert "resourceclaims" not in batch.objects
    (placed,) = simulate(CONFIG, state, batch).placements
    assert placed.reason == "Gated"
    assert placed.node is None
    assert placed.message == f'pod "{placed.pod}": ResourceClaim not created yet'


@pytest.mark.parametrize(("pod", "claim", "want"), [
    pytest.param("web-0", "gpu", "web-0-gpu-", id="short"),
    pytest.param("p" * 60, "c" * 20, "p" * 41 + "-" + "c" * 13, id="both-cut-in-proportion"),
])
def test_generate_name(pod: str, claim: str, want: str) -> None:
    assert generate_name(pod, claim) == want


def test_pods_asking_for_an_extended_resource_backed_by_dra() -> None:
    """A DeviceClass with extendedResourceName: each pod asking for it in plain resources.requests
    takes a device of a node with one in flight (no node lists it in allocatable), the third none."""
    state = decode(_snapshot_file(), "cluster.json")
    state.objects["deviceclasses"] = [DeviceClass(ObjectMeta(name=CLASS_NAME),
                                                  DeviceClassSpec(extended_resource_name="example.com/gpu"))]
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"e{i}"},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                 "requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}]}} for i in (1, 2, 3)]
    sim = simulate(CONFIG, state, Expander(NS, now=lambda: 0.0).expand(pods))
    first, second, third = sim.placements
    assert {first.node, second.node} == {"a", "b"}, sim.placements
    assert third.node is None
    assert third.message == ("0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are "
                             "available: 3 Preemption is not helpful for scheduling.")
