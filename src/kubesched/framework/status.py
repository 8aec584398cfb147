"""Status: what a plugin says about a pod, instead of raising (kube-scheduler's fwk.Status).

`None` stands for Success on the hot path, as a nil *Status does in kube-scheduler: a filter that
passes returns None and allocates nothing.
"""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


# fwk.Code.String(), by Code value: the words kube-scheduler's messages and metric labels use.
CODE_NAMES = ("Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending")


class Status:
    """A plugin's verdict: a code, reasons shown to users, and the plugin that gave it."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod does not fit, no error."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, *self.reasons, plugin=plugin)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return (self.code, self.reasons, self.plugin) == (other.code, other.reasons, other.plugin)

    def __hash__(self) -> int:
        return hash((self.code, self.reasons, self.plugin))

    def __repr__(self) -> str:
        plugin = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.name}, {list(self.reasons)!r}{plugin})"


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


SKIP = Status(Code.SKIP)


class SchedulingError(Exception):
    """A plugin returned Error: the cycle cannot decide; the pod goes to backoff, not unschedulable.
    Its text is the status's message, which the raiser words as kube-scheduler's framework does
    (`running PreFilter plugin "X": ...`): the FailedScheduling event and condition carry it."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status
