"""`kubesched simulate` with pods that reference ResourceClaims, against a snapshot file holding the
claims, the ResourceSlices and the DeviceClasses: each pod gets a node with a free device, a device
allocated in flight to an earlier pod of the run is not handed out again, and a pod no device is left
for gets kube-scheduler's message."""

from __future__ import annotations

from typing import Any

from kubesched.config import load
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
