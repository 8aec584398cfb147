"""Start, watch and stop the plane's processes; free ports; log tails."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from pathlib import Path

_children: dict[int, subprocess.Popen[bytes]] = {}


_handed_out: set[int] = set()


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A port no server listens on, chosen below the kernel's ephemeral range: a port picked there
    can be taken by any outgoing connection between our check and the component's bind (seen:
    etcd failing with "address already in use")."""
    low, _ = _ephemeral_range()
    start = 10000 if low > 11000 else 1024
    for _ in range(1000):
        port = random.randrange(start, low)
        if port not in _handed_out and not port_in_use(port):
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port found between {start} and {low}")


def port_in_use(port: int) -> bool:
    """True if a server could not listen on the port now (connections in TIME_WAIT do not count:
    servers set SO_REUSEADDR, and so does this check)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def start(args: list[str], log: Path, cwd: Path) -> int:
    """Start a detached process (its own session, so it outlives `cluster up` and ignores our ^C)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=cwd, start_new_session=True)
    _children[proc.pid] = proc
    return proc.pid


def alive(pid: int, marker: str) -> bool:
    """True if `pid` runs and is ours: its command line mentions the cluster directory (pids get reused)."""
    child = _children.get(pid)
    if child is not None:
        # Our own child may not have exec'd yet, so its command line can still be ours.
        return child.poll() is None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    if marker.encode() not in cmdline:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def reap(pid: int) -> None:
    proc = _children.pop(pid, None)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.1)


def exited(pid: int) -> int | None:
    """Exit code if a child we started has exited, else None."""
    proc = _children.get(pid)
    if proc is None:
        return None
    return proc.poll()


def stop(pids: list[int], marker: str, grace: float = 3.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds; returns when every process is gone."""
    ours = [p for p in pids if alive(p, marker)]
    for pid in ours:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p, marker) for p in ours):
        for pid in ours:
            reap(pid)
        time.sleep(0.1)
    for pid in ours:
        if alive(pid, marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(alive(p, marker) for p in ours):
        for pid in ours:
            reap(pid)
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {[p for p in ours if alive(p, marker)]} did not exit after SIGKILL")
        time.sleep(0.05)
    for pid in ours:
        reap(pid)


def tail(log: Path, lines: int = 20) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.rstrip().splitlines()[-lines:])
