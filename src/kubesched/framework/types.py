"""PodInfo (what a cycle needs of a pod, computed once) and NodeInfo (a node with its pods' sums)."""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.framework.resources import (
    CPU,
    DEFAULT_NON_MISSING,
    MEMORY,
    Resource,
    milli_of,
    pod_level_requests_set,
    pod_requests,
    status_may_differ,
    value_of,
)
from kubesched.model.objects import Node, Pod, Taint, Toleration

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"

HostPort = tuple[str, str, int]  # (host ip, protocol, port), sanitized


def normalized_image_name(name: str) -> str:
    """An image without a tag means :latest, as the kubelet reports it (ImageLocality)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """Ports bound on the host: containers' and restartable sidecars' (kube-scheduler GetHostPorts)."""
    ports: list[HostPort] = []
    containers = [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
    containers.extend(pod.spec.containers)
    for c in containers:
        for p in c.ports:
            if p.host_port > 0:
                ports.append((p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or "TCP", p.host_port))
    return tuple(ports)


# (requests, non0 cpu, non0 memory, score cpu, score memory): what PodInfo derives from requests.
_Figures = tuple[Resource, int, int, int, int]
_FIGURES: dict[tuple[object, ...], _Figures] = {}
_MAX_FIGURES = 4096


def _figures_key(pod: Pod) -> tuple[object, ...] | None:
    """What the request figures of a pod read (None: its status too, so not shared): the pods of one
    workload ask alike, and parsing and summing their quantities is most of a PodInfo's cost."""
    if status_may_differ(pod):
        return None
    spec = pod.spec
    return (tuple(tuple(c.resources.requests.items()) if c.resources.requests else () for c in spec.containers),
            tuple((c.restart_policy, tuple(c.resources.requests.items()) if c.resources.requests else ())
                  for c in spec.init_containers),
            tuple(spec.resources.requests.items()) if spec.resources is not None else None,
            tuple(spec.overhead.items()) if spec.overhead else None)


def _compute_figures(pod: Pod) -> _Figures:
    reqs = pod_requests(pod)
    requests = Resource.from_decimals(reqs)
    # What the pod counts for when scoring, with 100m / 200Mi for each container that asks
    # for nothing: kube-scheduler's NonZeroRequested (node side) and the Fit score's request.
    pod_level = pod_level_requests_set(pod)
    if not pod_level:
        non_missing = DEFAULT_NON_MISSING
    else:
        non_missing = {k: v for k, v in DEFAULT_NON_MISSING.items() if k not in reqs}
    non0 = pod_requests(pod, non_missing) if non_missing else reqs
    non0_cpu = milli_of(non0[CPU]) if CPU in non0 else 0
    non0_mem = value_of(non0[MEMORY]) if MEMORY in non0 else 0
    if pod_level:
        scored = pod_requests(pod, DEFAULT_NON_MISSING)
        return (requests, non0_cpu, non0_mem, milli_of(scored[CPU]) if CPU in scored else 0,
                value_of(scored[MEMORY]) if MEMORY in scored else 0)
    return requests, non0_cpu, non0_mem, non0_cpu, non0_mem


def request_figures(pod: Pod) -> _Figures:
    """The pod's requests and the non-zero ones scoring counts, shared by pods that ask alike (the
    Resource is shared too: read it, never change it)."""
    key = _figures_key(pod)
    if key is None:
        return _compute_figures(pod)
    found = _FIGURES.get(key)
    if found is None:
        if len(_FIGURES) >= _MAX_FIGURES:
            _FIGURES.clear()
        found = _FIGURES[key] = _compute_figures(pod)
    return found


class PodInfo:
    """A pod with everything the plugins need precomputed, so a cycle never re-parses quantities."""

    __slots__ = ("host_ports", "images", "key", "non0_cpu", "non0_mem", "pod", "pvc_keys", "requests",
                 "score_cpu", "score_mem", "uid")

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        self.uid = pod.metadata.uid or self.key
        self.requests, self.non0_cpu, self.non0_mem, self.score_cpu, self.score_mem = request_figures(pod)
        self.host_ports = _host_ports(pod)
        # Containers' and image volumes' images, one entry each (ImageLocality sums and counts
        # them all, as kube-scheduler's sumImageScores does).
        self.images = tuple(normalized_image_name(c.image)
                            for c in (*pod.spec.init_containers, *pod.spec.containers))
        if pod.spec.volumes:
            self.images += tuple(normalized_image_name(v.image.reference)
                                 for v in pod.spec.volumes if v.image is not None)
        # "namespace/claim" of each persistentVolumeClaim volume (kube-scheduler PodPVCKeys; not the
        # ephemeral ones), for the claims in use across the cluster (VolumeRestrictions' RWOP rule).
        ns = pod.metadata.namespace
        self.pvc_keys = tuple(f"{ns}/{v.persistent_volume_claim.claim_name}" for v in pod.spec.volumes
                              if v.persistent_volume_claim is not None)

    @property
    def tolerations(self) -> list[Toleration]:
        return self.pod.spec.tolerations

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


class HostPortInfo:
    """Host ports in use on a node: ip -> (protocol, port) -> number of pods using it."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, port: HostPort) -> None:
        ip, proto, num = port
        m = self._by_ip.setdefault(ip, {})
        m[(proto, num)] = m.get((proto, num), 0) + 1

    def remove(self, port: HostPort) -> None:
        ip, proto, num = port
        m = self._by_ip.get(ip)
        if m is None or (proto, num) not in m:
            return
        m[(proto, num)] -= 1
        if m[(proto, num)] <= 0:
            del m[(proto, num)]
            if not m:
                del self._by_ip[ip]

    def __len__(self) -> int:
        return sum(len(m) for m in self._by_ip.values())

    def clone(self) -> HostPortInfo:
        c = HostPortInfo()
        c._by_ip = {ip: dict(m) for ip, m in self._by_ip.items()}
        return c

    def check_conflict(self, port: HostPort) -> bool:
        """0.0.0.0 conflicts with the same protocol/port on any ip; a specific ip with itself and 0.0.0.0."""
        ip, proto, num = port
        pp = (proto, num)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in m for m in self._by_ip.values())
        for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
            m = self._by_ip.get(key)
            if m is not None and pp in m:
                return True
        return False


class NodeInfo:
    """A node and the sums of the pods on it (bound and assumed), as a cycle reads them."""

    __slots__ = ("allocatable", "image_sizes", "labels", "name", "no_schedule_taints", "node",
                 "non0_cpu", "non0_mem", "pods", "pods_with_affinity", "pods_with_required_anti_affinity",
                 "prefer_no_schedule_taints", "pvc_refs", "requested", "unschedulable", "used_ports")

    def __init__(self, node: Node, pods: Iterable[PodInfo | Pod] = ()) -> None:
        self.requested = Resource()
        self.non0_cpu = 0
        self.non0_mem = 0
        self.pods: dict[str, PodInfo] = {}
        # The pods with pod (anti-)affinity, and those with required anti-affinity (kube-scheduler's
        # PodsWithAffinity, PodsWithRequiredAntiAffinity): InterPodAffinity reads only these.
        self.pods_with_affinity: dict[str, PodInfo] = {}
        self.pods_with_required_anti_affinity: dict[str, PodInfo] = {}
        self.used_ports = HostPortInfo()
        # "namespace/claim" -> how many of the node's pods use it (kube-scheduler PVCRefCounts).
        self.pvc_refs: dict[str, int] = {}
        self.set_node(node)
        for p in pods:
            self.add_pod(p if isinstance(p, PodInfo) else PodInfo(p))

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.labels = node.metadata.labels
        self.unschedulable = node.spec.unschedulable
        self.allocatable = Resource.from_list(node.status.allocatable)
        taints = node.spec.taints
        self.no_schedule_taints: tuple[Taint, ...] = tuple(
            t for t in taints if t.effect in ("NoSchedule", "NoExecute"))
        self.prefer_no_schedule_taints: tuple[Taint, ...] = tuple(
            t for t in taints if t.effect == "PreferNoSchedule")
        sizes: dict[str, int] = {}
        for image in node.status.images:
            for n in image.names:
                sizes.setdefault(n, image.size_bytes)
        self.image_sizes = sizes

    def add_pod(self, pi: PodInfo) -> None:
        if pi.uid in self.pods:
            self.remove_pod(self.pods[pi.uid])
        self.pods[pi.uid] = pi
        aff = pi.pod.spec.affinity
        if aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None):
            self.pods_with_affinity[pi.uid] = pi
            if aff.pod_anti_affinity is not None and aff.pod_anti_affinity.required:
                self.pods_with_required_anti_affinity[pi.uid] = pi
        self.requested.add(pi.requests)
        self.non0_cpu += pi.non0_cpu
        self.non0_mem += pi.non0_mem
        for port in pi.host_ports:
            self.used_ports.add(port)
        for key in pi.pvc_keys:
            self.pvc_refs[key] = self.pvc_refs.get(key, 0) + 1

    def remove_pod(self, pi: PodInfo) -> bool:
        cur = self.pods.pop(pi.uid, None)
        if cur is None:
            return False
        if self.pods_with_affinity:
            self.pods_with_affinity.pop(pi.uid, None)
            self.pods_with_required_anti_affinity.pop(pi.uid, None)
        self.requested.add(cur.requests, -1)
        self.non0_cpu -= cur.non0_cpu
        self.non0_mem -= cur.non0_mem
        for port in cur.host_ports:
            self.used_ports.remove(port)
        for key in cur.pvc_keys:
            left = self.pvc_refs.get(key, 0) - 1
            if left > 0:
                self.pvc_refs[key] = left
            else:
                self.pvc_refs.pop(key, None)
        return True

    def clone(self) -> NodeInfo:
        """A copy whose pods can be added and removed without touching this one (preemption's dry
        run, the filters with nominated pods): the sums copied, not recomputed from every pod."""
        c = NodeInfo.__new__(NodeInfo)
        # What set_node derives from the node is replaced, never changed in place: shared.
        c.node = self.node
        c.name = self.name
        c.labels = self.labels
        c.unschedulable = self.unschedulable
        c.allocatable = self.allocatable
        c.no_schedule_taints = self.no_schedule_taints
        c.prefer_no_schedule_taints = self.prefer_no_schedule_taints
        c.image_sizes = self.image_sizes
        c.requested = self.requested.copy()
        c.non0_cpu = self.non0_cpu
        c.non0_mem = self.non0_mem
        c.pods = dict(self.pods)
        c.pods_with_affinity = dict(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = dict(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.pvc_refs = dict(self.pvc_refs)
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
