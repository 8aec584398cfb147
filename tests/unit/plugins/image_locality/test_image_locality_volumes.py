"""ImageLocality counts image volumes (spec.volumes[].image, GA since v1.36) as kube-scheduler
v1.37.2's sumImageScores does (plugins/imagelocality/image_locality.go): each volume's
`image.reference`, normalized as a container's image (no tag: ":latest"), adds its spread-scaled
size when the node has it, and every image volume adds one to the image count, on the node or not.
Expected scores by hand: 100 * (clamp(sum, 23 MB, 1000 MB * count) - 23 MB) / (1000 MB * count - 23 MB),
truncated, each image's size scaled by the share of nodes that hold it."""

from __future__ import annotations

import msgspec
import pytest

from kubesched.model.objects import Pod, Volume
from kubesched.plugins import image_locality
from tests.builders import NodeBuilder, PodBuilder, make_node, make_pod
from tests.unit.plugins.score_helpers import scores

MB = 1024 * 1024


def image_volume(name: str, reference: str) -> Volume:
    # Decoded as the informer does, from the API's JSON.
    return msgspec.convert({"name": name, "image": {"reference": reference, "pullPolicy": "IfNotPresent"}}, Volume)


@pytest.mark.parametrize(("pod", "nodes", "want"), [
    # Count 2 (a container, a volume); on a: 500 MB * 1/2 = 250 MB; 100 * 227 / 1977 = 11.
    pytest.param(make_pod("p").image("app:1").add_volume(image_volume("v", "vol:1")),
                 [make_node("a").image(500 * MB, "vol:1"), make_node("b")], [11, 0], id="volume-image-on-one-of-two"),
    # The volume's image is nowhere but counts: 500 MB on both nodes, count 2: 100 * 477 / 1977 = 24
    # (48 if the volume were not counted).
    pytest.param(make_pod("p").image("app:1").add_volume(image_volume("v", "vol:1")),
                 [make_node("a").image(500 * MB, "app:1"), make_node("b").image(500 * MB, "app:1")], [24, 24],
                 id="volume-counts-when-absent"),
    # A reference without a tag means :latest; a registry port's colon is not a tag.
    pytest.param(make_pod("p").image("app:1").add_volume(image_volume("v", "registry:5000/vol")),
                 [make_node("a").image(500 * MB, "registry:5000/vol:latest"), make_node("b")], [11, 0],
                 id="untagged-reference-is-latest"),
    # Two volumes of one image count twice and add twice: count 3, 1000 MB on both: 100 * 977 / 2977 = 32.
    pytest.param(make_pod("p").image("app:1").add_volume(image_volume("v", "vol:1"))
                 .add_volume(image_volume("w", "vol:1")),
                 [make_node("a").image(500 * MB, "vol:1"), make_node("b").image(500 * MB, "vol:1")], [32, 32],
                 id="same-image-twice"),
    # Other volumes are no images.
    pytest.param(make_pod("p").image("app:1").volume("data", claim="c"),
                 [make_node("a").image(500 * MB, "app:1"), make_node("b")], [23, 0], id="claim-volume-is-no-image"),
])
def test_image_volumes(pod: PodBuilder, nodes: list[NodeBuilder], want: list[int]) -> None:
    assert scores(image_locality.ImageLocality(), pod, nodes) == want


def test_pod_decodes_image_volume_reference() -> None:
    raw = (b'{"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "app:1"}],'
           b' "volumes": [{"name": "v", "image": {"reference": "vol:1", "pullPolicy": "Always"}}]}}')
    pod = msgspec.json.decode(raw, type=Pod)
    image = pod.spec.volumes[0].image
    assert image is not None
    assert image.reference == "vol:1"
