"""DefaultBinder: POST the pod's Binding through the handle (kube-scheduler's defaultbinder)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return await self._handle.bind_pod(pod.pod, node_name)


def new(args: Mapping[str, Any], handle: Handle | None = None) -> DefaultBinder:
    return DefaultBinder(handle or Handle())
