"""The ImageLocality score of container images, worked out from kube-scheduler's int64 arithmetic."""

from __future__ import annotations

from kubesched.plugins import image_locality
from tests.builders import make_node, make_pod
from tests.unit.plugins.score_helpers import scores


def test_image_locality() -> None:
    mb = 1024 * 1024
    nodes = [make_node("a").image(500 * mb, "nginx:latest"), make_node("b")]
    # 500 MB spread over 1 of 2 nodes -> 250 MB; 100 * (250 - 23) / (1000 - 23) MB = 23
    assert scores(image_locality.ImageLocality(), make_pod("p").image("nginx"), nodes) == [23, 0]
