"""DefaultPreemption's writes for a chosen candidate (kube-scheduler v1.37.2 preemption/executor.go,
prepareCandidateAsync and PreemptPod, single pods): clear the nominations of lower-priority pods
on the node, then give each victim the DisruptionTarget condition and delete it (with the Preempted
event), all but the last at once, then the last. They run in the background through the handle's
`spawn` port. A write that fails stops the ones not started yet, leaves the last victim, and
activates the preemptor through the handle (kube-scheduler's Activate when its goroutine ends in
error): no deletion event would come to move it.

The preemptor is held back at PreEnqueue (IsPodRunningPreemption) from the PostFilter on, before
the failure handler requeues it, until the informer has its last victim terminating or gone:
earlier, a new cycle would find the same victims and preempt them again. kube-scheduler lets it go
when its deletion calls return, a moment before its informer has the last deletion; here that
moment can be long, the informer's events waiting behind the cycles on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from kubesched.framework.handle import Handle
from kubesched.framework.status import Code
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod

# Victims preempted at once (kube-scheduler's default parallelism, its Parallelizer's workers).
PARALLELISM = 16
# Past this many held preemptors, forget those whose preemption is over.
_RUNNING_KEEP = 1000

log = logging.getLogger(__name__)


@dataclass
class Candidate:
    """A node and the pods to evict there, most important first."""

    name: str
    victims: list[PodInfo]
    num_pdb_violations: int = 0


def coscheduling_hold(namespace: str, group: str) -> str:
    """The key a Coscheduling group's pods wait on while it preempts (its PodGroup is scheduler-plugins',
    which this plugin does not read; its pods name it by label)."""
    return f"scheduling.x-k8s.io/{namespace}/{group}"


class Executor:
    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        # Victims deleted here (uids), standing in for their DisruptionTarget condition.
        self.preempted: set[str] = set()
        # Preemptors held back (uid -> the last victim's key once its turn came).
        self.running: dict[str, str | None] = {}

    def running_preemption(self, uid: str) -> bool:
        """IsPodRunningPreemption; a preemption found over is forgotten."""
        if uid not in self.running:
            return False
        if self._done(self.running[uid]):
            del self.running[uid]
            return False
        return True

    def _done(self, last: str | None) -> bool:
        """Whether a preemption whose last victim is `last` (None: not its turn yet) is over."""
        if last is None:
            return False
        victim = self.handle.pods.get(last)
        return victim is None or victim.metadata.deletion_timestamp is not None

    def actuate(self, preemptor: Pod, candidate: Candidate) -> None:
        uid = preemptor.metadata.uid
        key = f"{preemptor.metadata.namespace}/{preemptor.metadata.name}"
        self.handle.victims_chosen(len(candidate.victims))
        # Lower-priority pods nominated to the node lose their nomination: the room is this pod's.
        prio = preemptor.spec.priority
        demoted = [pi.pod for pi in self.handle.nominator.nominated_pods_for_node(candidate.name)
                   if pi.pod.spec.priority < prio]
        if any(v.pod.metadata.deletion_timestamp is None for v in candidate.victims):
            # Held from now on, as kube-scheduler marks the preemptor before it starts the goroutine:
            # the writes start only after the cycle.
            if len(self.running) > _RUNNING_KEEP:
                self.running = {u: last for u, last in self.running.items() if not self._done(last)}
            self.running[uid] = None
        self.handle.spawn(self.write(preemptor, candidate, demoted), f"preemption/{key}")
        log.info("preempting", extra={"pod": key, "node": candidate.name, "uid": uid,
                                      "victims": [v.key for v in candidate.victims],
                                      "pdb_violations": candidate.num_pdb_violations})

    async def write(self, preemptor: Pod, candidate: Candidate, demoted: Sequence[Pod] = ()) -> None:
        """prepareCandidateAsync: when some victim is not terminating yet, clear the nominations of
        lower-priority pods on the node, then PreemptPod for each victim not already terminating:
        the DisruptionTarget condition, then the deletion with the Preempted event (the preemptor's
        nomination is the failure handler's). A failed write leaves the last victim alone and
        activates the preemptor, which else could wait in unschedulablePods for an event that never
        comes (kube-scheduler's Activate when the goroutine ends in error)."""
        victims = [v for v in candidate.victims if v.pod.metadata.deletion_timestamp is None]
        if not victims:
            return
        key = f"{preemptor.metadata.namespace}/{preemptor.metadata.name}"
        uid = preemptor.metadata.uid
        done = failed = False
        try:
            failed = not await self._clear_nominations(key, demoted)
            # All but the last at once (kube-scheduler's Parallelizer), then the last alone: once the
            # informer has that one terminating or gone, all of them are.
            *first, last = victims
            message = f"Preempted by pod {preemptor.metadata.uid} on node {candidate.name}"
            condition = f"{preemptor.spec.scheduler_name}: preempting to accommodate a higher priority pod"
            if not await self._preempt_all(key, first, condition, message, preemptor):
                failed = True
                return
            self.running[uid] = last.key
            done = await self._preempt_one(key, last, condition, message, preemptor)
            failed = failed or not done
        finally:
            if not done:
                # No deletion to wait for: let the preemptor try again at its next move.
                self.running.pop(uid, None)
            if failed:
                self.handle.activate((preemptor,))

    def hold(self, uid: str) -> None:
        """Mark preemptor `uid` (a pod, or a PodGroup for pod-group preemption) as preempting."""
        if len(self.running) > _RUNNING_KEEP:
            self.running = {u: last for u, last in self.running.items() if not self._done(last)}
        self.running[uid] = None

    async def preempt_victims(self, uid: str, key: str, victims: Sequence[PodInfo], condition: str, message: str,
                              preemptor: Pod) -> bool:
        """For a preemptor marked with `hold`: PreemptPod for each victim not terminating yet, all
        but the last at once, then the last, the preemptor held until that one is terminating;
        whether every victim went."""
        victims = [v for v in victims if v.pod.metadata.deletion_timestamp is None]
        done = False
        try:
            if not victims:
                return True
            *first, last = victims
            if not await self._preempt_all(key, first, condition, message, preemptor):
                return False
            self.running[uid] = last.key
            done = await self._preempt_one(key, last, condition, message, preemptor)
            return done
        finally:
            if not done:
                self.running.pop(uid, None)

    async def _clear_nominations(self, key: str, demoted: Sequence[Pod]) -> bool:
        """clearNominatedNodeName: each pod's nomination cleared, even after one failed; whether all were."""
        ok = True
        for pod in demoted:
            if not pod.status.nominated_node_name:
                continue
            s = await self.handle.nominate_pod(pod, "")
            if s is not None and s.code != Code.SUCCESS:
                ok = False
                log.warning("clearing a lower-priority nomination failed",
                            extra={"pod": key, "nominated": f"{pod.metadata.namespace}/{pod.metadata.name}",
                                   "detail": s.message()})
        return ok

    async def _preempt_all(self, key: str, victims: Sequence[PodInfo], condition: str, message: str,
                           preemptor: Pod) -> bool:
        """_preempt_one for each victim, PARALLELISM at a time; whether all went. After a failure no
        other victim is started (kube-scheduler cancels the Parallelizer's context), those under way
        finish."""
        todo = iter(victims)
        failed = False

        async def worker() -> None:
            nonlocal failed
            for v in todo:
                if failed:
                    return
                if not await self._preempt_one(key, v, condition, message, preemptor):
                    failed = True

        if len(victims) == 1:
            await worker()
            return not failed
        async with asyncio.TaskGroup() as tg:
            for i in range(min(PARALLELISM, len(victims))):
                tg.create_task(worker(), name=f"preemption/{key}/victims-{i}")
        return not failed

    async def _preempt_one(self, key: str, v: PodInfo, condition: str, message: str, preemptor: Pod) -> bool:
        """PreemptPod: the DisruptionTarget condition, then the deletion and its event; whether the
        victim is deleted (or was gone already)."""
        self.preempted.add(v.pod.metadata.uid)
        s = await self.handle.disrupt_victim(v.pod, condition)
        if s is None or s.code == Code.SUCCESS:
            s = await self.handle.delete_victim(v.pod, message, preemptor)
        if s is not None and s.code != Code.SUCCESS:
            log.warning("preempting a victim failed", extra={"pod": key, "victim": v.key, "detail": s.message()})
            return False
        return True
