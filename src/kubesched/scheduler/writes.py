"""The write ports the framework's Handle hands to plugins (kube-scheduler's handle.ClientSet uses):
bind a pod, set or clear its nominated node, mark and delete a preemption victim, write a PV's
claimRef and a claim's annotations, and DynamicResources' ResourceClaim writes
(api/resource_claims.py). Each answers with a Status instead of raising, so a plugin
decides what a failure means; none of them is reachable from a plugin except through the Handle."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable
from typing import TypeVar

import orjson

from kubesched.api import ApiClient, Binder, BindResult, EventRecorder, volumes
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.api.pod_status import disruption_target_patch, patch_pod_status
from kubesched.api.resource_claims import ResourceClaimApi
from kubesched.framework.status import Code, Status
from kubesched.model.objects import Pod
from kubesched.model.storage import PersistentVolume, PersistentVolumeClaim

W = TypeVar("W")


class ApiWrites:
    """The ports, on the scheduler's API client, binder and event recorder."""

    def __init__(self, client: ApiClient, binder: Binder, events: EventRecorder) -> None:
        self.client = client
        self.binder = binder
        self.events = events
        # Pods (by uid) whose Binding the apiserver refused as already bound (409) or gone (404): the
        # binding cycle then leaves them to the informer instead of retrying (see Cycles).
        self._bound_or_gone: set[str] = set()
        # DynamicResources' claim writes (the handle's resource_claims port).
        self.resource_claims = ResourceClaimApi(client)

    def bound_or_gone(self, uid: str) -> bool:
        """Whether the bind port's last answer for this pod was 409 or 404 (asked once: forgets it)."""
        if uid in self._bound_or_gone:
            self._bound_or_gone.discard(uid)
            return True
        return False

    async def bind_pod(self, pod: Pod, node: str) -> Status | None:
        """The binding port, for DefaultBinder."""
        meta = pod.metadata
        outcome = await self.binder.bind(meta.namespace, meta.name, meta.uid, node)
        if outcome.ok:
            return None
        if outcome.result in (BindResult.CONFLICT, BindResult.NOT_FOUND):
            self._bound_or_gone.add(meta.uid)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, outcome.message)
        return Status(Code.ERROR, outcome.message)

    async def nominate_pod(self, pod: Pod, node: str) -> Status | None:
        """The nomination port: status.nominatedNodeName set, or cleared with ""."""
        body = {"status": {"nominatedNodeName": node or None}}
        try:
            await patch_pod_status(self.client, pod.metadata.namespace, pod.metadata.name, orjson.dumps(body))
        except (ApiError, ApiConnectionError) as e:
            return Status(Code.ERROR, str(e))
        return None

    async def disrupt_victim(self, pod: Pod, message: str) -> Status | None:
        """The DisruptionTarget port: the condition kube-scheduler adds before deleting a victim; a
        victim already gone (404) is not an error."""
        patch = disruption_target_patch(pod, message, dt.datetime.now(dt.UTC))
        if patch is None:
            return None
        try:
            await patch_pod_status(self.client, pod.metadata.namespace, pod.metadata.name, patch)
        except ApiError as e:
            if e.status == 404:
                return None
            return Status(Code.ERROR, e.message)
        except ApiConnectionError as e:
            return Status(Code.ERROR, str(e))
        return None

    async def write_volume(self, pv: PersistentVolume) -> PersistentVolume | Status:
        """The PV port (VolumeBinding's PreBind): the PV's claimRef and annotations written."""
        return await _written(volumes.write_volume(self.client, pv))

    async def write_claim(self, pvc: PersistentVolumeClaim) -> PersistentVolumeClaim | Status:
        """The claim port (VolumeBinding's PreBind): the claim's annotations written."""
        return await _written(volumes.write_claim(self.client, pvc))

    async def delete_victim(self, pod: Pod, message: str, preemptor: Pod | None = None) -> Status | None:
        """The preemption port: delete the victim by name, with no precondition, as kube-scheduler's
        util.DeletePod does, and say why in an event, from the preemptor's profile; a victim already
        gone gets none (kube-scheduler's PreemptPod).
        kube-scheduler names the preemptor as the event's related object, but its events.k8s.io
        recorder cannot make a reference of an informer's pod (no kind), so the event it writes has
        none; neither has this one."""
        meta = pod.metadata
        body = {"kind": "DeleteOptions", "apiVersion": "v1"}
        resp = await self.client.request("DELETE", f"/api/v1/namespaces/{meta.namespace}/pods/{meta.name}",
                                         body=body)
        if resp.status == 404:
            return None
        if not resp.ok:
            return Status(Code.ERROR, ApiError.from_response(resp.status, resp.body).message)
        controller = preemptor.spec.scheduler_name if preemptor is not None else None
        self.events.eventf(pod, "Normal", "Preempted", "Preempting", message, controller)
        return None


async def _written(write: Awaitable[W]) -> W | Status:
    """What a write returned, or an Error status with the apiserver's message."""
    try:
        return await write
    except ApiError as e:
        return Status(Code.ERROR, e.message or str(e))
    except ApiConnectionError as e:
        return Status(Code.ERROR, str(e))
