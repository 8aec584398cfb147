"""The ImageLocality score of container images, worked out from kube-scheduler's int64 arithmetic,
and TestImageLocalityPriority's cases (image_locality_test.go, v1.37.2) with its nodes and pods."""

from __future__ import annotations

import pytest

from kubesched.framework.runtime.schedule import ScheduleResult
from kubesched.plugins import image_locality
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.score_helpers import scores
from tests.unit.scheduling_helpers import schedule

MB = 1024 * 1024


def test_image_locality() -> None:
    mb = 1024 * 1024
    nodes = [make_node("a").image(500 * mb, "nginx:latest"), make_node("b")]
    # 500 MB spread over 1 of 2 nodes -> 250 MB; 100 * (250 - 23) / (1000 - 23) MB = 23
    assert scores(image_locality.ImageLocality(), make_pod("p").image("nginx"), nodes) == [23, 0]


# TestImageLocalityPriority's nodes (their status.images) and pods (their containers' images).
def node403002000(name: str) -> NodeBuilder:
    return (make_node(name).image(40 * MB, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1")
            .image(300 * MB, "gcr.io/300:latest", "gcr.io/300:v1").image(2000 * MB, "gcr.io/2000:latest"))


def node25010(name: str) -> NodeBuilder:
    return make_node(name).image(250 * MB, "gcr.io/250:latest").image(10 * MB, "gcr.io/10:latest", "gcr.io/10:v1")


def node60040900(name: str) -> NodeBuilder:
    return (make_node(name).image(600 * MB, "gcr.io/600:latest").image(40 * MB, "gcr.io/40:latest")
            .image(900 * MB, "gcr.io/900:latest"))


def node300600900(name: str) -> NodeBuilder:
    return (make_node(name).image(300 * MB, "gcr.io/300:latest").image(600 * MB, "gcr.io/600:latest")
            .image(900 * MB, "gcr.io/900:latest"))


def node400030(name: str) -> NodeBuilder:
    return make_node(name).image(4000 * MB, "gcr.io/4000:latest").image(30 * MB, "gcr.io/30:latest")


def node203040(name: str) -> NodeBuilder:
    return (make_node(name).image(20 * MB, "gcr.io/20:latest").image(30 * MB, "gcr.io/30:latest")
            .image(40 * MB, "gcr.io/40:latest"))


def pod_of(*images: str) -> PodBuilder:
    pod = make_pod("p")
    for image in images:
        pod.image(image)
    return pod


@pytest.mark.parametrize(("pod", "nodes", "want"), [
    pytest.param(pod_of("gcr.io/40", "gcr.io/250"), [node403002000("node1"), node25010("node2")], [0, 5],
                 id="two images spread on two nodes, prefer the larger image one"),
    pytest.param(pod_of("gcr.io/40", "gcr.io/300"), [node403002000("node1"), node25010("node2")], [7, 0],
                 id="two images on one node, prefer this node"),
    pytest.param(pod_of("gcr.io/10", "gcr.io/4000"), [node400030("node1"), node25010("node2")], [100, 0],
                 id="if exceed limit, use limit"),
    pytest.param(pod_of("gcr.io/10", "gcr.io/4000"),
                 [node400030("node1"), node25010("node2"), make_node("node3")], [66, 0, 0],
                 id="if exceed limit, use limit (with node which has no images present)"),
    pytest.param(pod_of("gcr.io/300", "gcr.io/600", "gcr.io/900"),
                 [node60040900("node1"), node300600900("node2"), make_node("node3")], [32, 36, 0],
                 id="pod with multiple large images, node2 is preferred"),
    pytest.param(pod_of("gcr.io/30", "gcr.io/40"), [node203040("node1"), node400030("node2")], [1, 0],
                 id="pod with multiple small images"),
    # By hand from calculatePriority: one 2000 MB image on both nodes (spread 2/2) sums 2000 MB, above the
    # limit of 1000 MB for one image: clamped to it, 100 * 977 / 977 = 100 (the unclamped 202 is no score).
    pytest.param(pod_of("gcr.io/2000"), [node403002000("node1"), node403002000("node2")], [100, 100],
                 id="one image above its limit on every node"),
    # sumImageScores starts from 0: one node holding a 23 MB + 977 MB / 4 - 1 byte image sums that much,
    # 100 * (977 MB / 4 - 1) / 977 MB truncates to 24, one byte short of 25.
    pytest.param(pod_of("big"), [make_node("node1").image(23 * MB + 977 * MB // 4 - 1, "big:latest")], [24],
                 id="one byte short of a score of 25"),
])
def test_image_locality_priority(pod: PodBuilder, nodes: list[NodeBuilder], want: list[int]) -> None:
    assert scores(image_locality.ImageLocality(), pod, nodes) == want


def test_image_locality_scores_in_a_cycle() -> None:
    # "two images on one node, prefer this node" scheduled with the default plugins on nodes alike
    # but for their images: ImageLocality's 7 and 0 are its scores in the cycle, and node1 wins.
    result = schedule([node403002000("node1"), node25010("node2")], pod_of("gcr.io/40", "gcr.io/300"))
    assert isinstance(result, ScheduleResult)
    assert result.plugin_scores()["ImageLocality"] == {"node1": 7, "node2": 0}
    assert result.suggested_host == "node1"
