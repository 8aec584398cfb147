"""Where scheduler_perf's own configs are: the kubernetes module the control plane is built from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kubesched_dev.localcluster.versions import KUBERNETES_VERSION

MODULE = "k8s.io/kubernetes"
SUBDIR = "test/integration/scheduler_perf"


def scheduler_perf_dir() -> Path:
    """test/integration/scheduler_perf of k8s.io/kubernetes at the plane's version, from the Go
    module cache (`go mod download` fetches it from the module proxy if the cache lacks it)."""
    go = shutil.which("go")
    if go is None:
        raise FileNotFoundError("Go is not on PATH: it finds the kubernetes module's scheduler_perf configs")
    env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=mod")
    with tempfile.TemporaryDirectory() as cwd:  # outside any module, so the version given is the one fetched
        proc = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@{KUBERNETES_VERSION}"], cwd=cwd, env=env,
                              capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise FileNotFoundError(f"go mod download {MODULE}@{KUBERNETES_VERSION}: {proc.stdout}{proc.stderr}".strip())
    return Path(json.loads(proc.stdout)["Dir"]) / SUBDIR
