"""The task-leak check of tests/conftest.py, run on a small suite of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).parents[1] / "conftest.py"

SUITE = '''
import asyncio

import pytest
import pytest_asyncio


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def background():
    task = asyncio.create_task(asyncio.sleep(3600), name="session-background")
    yield task
    task.cancel()


@pytest_asyncio.fixture
async def tidy():
    task = asyncio.create_task(asyncio.sleep(3600), name="fixture-tidy")
    yield task
    task.cancel()


async def test_leaks():
    asyncio.create_task(asyncio.sleep(3600), name="forgotten")


async def test_cancels_without_awaiting():
    async def nested():
        async with asyncio.TaskGroup() as tg:
            tg.create_task(asyncio.sleep(3600))

    task = asyncio.create_task(nested(), name="half-stopped")
    await asyncio.sleep(0)
    task.cancel()


async def test_after_a_leak_the_loop_is_clean():
    assert not [t for t in asyncio.all_tasks() if t.get_name() in ("forgotten", "half-stopped")]


async def test_session_fixture_tasks_do_not_count(background):
    assert not background.done()


async def test_fixture_that_stops_its_task(tidy):
    assert not tidy.done()


async def test_a_task_that_ends_in_one_turn():
    asyncio.create_task(asyncio.sleep(0))


def test_sync():
    pass
'''


def test_a_test_that_leaves_tasks_pending_fails(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = session\n"
                     "asyncio_default_test_loop_scope = session\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=7, errors=2)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_leaks*",
        "the test left 1 asyncio task(s) pending (cancelled now)*",
        "  - forgotten running sleep",
        "*ERROR at teardown of test_cancels_without_awaiting*",
        "  - half-stopped running *nested",
    ])
