"""`kubesched explain` of a pod in a group: its group (the PodGroup, minCount, the members queued
and bound) and the group's verdict (tools/groups.py) against the same cache as the pod's own
explanation, pure. A Workload API PodGroup counts with GenericWorkload on and GangScheduling in
the profile; a scheduler-plugins PodGroup with Coscheduling in it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.backend.cache.cache import Cache
from kubesched.framework.handle import Lister
from kubesched.framework.pod_groups import PodGroupManager, pod_group_key, pod_group_name
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.status import Code
from kubesched.model.coscheduling import CoPodGroup
from kubesched.model.objects import Pod
from kubesched.plugins.gang_scheduling import NAME as GANG_SCHEDULING
from kubesched.tools.groups import (
    COSCHEDULING,
    WORKLOAD_API,
    GroupVerdict,
    co_group_name,
    evaluate_co_group,
    evaluate_pod_group,
)


@dataclass
class GroupView:
    """What the group verdict reads: the cache (the pod pending in it), every pod listed (the pod
    as pending), and the groups' stores (None: not read, the gate or the plugin off)."""

    cache: Cache
    pods: Sequence[Pod]
    pod_groups: PodGroupManager | None = None
    co_groups: Lister[CoPodGroup] | None = None


def explain_group(profile: Profile, view: GroupView, pod: Pod, *,
                  percentage_of_nodes_to_score: int = 0) -> tuple[GroupVerdict | None, list[str]]:
    """The verdict of the pod's group, or None when it is in none that this profile schedules
    together; and notes (a group named but not counted)."""
    notes: list[str] = []
    name = pod_group_name(pod)
    if name is not None:
        if view.pod_groups is None or profile.plugin(GANG_SCHEDULING) is None:
            notes.append(f"the pod names PodGroup {name} (spec.schedulingGroup), which counts only with "
                         "--feature-gates GenericWorkload=true and GangScheduling in the profile: explained alone")
        else:
            return _workload_api(profile, view, view.pod_groups, pod, percentage_of_nodes_to_score), notes
    key = co_group_name(pod)
    if key is not None and profile.plugin(COSCHEDULING) is not None and view.co_groups is not None:
        members = [p for p in view.pods if co_group_name(p) == key and not p.spec.node_name
                   and p.spec.scheduler_name == pod.spec.scheduler_name]
        bound = sum(1 for p in view.pods if co_group_name(p) == key and p.spec.node_name)
        verdict = evaluate_co_group(profile, view.cache, view.co_groups.get(key), key, _first(pod, members), bound,
                                    percentage_of_nodes_to_score=percentage_of_nodes_to_score)
        return verdict, notes
    return None, notes


def _first(pod: Pod, members: list[Pod]) -> list[Pod]:
    """The members, the explained pod among them (it is pending here even when bound)."""
    uid = pod.metadata.uid
    return [pod, *(p for p in members if p.metadata.uid != uid)]


def _workload_api(profile: Profile, view: GroupView, groups: PodGroupManager, pod: Pod,
                  percentage: int) -> GroupVerdict:
    ns, name = pod.metadata.namespace, pod_group_name(pod) or ""
    key = pod_group_key(pod)
    group = groups.pod_group(ns, name)
    if group is None:
        return GroupVerdict(f"{ns}/{name}", WORKLOAD_API, "", 0, 0, 0, False,
                            f'PodGroup {ns}/{name} not found: GangScheduling keeps its pods out of the scheduling '
                            f'queue ("waiting for pods\'s pod group "{name}" to appear in scheduling queue")')
    members = _first(pod, [p for p in view.pods if pod_group_key(p) == key and not p.spec.node_name
                           and p.spec.scheduler_name == pod.spec.scheduler_name])
    for pl in profile.pre_enqueue:
        s = pl.pre_enqueue(pod)
        if s is not None and s.code != Code.SUCCESS:
            state = groups.state(ns, name)
            gang = group.spec.scheduling_policy.gang
            return GroupVerdict(group.key, WORKLOAD_API, "basic" if gang is None else "gang", group.min_count,
                                len(members), len(state.assigned), False,
                                f"{pl.name} keeps the pod out of the scheduling queue: {s.message()}")
    return evaluate_pod_group(profile, view.cache, groups, group, members,
                              percentage_of_nodes_to_score=percentage)
