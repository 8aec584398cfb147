"""Chained builders for test objects (after kube-scheduler's testing/wrappers.go).

    make_pod("p").req(cpu="1", memory="1Gi").toleration("k", "v").node_selector(zone="a").obj()
    make_node("n").capacity(cpu="4", memory="32Gi", pods="110").label("zone", "a").obj()

A builder is also accepted where its object is (`.obj()` is implied by `build_*` helpers).
"""

from __future__ import annotations

from typing import Self

from kubesched.model.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    ContainerRestartRule,
    ContainerStatus,
    EphemeralVolumeSource,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodResourceClaim,
    PodResourceClaimStatus,
    PodSchedulingGroup,
    PreferredSchedulingTerm,
    ReportedResources,
    ResourceRequirements,
    SchedulingGate,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    VolumeMount,
    WeightedPodAffinityTerm,
)
from kubesched.model.storage import (
    CSIDriver,
    CSIDriverSpec,
    CSINode,
    CSINodeDriver,
    CSINodeSpec,
    CSIPersistentVolumeSource,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeSpec,
    StorageClass,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
    VolumeNodeAffinity,
    VolumeNodeResources,
    VolumeResourceRequirements,
)
from kubesched.model.workload import BasicSchedulingPolicy as _Basic
from kubesched.model.workload import GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy, PodGroupSpec

Req = tuple[str, str, list[str]]  # (key, operator, values)


def requirement(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=list(values))


def term(*exprs: Req, fields: tuple[Req, ...] = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=[requirement(k, op, *vs) for k, op, vs in exprs],
                            match_fields=[requirement(k, op, *vs) for k, op, vs in fields])


def label_selector(*exprs: str | Req, **match_labels: str) -> LabelSelector:
    """matchLabels from keywords, and per positional argument an expression: a (key, operator, values)
    tuple, or a bare key for Exists (kube-scheduler's st.MakeLabelSelector().Exists("foo"))."""
    return LabelSelector(match_labels=dict(match_labels),
                         match_expressions=[LabelSelectorRequirement(key=x, operator="Exists") if isinstance(x, str)
                                            else LabelSelectorRequirement(key=x[0], operator=x[1], values=list(x[2]))
                                            for x in exprs])


def affinity_term(*exprs: Req, topology_key: str = "", match_labels: dict[str, str] | None = None,
                  namespaces: tuple[str, ...] = (), namespace_selector: LabelSelector | None = None,
                  match_label_keys: tuple[str, ...] = (), mismatch_label_keys: tuple[str, ...] = (),
                  nil_selector: bool = False) -> PodAffinityTerm:
    """A PodAffinityTerm whose labelSelector has these expressions and matchLabels (none at all: {},
    which selects every pod; nil_selector: no selector, which selects none)."""
    selector = None if nil_selector else label_selector(*exprs, **(match_labels or {}))
    return PodAffinityTerm(label_selector=selector, namespaces=list(namespaces), topology_key=topology_key,
                           namespace_selector=namespace_selector, match_label_keys=list(match_label_keys),
                           mismatch_label_keys=list(mismatch_label_keys))


def _res(cpu: str | None, memory: str | None, extra: dict[str, str]) -> dict[str, str]:
    out = dict(extra)
    if cpu is not None:
        out["cpu"] = cpu
    if memory is not None:
        out["memory"] = memory
    return out


class PodBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._pod = Pod(metadata=ObjectMeta(name=name, namespace=namespace, uid=f"uid-{namespace}-{name}"))
        self._pod.spec.containers = []

    def obj(self) -> Pod:
        if not self._pod.spec.containers:
            self._pod.spec.containers = [Container(name="c", image="pause")]
        return self._pod

    def uid(self, uid: str) -> Self:
        self._pod.metadata.uid = uid
        return self

    def node(self, name: str) -> Self:
        self._pod.spec.node_name = name
        return self

    def priority(self, p: int) -> Self:
        self._pod.spec.priority = p
        return self

    def phase(self, phase: str) -> Self:
        self._pod.status.phase = phase
        return self

    def container(self, cpu: str | None = None, memory: str | None = None, image: str = "pause",
                  ports: tuple[int, ...] = (), **extra: str) -> Self:
        c = Container(name=f"c{len(self._pod.spec.containers)}", image=image,
                      resources=ResourceRequirements(requests=_res(cpu, memory, _names(extra))),
                      ports=[ContainerPort(container_port=p, host_port=p) for p in ports])
        self._pod.spec.containers.append(c)
        return self

    def req(self, cpu: str | None = None, memory: str | None = None, **extra: str) -> Self:
        """One more container with these requests; other resources by keyword, '__' for '/':
        example_com__gpu="1" is example.com/gpu, ephemeral_storage="1Gi" is ephemeral-storage."""
        c = Container(name=f"c{len(self._pod.spec.containers)}", image="pause",
                      resources=ResourceRequirements(requests=_res(cpu, memory, _names(extra))))
        self._pod.spec.containers.append(c)
        return self

    def init_req(self, cpu: str | None = None, memory: str | None = None, sidecar: bool = False,
                 ports: tuple[int, ...] = (), **extra: str) -> Self:
        c = Container(name=f"i{len(self._pod.spec.init_containers)}", image="init",
                      resources=ResourceRequirements(requests=_res(cpu, memory, _names(extra))),
                      ports=[ContainerPort(container_port=p, host_port=p) for p in ports],
                      restart_policy="Always" if sidecar else None)
        self._pod.spec.init_containers.append(c)
        return self

    def overhead(self, cpu: str | None = None, memory: str | None = None, **extra: str) -> Self:
        """extra as in req(): example_com__gpu="1"."""
        self._pod.spec.overhead = _res(cpu, memory, _names(extra))
        return self

    def pod_requests(self, cpu: str | None = None, memory: str | None = None) -> Self:
        self._pod.spec.resources = ResourceRequirements(requests=_res(cpu, memory, {}))
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> Self:
        c = Container(name=f"c{len(self._pod.spec.containers)}", image="pause",
                      ports=[ContainerPort(container_port=port, host_port=port, protocol=protocol, host_ip=host_ip)])
        self._pod.spec.containers.append(c)
        return self

    def image(self, image: str) -> Self:
        self._pod.spec.containers.append(Container(name=f"c{len(self._pod.spec.containers)}", image=image))
        return self

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal") -> Self:
        self._pod.spec.tolerations.append(Toleration(key=key, operator=operator, value=value, effect=effect))
        return self

    def node_selector(self, **labels: str) -> Self:
        self._pod.spec.node_selector = {**self._pod.spec.node_selector, **labels}
        return self

    def _node_affinity(self) -> NodeAffinity:
        if self._pod.spec.affinity is None:
            self._pod.spec.affinity = Affinity()
        if self._pod.spec.affinity.node_affinity is None:
            self._pod.spec.affinity.node_affinity = NodeAffinity()
        return self._pod.spec.affinity.node_affinity

    def required_terms(self, *terms: NodeSelectorTerm) -> Self:
        self._node_affinity().required = NodeSelector(node_selector_terms=list(terms))
        return self

    def required(self, key: str, op: str, *values: str) -> Self:
        """One required term with one expression."""
        return self.required_terms(term((key, op, list(values))))

    def preferred(self, weight: int, *exprs: Req, fields: tuple[Req, ...] = ()) -> Self:
        self._node_affinity().preferred.append(PreferredSchedulingTerm(weight=weight,
                                                                       preference=term(*exprs, fields=fields)))
        return self

    def pod_affinity(self, anti: bool = False, preferred: bool = False, topology_key: str = "kubernetes.io/hostname",
                     **match_labels: str) -> Self:
        """One pod (anti-)affinity term selecting pods with these labels, required unless `preferred`."""
        if self._pod.spec.affinity is None:
            self._pod.spec.affinity = Affinity()
        aff = self._pod.spec.affinity
        terms = (aff.pod_anti_affinity if anti else aff.pod_affinity) or PodAffinity()
        t = PodAffinityTerm(label_selector=LabelSelector(match_labels=match_labels), topology_key=topology_key)
        if preferred:
            terms.preferred.append(WeightedPodAffinityTerm(weight=1, pod_affinity_term=t))
        else:
            terms.required.append(t)
        if anti:
            aff.pod_anti_affinity = terms
        else:
            aff.pod_affinity = terms
        return self

    def spread(self, max_skew: int = 1, topology_key: str = "topology.kubernetes.io/zone",
               when_unsatisfiable: str = "DoNotSchedule", selector: LabelSelector | None = None, *,
               min_domains: int | None = None, node_affinity_policy: str | None = None,
               node_taints_policy: str | None = None, match_label_keys: tuple[str, ...] = ()) -> Self:
        """A topology spread constraint (kube-scheduler's wrappers SpreadConstraint); `selector`
        None is a nil labelSelector (selects no pod); see `label_selector`."""
        self._pod.spec.topology_spread_constraints.append(TopologySpreadConstraint(
            max_skew=max_skew, topology_key=topology_key, when_unsatisfiable=when_unsatisfiable,
            label_selector=selector, min_domains=min_domains, node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy, match_label_keys=list(match_label_keys)))
        return self

    def owner(self, kind: str, name: str, api_version: str = "apps/v1", controller: bool = True) -> Self:
        self._pod.metadata.owner_references = [*self._pod.metadata.owner_references, OwnerReference(
            kind=kind, name=name, api_version=api_version, controller=controller, uid=f"uid-{kind}-{name}")]
        return self

    def terminating(self) -> Self:
        self._pod.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
        return self

    def affinity_term(self, t: PodAffinityTerm, anti: bool = False, weight: int = 0) -> Self:
        """Add a pod (anti-)affinity term: required, or preferred with this weight when weight != 0."""
        if self._pod.spec.affinity is None:
            self._pod.spec.affinity = Affinity()
        aff = self._pod.spec.affinity
        group = (aff.pod_anti_affinity if anti else aff.pod_affinity) or PodAffinity()
        if weight:
            group.preferred.append(WeightedPodAffinityTerm(weight=weight, pod_affinity_term=t))
        else:
            group.required.append(t)
        if anti:
            aff.pod_anti_affinity = group
        else:
            aff.pod_affinity = group
        return self

    def pod_affinity_expr(self, key: str, op: str, values: list[str], topology_key: str,
                          anti: bool = False, weight: int = 0) -> Self:
        """kube-scheduler wrappers' PodAffinityIn/NotIn/Exists/NotExists (and the anti ones): one
        term with one expression, required, or preferred with this weight."""
        return self.affinity_term(affinity_term((key, op, values), topology_key=topology_key), anti, weight)

    def labels(self, **labels: str) -> Self:
        self._pod.metadata.labels = {**self._pod.metadata.labels, **labels}
        return self

    def volume(self, name: str, claim: str | None = None, ephemeral: bool = False) -> Self:
        """A volume: a PVC one when `claim` is given, an ephemeral one when asked, else an emptyDir
        (which the slim model does not read)."""
        self._pod.spec.volumes.append(Volume(
            name=name,
            persistent_volume_claim=None if claim is None else PersistentVolumeClaimVolumeSource(claim_name=claim),
            ephemeral=EphemeralVolumeSource() if ephemeral else None))
        return self

    def add_volume(self, volume: Volume) -> Self:
        """Any volume as given (an in-tree disk, say: `Volume(name="d", gce_persistent_disk=...)`)."""
        self._pod.spec.volumes.append(volume)
        return self

    def gate(self, name: str) -> Self:
        self._pod.spec.scheduling_gates.append(SchedulingGate(name=name))
        return self

    def resource_claim(self, name: str, claim: str | None = None, template: str | None = None) -> Self:
        """A `spec.resourceClaims` entry naming a ResourceClaim, or a template one is made from."""
        self._pod.spec.resource_claims.append(PodResourceClaim(name=name, resource_claim_name=claim,
                                                               resource_claim_template_name=template))
        return self

    def claim_status(self, name: str, claim: str | None) -> Self:
        """A `status.resourceClaimStatuses` entry: the claim made from entry `name`'s template."""
        statuses = self._pod.status.resource_claim_statuses or []
        self._pod.status.resource_claim_statuses = [*statuses, PodResourceClaimStatus(name=name,
                                                                                      resource_claim_name=claim)]
        return self

    def label(self, key: str, value: str) -> Self:
        self._pod.metadata.labels = {**self._pod.metadata.labels, key: value}
        return self

    def scheduler(self, name: str) -> Self:
        self._pod.spec.scheduler_name = name
        return self

    def pod_group(self, name: str) -> Self:
        """A member of PodGroup `name` (spec.schedulingGroup.podGroupName)."""
        self._pod.spec.scheduling_group = PodSchedulingGroup(pod_group_name=name)
        return self

    def container_status(self, name: str, allocated: dict[str, str] | None = None,
                         actuated: dict[str, str] | None = None, init: bool = False) -> Self:
        """A status for container `name` (c0, c1... / i0, i1... as req()/init_req() name them) with
        the kubelet's allocated and actuated (status.resources) requests; None leaves one out."""
        cs = ContainerStatus(name=name, allocated_resources=allocated,
                             resources=None if actuated is None else ReportedResources(requests=actuated))
        status = self._pod.status
        if init:
            status.init_container_statuses = [*(status.init_container_statuses or []), cs]
        else:
            status.container_statuses = [*(status.container_statuses or []), cs]
        return self

    def pod_status_resources(self, actuated: dict[str, str] | None = None,
                             allocated: dict[str, str] | None = None) -> Self:
        """Pod-level status.resources.requests and status.allocatedResources."""
        self._pod.status.resources = ReportedResources(requests=actuated)
        self._pod.status.allocated_resources = allocated
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._pod.metadata.annotations = {**self._pod.metadata.annotations, key: value}
        return self

    def nominated(self, node: str) -> Self:
        self._pod.status.nominated_node_name = node
        return self

    def condition(self, type_: str, status: str = "True", reason: str = "") -> Self:
        self._pod.status.conditions = [*self._pod.status.conditions,
                                       PodCondition(type=type_, status=status, reason=reason)]
        return self

    def restart_rule(self, action: str = "RestartAllContainers", init: bool = False) -> Self:
        """One more container (init container) with restartPolicy Never and one restart rule with
        this action (component-helpers' containerWithRestartAllContainersAction)."""
        containers = self._pod.spec.init_containers if init else self._pod.spec.containers
        prefix = "i" if init else "c"
        containers.append(Container(name=f"{prefix}{len(containers)}", image="pause", restart_policy="Never",
                                    restart_policy_rules=[ContainerRestartRule(action=action)]))
        return self

    def bind_mount_options(self, *options: str, kind: str = "containers") -> Self:
        """One more container of `kind` (containers, init_containers, ephemeral_containers) with a
        volume mount carrying these bindMountOptions."""
        containers: list[Container] = getattr(self._pod.spec, kind)
        containers.append(Container(name=f"{kind}-{len(containers)}", image="pause",
                                    volume_mounts=[VolumeMount(bind_mount_options=list(options))]))
        return self

    def host_network(self, flag: bool = True) -> Self:
        self._pod.spec.host_network = flag
        return self

    def host_users(self, flag: bool | None) -> Self:
        self._pod.spec.host_users = flag
        return self


def _resource_name(key: str) -> str:
    """example_com__gpu -> example.com/gpu; ephemeral_storage -> ephemeral-storage."""
    if "__" in key:
        domain, name = key.split("__", 1)
        return f"{domain.replace('_', '.')}/{name.replace('_', '-')}"
    return key.replace("_", "-")


def _names(extra: dict[str, str]) -> dict[str, str]:
    return {_resource_name(k): v for k, v in extra.items()}


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._node = Node(metadata=ObjectMeta(name=name, uid=f"uid-node-{name}"))

    def obj(self) -> Node:
        return self._node

    def capacity(self, cpu: str | None = "4", memory: str | None = "32Gi", pods: str | None = "110",
                 **extra: str) -> Self:
        res = _res(cpu, memory, _names(extra))
        if pods is not None:
            res["pods"] = pods
        self._node.status.capacity = dict(res)
        self._node.status.allocatable = dict(res)
        return self

    def label(self, key: str, value: str) -> Self:
        self._node.metadata.labels = {**self._node.metadata.labels, key: value}
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        self._node.spec.taints = [*self._node.spec.taints, Taint(key=key, value=value, effect=effect)]
        return self

    def unschedulable(self, flag: bool = True) -> Self:
        self._node.spec.unschedulable = flag
        return self

    def image(self, size_bytes: int, *names: str) -> Self:
        self._node.status.images = [*self._node.status.images, ContainerImage(names=list(names),
                                                                               size_bytes=size_bytes)]
        return self

    def declared_features(self, *features: str) -> Self:
        self._node.status.declared_features = list(features)
        return self

    def zone(self, zone: str, region: str = "r") -> Self:
        return self.label("topology.kubernetes.io/zone", zone).label("topology.kubernetes.io/region", region)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name).capacity()


# --- storage objects -----------------------------------------------------------------------------

class PVBuilder:
    def __init__(self, name: str) -> None:
        self._pv = PersistentVolume(metadata=ObjectMeta(name=name, uid=f"uid-pv-{name}"))

    def obj(self) -> PersistentVolume:
        return self._pv

    def capacity(self, storage: str) -> Self:
        self._pv.spec.capacity = {"storage": storage}
        return self

    def access_modes(self, *modes: str) -> Self:
        self._pv.spec.access_modes = list(modes)
        return self

    def storage_class(self, name: str) -> Self:
        self._pv.spec.storage_class_name = name
        return self

    def label(self, key: str, value: str) -> Self:
        self._pv.metadata.labels = {**self._pv.metadata.labels, key: value}
        return self

    def claim_ref(self, namespace: str, name: str, uid: str = "") -> Self:
        self._pv.spec.claim_ref = ObjectReference(kind="PersistentVolumeClaim", namespace=namespace, name=name,
                                                  uid=uid)
        return self

    def node_affinity(self, *terms: NodeSelectorTerm) -> Self:
        self._pv.spec.node_affinity = VolumeNodeAffinity(required=NodeSelector(node_selector_terms=list(terms)))
        return self

    def csi(self, driver: str, handle: str) -> Self:
        self._pv.spec.csi = CSIPersistentVolumeSource(driver=driver, volume_handle=handle)
        return self

    def spec(self, spec: PersistentVolumeSpec) -> Self:
        """The whole spec as given (in-tree sources, volume mode...)."""
        self._pv.spec = spec
        return self

    def phase(self, phase: str) -> Self:
        self._pv.status.phase = phase
        return self


class PVCBuilder:
    def __init__(self, name: str, namespace: str = "default") -> None:
        self._pvc = PersistentVolumeClaim(metadata=ObjectMeta(name=name, namespace=namespace,
                                                              uid=f"uid-pvc-{namespace}-{name}"))

    def obj(self) -> PersistentVolumeClaim:
        return self._pvc

    def volume_name(self, name: str) -> Self:
        self._pvc.spec.volume_name = name
        return self

    def storage_class(self, name: str | None) -> Self:
        self._pvc.spec.storage_class_name = name
        return self

    def access_modes(self, *modes: str) -> Self:
        self._pvc.spec.access_modes = list(modes)
        return self

    def request(self, storage: str) -> Self:
        self._pvc.spec.resources = VolumeResourceRequirements(requests={"storage": storage})
        return self

    def spec(self, spec: PersistentVolumeClaimSpec) -> Self:
        self._pvc.spec = spec
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._pvc.metadata.annotations = {**self._pvc.metadata.annotations, key: value}
        return self

    def owner(self, kind: str, name: str, uid: str, controller: bool = True) -> Self:
        self._pvc.metadata.owner_references = [*self._pvc.metadata.owner_references, OwnerReference(
            kind=kind, name=name, uid=uid, api_version="v1", controller=controller)]
        return self

    def phase(self, phase: str) -> Self:
        self._pvc.status.phase = phase
        return self

    def terminating(self) -> Self:
        self._pvc.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
        return self


def make_pv(name: str) -> PVBuilder:
    return PVBuilder(name)


def make_pvc(name: str, namespace: str = "default") -> PVCBuilder:
    return PVCBuilder(name, namespace)


def make_storage_class(name: str, provisioner: str = "kubernetes.io/no-provisioner",
                       binding_mode: str | None = "Immediate") -> StorageClass:
    return StorageClass(metadata=ObjectMeta(name=name), provisioner=provisioner, volume_binding_mode=binding_mode)


def make_csi_node(name: str, *drivers: tuple[str, int | None], annotations: dict[str, str] | None = None) -> CSINode:
    """A CSINode with (driver name, allocatable count or None for no limit) per driver."""
    return CSINode(metadata=ObjectMeta(name=name, annotations=dict(annotations or {})), spec=CSINodeSpec(drivers=[
        CSINodeDriver(name=d, node_id=f"{name}-{d}",
                      allocatable=None if count is None else VolumeNodeResources(count=count))
        for d, count in drivers]))


def make_csi_driver(name: str, attach_required: bool = True, storage_capacity: bool = False) -> CSIDriver:
    return CSIDriver(metadata=ObjectMeta(name=name),
                     spec=CSIDriverSpec(attach_required=attach_required, storage_capacity=storage_capacity))


def make_volume_attachment(name: str, attacher: str, node: str, pv: str | None) -> VolumeAttachment:
    return VolumeAttachment(metadata=ObjectMeta(name=name), spec=VolumeAttachmentSpec(
        attacher=attacher, node_name=node, source=VolumeAttachmentSource(persistent_volume_name=pv)))


def make_pod_group(name: str, namespace: str = "default", min_count: int | None = None,
                   priority: int | None = None) -> PodGroup:
    """A PodGroup with a gang policy of `min_count`, or the basic policy when it is None."""
    policy = (PodGroupSchedulingPolicy(basic=_Basic()) if min_count is None else
              PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(min_count=min_count)))
    return PodGroup(metadata=ObjectMeta(name=name, namespace=namespace, uid=f"uid-pg-{namespace}-{name}"),
                    spec=PodGroupSpec(scheduling_policy=policy, priority=priority))
