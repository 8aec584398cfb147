"""Where built binaries and running clusters live: outside the repository, per user."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kubesched"


def state_root() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kubesched" / "clusters"


def controlplane_source() -> Path:
    """The Go wrapper modules: next to src/ in a checkout, or packaged inside the wheel."""
    here = Path(__file__).resolve()
    checkout = here.parents[3] / "controlplane"
    if (checkout / "kubernetes" / "go.mod").exists():
        return checkout
    packaged = here.parents[1] / "_controlplane"
    if (packaged / "kubernetes" / "go.mod").exists():
        return packaged
    raise FileNotFoundError(f"the controlplane/ Go modules were not found at {checkout} or {packaged}")
