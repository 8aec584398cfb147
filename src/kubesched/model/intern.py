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

# The fields compared with the previous pod's, per struct; each is taken whole when equal.
_META = ("labels", "annotations", "owner_references")
_SPEC = ("node_selector", "affinity", "tolerations", "containers", "init_containers", "overhead",
         "scheduling_gates", "topology_spread_constraints", "volumes")
_STATUS = ("conditions", "container_statuses", "init_container_statuses")


class StringTable:
    __slots__ = ("_max", "_strings")

    def __init__(self, max_strings: int = MAX_STRINGS) -> None:
        self._strings: dict[str, str] = {}
        self._max = max_strings

    def __len__(self) -> int:
        return len(self._strings)

    def get(self, s: str) -> str:
        strings = self._strings
        shared = strings.get(s)
        if shared is not None:
            return shared
        if len(strings) >= self._max:
            strings.clear()
        strings[s] = s
        return s


def _share(obj: Any, prev: Any, fields: tuple[str, ...]) -> None:
    for f in fields:
        v, p = getattr(obj, f), getattr(prev, f)
        if v is not p and v == p:
            setattr(obj, f, p)


class PodSharer:
    __slots__ = ("_prev", "strings")

    def __init__(self, strings: StringTable | None = None) -> None:
        self.strings = strings or StringTable()
        self._prev: Pod | None = None

    def __call__(self, pod: Pod) -> Pod:
        get = self.strings.get
        meta, spec, status = pod.metadata, pod.spec, pod.status
        meta.namespace = get(meta.namespace)
        if meta.creation_timestamp is not None:
            meta.creation_timestamp = get(meta.creation_timestamp)
        spec.node_name, spec.scheduler_name = get(spec.node_name), get(spec.scheduler_name)
        spec.restart_policy = get(spec.restart_policy)
        if spec.preemption_policy is not None:
            spec.preemption_policy = get(spec.preemption_policy)
        status.phase = get(status.phase)
        if status.start_time is not None:
            status.start_time = get(status.start_time)
        prev = self._prev
        if prev is not None:
            _share(meta, prev.metadata, _META)
            _share(spec, prev.spec, _SPEC)
            _share(status, prev.status, _STATUS)
        self._prev = pod
        return pod


# One for the process: the pod informer's list and watch share it.
share_pod = PodSharer()
