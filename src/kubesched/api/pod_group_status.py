"""A PodGroup's status conditions, written as kube-scheduler's updatePodGroupCondition does:
apimeta.SetStatusCondition on a copy (lastTransitionTime moves only when the status flips; nothing
is sent when nothing changed), a True condition never turned back by the scheduler, and the
conditions sent as a merge patch of podgroups/{name}/status. `pod_group_conditions` decides
without I/O."""

from __future__ import annotations

import datetime as dt
import logging

import msgspec

from kubesched.api.client import MERGE_PATCH, ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.api.pod_status import rfc3339
from kubesched.model.workload import Condition, PodGroup

log = logging.getLogger(__name__)

POD_GROUPS_PATH = "/apis/scheduling.k8s.io/v1beta1"


def pod_group_conditions(group: PodGroup, condition: Condition, now: dt.datetime) -> list[Condition] | None:
    """The group's conditions with `condition` set, or None when nothing is to be written."""
    conditions = list(group.status.conditions)
    existing = next((i for i, c in enumerate(conditions) if c.type == condition.type), None)
    if existing is not None and conditions[existing].status == "True" and condition.status != "True":
        return None
    new = msgspec.structs.replace(condition, observed_generation=group.metadata.generation)
    if existing is None:
        conditions.append(msgspec.structs.replace(new, last_transition_time=rfc3339(now)))
        return conditions
    old = conditions[existing]
    transition = old.last_transition_time if old.status == new.status else rfc3339(now)
    new = msgspec.structs.replace(new, last_transition_time=transition)
    if new == old:
        return None
    conditions[existing] = new
    return conditions


async def write_pod_group_condition(client: ApiClient, group: PodGroup, condition: Condition) -> None:
    conditions = pod_group_conditions(group, condition, dt.datetime.now(dt.UTC))
    if conditions is None:
        return
    meta = group.metadata
    path = f"{POD_GROUPS_PATH}/namespaces/{meta.namespace}/podgroups/{meta.name}/status"
    body = {"status": {"conditions": [msgspec.to_builtins(c) for c in conditions]}}
    try:
        resp = await client.request("PATCH", path, body=body, content_type=MERGE_PATCH)
    except ApiConnectionError as exc:
        log.error("Failed to update PodGroup status", extra={"podGroup": group.key, "detail": str(exc)})
        return
    if not resp.ok:
        error = ApiError.from_response(resp.status, resp.body, method="PATCH", path=path)
        log.error("Failed to update PodGroup status", extra={"podGroup": group.key, "detail": str(error)})
