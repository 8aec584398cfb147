"""The PodScheduled=False condition, written the way kube-scheduler's updatePod does it.

kube-scheduler builds the new status (podutil.UpdatePodCondition: lastTransitionTime moves only
when the status flips; nothing is sent when status, reason and message are unchanged), clears
status.nominatedNodeName when the failure carries no nomination (clearNominatedNode, always so
without preemption), and sends the two-way strategic merge patch of old vs. new status to
pods/{name}/status. `pod_scheduled_patch` computes that patch without I/O.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

import orjson

from kubesched.api.client import STRATEGIC_MERGE_PATCH, ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.model.objects import Pod

log = logging.getLogger(__name__)

POD_SCHEDULED = "PodScheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
# client-go's retry.DefaultBackoff: 4 steps from 10 ms, x5.
_RETRY_DELAYS = (0.01, 0.05, 0.25)


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_scheduled_patch(
    pod: Pod,
    reason: str,
    message: str,
    now: dt.datetime,
    *,
    clear_nominated_node: bool = True,
    nominated_node: str = "",
) -> bytes | None:
    """The strategic merge patch for PodScheduled=False/<reason>/<message>; None if nothing changes.
    `nominated_node` (preemption's nomination) sets status.nominatedNodeName in the same patch;
    otherwise it is cleared unless `clear_nominated_node` is False."""
    status = _condition_patch(pod, POD_SCHEDULED, "False", reason, message, now)
    if nominated_node:
        if pod.status.nominated_node_name != nominated_node:
            status["nominatedNodeName"] = nominated_node
    elif clear_nominated_node and pod.status.nominated_node_name:
        status["nominatedNodeName"] = None
    if not status:
        return None
    return orjson.dumps({"status": status})


def _condition_patch(pod: Pod, ctype: str, value: str, reason: str, message: str,
                     now: dt.datetime) -> dict[str, Any]:
    """The status part of the two-way merge patch podutil.UpdatePodCondition makes: the condition's
    changed fields (lastTransitionTime only when its status flips), {} when nothing changes."""
    conditions = pod.status.conditions
    old = next((c for c in conditions if c.type == ctype), None)
    generation = pod.metadata.generation
    status: dict[str, Any] = {}

    if old is None:
        entry: dict[str, Any] = {
            "lastProbeTime": None,
            "lastTransitionTime": rfc3339(now),
            "message": message,
            "reason": reason,
            "status": value,
            "type": ctype,
        }
        if generation:
            entry["observedGeneration"] = generation
        order = [*(c.type for c in conditions), ctype]
    else:
        same = old.status == value and old.reason == reason and old.message == message
        entry = {"type": ctype}
        if not same:
            if old.status != value:
                entry["status"] = value
                entry["lastTransitionTime"] = rfc3339(now)
            if old.reason != reason:
                entry["reason"] = reason
            if old.message != message:
                entry["message"] = message
            if old.observed_generation != generation:
                entry["observedGeneration"] = generation or None
        order = [c.type for c in conditions]
    if len(entry) > 1:
        status["$setElementOrder/conditions"] = [{"type": t} for t in order]
        status["conditions"] = [entry]
    return status


DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def disruption_target_patch(pod: Pod, message: str, now: dt.datetime) -> bytes | None:
    """The patch for a preemption victim's DisruptionTarget=True/PreemptionByScheduler/<message>
    condition (kube-scheduler's PreemptPod); None if it is there already."""
    status = _condition_patch(pod, DISRUPTION_TARGET, "True", REASON_PREEMPTION_BY_SCHEDULER, message, now)
    if not status:
        return None
    return orjson.dumps({"status": status})


async def patch_pod_status(client: ApiClient, namespace: str, name: str, patch: bytes) -> None:
    """PATCH pods/{name}/status, retrying conflicts and transient failures briefly."""
    path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
    for delay in (*_RETRY_DELAYS, None):
        try:
            resp = await client.request("PATCH", path, body=patch, content_type=STRATEGIC_MERGE_PATCH)
        except ApiConnectionError:
            if delay is None:
                raise
        else:
            if resp.ok:
                return
            if resp.status not in (409, 429, 500, 503, 504) or delay is None:
                raise ApiError.from_response(resp.status, resp.body, method="PATCH", path=path)
        await asyncio.sleep(delay)


async def set_pod_unschedulable(
    client: ApiClient,
    pod: Pod,
    message: str,
    reason: str = REASON_UNSCHEDULABLE,
    *,
    clear_nominated_node: bool = True,
    nominated_node: str = "",
) -> bool:
    """Write the condition (full message, never truncated); False when nothing needed writing.
    A pod deleted meanwhile (404) is not an error."""
    patch = pod_scheduled_patch(
        pod, reason, message, dt.datetime.now(dt.UTC), clear_nominated_node=clear_nominated_node,
        nominated_node=nominated_node,
    )
    if patch is None:
        return False
    try:
        await patch_pod_status(client, pod.metadata.namespace, pod.metadata.name, patch)
    except ApiError as e:
        if e.status == 404:
            return False
        raise
    return True


# How long a condition the apiserver could not take waits before it is sent again.
CONDITION_RETRY_SECONDS = 2.0


class ConditionWriter:
    """Writes PodScheduled conditions off the scheduling path: `submit` never waits; a few
    workers send; a pod submitted again before its turn keeps only its latest message."""

    def __init__(self, client: ApiClient, workers: int = 4) -> None:
        self.client = client
        self._workers = workers
        # uid -> (pod, message, reason, nomination); message None: the nomination only.
        self._pending: dict[str, tuple[Pod, str | None, str, str | None]] = {}
        self._ready: asyncio.Queue[str] = asyncio.Queue()
        self._sending: dict[str, asyncio.Event] = {}
        self.written = 0
        self.failed = 0
        self.retried = 0

    @property
    def pending_count(self) -> int:
        return len(self._pending) + len(self._sending)

    def submit(self, pod: Pod, message: str, reason: str = REASON_UNSCHEDULABLE,
               nominated_node: str | None = "") -> None:
        """`nominated_node`: the node preemption nominated, "" to clear status.nominatedNodeName
        (kube-scheduler's clearNominatedNode), None to leave it as it is."""
        uid = pod.metadata.uid
        if uid not in self._pending:
            self._ready.put_nowait(uid)
        self._pending[uid] = (pod, message, reason, nominated_node)

    def discard(self, uid: str, *, with_nomination: bool = False) -> None:
        """Drop a condition not sent yet: the pod is about to be bound, and a PodScheduled=False
        landing after the binding would mark a running pod unschedulable. A nomination it carried
        is still written (kube-scheduler wrote it in the failed cycle, before this one), unless
        `with_nomination`: the binding cycle writes its own."""
        pending = self._pending.get(uid)
        if pending is None:
            return
        pod, _, _, nominated = pending
        if nominated and nominated != pod.status.nominated_node_name and not with_nomination:
            self._pending[uid] = (pod, None, "", nominated)
        else:
            del self._pending[uid]

    async def settled(self, uid: str) -> None:
        """Wait until no condition for this pod is being sent, so a binding lands after it."""
        sending = self._sending.get(uid)
        if sending is not None:
            await sending.wait()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            for i in range(self._workers):
                tg.create_task(self._worker(), name=f"conditions/worker-{i}")

    async def flush(self) -> None:
        await self._ready.join()

    async def _worker(self) -> None:
        while True:
            uid = await self._ready.get()
            try:
                await self._send(uid)
            except Exception:
                self.failed += 1
                log.exception("PodScheduled condition for pod uid %s not written", uid)
            finally:
                self._ready.task_done()

    def _retry_later(self, uid: str, entry: tuple[Pod, str | None, str, str | None], error: Exception) -> None:
        """The apiserver is away (restarting, overloaded): keep the condition and send it again later,
        so that no pending pod is left without one. A newer message or a bind in between wins."""
        if uid in self._pending:
            return  # a newer message was submitted meanwhile: it is queued already
        self._pending[uid] = entry
        self.retried += 1
        if self.retried == 1 or self.retried % 100 == 0:
            log.warning("PodScheduled conditions not written yet, retrying: %s", error,
                        extra={"retried": self.retried})
        asyncio.get_running_loop().call_later(CONDITION_RETRY_SECONDS, self._requeue, uid)

    def _requeue(self, uid: str) -> None:
        if uid in self._pending:  # not discarded (bound) meanwhile
            self._ready.put_nowait(uid)

    async def _send(self, uid: str) -> None:
        # One write at a time per pod, in submission order.
        earlier = self._sending.get(uid)
        if earlier is not None:
            await earlier.wait()
        pending = self._pending.pop(uid, None)
        if pending is None:
            return
        sending = self._sending[uid] = asyncio.Event()
        try:
            pod, message, reason, nominated = pending
            if message is None:
                await self._nominate(pod, nominated or "")
            elif await set_pod_unschedulable(self.client, pod, message, reason,
                                           clear_nominated_node=nominated is not None,
                                           nominated_node=nominated or ""):
                self.written += 1
        except ApiConnectionError as e:
            self._retry_later(uid, pending, e)
        except ApiError as e:
            if e.status < 500 and e.status != 429:
                raise
            self._retry_later(uid, pending, e)
        finally:
            sending.set()
            if self._sending.get(uid) is sending:
                del self._sending[uid]

    async def _nominate(self, pod: Pod, node: str) -> None:
        try:
            await patch_pod_status(self.client, pod.metadata.namespace, pod.metadata.name,
                                   orjson.dumps({"status": {"nominatedNodeName": node}}))
            self.written += 1
        except ApiError as e:
            if e.status != 404:
                raise
