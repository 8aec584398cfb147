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

A second driver's slices (two "h100" devices of 16Gi on dra-a, "l4" devices of 4Gi and 16Gi on
dra-b) behind a class that selects only by driver carry the cases that follow, each run for
kube-scheduler first and then for kubesched, compared on node, the devices each claim got and the
whole message: a request selector on an attribute and on a capacity quantity, a count of two,
devices already allocated to another claim, firstAvailable (the first subrequest fits nowhere, the
second does), one ResourceClaim shared by two pods, and a waiting pod bound once the pod holding the
device is deleted (timed for both).

Last, a DeviceClass with extendedResourceName (selecting the "l4" devices on dra-b): a pod asking
for that resource in plain `resources.requests` (the nodes' allocatable lacks it) goes to dra-b and
gets a claim made for it, compared on node, the claim (annotation, owner, generated name, requests)
with the device it got, and the pod's status.extendedResourceClaimStatus; with both l4 devices held
by another pod, one more stays Pending with kube-scheduler's whole message.
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
    delete_pod_now,
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


MEM_DRIVER = "mem.kubesched.test"
MEM_CLASS = "mem.kubesched.test"
L4_BIG = (f'device.attributes["{MEM_DRIVER}"].model == "l4" && '
          f'device.capacity["{MEM_DRIVER}"].memory.compareTo(quantity("8Gi")) >= 0')
H100 = f'device.attributes["{MEM_DRIVER}"].model == "h100"'
EXT_CLASS, EXT_RESOURCE = "ext.kubesched.test", "kubesched.test/gpu"
HUGE = f'device.capacity["{MEM_DRIVER}"].memory.compareTo(quantity("32Gi")) >= 0'


def _mem_slice(node: str, devices: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-mem"},
            "spec": {"driver": MEM_DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": name, "attributes": {"model": {"string": model}},
                                  "capacity": {"memory": {"value": memory}}}
                                 for name, model, memory in devices]}}


def _exactly(cel: str, count: int = 1) -> dict[str, Any]:
    return {"deviceClassName": MEM_CLASS, "count": count, "selectors": [{"cel": {"expression": cel}}]}


def _mem_template(name: str, request: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", **request}]}}}}


def _pod(name: str, scheduler: str | None, template: str | None = None, claim: str | None = None) -> dict[str, Any]:
    source = {"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template}
    m = pod_manifest(name, scheduler, {"resourceClaims": [{"name": "gpu", **source}]})
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
        kube.create(f"{DRA}/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": MEM_CLASS},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{MEM_DRIVER}"'}}]}})
        kube.create(f"{DRA}/resourceslices", _mem_slice(NODE_A, [("a-0", "h100", "16Gi"), ("a-1", "h100", "16Gi")]))
        kube.create(f"{DRA}/resourceslices", _mem_slice(NODE_B, [("b-0", "l4", "4Gi"), ("b-1", "l4", "16Gi")]))
        for t in (_mem_template("l4-big", {"exactly": _exactly(L4_BIG)}),
                  _mem_template("two-h100", {"exactly": _exactly(H100, 2)}),
                  _mem_template("one-h100", {"exactly": _exactly(H100)}),
                  _mem_template("first-available", {"firstAvailable": [
                      {"name": "huge", **_exactly(HUGE)}, {"name": "small", **_exactly(L4_BIG)}]})):
            kube.create(f"{DRA}/namespaces/{NS}/resourceclaimtemplates", t)
        kube.create(f"{DRA}/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": EXT_CLASS},
            "spec": {"extendedResourceName": EXT_RESOURCE, "selectors": [{"cel": {"expression":
                     f'device.driver == "{MEM_DRIVER}" && device.attributes["{MEM_DRIVER}"].model == "l4"'}}]}})
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


def _claim_name(kube: Kube, pod: str) -> str:
    statuses = get_pod(kube, NS, pod).get("status", {}).get("resourceClaimStatuses") or []
    return next(str(s["resourceClaimName"]) for s in statuses if s.get("name") == "gpu")


def _delete_with_claim(kube: Kube, pod: str) -> None:
    """Delete a pod and wait until the resourceclaim controller has let its claim from the template go."""
    claim = _claim_name(kube, pod)
    delete_pod_now(kube, NS, pod)
    wait_for(f"claim {claim} gone", lambda: kube.request(
        "GET", f"{DRA}/namespaces/{NS}/resourceclaims/{claim}")[0] == 404, timeout=60)


def _wait_gone(kube: Kube, path: str) -> None:
    wait_for(f"{path} gone", lambda: kube.request("GET", path)[0] == 404, timeout=60)


def _reserved_for_two(kube: Kube, path: str) -> dict[str, Any]:
    def both() -> dict[str, Any] | None:
        claim: dict[str, Any] = kube.get(path)
        return claim if len(claim.get("status", {}).get("reservedFor") or []) == 2 else None
    return wait_for(f"{path} reserved for both pods", both, timeout=30)


def _wait_message(kube: Kube, pod: str, want: str) -> None:
    def message() -> str:
        return str((scheduled_condition(get_pod(kube, NS, pod)) or {}).get("message") or "")
    poll(lambda: message() == want, timeout=60)
    assert message() == want, f"{pod}: {message()!r}, want {want!r}"


def _devices(claim: dict[str, Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = claim["status"]["allocation"]["devices"]["results"]
    return results


def _bound_with(kube: Kube, template: str) -> tuple[str, list[dict[str, Any]]]:
    """The node and devices kube-scheduler gives a pod of `template` alone, then the same for
    kubesched; both must agree. Returns kube-scheduler's."""
    got = []
    for name, scheduler in ((f"ref-{template}", None), (f"ours-{template}", KUBESCHED)):
        create_pod(kube, NS, _pod(name, scheduler, template))
        node = wait_bound(kube, NS, name, timeout=60)
        got.append((node, _devices(_allocated(kube, name))))
        _delete_with_claim(kube, name)
    assert got[1] == got[0], f"kubesched {got[1]}\n  kube-scheduler {got[0]}"
    return got[0]


def _result(node: str, device: str, request: str = "gpu") -> dict[str, Any]:
    return {"request": request, "driver": MEM_DRIVER, "pool": node, "device": device}


def test_cel_on_attribute_and_capacity_quantity(dra_plane: Kube) -> None:
    node, devices = _bound_with(dra_plane, "l4-big")
    assert (node, devices) == (NODE_B, [_result(NODE_B, "b-1")]), "scenario broken"


def test_count_of_two(dra_plane: Kube) -> None:
    node, devices = _bound_with(dra_plane, "two-h100")
    assert (node, devices) == (NODE_A, [_result(NODE_A, "a-0"), _result(NODE_A, "a-1")]), "scenario broken"


def test_first_available_takes_the_subrequest_that_fits(dra_plane: Kube) -> None:
    node, devices = _bound_with(dra_plane, "first-available")
    assert (node, devices) == (NODE_B, [_result(NODE_B, "b-1", "gpu/small")]), "scenario broken"


def test_devices_already_allocated_to_another_claim(dra_plane: Kube) -> None:
    kube = dra_plane
    # kube-scheduler's holder takes one h100; each scheduler's next pod must get the other one.
    create_pod(kube, NS, _pod("holder", None, "one-h100"))
    wait_bound(kube, NS, "holder", timeout=60)
    (held,) = _devices(_allocated(kube, "holder"))
    got = []
    for name, scheduler in (("ref-next", None), ("ours-next", KUBESCHED)):
        create_pod(kube, NS, _pod(name, scheduler, "one-h100"))
        node = wait_bound(kube, NS, name, timeout=60)
        got.append((node, _devices(_allocated(kube, name))))
        if scheduler is None:
            _delete_with_claim(kube, name)
    assert got[1] == got[0]
    assert got[0][1][0]["device"] != held["device"]
    # Both h100 are taken now (the holder's and kubesched's): a third fits nowhere, same message.
    message = compare_failure_message(kube, NS, _pod("ref-third", None, "one-h100"),
                                      _pod("ours-third", KUBESCHED, "one-h100"),
                                      ("cannot allocate all claims",), timeout=30)
    assert message == NO_DEVICE
    _delete_all(kube)


def test_shared_claim_used_by_two_pods(dra_plane: Kube) -> None:
    kube = dra_plane
    got = []
    for tag, scheduler in (("ref", None), ("ours", KUBESCHED)):
        claim = f"shared-{tag}"
        kube.create(f"{DRA}/namespaces/{NS}/resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": claim},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": _exactly(L4_BIG)}]}}})
        pods = [f"{tag}-share-1", f"{tag}-share-2"]
        for name in pods:
            create_pod(kube, NS, _pod(name, scheduler, claim=claim))
        nodes = [wait_bound(kube, NS, name, timeout=60) for name in pods]
        path = f"{DRA}/namespaces/{NS}/resourceclaims/{claim}"
        shared = _reserved_for_two(kube, path)
        reserved = sorted(r["name"] for r in shared["status"]["reservedFor"])
        got.append((nodes, _devices(shared), reserved == pods))
        for name in pods:
            delete_pod_now(kube, NS, name)
        # The controller takes the deleted pods out of reservedFor; the claim then goes as asked.
        kube.delete(path)
        _wait_gone(kube, path)
    assert got[1] == got[0]
    assert got[0] == ([NODE_B, NODE_B], [_result(NODE_B, "b-1")], True), "scenario broken"


def test_deleting_the_holder_frees_the_device_for_a_waiting_pod(dra_plane: Kube) -> None:
    kube = dra_plane
    took = {}
    for tag, scheduler in (("ref", None), ("ours", KUBESCHED)):
        holder, waiter = f"{tag}-hold", f"{tag}-wait"
        create_pod(kube, NS, _pod(holder, scheduler, "one-gpu"))
        assert wait_bound(kube, NS, holder, timeout=60) == NODE_A
        create_pod(kube, NS, _pod(waiter, scheduler, "one-gpu"))
        _wait_message(kube, waiter, NO_DEVICE)
        start = time.monotonic()
        delete_pod_now(kube, NS, holder)
        assert wait_bound(kube, NS, waiter, timeout=90) == NODE_A
        took[tag] = time.monotonic() - start
        assert _devices(_allocated(kube, waiter)) == [
            {"request": "gpu", "driver": DRIVER, "pool": NODE_A, "device": "gpu-0"}]
        _delete_all(kube)
    print(f"waiting pod bound after the holder's deletion: kube-scheduler {took['ref']:.1f} s, "
          f"kubesched {took['ours']:.1f} s")


def _ext_pod(name: str, scheduler: str | None, count: str = "1") -> dict[str, Any]:
    m = pod_manifest(name, scheduler)
    m["spec"]["containers"][0]["resources"] = {"requests": {EXT_RESOURCE: count}, "limits": {EXT_RESOURCE: count}}
    return m


def _ext_claim(kube: Kube, pod: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pod's status.extendedResourceClaimStatus and its claim, once allocated and reserved."""
    status = wait_for(f"{pod}'s extendedResourceClaimStatus", lambda: get_pod(kube, NS, pod).get(
        "status", {}).get("extendedResourceClaimStatus"))
    path = f"{DRA}/namespaces/{NS}/resourceclaims/{status['resourceClaimName']}"
    claim = wait_for(f"{pod}'s claim reserved",
                     lambda: (c := kube.get(path)).get("status", {}).get("reservedFor") and c)
    return status, claim


def _made_for(kube: Kube, pod: str, node: str) -> dict[str, Any]:
    """What a scheduler made of an extended-resource pod, its own name written as <pod>."""
    status, claim = _ext_claim(kube, pod)
    meta = claim["metadata"]
    assert status["resourceClaimName"].startswith(f"{pod}-extended-resources-"), status
    owners = [(o["kind"], o["name"], o.get("controller")) for o in meta.get("ownerReferences", [])]
    return {"node": node, "devices": _devices(claim), "requests": claim["spec"]["devices"]["requests"],
            "generateName": meta.get("generateName", "").replace(pod, "<pod>"),
            "annotations": meta.get("annotations"), "owners": [(k, n.replace(pod, "<pod>"), c) for k, n, c in owners],
            "finalizers": meta.get("finalizers"), "reservedFor": [r["name"].replace(pod, "<pod>")
                                                                  for r in claim["status"]["reservedFor"]],
            "nodeSelector": claim["status"]["allocation"].get("nodeSelector"),
            "mappings": status["requestMappings"]}


def test_extended_resource_backed_by_dra_gets_the_device_on_the_node_with_the_slice(dra_plane: Kube) -> None:
    kube = dra_plane
    got = []
    for name, scheduler in (("ref-ext", None), ("ours-ext", KUBESCHED)):
        create_pod(kube, NS, _ext_pod(name, scheduler))
        node = wait_bound(kube, NS, name, timeout=60)
        got.append(_made_for(kube, name, node))
        claim = get_pod(kube, NS, name)["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
        delete_pod_now(kube, NS, name)
        # The garbage collector deletes the claim its pod owned.
        _wait_gone(kube, f"{DRA}/namespaces/{NS}/resourceclaims/{claim}")
    print(f"kube-scheduler made: {got[0]}")
    assert got[1] == got[0], f"kubesched {got[1]}\n  kube-scheduler {got[0]}"
    assert (got[0]["node"], got[0]["devices"]) == (NODE_B, [_result(NODE_B, "b-0", "container-0-request-0")]), \
        "scenario broken"


def test_extended_resource_with_no_device_left(dra_plane: Kube) -> None:
    kube = dra_plane
    # kube-scheduler's holder takes both l4 devices.
    create_pod(kube, NS, _ext_pod("ext-holder", None, "2"))
    assert wait_bound(kube, NS, "ext-holder", timeout=60) == NODE_B
    _, held = _ext_claim(kube, "ext-holder")
    assert sorted(d["device"] for d in _devices(held)) == ["b-0", "b-1"], "scenario broken"
    message = compare_failure_message(kube, NS, _ext_pod("ref-ext-none", None), _ext_pod("ours-ext-none", KUBESCHED),
                                      ("cannot allocate all claims",), timeout=30)
    print(f"kube-scheduler's message: {message}")
    # No claim is left for a pod that was not bound.
    claims = [c["metadata"]["name"] for c in kube.get(f"{DRA}/namespaces/{NS}/resourceclaims")["items"]]
    assert not [c for c in claims if c.startswith("ours-ext-none")], claims
    _delete_all(kube)
