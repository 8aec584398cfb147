"""PodInfo requests: containers, init containers, sidecars, overhead, pod-level, scoring defaults."""

from __future__ import annotations

import pytest

from kubesched.framework import PodInfo, types
from kubesched.framework.resources import Resource
from tests.builders import PodBuilder, make_pod

MI = 1024 * 1024


@pytest.mark.parametrize(("pod", "cpu", "memory"), [
    pytest.param(make_pod("p").req(cpu="100m", memory="64Mi").req(cpu="200m", memory="64Mi"), 300, 128 * MI,
                 id="containers-add-up"),
    pytest.param(make_pod("p").req(cpu="100m").init_req(cpu="500m"), 500, 0, id="init-larger-wins"),
    pytest.param(make_pod("p").req(cpu="600m").init_req(cpu="500m"), 600, 0, id="containers-larger-win"),
    pytest.param(make_pod("p").req(cpu="100m").init_req(cpu="200m", sidecar=True), 300, 0,
                 id="sidecar-adds-to-containers"),
    pytest.param(make_pod("p").req(cpu="100m").init_req(cpu="500m").init_req(cpu="200m", sidecar=True),
                 500, 0, id="init-before-sidecar-runs-alone"),
    pytest.param(make_pod("p").req(cpu="100m").init_req(cpu="200m", sidecar=True).init_req(cpu="350m"),
                 550, 0, id="init-after-sidecar-counts-both"),
    pytest.param(make_pod("p").req(cpu="100m", memory="1Gi").overhead(cpu="50m", memory="10Mi"),
                 150, 1024 * MI + 10 * MI, id="overhead-added"),
    pytest.param(make_pod("p").req(cpu="100m", memory="1Gi").pod_requests(cpu="2"), 2000, 1024 * MI,
                 id="pod-level-replaces-cpu"),
    pytest.param(make_pod("p").req(cpu="0.5m"), 1, 0, id="rounds-up-millis"),
])
def test_requests(pod: PodBuilder, cpu: int, memory: int) -> None:
    info = PodInfo(pod.obj())
    assert (info.requests.milli_cpu, info.requests.memory) == (cpu, memory)


def test_extended_and_ephemeral_requests() -> None:
    info = PodInfo(make_pod("p").req(cpu="1", ephemeral_storage="1Gi", example_com__gpu="2").obj())
    assert info.requests == Resource(1000, 0, 1024 * MI, 0, {"example.com/gpu": 2})


@pytest.mark.parametrize(("pod", "cpu", "memory"), [
    pytest.param(make_pod("p").req(), 100, 200 * MI, id="empty-container-defaults"),
    pytest.param(make_pod("p").req().req(), 200, 400 * MI, id="per-container"),
    pytest.param(make_pod("p").req(cpu="1"), 1000, 200 * MI, id="memory-default-only"),
    pytest.param(make_pod("p").req(cpu="0", memory="0"), 0, 0, id="explicit-zero-kept"),
])
def test_non_zero_requests(pod: PodBuilder, cpu: int, memory: int) -> None:
    info = PodInfo(pod.obj())
    assert (info.non0_cpu, info.non0_mem) == (cpu, memory)
    assert (info.score_cpu, info.score_mem) == (cpu, memory)


def test_host_ports_include_sidecars_only() -> None:
    info = PodInfo(make_pod("p").host_port(80).init_req(sidecar=True, ports=(90,)).init_req(ports=(91,)).obj())
    assert sorted(p[2] for p in info.host_ports) == [80, 90]


def test_images_normalized() -> None:
    info = PodInfo(make_pod("p").image("nginx").image("reg:5000/app").image("a/b:1.0").obj())
    assert info.images == ("nginx:latest", "reg:5000/app:latest", "a/b:1.0")


@pytest.mark.parametrize("variant", [
    pytest.param(make_pod("v").req(cpu="100m", memory="64Mi"), id="same-requests"),
    pytest.param(make_pod("v").req(cpu="200m", memory="64Mi"), id="other-cpu"),
    pytest.param(make_pod("v").req(cpu="100m", memory="64Mi").req(), id="one-more-container"),
    pytest.param(make_pod("v").req(cpu="100m", memory="64Mi").init_req(cpu="1"), id="init-container"),
    pytest.param(make_pod("v").req(cpu="100m", memory="64Mi").init_req(cpu="1", sidecar=True), id="sidecar"),
    pytest.param(make_pod("v").req(cpu="100m", memory="64Mi").overhead(cpu="50m"), id="overhead"),
    pytest.param(make_pod("v").req(cpu="100m", memory="64Mi").pod_requests(cpu="2"), id="pod-level"),
    pytest.param(make_pod("v").node("n").req(cpu="100m", memory="64Mi")
                 .container_status("c0", allocated={"cpu": "2"}), id="resize-status"),
])
def test_figures_are_shared_only_by_pods_that_ask_alike(variant: PodBuilder) -> None:
    """PodInfo keeps one set of request figures per content: a pod that differs in anything the
    requests read gets its own, equal to what computing them afresh gives."""
    first = PodInfo(make_pod("base").req(cpu="100m", memory="64Mi").obj())
    pod = variant.obj()
    info = PodInfo(pod)
    fresh = types._compute_figures(pod)
    assert (info.requests, info.non0_cpu, info.non0_mem, info.score_cpu, info.score_mem) == fresh
    assert (info.requests is first.requests) == (types._figures_key(pod) == types._figures_key(first.pod))
