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


def shipped(name: str, marker: str) -> Path:
    """One of the data trees kubesched-dev ships (controlplane, examples): devtools/<name> in a
    checkout, or kubesched_dev/_<name> inside the installed wheel (force-included there)."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parents[1] / name
    packaged = package / f"_{name}"
    for where in (checkout, packaged):
        if (where / marker).exists():
            return where
    raise FileNotFoundError(f"the {name}/ of kubesched-dev was not found at {checkout} or {packaged}")


def controlplane_source() -> Path:
    """The Go wrapper modules that pin the control plane's versions."""
    return shipped("controlplane", "kubernetes/go.mod")


def examples() -> Path:
    """The seed's config and manifests and the demo's own CronJob, which `kubesched demo` applies."""
    return shipped("examples", "config/seed.yaml")
