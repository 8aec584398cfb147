"""Pod groups in a simulation: the pods of one group are placed together, all or nothing, when the
first of them comes up in input order (as the queue hands the scheduler a group's pods together),
and reported per group (tools/groups.py has the verdict).

A Workload API PodGroup counts with GenericWorkload on and GangScheduling in the pod's profile;
a scheduler-plugins PodGroup with Coscheduling in it. Otherwise the pods are placed one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.backend.cache.pod_groups import PodGroupStates
from kubesched.framework.pod_groups import pod_group_key
from kubesched.framework.status import Code
from kubesched.model.coscheduling import CoPodGroup
from kubesched.model.objects import Pod
from kubesched.plugins.gang_scheduling import NAME as GANG_SCHEDULING
from kubesched.scheduler.sources import Store
from kubesched.tools.groups import (
    GroupVerdict,
    assume_placed,
    co_group_name,
    evaluate_co_group,
    evaluate_pod_group,
)
from kubesched.tools.simulate.place import GATED, SCHEDULED, UNSCHEDULABLE, Placement, Placer

COSCHEDULING = "Coscheduling"


@dataclass
class GroupPlacer:
    placer: Placer
    pod_groups: PodGroupStates | None  # None: GenericWorkload off
    co_groups: Store[CoPodGroup]
    cluster_pods: Sequence[Pod] = ()  # the pods already in the cluster (for a group's bound members)
    verdicts: list[GroupVerdict] = field(default_factory=list)

    def place_all(self, pods: Sequence[Pod], replaces: Mapping[str, str] | None = None) -> list[Placement]:
        by_uid: dict[str, Placement] = {}
        done: set[str] = set()
        for pod in pods:
            uid = pod.metadata.uid
            if uid in by_uid:
                continue
            kind, key = self._group_of(pod)
            if key is None or key in done:
                by_uid[uid] = self.placer.place(pod)
                continue
            done.add(key)
            members = [p for p in pods if self._group_of(p) == (kind, key) and not p.spec.node_name]
            for member_uid, member_placement in self._place_group(kind, key, members):
                by_uid[member_uid] = member_placement
        out = [by_uid[p.metadata.uid] for p in pods]
        if replaces is not None:
            for pod, placement in zip(pods, out, strict=True):
                placement.replaces = replaces.get(pod.metadata.uid)
        return out

    def _group_of(self, pod: Pod) -> tuple[str, str | None]:
        if pod.spec.node_name:
            return "", None
        profile = self.placer.profile_for(pod)
        if self.pod_groups is not None and profile.plugin(GANG_SCHEDULING) is not None:
            key = pod_group_key(pod)
            if key is not None:
                return GANG_SCHEDULING, key
        if profile.plugin(COSCHEDULING) is not None:
            key = co_group_name(pod)
            if key is not None:
                return COSCHEDULING, key
        return "", None

    def _place_group(self, kind: str, key: str, members: list[Pod]) -> Iterable[tuple[str, Placement]]:
        placer = self.placer
        profile = placer.profile_for(members[0])
        name = profile.scheduler_name
        gated = []
        for pod in members:
            for pl in profile.pre_enqueue:
                s = pl.pre_enqueue(pod)
                if s is not None and s.code != Code.SUCCESS:
                    gated.append((pod, s.message()))
                    break
        if gated:
            # GangScheduling holds every pod of the group until minCount exist: none reaches a cycle.
            gated_uids = {p.metadata.uid for p, _ in gated}
            for pod, message in gated:
                yield pod.metadata.uid, Placement(pod.key, name, None, message, GATED, group=key)
            members = [p for p in members if p.metadata.uid not in gated_uids]
            if not members:
                return
        rng, cursor, percentage = placer.rng, placer.cursor, placer.percentage_of_nodes_to_score
        if kind == GANG_SCHEDULING:
            assert self.pod_groups is not None
            namespace, _, group_name = key.partition("/")
            group = self.pod_groups.pod_group(namespace, group_name)
            if group is None:
                for pod in members:
                    yield pod.metadata.uid, Placement(
                        pod.key, name, None, f'waiting for pods\'s pod group "{group_name}" to appear in scheduling '
                                             "queue", GATED, group=key)
                return
            verdict = evaluate_pod_group(profile, placer.cache, self.pod_groups, group, members, rng=rng,
                                         cursor=cursor, percentage_of_nodes_to_score=percentage)
        else:
            bound = sum(1 for p in self.cluster_pods if co_group_name(p) == key and p.spec.node_name)
            verdict = evaluate_co_group(profile, placer.cache, self.co_groups.get(key), key, members, bound, rng=rng,
                                        cursor=cursor, percentage_of_nodes_to_score=percentage)
        self.verdicts.append(verdict)
        assume_placed(profile, placer.cache, verdict)
        by_key = {p.key: p for p in members}
        for m in verdict.members:
            placed = verdict.placed and m.fits
            yield by_key[m.pod].metadata.uid, Placement(
                m.pod, name, m.node if placed else None, "" if placed else m.message,
                SCHEDULED if placed else UNSCHEDULABLE, group=key)
