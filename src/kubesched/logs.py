"""Structured logs: one JSON object per line (or key=value text), with the record's extra fields."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name, "msg": record.getMessage(),
            **_extras(record),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        fields = " ".join(f"{k}={v!r}" if isinstance(v, str) and " " in v else f"{k}={v}"
                          for k, v in _extras(record).items())
        line = f"{stamp} {record.levelname[0]} {record.name}: {record.getMessage()}" + (f" {fields}" if fields else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


# klog's verbosity (-v) to a level: kube-scheduler logs what an operator reads at V(0) to V(3) and
# its per-pod, per-node and per-plugin detail at V(4) and up, so 0-3 is info and 4 and up debug.
# Warnings and errors are always logged, as klog always logs them.
DEBUG_VERBOSITY = 4


def level_for_verbosity(verbosity: int) -> str:
    return "debug" if verbosity >= DEBUG_VERBOSITY else "info"


def set_verbosity(verbosity: int) -> None:
    """What PUT /debug/flags/v does: the level -v=`verbosity` would have set at start."""
    logging.getLogger().setLevel(level_for_verbosity(verbosity).upper())


def setup(fmt: str = "text", level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp").setLevel(logging.WARNING)
