"""Fixtures for every test: an async test that leaves asyncio tasks running fails.

pytest-asyncio runs all tests and fixtures on one session-wide event loop, so a task a test forgets
(an informer, a binder worker, a sleep it never awaited) would go on running into later tests,
where it fails or interferes far from its cause. Tasks that were pending before the test started
(those of session- or module-scoped fixtures) do not count.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

_CANCEL_WAIT_SECONDS = 5.0


def _describe(task: asyncio.Task[object]) -> str:
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", None) or repr(coro)
    return f"{task.get_name()} running {name}"


@pytest_asyncio.fixture(loop_scope="session")
async def _no_leaked_tasks() -> AsyncIterator[None]:
    before = asyncio.all_tasks()
    yield
    # Torn down after the test's other function-scoped fixtures: their tasks may be stopped there.
    await asyncio.sleep(0)  # one turn for tasks that were cancelled, or are just returning, to finish
    me = asyncio.current_task()
    leaked = [t for t in asyncio.all_tasks() - before if t is not me and not t.done()]
    if not leaked:
        return
    listed = "".join(f"\n  - {_describe(t)}" for t in sorted(leaked, key=lambda t: t.get_name()))
    for task in leaked:
        task.cancel()
    # Awaited so that they are gone before the next test; what they raise on the way out is moot.
    done, stubborn = await asyncio.wait(leaked, timeout=_CANCEL_WAIT_SECONDS)
    for task in done:
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log it as never retrieved
    note = f"; {len(stubborn)} still running {_CANCEL_WAIT_SECONDS} s after cancel()" if stubborn else ""
    pytest.fail(f"the test left {len(leaked)} asyncio task(s) pending (cancelled now{note}); cancel and "
                f"await them in the test:{listed}", pytrace=False)


@pytest.fixture(autouse=True)
def _async_tests_leak_no_tasks(request: pytest.FixtureRequest) -> None:
    """For async tests only: the check needs the event loop, which sync tests do not start."""
    if pytest_asyncio.is_async_test(request.node):
        request.getfixturevalue("_no_leaked_tasks")
