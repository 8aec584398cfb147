"""CPU seconds and peak RSS of a process and its descendants, read from /proc (no psutil).

A wrapper (py-spy, a shell) is measured with what it runs: every descendant seen at a sample
counts. Exited children are remembered with their last sample and not taken again from the
parent's cutime, which would count them twice.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: split after the last ')'.
    return text.rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float | None:
    f = _stat_fields(pid)
    if f is None:
        return None
    # fields after ')' start at 'state' (field 3): utime is field 14, stime 15
    return (int(f[11]) + int(f[12])) / _TICK


def peak_rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        f = _stat_fields(int(entry))
        if f is not None:
            children.setdefault(int(f[1]), []).append(int(entry))
    out: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


@dataclass
class Meter:
    """Call `sample()` now and then (and once just before stopping the process)."""

    root: int
    include_children: bool = False
    _cpu: dict[int, float] = field(default_factory=dict)
    _rss: dict[int, int] = field(default_factory=dict)

    def sample(self) -> None:
        pids = descendants(self.root) if self.include_children else [self.root]
        for pid in pids:
            cpu = cpu_seconds(pid)
            rss = peak_rss_bytes(pid)
            if cpu is not None:
                self._cpu[pid] = cpu
            if rss is not None:
                self._rss[pid] = max(rss, self._rss.get(pid, 0))

    @property
    def cpu_seconds(self) -> float:
        return sum(self._cpu.values())

    @property
    def peak_rss_bytes(self) -> int:
        return sum(self._rss.values())


@dataclass
class Window:
    """CPU seconds other processes (the plane's apiserver and etcd) spend from `start()` to `stop()`:
    what a contender's run costs them. A process that went away counts up to its last sample."""

    pids: dict[str, int]
    _start: dict[str, float] = field(default_factory=dict)
    _end: dict[str, float] = field(default_factory=dict)
    _started: float = 0.0
    elapsed: float = 0.0  # seconds from start() to the last stop()

    def start(self) -> None:
        self._started = time.monotonic()
        self._start = {name: cpu for name, pid in self.pids.items() if (cpu := cpu_seconds(pid)) is not None}
        self._end = dict(self._start)

    def stop(self) -> None:
        self.elapsed = time.monotonic() - self._started
        for name, pid in self.pids.items():
            if (cpu := cpu_seconds(pid)) is not None:
                self._end[name] = cpu

    def seconds(self, name: str) -> float:
        return max(0.0, self._end.get(name, 0.0) - self._start.get(name, 0.0))
