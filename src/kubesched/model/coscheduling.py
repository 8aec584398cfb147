"""scheduler-plugins' PodGroup CRD (scheduling.x-k8s.io/v1alpha1), which its Coscheduling plugin
reads: pods join one through the `scheduling.x-k8s.io/pod-group` label."""

from __future__ import annotations

import msgspec

from kubesched.model.objects import ObjectMeta

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


class CoPodGroupSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    min_member: int = 0
    min_resources: dict[str, str] | None = None
    schedule_timeout_seconds: int | None = None


class CoPodGroupStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    phase: str = ""
    occupied_by: str = ""
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    schedule_start_time: str | None = None


class CoPodGroup(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CoPodGroupSpec = msgspec.field(default_factory=CoPodGroupSpec)
    status: CoPodGroupStatus = msgspec.field(default_factory=CoPodGroupStatus)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"
