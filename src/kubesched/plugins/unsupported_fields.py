"""UnsupportedPodFields: a pod that needs a plugin kubesched does not have yet stays Pending.

Placing a pod that uses such fields as if they were not there would be a silent wrong decision: a
pod on a node its volume cannot reach, say. So this PreFilter rejects such a pod as
UnschedulableAndUnresolvable, naming every such field with its path; the pod gets
PodScheduled=False and a FailedScheduling event saying why.

No field is left: VolumeBinding evaluates `persistentVolumeClaim` and `ephemeral` volumes (an
ephemeral volume is the claim <pod>-<volume> the ephemeral-volume controller creates),
DynamicResources DRA's `spec.resourceClaims` (and the `resources.claims` naming them), as
InterPodAffinity and PodTopologySpread evaluate pod affinity and topologySpreadConstraints. A
profile that disables one of those plugins places such pods as if the fields were absent, as
kube-scheduler does. `ignoredFields` still accepts the names it once had, so a config that names
them loads unchanged; they have nothing to ignore any more:

    pluginConfig:
      - name: UnsupportedPodFields
        args:
          ignoredFields: [resourceClaims]   # accepted, no effect
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

NAME = "UnsupportedPodFields"

PERSISTENT_VOLUME_CLAIM = "persistentVolumeClaim"
EPHEMERAL = "ephemeral"
RESOURCE_CLAIMS = "resourceClaims"
# The fields kubesched does not evaluate: none now. The names `ignoredFields` takes are the
# pod-level field's.
FIELDS: tuple[str, ...] = ()
# Names `ignoredFields` still accepts although their plugin now evaluates them.
RETIRED_FIELDS = (PERSISTENT_VOLUME_CLAIM, EPHEMERAL, RESOURCE_CLAIMS)

# Pods already warned about in ignore mode; bounded, since a deleted pod never says goodbye here.
_MAX_WARNED = 10_000

log = logging.getLogger(__name__)


def unsupported_fields(pod: Pod) -> list[tuple[str, str]]:
    """(field name, path) of every field of the pod that kubesched would not evaluate, in spec
    order: none since DynamicResources evaluates resource claims."""
    return []


def reason(paths: Sequence[str]) -> str:
    # One reason for all the fields: the message then reads as one sentence, and a user who fixes
    # one field still sees the others.
    listed = paths[0] if len(paths) == 1 else f"{', '.join(paths[:-1])} and {paths[-1]}"
    return f"pod uses {listed}, which kubesched does not evaluate yet"


class UnsupportedPodFields:
    name = NAME

    # The fields are immutable once the pod exists, so no node, pod or volume event can help; only
    # the pod's own update requeues it (and the queue's periodic flush), never a hot loop.
    _EVENTS = (ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),)

    def __init__(self, ignored: frozenset[str] = frozenset()) -> None:
        unknown = sorted(ignored - set(FIELDS) - set(RETIRED_FIELDS))
        if unknown:
            raise ValueError(f"{NAME}: unknown ignoredFields {unknown}; valid: {[*FIELDS, *RETIRED_FIELDS]}")
        self.ignored = ignored
        self._warned: OrderedDict[str, None] = OrderedDict()

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return self._EVENTS

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: Snapshot) -> tuple[PreFilterResult | None, Status | None]:
        found = unsupported_fields(pod.pod)
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


def new(args: Mapping[str, Any]) -> UnsupportedPodFields:
    return UnsupportedPodFields(frozenset(args.get("ignoredFields") or ()))


# UnsupportedPodFieldsArgs (kubesched's own): which of FIELDS to place as if absent.
def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    check_fields(raw, path, ("ignoredFields",), errs)
    ignored: list[str] = []
    for i, name in get_str_items(raw, "ignoredFields", path, errs):
        p = index(child(path, "ignoredFields"), i)
        if name not in FIELDS and name not in RETIRED_FIELDS:
            errs.append(e.unsupported(p, name, (*FIELDS, *RETIRED_FIELDS)))
        elif name in ignored:
            errs.append(e.duplicate(p, name))
        else:
            ignored.append(name)
    return {"ignoredFields": ignored}
