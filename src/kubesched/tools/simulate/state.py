"""The snapshot file `kubesched snapshot` writes and `simulate --snapshot` reads: versioned JSON
with one list per kind (sources.KINDS, by API plural), each object as kubesched's slim type keeps it
(the fields the scheduler reads, in the API's own JSON names)::

    {"apiVersion": "kubesched.io/v1alpha1", "kind": "ClusterSnapshot", "formatVersion": 1,
     "server": "https://...", "createdAt": "2026-12-01T12:00:00Z",
     "objects": {"nodes": [...], "pods": [...], "jobs": [...], ...}}

Pod groups ride along where the cluster has them: "podgroups" (scheduling.k8s.io/v1beta1, read with
the GenericWorkload gate on) and "copodgroups" (scheduler-plugins' scheduling.x-k8s.io PodGroups,
read when the config names Coscheduling): both APIs call them podgroups, so the file tells them
apart by key. A kind missing from the file is empty. A kind this kubesched does not know (a newer file) is
reported and left out; a newer formatVersion is refused, an older one read as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from kubesched.model.coscheduling import CoPodGroup
from kubesched.model.decode import drop_nulls
from kubesched.model.workload import PodGroup
from kubesched.scheduler.sources import KINDS, StaticSources

API_VERSION = "kubesched.io/v1alpha1"
KIND = "ClusterSnapshot"
FORMAT_VERSION = 1
# Not informer kinds of every scheduler (sources.KINDS), but what simulate places groups by.
GROUP_KINDS: dict[str, type] = {"podgroups": PodGroup, "copodgroups": CoPodGroup}
FILE_KINDS: dict[str, type] = {**KINDS, **GROUP_KINDS}


class SnapshotError(ValueError):
    """A snapshot file that cannot be read; the message names the file, the field and what is valid."""


@dataclass
class ClusterState:
    objects: dict[str, list[Any]]
    server: str = ""
    created_at: str = ""
    ignored_kinds: list[str] = field(default_factory=list)

    def sources(self) -> StaticSources:
        return StaticSources(self.objects)


def encode(state: ClusterState) -> bytes:
    doc = {"apiVersion": API_VERSION, "kind": KIND, "formatVersion": FORMAT_VERSION, "server": state.server,
           "createdAt": state.created_at,
           "objects": {**{plural: state.objects.get(plural, []) for plural in KINDS},
                       **{plural: state.objects[plural] for plural in GROUP_KINDS if plural in state.objects}}}
    return msgspec.json.format(msgspec.json.encode(doc), indent=1) + b"\n"


def decode(raw: bytes, source: str = "the snapshot") -> ClusterState:
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError as e:
        raise SnapshotError(f"{source}: not JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise SnapshotError(f"{source}: kind must be {KIND!r} (a file written by `kubesched snapshot`)")
    version = doc.get("formatVersion")
    if not isinstance(version, int) or not 1 <= version <= FORMAT_VERSION:
        raise SnapshotError(f"{source}: formatVersion {version!r} is not one this kubesched reads "
                            f"(1..{FORMAT_VERSION}); a newer kubesched wrote it")
    objects = doc.get("objects")
    if not isinstance(objects, Mapping):
        raise SnapshotError(f"{source}: objects must be a map of kind (API plural) to a list")
    state = ClusterState({}, str(doc.get("server") or ""), str(doc.get("createdAt") or ""))
    for plural, items in objects.items():
        type_ = FILE_KINDS.get(plural)
        if type_ is None:
            state.ignored_kinds.append(plural)
            continue
        if not isinstance(items, list):
            raise SnapshotError(f"{source}: objects.{plural} must be a list")
        decoded: list[Any] = []
        for i, item in enumerate(items):
            try:
                decoded.append(msgspec.convert(drop_nulls(item), type_))
            except msgspec.ValidationError as e:
                raise SnapshotError(f"{source}: objects.{plural}[{i}]: {e}") from None
        state.objects[plural] = decoded
    return state
