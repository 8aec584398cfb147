"""DynamicResources side by side with the reference kube-scheduler on a plane of its own: two kwok
nodes, a DeviceClass selecting by CEL the devices of a driver of the test's own, and ResourceSlices
the test publishes as admin (one matching device on dra-a, one that does not match on dra-b).

- A pod with a claim from a ResourceClaimTemplate (the kube-controller-manager's resourceclaim
  controller makes the claim and names it in the pod's status): both schedulers choose dra-a and
  write the same allocation (devices, node selector, the class's config), the delete-protection
  finalizer, an allocationTimestamp and the pod in reservedFor.
- Two kubesched pods at once for the one device: one is bound, the other waits, never sharing it.
- A claim no device satisfies, and one whose DeviceClass does not exist: both stay Pending with the
  same message from both schedulers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched_dev.localcluster.topology import parse
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    compare_failure_message,
    create_pod,
    get_pod,
    latest_event,
    own_plane,
    pod_manifest,
    poll,
    scheduled_condition,
    wait_bound,
)

NS = "dra"
DRIVER = "dra.kubesched.test"
CLASS = "gpu.kubesched.test"
DRA = "/apis/resource.k8s.io/v1"
NODE_A, NODE_B = "dra-a", "dra-b"
FINALIZER = "resource.kubernetes.io/delete-protection"
# What kube-scheduler v1.37.2 writes for a claim no device satisfies on either node (seen here).
NO_DEVICE = ("0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: "
             "2 Preemption is not helpful for scheduling.")


def _slice(node: str, model: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": model}},
                                  "capacity": {"memory": {"value": "40Gi"}}}]}}


def _template(name: str, device_class: str = CLASS, count: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": device_class, "count": count}}]}}}}


def _pod(name: str, scheduler: str | None, template: str) -> dict[str, Any]:
    m = pod_manifest(name, scheduler, {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]})
    m["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return m


@pytest.fixture(scope="module")
def dra_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    with own_plane("dra", parse({"nodes": [{"name": NODE_A}, {"name": NODE_B}]}, "dra")) as kube:
        kube.namespace(NS)
        kube.create(f"{DRA}/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
            "spec": {"selectors": [{"cel": {"expression":
                                            f'device.driver == "{DRIVER}" && '
                                            f'device.attributes["{DRIVER}"].model == "a100"'}}],
                     "config": [{"opaque": {"driver": DRIVER, "parameters": {"sharing": "exclusive"}}}]}})
        kube.create(f"{DRA}/resourceslices", _slice(NODE_A, "a100"))
        kube.create(f"{DRA}/resourceslices", _slice(NODE_B, "t4"))
        for t in (_template("one-gpu"), _template("two-gpus", count=2), _template("no-class", "no-such-class")):
            kube.create(f"{DRA}/namespaces/{NS}/resourceclaimtemplates", t)
        proc = KubeschedProcess(kube, [], Path(tmp_path_factory.mktemp("dra")) / "kubesched.log")
        try:
            yield kube
        finally:
            proc.stop()


def _claim_of(kube: Kube, name: str) -> dict[str, Any]:
    def named() -> str | None:
        statuses = get_pod(kube, NS, name).get("status", {}).get("resourceClaimStatuses") or []
        return next((s.get("resourceClaimName") for s in statuses if s.get("name") == "gpu"), None)
    claim = wait_for(f"the claim of {name}", named)
    got: dict[str, Any] = kube.get(f"{DRA}/namespaces/{NS}/resourceclaims/{claim}")
    return got


def _allocated(kube: Kube, name: str) -> dict[str, Any]:
    return wait_for(f"{name}'s claim allocated and reserved",
                    lambda: (c := _claim_of(kube, name)).get("status", {}).get("reservedFor") and c)


def _delete_all(kube: Kube) -> None:
    kube.delete(f"/api/v1/namespaces/{NS}/pods?gracePeriodSeconds=0")
    wait_for(f"pods of {NS} gone", lambda: not kube.pods(NS), timeout=30)
    # The resourceclaim controller deallocates a deleted pod's claim and lets it go.
    wait_for(f"claims of {NS} gone", lambda: not kube.get(f"{DRA}/namespaces/{NS}/resourceclaims")["items"],
             timeout=60)


def test_same_node_and_same_allocation(dra_plane: Kube) -> None:
    kube = dra_plane
    create_pod(kube, NS, _pod("ref", None, "one-gpu"))
    ref_node = wait_bound(kube, NS, "ref", timeout=60)
    assert ref_node == NODE_A, f"scenario broken: kube-scheduler chose {ref_node}"
    ref = _allocated(kube, "ref")
    _delete_all(kube)

    create_pod(kube, NS, _pod("ours", KUBESCHED, "one-gpu"))
    our_node = wait_bound(kube, NS, "ours", timeout=60)
    assert our_node == ref_node
    ours = _allocated(kube, "ours")
    scheduled = wait_for("kubesched's Scheduled event", lambda: latest_event(kube, NS, "ours", "Scheduled"))
    assert scheduled["reportingController"] == KUBESCHED

    ref_alloc, our_alloc = ref["status"]["allocation"], ours["status"]["allocation"]
    assert ref_alloc.pop("allocationTimestamp")
    assert our_alloc.pop("allocationTimestamp")
    assert our_alloc == ref_alloc
    # The class's config, for every request of the claim (so naming none).
    assert ref_alloc["devices"]["config"] == [{"source": "FromClass", "opaque": {
        "driver": DRIVER, "parameters": {"sharing": "exclusive"}}}]
    assert ours["metadata"]["finalizers"] == ref["metadata"]["finalizers"] == [FINALIZER]
    for claim, name in ((ref, "ref"), (ours, "ours")):
        (reserved,) = claim["status"]["reservedFor"]
        assert {k: v for k, v in reserved.items() if k != "uid"} == {"resource": "pods", "name": name}
    _delete_all(kube)


def test_two_pods_never_share_one_device(dra_plane: Kube) -> None:
    kube = dra_plane
    for name in ("burst-1", "burst-2"):
        create_pod(kube, NS, _pod(name, KUBESCHED, "one-gpu"))
    wait_for("one of the two bound", lambda: any(get_pod(kube, NS, n)["spec"].get("nodeName")
                                                  for n in ("burst-1", "burst-2")), timeout=60)
    time.sleep(3)  # room for a second, wrong, bind
    bound = [n for n in ("burst-1", "burst-2") if get_pod(kube, NS, n)["spec"].get("nodeName")]
    assert len(bound) == 1, bound
    (waiting,) = {"burst-1", "burst-2"} - set(bound)
    def message() -> str:
        return str((scheduled_condition(get_pod(kube, NS, waiting)) or {}).get("message") or "")
    poll(lambda: message() == NO_DEVICE, timeout=30)
    assert message() == NO_DEVICE
    _delete_all(kube)


def test_no_device_satisfies_the_claim(dra_plane: Kube) -> None:
    message = compare_failure_message(dra_plane, NS, _pod("ref-two", None, "two-gpus"),
                                      _pod("ours-two", KUBESCHED, "two-gpus"), ("cannot allocate all claims",),
                                      timeout=30)
    assert message == NO_DEVICE
    _delete_all(dra_plane)


def test_missing_device_class(dra_plane: Kube) -> None:
    compare_failure_message(dra_plane, NS, _pod("ref-class", None, "no-class"),
                            _pod("ours-class", KUBESCHED, "no-class"),
                            ("request gpu: device class no-such-class does not exist",), timeout=30)
    _delete_all(dra_plane)
