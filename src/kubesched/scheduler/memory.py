"""What the process's memory is made of, and handing freed memory back to the system.

RSS alone cannot tell a leak from fragmentation: Python objects are counted by
`sys.getallocatedblocks()`, glibc's heap by `mallinfo2()` (bytes in use versus bytes free but kept).
A scheduler streams pods, events and watch frames through its heap for weeks; glibc returns free
memory at the top of a heap only, so free chunks between long-lived objects stay in RSS until
`malloc_trim` gives their pages back (it madvises free pages anywhere in the heap since glibc 2.8).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import sys
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

TRIM_EVERY = 60.0


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
        "keepcost")]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    # musl has neither: the functions below then report nothing and trim nothing.
    if not hasattr(libc, "mallinfo2") or not hasattr(libc, "malloc_trim"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.malloc_trim.restype = ctypes.c_int
    return libc


_LIBC = _libc()


def heap_sizes() -> dict[str, int]:
    """Python's live blocks and glibc's heap: in use, free but held, and mmapped (large blocks)."""
    sizes = {"python_blocks": sys.getallocatedblocks()}
    if _LIBC is not None:
        info = _LIBC.mallinfo2()
        sizes |= {"malloc_in_use_kb": info.uordblks // 1024, "malloc_free_kb": info.fordblks // 1024,
                  "malloc_mmapped_kb": info.hblkhd // 1024}
    return sizes


def trim() -> bool:
    """Give glibc's free pages back to the system; False where there is no glibc."""
    if _LIBC is None:
        return False
    _LIBC.malloc_trim(0)
    return True


async def trim_forever(every: float = TRIM_EVERY, trimmer: Callable[[], bool] = trim,
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """Trim every `every` seconds: a few milliseconds each on a heap of hundreds of MB."""
    while True:
        await sleep(every)
        if not trimmer():
            log.debug("no glibc: memory is not trimmed")
            return
