"""scheduler_perf-like workloads for `kubesched bench --workload`: nodes, measured pods, set-up objects.

Pure builders: a `Plan` says which nodes the plane gets, what each measured pod looks like, and what
must exist before the contender starts (priority class, pre-bound low-priority pods, PV/PVC pairs);
`setup.py` creates those, `validity.py` checks the placements against the plan.

Shaped after kube-scheduler's test/integration/scheduler_perf (nodes of 4 CPU / 32Gi / 110 pods):
- basic: the bench's original pause pods (10m, 16Mi), nothing else; its output is unchanged.
- spread: nodes in 10 zones; pods in groups, each pod with a hard zone spread (maxSkew 1,
  DoNotSchedule) and a soft hostname spread (maxSkew 1, ScheduleAnyway) over its group.
- anti-affinity: required pod anti-affinity on kubernetes.io/hostname within a group.
- preemption: PreemptionBasic: every node pre-filled with four low-priority 900m pods (3.6 of its
  4 CPU), then priority-10 pods of 3000m, at most one a node: each one must preempt three.
- pv: SchedulingInTreePVs/CSIPVs with node affinity: one pre-bound claim per pod, its static
  `local` PV pinned to one node (round-robin), so each pod has exactly one feasible node.
- gang-batch: scheduler_perf's GangScheduling objects (a PodGroup of the Workload API per group,
  gang policy with minCount = the group's size; pods of upstream's gang-pod template naming it in
  spec.schedulingGroup), all created before the contender starts, as the basic workload's pods are:
  the contender's own rate, where `--workload gang` (upstream's runner, pods created while it
  schedules) is held by how fast this machine creates pods. Plane and contenders with
  GenericWorkload=true.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched_dev.bench import workload
from kubesched_dev.bench.workload import pod_manifest as basic_pod
from kubesched_dev.localcluster.topology import NodeSpec, Topology, uniform

ZONE_KEY = "topology.kubernetes.io/zone"
HOSTNAME_KEY = "kubernetes.io/hostname"
ZONES = 10
GROUP_SIZE = 1000
GROUP_LABEL = "bench.kubesched.io/group"
FILL_NAMESPACE = "bench-fill"  # preemption's low-priority pods: outside the watched namespace
FILL_PER_NODE = 4
FILL_CPU = "900m"
PREEMPTOR_CPU = "3000m"
PREEMPTOR_MEMORY = "500Mi"
HIGH_PRIORITY_CLASS = "bench-high"
HIGH_PRIORITY = 10
PV_SIZE = "1Gi"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


class WorkloadError(ValueError):
    """Sizes a workload cannot run with; the message names the option and what would be valid."""


@dataclass(frozen=True)
class Kind:
    name: str
    summary: str
    default_size: tuple[int, int]  # (nodes, pods) when --nodes/--pods are not given
    quick_size: tuple[int, int]
    limit_ok: bool  # a logic-free round-robin binder can place it validly
    grouped: bool = False
    # Binds wait for a first pass over every pod that binds none: each preemptor preempts, then queues
    # behind the preemptors not tried yet (PrioritySort: equal priority, older queue time first, and a
    # retried pod's time is its retry's). So throughput counts from the contender's readiness, not
    # from its first bind, and victims leaving count as progress against the stall limit.
    first_pass: bool = False
    feature_gates: tuple[tuple[str, bool], ...] = ()  # for the plane and the contender
    default_group: int = GROUP_SIZE  # --group-size when not given (capped at the node count)


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("basic", "pause pods, no constraints", (1000, 10000), (50, 500), limit_ok=True),
    Kind("spread", "hard zone spread + soft hostname spread per group, 10 zones", (1000, 5000), (50, 500),
         limit_ok=True, grouped=True),
    Kind("anti-affinity", "required anti-affinity on hostname per group", (1000, 5000), (50, 500),
         limit_ok=True, grouped=True),
    Kind("preemption", "full cluster of low-priority pods, each pod must preempt", (1000, 1000), (50, 50),
         limit_ok=False, first_pass=True),
    Kind("pv", "one pre-bound claim per pod, its PV pinned to one node", (1000, 2000), (50, 200),
         limit_ok=False),
    Kind("gang-batch", "PodGroups with a gang of minCount = the group size (Workload API), "
         "the pods created before the contender starts", (1000, 3000), (50, 500), limit_ok=False,
         grouped=True, feature_gates=(("GenericWorkload", True),), default_group=10),
)}
NAMES = tuple(KINDS)


@dataclass(frozen=True)
class SetupObject:
    """One object to create before the contender starts; `status` is PUT to its /status after."""

    path: str  # collection path to POST to
    body: dict[str, Any]
    status: dict[str, Any] | None = None


@dataclass
class Plan:
    workload: str
    nodes: int
    pods: int
    group_size: int  # 0 when the workload has no groups
    topology: Topology
    names: list[str]  # measured pods, in creation order
    index: dict[str, int] = field(default_factory=dict)  # measured pod -> its number
    zone_of: dict[str, str] = field(default_factory=dict)  # node -> zone (spread)
    fill: dict[str, str] = field(default_factory=dict)  # pre-bound low-priority pod -> node (preemption)
    pv_node: dict[str, str] = field(default_factory=dict)  # measured pod -> its PV's node (pv): one PVC/PV pair each
    setup: list[SetupObject] = field(default_factory=list)  # namespaces and classes, then pre-bound pods
    manifest: Callable[[str, str], dict[str, Any]] = basic_pod

    def group_of(self, pod: str) -> int:
        return self.index[pod] // self.group_size if self.group_size else 0


def node_names(count: int) -> list[str]:
    return [n.name for n in uniform(count).nodes]


def zoned(count: int, zones: int = ZONES) -> Topology:
    """uniform(count) with node i in zone-(i mod zones): zones as equal as the count allows."""
    base = uniform(count)
    nodes = tuple(NodeSpec(n.name, {**n.labels, ZONE_KEY: f"zone-{i % zones}"}, n.taints, dict(n.capacity))
                  for i, n in enumerate(base.nodes))
    return Topology(f"{count}-nodes-{min(zones, count)}-zones", nodes)


def sizes(kind: str, nodes: int | None, pods: int | None, quick: bool) -> tuple[int, int]:
    k = KINDS[kind]
    dn, dp = k.quick_size if quick else k.default_size
    return (dn if nodes is None else nodes), (dp if pods is None else pods)


def build(kind: str, nodes: int, pods: int, group_size: int | None = None) -> Plan:
    if kind not in KINDS:
        raise WorkloadError(f"--workload: Unsupported value: {kind!r}: supported values: {', '.join(NAMES)}")
    if nodes < 1 or pods < 1:
        raise WorkloadError(f"--nodes/--pods: Invalid value: {nodes}/{pods}: both must be at least 1")
    names = workload.pod_names(pods)
    index = {n: i for i, n in enumerate(names)}
    if not KINDS[kind].grouped:
        group = 0
    else:
        group = min(KINDS[kind].default_group, nodes) if group_size is None else group_size
        if group < 1:
            raise WorkloadError(f"--group-size: Invalid value: {group}: must be at least 1")
    if kind == "anti-affinity" and group > nodes:
        raise WorkloadError(f"--group-size: Invalid value: {group}: anti-affinity on hostname places at most "
                            f"one pod of a group a node, so a group must be at most --nodes ({nodes})")
    if kind == "preemption" and pods > nodes:
        raise WorkloadError(f"--pods: Invalid value: {pods}: preemption fits at most one {PREEMPTOR_CPU} pod "
                            f"a node, so at most --nodes ({nodes}) pods")
    topo = zoned(nodes) if kind == "spread" else uniform(nodes)
    plan = Plan(kind, nodes, pods, group, topo, names, index)
    if kind == "spread":
        plan.zone_of = {n.name: n.labels[ZONE_KEY] for n in topo.nodes}
        plan.manifest = lambda name, sched: spread_pod(name, sched, plan.group_of(name))
    elif kind == "anti-affinity":
        plan.manifest = lambda name, sched: anti_affinity_pod(name, sched, plan.group_of(name))
    elif kind == "preemption":
        _plan_preemption(plan)
    elif kind == "pv":
        _plan_pv(plan)
    elif kind == "gang-batch":
        _plan_gangs(plan)
    return plan


def _with(base: dict[str, Any], labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    if labels:
        base["metadata"]["labels"].update(labels)
    base["spec"].update(spec)
    return base


def _group_selector(group: int) -> dict[str, Any]:
    return {"matchLabels": {GROUP_LABEL: f"g{group}"}}


def spread_pod(name: str, scheduler_name: str, group: int) -> dict[str, Any]:
    sel = _group_selector(group)
    return _with(workload.pod_manifest(name, scheduler_name), {GROUP_LABEL: f"g{group}"}, topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel},
        {"maxSkew": 1, "topologyKey": HOSTNAME_KEY, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel},
    ])


def anti_affinity_pod(name: str, scheduler_name: str, group: int) -> dict[str, Any]:
    term = {"labelSelector": _group_selector(group), "topologyKey": HOSTNAME_KEY}
    return _with(workload.pod_manifest(name, scheduler_name), {GROUP_LABEL: f"g{group}"},
                 affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def _sized(pod: dict[str, Any], cpu: str, memory: str) -> dict[str, Any]:
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": memory},
                                                 "limits": {"cpu": cpu, "memory": memory}}
    return pod


def preemptor_pod(name: str, scheduler_name: str) -> dict[str, Any]:
    return _with(_sized(workload.pod_manifest(name, scheduler_name), PREEMPTOR_CPU, PREEMPTOR_MEMORY),
                 priorityClassName=HIGH_PRIORITY_CLASS)


def fill_pod(name: str, node: str, scheduler_name: str) -> dict[str, Any]:
    # Pre-bound (spec.nodeName): the same starting cluster for every contender, placed by no one.
    pod = _sized(workload.pod_manifest(name, scheduler_name), FILL_CPU, PREEMPTOR_MEMORY)
    pod["metadata"].update(namespace=FILL_NAMESPACE, labels={"app": "bench-fill"})
    pod["spec"]["nodeName"] = node
    return pod


def _plan_preemption(plan: Plan) -> None:
    plan.setup.append(SetupObject("/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FILL_NAMESPACE}}))
    plan.setup.append(SetupObject("/apis/scheduling.k8s.io/v1/priorityclasses", {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": HIGH_PRIORITY_CLASS},
        "value": HIGH_PRIORITY, "description": "kubesched bench: the preemptors"}))
    for node in node_names(plan.nodes):
        for k in range(FILL_PER_NODE):
            name = f"fill-{node}-{k}"
            plan.fill[name] = node
            plan.setup.append(SetupObject(f"/api/v1/namespaces/{FILL_NAMESPACE}/pods",
                                          fill_pod(name, node, "bench-fill")))
    plan.manifest = preemptor_pod


def claim_name(pod: str) -> str:
    return f"claim-{pod}"


def volume_name(pod: str) -> str:
    return f"{workload.NAMESPACE}-vol-{pod}"


def claim(pod: str) -> SetupObject:
    body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim_name(pod), "namespace": workload.NAMESPACE,
                         "annotations": {BIND_COMPLETED: "yes"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": volume_name(pod),
                     "resources": {"requests": {"storage": PV_SIZE}}}}
    return SetupObject(f"/api/v1/namespaces/{workload.NAMESPACE}/persistentvolumeclaims", body,
                       {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": PV_SIZE}})


def volume(pod: str, node: str, claim_uid: str = "") -> SetupObject:
    """A static local PV bound to the pod's claim (claimRef with the claim's uid, as the PV controller
    leaves a bound pair), usable only on `node`."""
    ref = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": workload.NAMESPACE,
           "name": claim_name(pod), **({"uid": claim_uid} if claim_uid else {})}
    body = {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": volume_name(pod)},
            "spec": {"capacity": {"storage": PV_SIZE}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "", "claimRef": ref,
                     "local": {"path": f"/mnt/bench/{pod}"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": HOSTNAME_KEY, "operator": "In", "values": [node]}]}]}}}}
    return SetupObject("/api/v1/persistentvolumes", body, {"phase": "Bound"})


def pv_pod(name: str, scheduler_name: str) -> dict[str, Any]:
    return _with(workload.pod_manifest(name, scheduler_name),
                 volumes=[{"name": "vol", "persistentVolumeClaim": {"claimName": claim_name(name)}}])


def _plan_pv(plan: Plan) -> None:
    nodes = node_names(plan.nodes)
    for i, pod in enumerate(plan.names):
        node = nodes[i % len(nodes)]
        plan.pv_node[pod] = node
    plan.manifest = pv_pod


def pod_group_name(group: int) -> str:
    return f"gang-{group}"


def group_sizes(plan: Plan) -> list[int]:
    """Pods in each group, in order: the last one takes what is left."""
    full, rest = divmod(plan.pods, plan.group_size)
    return [plan.group_size] * full + ([rest] if rest else [])


def gang_pod(name: str, scheduler_name: str, group: int) -> dict[str, Any]:
    # upstream's podgroup/gangscheduling/templates/gang-pod.yaml: 100m / 100Mi, no limits
    pod = workload.pod_manifest(name, scheduler_name)
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", "memory": "100Mi"}}
    return _with(pod, {GROUP_LABEL: f"g{group}"}, schedulingGroup={"podGroupName": pod_group_name(group)})


def _plan_gangs(plan: Plan) -> None:
    path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{workload.NAMESPACE}/podgroups"
    for g, size in enumerate(group_sizes(plan)):
        plan.setup.append(SetupObject(path, {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": pod_group_name(g), "namespace": workload.NAMESPACE},
            "spec": {"schedulingPolicy": {"gang": {"minCount": size}}}}))
    plan.manifest = lambda name, sched: gang_pod(name, sched, plan.group_of(name))


def parse_kinds(value: str) -> list[str]:
    kinds = [v.strip() for v in value.split(",") if v.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise WorkloadError(f"{', '.join(bad) or '(none)'}: choose from {', '.join(NAMES)}, comma-separated")
    return list(dict.fromkeys(kinds))


def contenders_for(kind: str, given: list[str] | None, default: tuple[str, ...]) -> list[str]:
    """The contenders of one workload: `given`, or `default` without the logic-free binder where its
    round-robin placements cannot be valid (it neither preempts nor reads volumes)."""
    if KINDS[kind].limit_ok:
        return list(given or default)
    if given is None:
        return [c for c in default if c != "limit"]
    if "limit" in given:
        raise WorkloadError(f"--contenders: limit cannot run the {kind} workload: a logic-free round-robin "
                            f"binder {_limit_lacks(kind)}, so "
                            "its placements are invalid; leave it out")
    return list(given)


def _limit_lacks(kind: str) -> str:
    return {"preemption": "does not preempt", "gang-batch": "knows no gangs"}.get(kind, "ignores volumes")
