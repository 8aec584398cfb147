"""The few pod fields the bench's binder and watcher read: slimmer than kubesched.model's Pod, so the
harness costs the machine as little as possible."""

from __future__ import annotations

import msgspec

from kubesched.model.objects import ListMeta


class Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resourceVersion: str = ""


class Spec(msgspec.Struct):
    nodeName: str = ""


class Pod(msgspec.Struct):
    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: Spec = msgspec.field(default_factory=Spec)


class PodList(msgspec.Struct):
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Pod] = []
