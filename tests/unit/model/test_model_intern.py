"""Pods sharing what they repeat (model.intern): one copy, and nothing a reader sees changed."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest

from kubesched.api.informer import Codec
from kubesched.model.intern import PodSharer
from kubesched.model.objects import Pod


def pod_json(i: int, labels: dict[str, str] | None = None, image: str = "registry.k8s.io/pause:3.10") -> dict[str, Any]:
    return {
        "metadata": {"name": f"p-{i}", "namespace": "bench", "uid": f"u-{i}", "resourceVersion": str(i),
                     "creationTimestamp": "2026-12-01T10:00:00Z", "labels": labels or {"app": "pause"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "r1",
                                          "controller": True}]},
        "spec": {"nodeName": f"node-{i % 2}", "schedulerName": "kubesched",
                 "containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": "10m"}}}],
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": 300}]},
        "status": {"phase": "Running", "startTime": "2026-12-01T10:00:01Z",
                   "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]},
    }


def decode(obj: dict[str, Any]) -> Pod:
    return msgspec.json.decode(orjson.dumps(obj), type=Pod)


def test_equal_parts_become_one_object_and_nothing_changes() -> None:
    share = PodSharer()
    a, b = decode(pod_json(1)), decode(pod_json(3))
    before = [msgspec.json.encode(a), msgspec.json.encode(b)]
    assert a.spec.tolerations is not b.spec.tolerations
    share(a)
    share(b)
    assert [msgspec.json.encode(a), msgspec.json.encode(b)] == before
    for part in ("metadata.labels", "metadata.owner_references", "metadata.namespace", "spec.tolerations",
                 "spec.containers", "spec.node_name", "spec.scheduler_name", "spec.volumes", "status.conditions",
                 "status.phase", "status.start_time"):
        holder, field = part.split(".")
        assert getattr(getattr(a, holder), field) is getattr(getattr(b, holder), field), part


@pytest.mark.parametrize(("other", "part"), [
    pytest.param(pod_json(3, labels={"app": "other"}), "labels", id="other-labels"),
    pytest.param(pod_json(3, image="nginx"), "containers", id="other-image"),
])
def test_parts_that_differ_stay_their_own(other: dict[str, Any], part: str) -> None:
    share = PodSharer()
    a, b = share(decode(pod_json(1))), share(decode(other))
    holder = "metadata" if part == "labels" else "spec"
    assert getattr(getattr(a, holder), part) != getattr(getattr(b, holder), part)
    assert b.metadata.labels == other["metadata"]["labels"]
    assert b.spec.containers[0].image == other["spec"]["containers"][0]["image"]
    assert a.spec.tolerations is b.spec.tolerations  # the rest is still shared


def test_the_string_table_starts_over_when_full() -> None:
    share = PodSharer(max_strings=8)
    first = share(decode(pod_json(0)))
    assert len(share.strings) == 7  # namespace, created, node, scheduler, restart policy, phase, started
    for i in range(1, 40):
        obj = pod_json(i)
        obj["metadata"]["namespace"] = f"ns-{i}"  # a new string each pod
        share(decode(obj))
        assert len(share.strings) <= 8 + 1
    assert first.metadata.namespace == "bench"


def test_the_codec_shares_list_items_and_watch_objects() -> None:
    codec = Codec(Pod, PodSharer())
    body = orjson.dumps({"metadata": {"resourceVersion": "9"}, "items": [pod_json(1), pod_json(2)]})
    _, (a, b), skipped = codec.decode_list(body)
    assert skipped == []
    assert a.spec.containers is b.spec.containers
    event = codec.decode_event(orjson.dumps({"type": "MODIFIED", "object": pod_json(4)}))
    assert event.obj is not None
    assert event.obj.spec.containers is b.spec.containers
    assert event.obj.metadata.name == "p-4"
