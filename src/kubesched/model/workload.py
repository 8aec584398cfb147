"""Slim views of the Workload API (scheduling.k8s.io/v1beta1, behind the GenericWorkload gate):
PodGroup, which a pod joins through `spec.schedulingGroup.podGroupName`, and Workload, the
template PodGroups are made from. Only what the scheduler reads."""

from __future__ import annotations

import msgspec

from kubesched.model.objects import ObjectMeta

POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_SCHEDULED = "Scheduled"


class GangSchedulingPolicy(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    min_count: int = 0


class BasicSchedulingPolicy(msgspec.Struct, gc=False, omit_defaults=True):
    pass


class PodGroupSchedulingPolicy(msgspec.Struct, gc=False, omit_defaults=True):
    basic: BasicSchedulingPolicy | None = None
    gang: GangSchedulingPolicy | None = None


class DisruptionMode(msgspec.Struct, gc=False, omit_defaults=True):
    single: dict[str, object] | None = None
    all: dict[str, object] | None = None


class WorkloadReference(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    workload_name: str = ""
    template_name: str = ""


class Condition(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """A metav1.Condition."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    observed_generation: int = 0
    last_transition_time: str | None = None


class PodGroupSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    parent_composite_pod_group_name: str | None = None
    workload_ref: WorkloadReference | None = None
    scheduling_policy: PodGroupSchedulingPolicy = msgspec.field(default_factory=PodGroupSchedulingPolicy)
    disruption_mode: DisruptionMode | None = None
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: str | None = None


class PodGroupStatus(msgspec.Struct, gc=False, omit_defaults=True):
    conditions: list[Condition] = []


class PodGroup(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodGroupSpec = msgspec.field(default_factory=PodGroupSpec)
    status: PodGroupStatus = msgspec.field(default_factory=PodGroupStatus)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def min_count(self) -> int:
        """The gang's minCount; 1 for a basic group (GangScheduling getMinCount)."""
        gang = self.spec.scheduling_policy.gang
        return 1 if gang is None else gang.min_count


class PodGroupTemplate(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    scheduling_policy: PodGroupSchedulingPolicy = msgspec.field(default_factory=PodGroupSchedulingPolicy)


class WorkloadSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    pod_group_templates: list[PodGroupTemplate] = []


class Workload(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: WorkloadSpec = msgspec.field(default_factory=WorkloadSpec)
