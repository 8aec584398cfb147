"""RecordingBinder: binds through the handle, as DefaultBinder does, and records and logs each bind.

Enable it at `bind` with DefaultBinder disabled. Its factory takes the handle: the plugin never sees
an API client, only the port that POSTs the pod's Binding.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubesched.framework import CycleState, Handle, PodInfo, Status

NAME = "RecordingBinder"
log = logging.getLogger(__name__)


class RecordingBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self.bound: list[tuple[str, str]] = []  # (namespace/name, node)

    async def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        status = await self._handle.bind_pod(pod.pod, node_name)
        if status is None:
            self.bound.append((pod.key, node_name))
            log.info("RecordingBinder bound the pod", extra={"pod": pod.key, "node": node_name})
        return status


def new(args: Mapping[str, Any], handle: Handle) -> RecordingBinder:
    return RecordingBinder(handle)
