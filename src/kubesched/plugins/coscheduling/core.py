"""Coscheduling's PodGroupManager (scheduler-plugins pkg/coscheduling/core): the pods each group
has had permitted, the groups that passed the minResources check a while ago, those backed off
and those that failed last (queue sort puts a failed group after the others of its priority).
Times are the handle's clock; entries expire as gocache's do."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable, Iterable, Mapping, Sequence

from kubesched.framework.handle import Lister
from kubesched.framework.resources import Resource
from kubesched.framework.types import NodeInfo
from kubesched.model.coscheduling import POD_GROUP_LABEL, CoPodGroup
from kubesched.model.objects import Pod

# How long a group that passed the minResources check is let through without checking again.
PERMITTED_TTL_DEFAULT = 3.0


class PermitStatus(enum.Enum):
    POD_GROUP_NOT_SPECIFIED = "PodGroup not specified"
    POD_GROUP_NOT_FOUND = "PodGroup not found"
    SUCCESS = "Success"
    WAIT = "Wait"


def pod_group_label(pod: Pod) -> str:
    return pod.metadata.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod: Pod) -> str:
    name = pod_group_label(pod)
    return f"{pod.metadata.namespace}/{name}" if name else ""


def wait_time(group: CoPodGroup | None, schedule_timeout: float) -> float:
    """util.GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else the args', else 60 s."""
    if group is not None and group.spec.schedule_timeout_seconds is not None:
        return float(group.spec.schedule_timeout_seconds)
    return schedule_timeout or 60.0


def parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class PodGroupManager:
    def __init__(self, groups: Lister[CoPodGroup], pods: Lister[Pod], clock: Callable[[], float],
                 wall: Callable[[], float], schedule_timeout: float) -> None:
        self.groups = groups
        self.pods = pods
        self.clock = clock
        self.wall = wall
        self.schedule_timeout = schedule_timeout
        self._permitted: dict[str, float] = {}  # group -> expiry
        self._backed_off: dict[str, float] = {}  # group -> expiry
        self._last_failed: dict[str, float] = {}  # group -> when, on the clock
        self._assigned: dict[str, set[str]] = {}  # group -> uids of its live pods past Permit

    # --- reads ----------------------------------------------------------------------------------

    def pod_group(self, pod: Pod) -> tuple[str, CoPodGroup | None]:
        full = pod_group_full_name(pod)
        return full, (self.groups.get(full) if full else None)

    def siblings(self, pod: Pod) -> list[Pod]:
        """The pods of the pod's namespace labelled with its group (the pod itself included)."""
        name, namespace = pod_group_label(pod), pod.metadata.namespace
        return [p for p in self.pods.list()
                if p.metadata.namespace == namespace and p.metadata.labels.get(POD_GROUP_LABEL) == name]

    def assigned_count(self, full_name: str, also: str = "") -> int:
        """The group's pods bound or past Permit (`also`: a uid past Permit this moment). A pod
        deleted since no longer counts: a group whose pods are all gone (a Job run again with the
        same PodGroup) starts again from none."""
        namespace, _, name = full_name.partition("/")
        members = [p for p in self.pods.list()
                   if p.metadata.namespace == namespace and p.metadata.labels.get(POD_GROUP_LABEL) == name]
        held = self._assigned.get(full_name)
        if held is not None:
            held.intersection_update({p.metadata.uid for p in members} | {also})
            if not held:
                del self._assigned[full_name]
        counted = {p.metadata.uid for p in members if p.spec.node_name} | (held or set())
        if also:
            counted.add(also)
        return len(counted)

    def creation_timestamp(self, pod: Pod, default: float) -> float:
        """When the pod's group counts as created for queue sort: its last failure, else the
        PodGroup's creationTimestamp (on the handle's clock), else `default`."""
        full = pod_group_full_name(pod)
        if not full:
            return default
        failed = self._last_failed.get(full)
        if failed is not None:
            return failed
        group = self.groups.get(full)
        created = None if group is None else parse_time(group.metadata.creation_timestamp)
        if created is None:
            return default
        return self.clock() - (self.wall() - created)

    def _live(self, table: dict[str, float], key: str) -> bool:
        expiry = table.get(key)
        if expiry is None:
            return False
        if expiry <= self.clock():
            del table[key]
            return False
        return True

    # --- PreFilter, Permit, Unreserve -----------------------------------------------------------

    def pre_filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> str | None:
        """None to go on, else why the pod cannot be scheduled now."""
        full, group = self.pod_group(pod)
        if group is None:
            return None
        if self._live(self._backed_off, full):
            return f"podGroup {full} failed recently"
        siblings = self.siblings(pod)
        gap = group.spec.min_member - len(siblings)
        if gap > 0:
            return (f"pre-filter pod {pod.metadata.name} cannot find enough sibling pods, current pods number: "
                    f"{len(siblings)}, minMember of group: {group.spec.min_member}")
        for p in siblings:
            if p.spec.scheduling_gates:
                gap += 1
            if gap > 0:
                return f"pre-filter pod {pod.metadata.name} cannot proceed due to gated pods in the same PodGroup"
        if group.spec.min_resources is None:
            return None
        if self._live(self._permitted, full):
            return None
        wanted = dict(group.spec.min_resources)
        wanted["pods"] = str(group.spec.min_member)
        gap_left = check_cluster_resource(nodes, Resource.from_list(wanted), full)
        if gap_left:
            return f"resource gap: {gap_left}"
        self._permitted[full] = self.clock() + self.schedule_timeout
        return None

    def permit(self, pod: Pod) -> tuple[PermitStatus, bool]:
        """The status, and whether this is the group's first pod past Permit (it then activates
        its siblings)."""
        full, group = self.pod_group(pod)
        if not full:
            return PermitStatus.POD_GROUP_NOT_SPECIFIED, False
        if group is None:
            return PermitStatus.POD_GROUP_NOT_FOUND, False
        assigned = self._assigned.setdefault(full, set())
        assigned.add(pod.metadata.uid)
        first = len(assigned) == 1
        if self.assigned_count(full, also=pod.metadata.uid) >= group.spec.min_member:
            return PermitStatus.SUCCESS, False
        return PermitStatus.WAIT, first

    def unreserve(self, pod: Pod) -> None:
        full = pod_group_full_name(pod)
        assigned = self._assigned.get(full)
        if assigned is not None:
            assigned.discard(pod.metadata.uid)
            if not assigned:
                del self._assigned[full]

    def back_off(self, full_name: str, seconds: float) -> None:
        if seconds > 0:
            self._backed_off[full_name] = self.clock() + seconds

    def delete_permitted(self, full_name: str) -> None:
        self._permitted.pop(full_name, None)

    def mark_failure(self, full_name: str) -> None:
        self._last_failed[full_name] = self.clock()

    def clear_failure(self, full_name: str) -> None:
        self._last_failed.pop(full_name, None)


def _left(node: NodeInfo, group: str) -> Resource:
    """What the node has left, as if the group's own pods were not on it."""
    requested = Resource(node.requested.milli_cpu, node.requested.memory, node.requested.ephemeral_storage, 0,
                         dict(node.requested.scalar))
    pods = len(node.pods)
    for info in node.pods.values():
        if pod_group_full_name(info.pod) == group:
            _subtract(requested, info.requests)
            pods -= 1
    alloc = node.allocatable
    return Resource(alloc.milli_cpu - requested.milli_cpu, alloc.memory - requested.memory,
                    alloc.ephemeral_storage - requested.ephemeral_storage, alloc.allowed_pod_number - pods,
                    {k: v - requested.scalar.get(k, 0) for k, v in alloc.scalar.items()})


def _subtract(into: Resource, other: Resource) -> None:
    into.milli_cpu -= other.milli_cpu
    into.memory -= other.memory
    into.ephemeral_storage -= other.ephemeral_storage
    for k, v in other.scalar.items():
        into.scalar[k] = into.scalar.get(k, 0) - v


def _as_map(r: Resource) -> dict[str, int]:
    out = {"cpu": r.milli_cpu, "memory": r.memory, "ephemeral-storage": r.ephemeral_storage,
           "pods": r.allowed_pod_number}
    out.update(r.scalar)
    return out


def check_cluster_resource(nodes: Iterable[NodeInfo], wanted: Resource, group: str) -> str:
    """core.CheckClusterResource: "" when the nodes together have `wanted` left (the group's own
    pods not counted), else the gap, as Go prints the remaining ResourceList (names sorted)."""
    request = {k: v for k, v in _as_map(wanted).items() if v > 0}
    for node in nodes:
        left = _as_map(_left(node, group))
        for name in list(request):
            rest = request[name] - left.get(name, 0)
            if rest <= 0:
                del request[name]
            else:
                request[name] = rest
        if not request:
            return ""
    return "map[" + " ".join(f"{k}:{_quantity(k, v)}" for k, v in sorted(request.items())) + "]"


def _quantity(name: str, value: int) -> str:
    if name == "cpu":
        return f"{value // 1000}" if value % 1000 == 0 else f"{value}m"
    return str(value)


def by_name(pods: Iterable[Pod]) -> Mapping[str, Pod]:
    return {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}
