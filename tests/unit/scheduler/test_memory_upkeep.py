"""Memory figures and the trim loop, with the sleep and the trimmer passed in."""

import asyncio

from kubesched.scheduler import memory


def test_heap_sizes_name_python_blocks_and_on_glibc_the_heap() -> None:
    sizes = memory.heap_sizes()
    assert sizes["python_blocks"] > 0
    if memory._LIBC is not None:
        assert sizes["malloc_in_use_kb"] > 0
        assert {"malloc_free_kb", "malloc_mmapped_kb"} <= sizes.keys()


def test_trim_runs_on_this_glibc() -> None:
    assert memory.trim() is (memory._LIBC is not None)


def test_trim_forever_trims_after_each_sleep_and_stops_without_glibc() -> None:
    slept: list[float] = []
    answers = iter([True, True, False])

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    asyncio.run(memory.trim_forever(every=60.0, trimmer=lambda: next(answers), sleep=sleep))
    assert slept == [60.0, 60.0, 60.0]
