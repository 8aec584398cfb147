"""Named background tasks whose failures are logged, never lost (kopf's aiotasks, in small)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


def _report(task: asyncio.Task[Any]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.error("background task %r failed", task.get_name(), exc_info=exc)


def create_guarded_task(coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
    task = asyncio.get_running_loop().create_task(coro, name=name)
    task.add_done_callback(_report)
    return task


class TaskSet:
    """Owns a group of named tasks: keeps them referenced, logs failures, stops them together."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = create_guarded_task(coro, name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    async def wait(self, grace: float | None = None) -> None:
        """Let running tasks finish (e.g. in-flight binds on SIGTERM)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)

    async def cancel(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
