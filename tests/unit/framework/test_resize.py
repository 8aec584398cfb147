"""In-place resize: a running pod counts for max(spec, allocated, actuated), as component-helpers
v0.37.2 PodRequests computes it with InPlacePodVerticalScaling (GA) and
InPlacePodLevelResourcesVerticalScaling (beta, on) enabled."""

from __future__ import annotations

import msgspec
import pytest

from kubesched.backend.cache import Cache
from kubesched.framework import PodInfo
from kubesched.model.objects import Pod
from tests.builders import PodBuilder, make_node, make_pod

MI = 1024 * 1024
INFEASIBLE = ("PodResizePending", "True", "Infeasible")
DEFERRED = ("PodResizePending", "True", "Deferred")


def _running(cpu: str, **more: str) -> PodBuilder:
    return make_pod("p").node("n").req(cpu=cpu, **more)


@pytest.mark.parametrize(("pod", "cpu"), [
    pytest.param(_running("1"), 1000, id="no-status-counts-spec"),
    pytest.param(_running("1").container_status("c0"), 1000, id="status-without-resources-counts-spec"),
    pytest.param(_running("1").container_status("c0", allocated={"cpu": "2"}), 2000,
                 id="lowered-spec-not-yet-allocated"),
    pytest.param(_running("1").container_status("c0", allocated={"cpu": "1"}, actuated={"cpu": "3"}), 3000,
                 id="lowered-allocation-not-yet-actuated"),
    pytest.param(_running("2").container_status("c0", allocated={"cpu": "1"}, actuated={"cpu": "1"})
                 .condition(*DEFERRED), 2000, id="raised-spec-deferred-counts-spec"),
    pytest.param(_running("4").container_status("c0", allocated={"cpu": "1"}, actuated={"cpu": "1"})
                 .condition(*INFEASIBLE), 1000, id="infeasible-ignores-spec"),
    pytest.param(_running("1").container_status("c0", actuated={"cpu": "2"}), 2000,
                 id="actuated-without-allocated"),
    pytest.param(_running("1").container_status("other", allocated={"cpu": "5"}), 1000,
                 id="status-of-another-container-ignored"),
    # The three sources are summed over the containers first, then compared: 2+1 vs 1+2, not 2+2.
    pytest.param(make_pod("p").node("n").req(cpu="2").req(cpu="1")
                 .container_status("c0", allocated={"cpu": "1"}).container_status("c1", allocated={"cpu": "2"}),
                 3000, id="max-of-sums-not-sum-of-maxes"),
    pytest.param(make_pod("p").node("n").req(cpu="1").init_req(cpu="100m", sidecar=True)
                 .container_status("i0", allocated={"cpu": "300m"}, init=True), 1300, id="sidecar-allocated"),
    pytest.param(make_pod("p").node("n").req(cpu="100m").init_req(cpu="500m")
                 .container_status("i0", allocated={"cpu": "2"}, init=True), 2000, id="init-container-allocated"),
    pytest.param(make_pod("p").node("n").req(cpu="100m").pod_requests(cpu="1")
                 .pod_status_resources(actuated={"cpu": "2"}, allocated={"cpu": "1"}), 2000,
                 id="pod-level-actuated"),
    pytest.param(make_pod("p").node("n").req(cpu="100m").pod_requests(cpu="4")
                 .pod_status_resources(actuated={"cpu": "1"}, allocated={"cpu": "1"}).condition(*INFEASIBLE),
                 1000, id="pod-level-infeasible"),
    pytest.param(make_pod("p").node("n").req(cpu="1").pod_status_resources(actuated={"cpu": "3"},
                                                                           allocated={"cpu": "2"}),
                 3000, id="pod-status-replaces-container-statuses"),
    pytest.param(_running("1").overhead(cpu="100m").container_status("c0", allocated={"cpu": "2"}), 2100,
                 id="overhead-on-top"),
])
def test_resized_pod_counts_the_largest(pod: PodBuilder, cpu: int) -> None:
    assert PodInfo(pod.obj()).requests.milli_cpu == cpu


def test_resize_counts_memory_and_non_zero_requests() -> None:
    pod = (make_pod("p").node("n").req(memory="1Gi").req()
           .container_status("c0", allocated={"memory": "2Gi"}).container_status("c1", allocated={"cpu": "1"}))
    info = PodInfo(pod.obj())
    assert (info.requests.milli_cpu, info.requests.memory) == (1000, 2048 * MI)
    # c1 asks for no cpu in its spec, so it counts for 100m there; its allocation counts 1.
    assert (info.non0_cpu, info.non0_mem) == (1100, 2048 * MI + 200 * MI)


def test_cache_counts_a_resize_in_progress() -> None:
    cache = Cache()
    cache.add_node(make_node("n").capacity(cpu="4").obj())
    cache.add_pod(_running("1").obj())
    # The user lowered nothing yet, but the kubelet has allocated 3 cpus to the container.
    cache.update_pod(_running("1").container_status("c0", allocated={"cpu": "3"}, actuated={"cpu": "3"}).obj())
    assert int(cache.snapshot().req_cpu[0]) == 3000


_DECODE = msgspec.json.Decoder(Pod)


@pytest.mark.parametrize("status", [
    pytest.param("{}", id="absent"),
    pytest.param('{"containerStatuses": null, "initContainerStatuses": null, "resources": null, '
                 '"allocatedResources": null}', id="null"),
    pytest.param('{"containerStatuses": [], "initContainerStatuses": [], "resources": {}, '
                 '"allocatedResources": {}}', id="empty"),
    pytest.param('{"containerStatuses": [{}, {"name": null, "allocatedResources": null, "resources": null}, '
                 '{"name": "c0", "allocatedResources": {}, "resources": {"requests": null}}]}',
                 id="container-status-fields-null-or-empty"),
    pytest.param('{"containerStatuses": [{"name": "c0", "resources": {"requests": {}}}]}', id="empty-requests"),
])
def test_status_fields_decode_when_absent_null_or_empty(status: str) -> None:
    raw = ('{"metadata": {"name": "p", "uid": "u"}, "spec": {"nodeName": "n", "containers": '
           '[{"name": "c0", "resources": {"requests": {"cpu": "1"}}}]}, "status": ' + status + "}")
    pod = _DECODE.decode(raw)
    # Empty (non-nil) status maps are a source, as in Go: an empty allocation counts nothing for it,
    # but the spec still counts.
    assert PodInfo(pod).requests.milli_cpu == 1000
