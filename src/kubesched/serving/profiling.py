"""What kube-scheduler serves with profiling on (enableProfiling, --profiling), in Python's terms.

kube-scheduler installs Go's net/http/pprof under /debug/pprof/ and a PUT handler for its log
verbosity at /debug/flags/v (k8s.io/apiserver pkg/server/routes, profiling.go and flags.go). Go's
profiles do not exist here, so under the same paths kubesched serves what Python has:

  /debug/pprof            302 to /debug/pprof/
  /debug/pprof/           an index of the two below
  /debug/pprof/profile    a CPU profile of the event loop's thread for ?seconds=N (default 30, as Go's),
                          taken with cProfile: pstats data (`python -m pstats FILE`, snakeviz), or
                          a text table sorted by cumulative time with ?format=text
  /debug/pprof/goroutine  the stack of every asyncio task and thread, as text
  /debug/pprof/<other>    404 "Unknown profile" (heap, allocs, block, mutex, threadcreate, trace, ...)
  /debug/flags/v          PUT N: the log verbosity, as --v=N would set it (Go's replies)
"""

from __future__ import annotations

import asyncio
import cProfile
import html
import io
import marshal
import pstats
import sys
import threading
import traceback
from collections.abc import Callable

from aiohttp import web

PROFILE_SECONDS = 30  # Go's default for /debug/pprof/profile
MAX_UINT32 = (1 << 32) - 1
_TEXT_ROWS = 200

# One CPU profile at a time in the process, whichever port asked for it (cProfile hooks the thread).
_profiling = threading.Lock()


def _plain(status: int, text: str) -> web.Response:
    """routes.writePlainText: the text and a newline."""
    return web.Response(status=status, body=(text + "\n").encode(), content_type="text/plain",
                        headers={"X-Content-Type-Options": "nosniff"})


def go_quote(text: str) -> str:
    """Go's %q for what a request body may hold."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + escaped.replace("\t", "\\t") + '"'


def parse_verbosity(text: str) -> int:
    """strconv.ParseUint(text, 10, 32), with its error text; raises ValueError."""
    if not text.isascii() or not text.isdigit():
        raise ValueError(f"strconv.ParseUint: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if value > MAX_UINT32:
        raise ValueError(f"strconv.ParseUint: parsing {go_quote(text)}: value out of range")
    return value


def profiling_routes(set_verbosity: Callable[[int], None] | None) -> list[web.RouteDef]:
    async def redirect(_: web.Request) -> web.Response:
        raise web.HTTPFound("/debug/pprof/")

    async def index(request: web.Request) -> web.Response:
        name = request.match_info.get("name", "")
        if name:
            return web.Response(status=404, text="Unknown profile\n",
                                headers={"X-Content-Type-Options": "nosniff"})
        page = ("<html><head><title>/debug/pprof/</title></head><body>/debug/pprof/<br><br>"
                "kubesched is a Python program: Go's profiles are replaced by<br>"
                '<a href="profile?seconds=30">profile</a>: a cProfile CPU profile (pstats data; '
                "?format=text for a table)<br>"
                '<a href="goroutine">goroutine</a>: the stacks of the asyncio tasks and threads<br>'
                "</body></html>\n")
        return web.Response(text=page, content_type="text/html")

    async def profile(request: web.Request) -> web.Response:
        raw = request.query.get("seconds", "")
        seconds = int(raw) if raw.lstrip("-").isdigit() else 0
        if seconds <= 0:
            seconds = PROFILE_SECONDS
        if not _profiling.acquire(blocking=False):
            return _plain(500, "Could not enable CPU profiling: cpu profiling already in use")
        try:
            profiler = cProfile.Profile()
            try:
                profiler.enable()
            except ValueError as exc:  # another profiler holds the interpreter's hook
                return _plain(500, f"Could not enable CPU profiling: {exc}")
            try:
                await asyncio.sleep(seconds)
            finally:
                profiler.disable()
        finally:
            _profiling.release()
        if request.query.get("format") == "text":
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(_TEXT_ROWS)
            return web.Response(text=out.getvalue())
        profiler.create_stats()
        return web.Response(body=marshal.dumps(profiler.stats), content_type="application/octet-stream",
                            headers={"Content-Disposition": 'attachment; filename="profile"',
                                     "X-Content-Type-Options": "nosniff"})

    async def goroutine(_: web.Request) -> web.Response:
        out = io.StringIO()
        for task in sorted(asyncio.all_tasks(), key=lambda t: t.get_name()):
            out.write(f"task {task.get_name()}:\n")
            task.print_stack(file=out)
            out.write("\n")
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            out.write(f"thread {names.get(ident, ident)}:\n")
            out.write("".join(traceback.format_stack(frame)))
            out.write("\n")
        return web.Response(text=out.getvalue())

    async def flags_index(_: web.Request) -> web.Response:
        page = ("<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\n"
                f"flags:<br>\n<table>\n<tr>{html.escape('v')}<br>\n</table>\n<br>\nfull flags configurable<br>\n"
                "</body>\n</html>\n")
        return web.Response(text=page, content_type="text/html")

    async def verbosity(request: web.Request) -> web.Response:
        if request.method != "PUT":
            return _plain(406, "unsupported http method")
        body = await request.text()
        try:
            level = parse_verbosity(body)
        except ValueError as exc:
            return _plain(400, str(exc))
        if set_verbosity is not None:
            set_verbosity(level)
        return _plain(200, f"successfully set klog.logging.verbosity to {body}")

    return [
        web.get("/debug/pprof", redirect), web.get("/debug/pprof/profile", profile),
        web.get("/debug/pprof/goroutine", goroutine), web.get("/debug/pprof/", index),
        web.get("/debug/pprof/{name:.+}", index),
        web.get("/debug/flags", flags_index), web.get("/debug/flags/", flags_index),
        web.route("*", "/debug/flags/v", verbosity),
    ]
