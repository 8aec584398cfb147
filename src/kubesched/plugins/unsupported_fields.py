"""UnsupportedPodFields: a pod that needs a plugin kubesched does not have yet stays Pending.

kubesched has no VolumeBinding yet. Placing a pod that uses its fields as if the fields were not
there would be a silent wrong decision: a pod on a node its volume cannot reach. So this PreFilter
rejects such a pod as UnschedulableAndUnresolvable, naming every such field with its path; the pod
gets PodScheduled=False and a FailedScheduling event saying why. A claim VolumeBinding would pass on
every node is no such field (`needs_volume_binding`): one fully bound (volumeName set and the PV
controller's bind-completed annotation) to a PV kubesched knows that has no node affinity, and not
being deleted. VolumeRestrictions, NodeVolumeLimits and VolumeZone judge the rest of it.

    pluginConfig:
      - name: UnsupportedPodFields
        args:
          ignoredFields: [ephemeral]   # placed as if absent, with one warning per pod

Pod affinity and anti-affinity, and topologySpreadConstraints, are not among the fields:
InterPodAffinity and PodTopologySpread evaluate them. A profile that disables one of those plugins
places such pods as if the terms or constraints were absent, as kube-scheduler does.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.fields import Errors, check_fields, child, get_str_items, index
from kubesched.framework.interface import PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.model.objects import Pod
from kubesched.model.storage import ANN_BIND_COMPLETED
from kubesched.plugins.storage_lister import StorageLister, no_storage

NAME = "UnsupportedPodFields"

PERSISTENT_VOLUME_CLAIM = "persistentVolumeClaim"
EPHEMERAL = "ephemeral"
# The names `ignoredFields` accepts: the last step of each path the message names.
FIELDS = (PERSISTENT_VOLUME_CLAIM, EPHEMERAL)

# Pods already warned about in ignore mode; bounded, since a deleted pod never says goodbye here.
_MAX_WARNED = 10_000

log = logging.getLogger(__name__)


def needs_volume_binding(namespace: str, claim_name: str, storage: StorageLister) -> bool:
    """Whether VolumeBinding (which kubesched lacks yet) could reject a node for this claim: all but
    a fully bound claim, not being deleted, whose PV exists and has no node affinity."""
    claim = storage.claim(namespace, claim_name)
    if (claim is None or claim.metadata.deletion_timestamp is not None or not claim.spec.volume_name
            or ANN_BIND_COMPLETED not in claim.metadata.annotations):
        return True
    pv = storage.persistent_volume(claim.spec.volume_name)
    return pv is None or (pv.spec.node_affinity is not None and pv.spec.node_affinity.required is not None)


def unsupported_fields(pod: Pod, storage: StorageLister | None = None) -> list[tuple[str, str]]:
    """(field name, path) of every field of the pod that kubesched would not evaluate, in spec order."""
    spec = pod.spec
    lister = storage if storage is not None else no_storage()
    found: list[tuple[str, str]] = []
    for i, volume in enumerate(spec.volumes):
        claim = volume.persistent_volume_claim
        if claim is not None and needs_volume_binding(pod.metadata.namespace, claim.claim_name, lister):
            found.append((PERSISTENT_VOLUME_CLAIM, f"spec.volumes[{i}].persistentVolumeClaim"))
        if volume.ephemeral is not None:
            # An ephemeral volume is a PVC the ephemeral-volume controller creates for the pod.
            found.append((EPHEMERAL, f"spec.volumes[{i}].ephemeral"))
    return found


def reason(paths: Sequence[str]) -> str:
    # One reason for all the fields: the message then reads as one sentence, and a user who fixes
    # one field still sees the others.
    listed = paths[0] if len(paths) == 1 else f"{', '.join(paths[:-1])} and {paths[-1]}"
    return f"pod uses {listed}, which kubesched does not evaluate yet"


class UnsupportedPodFields:
    name = NAME

    # The fields are immutable once the pod exists; what can change is whether its claims are bound
    # (by the PV controller): their claim's and PV's events, and the pod's own update, requeue it.
    _EVENTS = (ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),
               ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
               ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE))

    def __init__(self, ignored: frozenset[str] = frozenset(), storage: StorageLister | None = None) -> None:
        unknown = sorted(ignored - set(FIELDS))
        if unknown:
            raise ValueError(f"{NAME}: unknown ignoredFields {unknown}; valid: {list(FIELDS)}")
        self.ignored = ignored
        self.storage: StorageLister = storage if storage is not None else no_storage()
        self._warned: OrderedDict[str, None] = OrderedDict()

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        found = unsupported_fields(pod.pod, self.storage)
        if not found:
            return None, None
        rejected = [path for field, path in found if field not in self.ignored]
        if rejected:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason(rejected))
        self._warn_once(pod.pod, [path for _, path in found])
        return None, None

    def _warn_once(self, pod: Pod, paths: list[str]) -> None:
        uid = pod.metadata.uid or pod.key
        if uid in self._warned:
            return
        self._warned[uid] = None
        if len(self._warned) > _MAX_WARNED:
            self._warned.popitem(last=False)
        log.warning("placing pod as if these fields were absent (UnsupportedPodFields ignoredFields)",
                    extra={"pod": pod.key, "fields": ", ".join(paths)})


def new(args: Mapping[str, Any], storage: StorageLister | None = None) -> UnsupportedPodFields:
    return UnsupportedPodFields(frozenset(args.get("ignoredFields") or ()), storage)


# UnsupportedPodFieldsArgs (kubesched's own): which of FIELDS to place as if absent.
def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("ignoredFields",), errs)
    ignored: list[str] = []
    for i, name in get_str_items(raw, "ignoredFields", path, errs):
        p = index(child(path, "ignoredFields"), i)
        if name not in FIELDS:
            errs.append(e.unsupported(p, name, FIELDS))
        elif name in ignored:
            errs.append(e.duplicate(p, name))
        else:
            ignored.append(name)
    return {"ignoredFields": ignored}
