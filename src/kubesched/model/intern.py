"""One copy of what many pods repeat, instead of one per pod.

msgspec makes new objects for every value it decodes, so 50,000 pods of one Deployment hold 50,000
copies of "bench", "ReplicaSet", "Running", their tolerations, their containers, their conditions
and a dozen empty lists and dicts (~3 KB a pod of ~5.4: measured by bench/list_decode.py).
`share_pod` replaces, in place, each such part that equals the same part of the pod decoded before
it with that pod's copy, and a few strings with a table's copy. What a reader sees is unchanged:
decoded objects are never mutated here (changes are made with msgspec.structs.replace), so equal
parts may be one object.

Both are bounded: one previous pod, and a string table that starts over when full, so strings
unique to one pod cannot grow it without end under churn (sys.intern is not used: since Python
3.12 the strings it interns are immortal, a leak under churn).
"""

from __future__ import annotations

from typing import Any

from kubesched.model.objects import Pod

MAX_STRINGS = 1 << 16


class PodSharer:
    """Unrolled field by field, not looped over field names: it runs once for every pod listed
    or watched, and getattr/setattr by name cost more than the compares."""

    __slots__ = ("_max", "_prev", "strings")

    def __init__(self, max_strings: int = MAX_STRINGS) -> None:
        self.strings: dict[str, str] = {}
        self._max = max_strings
        self._prev: Pod | None = None

    def __call__(self, pod: Pod) -> Pod:
        strings = self.strings
        if len(strings) >= self._max:
            strings.clear()  # the bound, checked once a pod: a few strings over it are harmless
        one = strings.setdefault
        meta, spec, status = pod.metadata, pod.spec, pod.status
        v: Any = meta.namespace
        meta.namespace = one(v, v)
        if (v := meta.creation_timestamp) is not None:
            meta.creation_timestamp = one(v, v)
        v = spec.node_name
        spec.node_name = one(v, v)
        v = spec.scheduler_name
        spec.scheduler_name = one(v, v)
        v = spec.restart_policy
        spec.restart_policy = one(v, v)
        if (v := spec.preemption_policy) is not None:
            spec.preemption_policy = one(v, v)
        v = status.phase
        status.phase = one(v, v)
        if (v := status.start_time) is not None:
            status.start_time = one(v, v)
        prev = self._prev
        self._prev = pod
        if prev is None:
            return pod
        p: Any = prev.metadata
        if meta.labels == p.labels:
            meta.labels = p.labels
        if meta.annotations == p.annotations:
            meta.annotations = p.annotations
        if meta.owner_references == p.owner_references:
            meta.owner_references = p.owner_references
        p = prev.spec
        if spec.tolerations == p.tolerations:
            spec.tolerations = p.tolerations
        if spec.containers == p.containers:
            spec.containers = p.containers
        if spec.node_selector == p.node_selector:
            spec.node_selector = p.node_selector
        if spec.init_containers == p.init_containers:
            spec.init_containers = p.init_containers
        if spec.overhead == p.overhead:
            spec.overhead = p.overhead
        if spec.scheduling_gates == p.scheduling_gates:
            spec.scheduling_gates = p.scheduling_gates
        if spec.topology_spread_constraints == p.topology_spread_constraints:
            spec.topology_spread_constraints = p.topology_spread_constraints
        if spec.volumes == p.volumes:
            spec.volumes = p.volumes
        if spec.affinity is not None and spec.affinity == p.affinity:
            spec.affinity = p.affinity
        p = prev.status
        if status.conditions == p.conditions:
            status.conditions = p.conditions
        if status.container_statuses is not None and status.container_statuses == p.container_statuses:
            status.container_statuses = p.container_statuses
        return pod


# One for the process: the pod informer's list and watch share it.
share_pod = PodSharer()
