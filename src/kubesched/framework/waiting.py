"""Pods held at Permit (kube-scheduler's waiting_pods_map.go): each waits until every plugin that
said Wait allows it, one rejects it, or a plugin's timeout passes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from kubesched.framework.status import Code, Status

# kube-scheduler caps a Permit plugin's timeout at 15 minutes.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class WaitingPod:
    def __init__(self, uid: str, key: str, timeouts: dict[str, float]) -> None:
        self.uid = uid
        self.key = key
        self.pending = set(timeouts)
        self._result: asyncio.Future[Status | None] = asyncio.get_running_loop().create_future()
        self._timers = [asyncio.get_running_loop().call_later(min(t, MAX_PERMIT_TIMEOUT), self._timed_out, name, t)
                        for name, t in timeouts.items()]

    def allow(self, plugin: str) -> None:
        self.pending.discard(plugin)
        if not self.pending:
            self._finish(None)

    def reject(self, plugin: str, message: str) -> None:
        self._finish(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def _timed_out(self, plugin: str, timeout: float) -> None:
        self.reject(plugin, f"rejected due to timeout after waiting {_duration(timeout)} at plugin {plugin}")

    def _finish(self, status: Status | None) -> None:
        if not self._result.done():
            self._result.set_result(status)
            for timer in self._timers:
                timer.cancel()

    async def wait(self) -> Status | None:
        return await self._result


def _duration(seconds: float) -> str:
    # Go's time.Duration.String() for whole and fractional seconds, e.g. 10s, 1.5s, 15m0s.
    if seconds >= 60:
        m, s = divmod(seconds, 60)
        return f"{int(m)}m{s:g}s"
    return f"{seconds:g}s"


class WaitingPods:
    """The pods waiting at Permit, by uid; plugins reach them through the handle."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, pod: WaitingPod) -> None:
        self._pods[pod.uid] = pod

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
