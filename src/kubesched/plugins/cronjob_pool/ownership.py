"""Who controls a pod: its controller chain (Pod -> Job -> CronJob), read from a Job informer's store.

Never an API call per pod: the plugin is given a `JobLookup` (the lead wires it to the Job informer,
see `InformerJobs`). The decisions, as documented for users:

- The pod's controller ownerReference (controller: true) names its first owner; other owner
  references do not count. Kinds are compared by name only.
- A Job whose own controller is a CronJob makes the chain (Job, CronJob).
- A Job made with `kubectl create job --from=cronjob/x` counts as made by that CronJob: kubectl
  v1.37 gives it a controller reference to the CronJob anyway, and older kubectl releases or hand-made
  copies carry only the annotation `cronjob.kubernetes.io/instantiate: manual`, which is honoured too.
  Users expect it to run where the CronJob's runs.
- The pod's Job is not in the store: either the informer has not seen it yet (the Job controller
  creates the Job before its pods, but the two watches race) or it was deleted. Until the Job
  informer has synced, and for `ownerWaitSeconds` after the pod's creation, the answer is `Waiting`:
  the plugin keeps the pod Unschedulable ("waiting for the pod's owner Job ns/name"), so it is never
  placed as a non-pool pod by mistake, and the Job's Add event moves it back to the active queue.
  After that the Job is taken as gone and the chain stops at (Job,): a pending pod whose Job is gone is
  being garbage-collected, or was orphaned on purpose, and nothing on the pod names a CronJob (the
  `batch.kubernetes.io/job-name` and `controller-uid` labels repeat the ownerReference; guessing from
  the `<cronjob>-<minutes>` Job name would misplace plain Jobs named like that).
- A Job in the store with the same name but another uid than the pod's reference replaced the pod's
  Job: the pod's Job is gone, with no waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from kubesched.model.objects import Job, ObjectMeta, OwnerReference, Pod

MANUAL_INSTANTIATE_ANNOTATION = "cronjob.kubernetes.io/instantiate"
MANUAL_INSTANTIATE_VALUE = "manual"
JOB = "Job"
CRONJOB = "CronJob"

Clock = Callable[[], float]


class JobLookup(Protocol):
    """The Jobs the scheduler knows, by namespace and name (the Job informer's store)."""

    @property
    def has_synced(self) -> bool: ...

    def get(self, namespace: str, name: str) -> Job | None: ...


class KeyedStore(Protocol):
    """What an informer offers: objects by "namespace/name" key, and whether the first list is in."""

    @property
    def has_synced(self) -> bool: ...

    def get(self, key: str) -> Job | None: ...


class InformerJobs:
    """A JobLookup over an informer (`kubesched.api.informer.job_informer(...)`), read at each call,
    so a re-list that replaces the informer's store is seen at once."""

    __slots__ = ("_store",)

    def __init__(self, store: KeyedStore) -> None:
        self._store = store

    @property
    def has_synced(self) -> bool:
        return self._store.has_synced

    def get(self, namespace: str, name: str) -> Job | None:
        return self._store.get(f"{namespace}/{name}")


class StaticJobs:
    """A fixed set of Jobs (tests, `explain`/`simulate` on recorded objects); synced from the start."""

    __slots__ = ("_jobs",)

    def __init__(self, jobs: list[Job] | tuple[Job, ...] = ()) -> None:
        self._jobs = {(j.metadata.namespace, j.metadata.name): j for j in jobs}

    @property
    def has_synced(self) -> bool:
        return True

    def get(self, namespace: str, name: str) -> Job | None:
        return self._jobs.get((namespace, name))


@dataclass(frozen=True)
class Waiting:
    """The pod's Job is not known yet: no decision can be made for it."""

    namespace: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


OwnerChain = tuple[str, ...]


def controller_of(meta: ObjectMeta) -> OwnerReference | None:
    for ref in meta.owner_references:
        if ref.controller:
            return ref
    return None


def _job_parent(job: Job) -> OwnerChain:
    ref = controller_of(job.metadata)
    if ref is not None:
        return (ref.kind,)
    if job.metadata.annotations.get(MANUAL_INSTANTIATE_ANNOTATION) == MANUAL_INSTANTIATE_VALUE:
        return (CRONJOB,)
    return ()


def _created_at(pod: Pod) -> float | None:
    stamp = pod.metadata.creation_timestamp
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def owner_chain(pod: Pod, jobs: JobLookup, *, depth: int, wait_seconds: float,
                clock: Clock = time.time) -> OwnerChain | Waiting:
    """The kinds of the pod's controller chain, from the pod up, at most `depth` long.

    Only a Job's controller is looked up (depth 2); a chain through any other kind stops at it."""
    ref = controller_of(pod.metadata)
    if ref is None or depth <= 0:
        return ()
    if depth == 1 or ref.kind != JOB:
        return (ref.kind,)
    ns = pod.metadata.namespace
    job = jobs.get(ns, ref.name)
    if job is not None:
        if not ref.uid or not job.metadata.uid or job.metadata.uid == ref.uid:
            return (JOB, *_job_parent(job))
        return (JOB,)  # a namesake replaced the pod's Job
    if not jobs.has_synced:
        return Waiting(ns, ref.name)
    created = _created_at(pod)
    # No creation time (never so from an apiserver) gives no bound to wait for: take the Job as gone.
    if created is not None and clock() - created < wait_seconds:
        return Waiting(ns, ref.name)
    return (JOB,)
