"""Pod-group preemption (kube-scheduler's DefaultPreemption.PodGroupPostFilter and
framework/preemption/podgrouppreemption.go, without composite groups): a gang preempts for all its
pods or not at all, across the whole cluster as one domain.

The victims are the pods of lower priority than the group (a pod in a PodGroup has its group's
priority), a PodGroup whose `disruptionMode` is `all` counting as one victim with all its scheduled
pods. With every such victim set aside, the group is placed again; if it still does not fit,
nothing is preempted. Then victims are put back one by one, each kept (reprieved) when the group
still fits with it: first those whose eviction would break a PodDisruptionBudget (a PodGroup victim
breaks one when any of its pods does), then the others, each from the most important down. The
remaining victims get the DisruptionTarget condition and are deleted in the background, and the
group's pods are nominated to the nodes they were placed on.

A reprieve keeps the first placement: the victim is put back (each placed pod's PreFilter state
told through its AddPod extension) and the placed pods' filters run again on their nodes, one after
another with those before assumed, as kube-scheduler's reprieveVictim does. Placing the group anew
for each victim cost a cycle per victim (1,000 of them in scheduler_perf's GangPreemptionBasic).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

from kubesched.framework.handle import Handle
from kubesched.framework.pod_groups import PodGroupManager, pod_group_name
from kubesched.framework.runtime.framework import run_reserve, run_unreserve
from kubesched.framework.runtime.nominated import run_extension, run_filters_with_nominated_pods, yielded_to
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod
from kubesched.model.workload import PodGroup
from kubesched.plugins.default_preemption.executor import Executor
from kubesched.plugins.default_preemption.pdb import Budget, budgets, split_units_by_violation
from kubesched.scheduler.podgroup_algorithm import GroupOutcome, Placer, PodResult

log = logging.getLogger("kubesched")

PREFIX = "pod group preemption: "
NO_VICTIMS = "No preemption victims found for incoming preemptor"
NOT_ELIGIBLE = "not eligible due to preemptionPolicy=Never."
ONGOING = "ongoing preemption on nominated nodes"


def pod_group_priority(group: PodGroup) -> int:
    return group.spec.priority if group.spec.priority is not None else 0


def pod_priority(pod: Pod, groups: PodGroupManager) -> int:
    """GetPodPriority: a pod in a PodGroup has the group's priority."""
    name = pod_group_name(pod)
    group = None if name is None else groups.pod_group(pod.metadata.namespace, name)
    return pod.spec.priority if group is None else pod_group_priority(group)


def _start_time(pod: Pod) -> float:
    raw = pod.status.start_time
    if raw:
        try:
            return dt.datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return time.time()


def terminating_by_preemption(pod: Pod) -> bool:
    if pod.metadata.deletion_timestamp is None:
        return False
    return any(c.type == "DisruptionTarget" and c.status == "True" and c.reason == "PreemptionByScheduler"
               for c in pod.status.conditions)


@dataclass
class Victim:
    pods: list[PodInfo]
    priority: int
    is_group: bool
    earliest_start: float = field(init=False)

    def __post_init__(self) -> None:
        self.earliest_start = min(_start_time(p.pod) for p in self.pods)


def more_important(a: Victim, b: Victim) -> bool:
    """MoreImportantVictim: priority, then a group before a pod, then more pods, then started earlier."""
    if a.priority != b.priority:
        return a.priority > b.priority
    if a.is_group != b.is_group:
        return a.is_group
    if len(a.pods) != len(b.pods):
        return len(a.pods) > len(b.pods)
    return a.earliest_start < b.earliest_start


def _executor(profile: Profile) -> Executor | None:
    plugin = profile.plugin("DefaultPreemption")
    executor = getattr(plugin, "executor", None)
    return executor if isinstance(executor, Executor) else None


def _budgets(profile: Profile) -> list[Budget]:
    """The PodDisruptionBudgets DefaultPreemption reads (its PDB informer), parsed."""
    pdbs = getattr(profile.plugin("DefaultPreemption"), "pdbs", None)
    return budgets(pdbs.list()) if pdbs is not None else []


def _compare(a: Victim, b: Victim) -> int:
    return -1 if more_important(a, b) else (1 if more_important(b, a) else 0)


@dataclass
class GroupPreemptor:
    """What preempts: a group's uid and key, its priority, how its queued pods are placed (the
    algorithm with its placement check), the key its pods wait on at DefaultPreemption's PreEnqueue
    (the uid when None), and which pods are its own (never its victims, whatever their priority)."""

    uid: str
    key: str
    priority: int
    place: Callable[[list[PodResult]], GroupOutcome]
    hold: str | None = None
    is_member: Callable[[Pod], bool] = field(default=lambda _: False)


@dataclass
class Preemption:
    """The outcome: `status` (Success when victims go or are going), its message without the
    prefix, and each placed pod's node by uid."""

    status: Status
    nominations: dict[str, str] = field(default_factory=dict)


@dataclass
class PodGroupPreemption:
    placer: Placer
    pod_groups: PodGroupManager
    handle: Handle
    spawn: Callable[[Coroutine[Any, Any, Any], str], object]

    def post_filter(self, profile: Profile, group: PodGroup, pods: list[PodResult]) -> Status:
        """PodGroupPostFilter's status, its message prefixed as kube-scheduler does; the
        nominations are left on `pods`."""
        return self.post_filter_for(profile, self.preemptor_of(profile, group), pods)

    def preemptor_of(self, profile: Profile, group: PodGroup) -> GroupPreemptor:
        return GroupPreemptor(group.metadata.uid, group.key, pod_group_priority(group),
                              lambda rs: self.placer.place(profile, group, rs))

    def post_filter_for(self, profile: Profile, preemptor: GroupPreemptor, pods: list[PodResult]) -> Status:
        outcome = self.preempt_for(profile, preemptor, pods)
        for r in pods:
            if r.info.uid in outcome.nominations:
                r.nominated_node = outcome.nominations[r.info.uid]
        message = outcome.status.message()
        return Status(outcome.status.code, PREFIX + message) if message else outcome.status

    def preempt(self, profile: Profile, group: PodGroup, pods: list[PodResult]) -> Preemption:
        return self.preempt_for(profile, self.preemptor_of(profile, group), pods)

    def preempt_for(self, profile: Profile, preemptor: GroupPreemptor, pods: list[PodResult]) -> Preemption:
        members = [r.pod_info.pod for r in pods]
        priority = preemptor.priority
        if any(p.spec.preemption_policy == "Never" for p in members):
            return Preemption(Status(Code.UNSCHEDULABLE, NOT_ELIGIBLE))
        cache = self.placer.cache
        snapshot = cache.snapshot()
        if self._ongoing(members, priority):
            return Preemption(Status(Code.SUCCESS, ONGOING),
                              {p.metadata.uid: p.status.nominated_node_name for p in members})
        victims = [v for v in self._victims(snapshot.node_infos)
                   if v.priority < priority and not any(preemptor.is_member(p.pod) for p in v.pods)]
        if not victims:
            return Preemption(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS))
        # Each victim pod's node, read before it leaves the cache: its RemovePod extensions need it.
        homes = {p.uid: cache.node_of(p.uid) for v in victims for p in v.pods}
        aside = {id(v): [cache.set_aside(p.uid) for p in v.pods] for v in victims}
        try:
            first = preemptor.place([r.fresh() for r in pods])
            if first.status is not None:
                return Preemption(first.status)
            placed = [r for r in first.results if r.placed and r.node]
            # The victims whose eviction would break a PodDisruptionBudget are reprieved first,
            # then the others, each from the most important down.
            violating, non_violating = split_units_by_violation(
                sorted(victims, key=cmp_to_key(_compare)), lambda v: v.pods, _budgets(profile))
            violations = {id(v): n for v, n in violating}
            to_preempt: list[Victim] = []
            for v in [v for v, _ in violating] + non_violating:
                tokens = aside.pop(id(v))
                fits = self._reprieve(profile, v, tokens, placed, homes)
                if fits is not True:
                    aside[id(v)] = [cache.set_aside(p.uid) for p in v.pods]
                    if isinstance(fits, Status):
                        return Preemption(fits)
                    removed = self._tell(profile, "remove_pod", v, placed, homes)
                    if removed is not None:
                        return Preemption(removed)
                    to_preempt.append(v)
        finally:
            for tokens in aside.values():
                self._put_back(tokens)
        nominations = {r.info.uid: r.node for r in placed if r.node}
        to_preempt.sort(key=cmp_to_key(_compare))
        pdb_violations = sum(violations.get(id(v), 0) for v in to_preempt)
        preempted = [p for v in to_preempt for p in v.pods]
        executor = _executor(profile)
        held = preemptor.hold or preemptor.uid
        if executor is not None and any(p.pod.metadata.deletion_timestamp is None for p in preempted):
            # Held from now on: the writes start only after the cycle.
            executor.hold(held)
        self.spawn(self._actuate(executor, preemptor, held, members[0], preempted),
                   f"podgroup-preemption/{preemptor.key}")
        log.info("preempting for a pod group", extra={"podGroup": preemptor.key,
                                                      "victims": [p.key for p in preempted],
                                                      "pdb_violations": pdb_violations})
        return Preemption(Status(Code.SUCCESS, f"found a placement for podgroup, preempting {len(preempted)} victims"),
                          nominations)

    def _reprieve(self, profile: Profile, victim: Victim, tokens: list[object | None],
                  placed: list[PodResult], homes: dict[str, str | None]) -> bool | Status:
        """reprieveVictim: the victim put back, whether every placed pod still passes the filters
        (with the pods nominated there) on its node, each assumed and reserved for the next while
        checked; the status of an AddPod extension's error. Whatever the verdict, the placed pods
        leave the cache again."""
        self._put_back(tokens)
        told = self._tell(profile, "add_pod", victim, placed, homes)
        if told is not None:
            return told
        cache = self.placer.cache
        nominator = profile.handle.nominator
        assumed: list[PodResult] = []
        try:
            for r in placed:
                node = r.node
                assert node is not None
                info = cache.node_info(node)
                if info is None:
                    return False
                s = run_filters_with_nominated_pods(profile, r.state, r.pod_info, info,
                                                    yielded_to(nominator, node, r.pod_info))
                if s is not None:
                    # Any failure, an error too, is "does not fit" (reprieveVictim).
                    return False
                cache.assume_pod(r.pod_info, node)
                assumed.append(r)
                run_reserve(profile, r.state, r.pod_info, node)
            return True
        finally:
            for r in reversed(assumed):
                assert r.node is not None
                run_unreserve(profile, r.state, r.pod_info, r.node)
                cache.forget_pod(r.pod_info)

    def _tell(self, profile: Profile, method: str, victim: Victim, placed: list[PodResult],
              homes: dict[str, str | None]) -> Status | None:
        """RunPreFilterExtensionAddPod / RemovePod for each victim pod (on its node, `homes`) on each
        placed pod's state."""
        cache = self.placer.cache
        for v in victim.pods:
            name = homes.get(v.uid)
            node = None if name is None else cache.node_info(name)
            if node is None:
                continue
            for r in placed:
                s = run_extension(profile, r.state, method, r.pod_info, v, node)
                if s is not None:
                    return s
        return None

    def _put_back(self, tokens: list[object | None]) -> None:
        for token in tokens:
            if token is not None:
                self.placer.cache.put_back(token)

    def _ongoing(self, members: list[Pod], priority: int) -> bool:
        nodes = {p.status.nominated_node_name for p in members if p.status.nominated_node_name}
        for name in nodes:
            info = self.placer.cache.node_info(name)
            if info is not None and any(pod_priority(p.pod, self.pod_groups) < priority
                                        and terminating_by_preemption(p.pod) for p in info.pods.values()):
                return True
        return False

    def _victims(self, node_infos: list[Any]) -> list[Victim]:
        """Every pod of the cluster as a victim, a PodGroup with disruptionMode `all` as one."""
        by_uid: dict[str, PodInfo] = {p.uid: p for ni in node_infos for p in ni.pods.values()}
        seen: set[str] = set()
        out: list[Victim] = []
        for info in by_uid.values():
            pod = info.pod
            name = pod_group_name(pod)
            group = None if name is None else self.pod_groups.pod_group(pod.metadata.namespace, name)
            mode = None if group is None else group.spec.disruption_mode
            priority = pod_priority(pod, self.pod_groups)
            if group is None or mode is None or mode.all is None:
                if info.uid not in seen:
                    seen.add(info.uid)
                    out.append(Victim([info], priority, is_group=name is not None))
                continue
            key = f"podgroup/{group.key}"
            if key in seen:
                continue
            seen.add(key)
            scheduled = self.pod_groups.state(group.metadata.namespace, group.metadata.name).scheduled_pods()
            pods = [by_uid[p.metadata.uid] for p in scheduled if p.metadata.uid in by_uid] or [info]
            out.append(Victim(pods, priority, is_group=True))
        return out

    async def _actuate(self, executor: Executor | None, preemptor: GroupPreemptor, held: str, pod: Pod,
                       victims: list[PodInfo]) -> None:
        """PreemptPod for each victim: the DisruptionTarget condition, then the deletion and its
        Preempted event; the group's pods wait at DefaultPreemption's PreEnqueue meanwhile. A
        failure activates them."""
        condition = f"{pod.spec.scheduler_name}: preempting to accommodate a higher priority podgroup"
        message = f"Preempted by podgroup {preemptor.uid} on node cluster"
        if executor is None:
            return
        if not await executor.preempt_victims(held, preemptor.key, victims, condition, message, pod):
            log.warning("pod-group preemption failed", extra={"podGroup": preemptor.key})
            self.handle.activate([pod])
