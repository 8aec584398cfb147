"""Slim typed views of the API objects the scheduler reads.

They are decoded straight from the apiserver's JSON by msgspec, which ignores every field not
named here; that is what keeps decoding at a few microseconds a pod. ``gc=False`` because
tens of thousands of these live in the cache and never form reference cycles.
"""

from __future__ import annotations

import msgspec

from kubesched.model.volume_sources import CSIVolumeSource, InTreeDiskSources


class OwnerReference(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    kind: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""
    controller: bool = False


class ObjectMeta(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    # Written into a condition's observedGeneration, as kube-scheduler does since 1.34.
    generation: int = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[OwnerReference] = []


# --- Pod -----------------------------------------------------------------------------------------

class ContainerPort(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    container_port: int = 0
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


class ResourceClaimRef(msgspec.Struct, gc=False, omit_defaults=True):
    """A container's (or the pod's) `resources.claims[]` entry: which of the pod's resourceClaims it uses."""

    name: str = ""


class ResourceRequirements(msgspec.Struct, gc=False, omit_defaults=True):
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    claims: list[ResourceClaimRef] = []


class ContainerRestartRule(msgspec.Struct, gc=False, omit_defaults=True):
    """One of a container's `restartPolicyRules`; only the action tells NodeDeclaredFeatures what the
    pod needs of its node."""

    action: str = ""


class VolumeMount(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """A container's volume mount, only as far as NodeDeclaredFeatures reads it."""

    bind_mount_options: list[str] = []


class Container(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = msgspec.field(default_factory=ResourceRequirements)
    ports: list[ContainerPort] = []
    restart_policy: str | None = None
    restart_policy_rules: list[ContainerRestartRule] = []
    volume_mounts: list[VolumeMount] = []


class NodeSelectorRequirement(msgspec.Struct, gc=False, omit_defaults=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class NodeSelectorTerm(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(msgspec.Struct, gc=False, omit_defaults=True):
    weight: int = 0
    preference: NodeSelectorTerm = msgspec.field(default_factory=NodeSelectorTerm)


class NodeAffinity(msgspec.Struct, gc=False, omit_defaults=True,
                   rename={"required": "requiredDuringSchedulingIgnoredDuringExecution",
                           "preferred": "preferredDuringSchedulingIgnoredDuringExecution"}):
    required: NodeSelector | None = None
    preferred: list[PreferredSchedulingTerm] = []


class LabelSelectorRequirement(msgspec.Struct, gc=False, omit_defaults=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class LabelSelector(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []


class PodAffinityTerm(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    # None and an empty selector differ in Kubernetes: None matches nothing, {} matches everything.
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    # Merged into label_selector by the apiserver at create; the scheduler does not read them.
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm = msgspec.field(default_factory=PodAffinityTerm)


class PodAffinity(msgspec.Struct, gc=False, omit_defaults=True,
                  rename={"required": "requiredDuringSchedulingIgnoredDuringExecution",
                          "preferred": "preferredDuringSchedulingIgnoredDuringExecution"}):
    """Used for both podAffinity and podAntiAffinity: the API gives them the same shape."""

    required: list[PodAffinityTerm] = []
    preferred: list[WeightedPodAffinityTerm] = []


class Affinity(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Toleration(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class SchedulingGate(msgspec.Struct, gc=False):
    name: str = ""


class TopologySpreadConstraint(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """core/v1 TopologySpreadConstraint. None is "unset" where Go has a pointer: minDomains defaults
    to 1, nodeAffinityPolicy to Honor and nodeTaintsPolicy to Ignore (PodTopologySpread does it)."""

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    # None (absent or null) selects no pod; {} selects every pod (metav1.LabelSelectorAsSelector).
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []


class PersistentVolumeClaimVolumeSource(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    claim_name: str = ""
    read_only: bool = False


class EphemeralVolumeSource(msgspec.Struct, gc=False, omit_defaults=True):
    """Its volumeClaimTemplate is not read: the claim the ephemeral-volume controller creates from
    it (named <pod>-<volume>, owned by the pod) is what the volume plugins read."""


class ImageVolumeSource(msgspec.Struct, gc=False, omit_defaults=True):
    """An image volume (ImageVolume, GA since v1.36): ImageLocality counts its image as a
    container's. Its pullPolicy is not read."""

    reference: str = ""


class Volume(InTreeDiskSources, rename="camel", gc=False, omit_defaults=True):
    """Only the sources that bind the pod to storage, and image volumes (ImageLocality scores
    them); the others (configMap, projected...) do not constrain placement, and msgspec skips them.
    The in-tree disks (InTreeDiskSources) are for VolumeRestrictions' same-disk rules and
    NodeVolumeLimits' CSI migration."""

    name: str = ""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    csi: CSIVolumeSource | None = None
    image: ImageVolumeSource | None = None


class PodResourceClaim(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """`spec.resourceClaims[]`: a DRA claim by name, or a template the resourceclaim controller makes one from."""

    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    node_name: str = ""
    scheduler_name: str = "default-scheduler"
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    containers: list[Container] = []
    init_containers: list[Container] = []
    # Read only for their volume mounts (NodeDeclaredFeatures); an EphemeralContainer's JSON has
    # the fields of a Container that matter here.
    ephemeral_containers: list[Container] = []
    overhead: dict[str, str] = {}
    # Pod-level requests (PodLevelResources, on by default since 1.34) replace the containers' sum.
    resources: ResourceRequirements | None = None
    priority: int = 0
    # "PreemptLowerPriority" (the default when absent) or "Never".
    preemption_policy: str | None = None
    scheduling_gates: list[SchedulingGate] = []
    restart_policy: str = "Always"
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    volumes: list[Volume] = []
    resource_claims: list[PodResourceClaim] = []
    host_network: bool = False
    # None (absent) and True both mean the host's user namespace.
    host_users: bool | None = None


class PodCondition(msgspec.Struct, gc=False, omit_defaults=True):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    observed_generation: int = msgspec.field(default=0, name="observedGeneration")


class ReportedResources(msgspec.Struct, gc=False, omit_defaults=True):
    """Resources the kubelet reports in a status (`resources`). None (absent or null) and {} differ,
    as nil and an empty map do in component-helpers: None falls back to the next source."""

    requests: dict[str, str] | None = None


class ContainerStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """Only what an in-place resize changes: kube-scheduler counts a running pod for the larger of
    its spec, allocated and actuated requests (component-helpers PodRequests)."""

    name: str | None = None
    allocated_resources: dict[str, str] | None = None
    resources: ReportedResources | None = None


class PodResourceClaimStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """`status.resourceClaimStatuses[]`: the claim generated for a `spec.resourceClaims[]` entry."""

    name: str = ""
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class PodExtendedResourceClaimStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    """`status.extendedResourceClaimStatus`: the claim made for the pod's extended resources."""

    request_mappings: list[ContainerExtendedResourceRequest] = []
    resource_claim_name: str = ""


class PodStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    phase: str = ""
    conditions: list[PodCondition] = []
    nominated_node_name: str = ""
    # RFC 3339, set by the kubelet when it starts the pod; preemption prefers younger victims.
    start_time: str | None = None
    # In-place resize (KEP 1287), all optional: absent, null and empty must all decode.
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    # Pod-level (InPlacePodLevelResourcesVerticalScaling, beta and on since 1.36).
    resources: ReportedResources | None = None
    allocated_resources: dict[str, str] | None = None
    # Only compared, to tell kube-scheduler's UpdatePodGeneratedResourceClaim event.
    resource_claim_statuses: list[PodResourceClaimStatus] | None = None
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None


class Pod(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"


# --- Node ----------------------------------------------------------------------------------------

class Taint(msgspec.Struct, gc=False, omit_defaults=True):
    key: str = ""
    value: str = ""
    effect: str = ""


class NodeSpec(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    unschedulable: bool = False
    taints: list[Taint] = []


class ContainerImage(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    names: list[str] = []
    size_bytes: int = 0


class NodeCondition(msgspec.Struct, gc=False, omit_defaults=True):
    type: str = ""
    status: str = ""


class NodeStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    capacity: dict[str, str] = {}
    allocatable: dict[str, str] = {}
    images: list[ContainerImage] = []
    conditions: list[NodeCondition] = []
    # The kubelet's features, sorted (the apiserver requires it): NodeDeclaredFeatures matches pods to them.
    declared_features: list[str] = []


class Node(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)

    @property
    def name(self) -> str:
        return self.metadata.name


# --- Job (for the CronJob pool: Pod -> Job -> CronJob) ---------------------------------------------

class Job(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


# --- What owns a pod, for PodTopologySpread's default constraints (kube-scheduler DefaultSelector),
# and namespaces, for InterPodAffinity's namespaceSelector ---------------------------------------

class ServiceSpec(msgspec.Struct, gc=False, omit_defaults=True):
    selector: dict[str, str] = {}


class Service(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)


class ReplicationControllerSpec(msgspec.Struct, gc=False, omit_defaults=True):
    selector: dict[str, str] = {}


class ReplicationController(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicationControllerSpec = msgspec.field(default_factory=ReplicationControllerSpec)


class SelectorSpec(msgspec.Struct, gc=False, omit_defaults=True):
    """The spec of a ReplicaSet or a StatefulSet, as far as the scheduler reads it."""

    selector: LabelSelector | None = None


class ReplicaSet(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SelectorSpec = msgspec.field(default_factory=SelectorSpec)


class StatefulSet(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SelectorSpec = msgspec.field(default_factory=SelectorSpec)


class Namespace(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


# --- PodDisruptionBudgets, for preemption (kube-scheduler's FilterVictimsWithPDBViolation) ----------

class PodDisruptionBudgetSpec(msgspec.Struct, gc=False, omit_defaults=True):
    # None and {} both match no pod here (a PDB with a nil or empty selector protects nothing).
    selector: LabelSelector | None = None


class PodDisruptionBudgetStatus(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    disruptions_allowed: int = 0
    # Pods the apiserver's eviction already counted against the budget: name -> time.
    disrupted_pods: dict[str, str] = {}


class PodDisruptionBudget(msgspec.Struct, gc=False, omit_defaults=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = msgspec.field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = msgspec.field(default_factory=PodDisruptionBudgetStatus)


class ListMeta(msgspec.Struct, rename="camel", gc=False, omit_defaults=True):
    resource_version: str = ""
    # `continue` is a keyword in Python.
    continue_: str = msgspec.field(default="", name="continue")
