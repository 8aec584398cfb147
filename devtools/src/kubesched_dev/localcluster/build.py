"""Build the control-plane binaries from the Go module proxy into a per-version cache.

The cache directory is keyed by the pinned versions and the wrapper modules' go.sum, so a change
of either builds afresh and old builds stay usable. A file lock serialises concurrent builds
(two test sessions, or a user and CI); binaries are written under a temporary name and renamed,
so a killed build never leaves a half-written binary that looks finished.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kubesched_dev.localcluster.paths import cache_root, controlplane_source
from kubesched_dev.localcluster.versions import COMPONENTS, ETCD_VERSION, KUBERNETES_VERSION, KWOK_VERSION, Component

Progress = Callable[[str], None]
_TICK_SECONDS = 15.0


class BuildError(RuntimeError):
    pass


def cache_key() -> str:
    src = controlplane_source()
    digest = hashlib.sha256()
    for sub in sorted({c.module_dir for c in COMPONENTS}):
        for name in ("go.mod", "go.sum"):
            path = src / sub / name
            if path.exists():
                digest.update(path.read_bytes())
    return f"k8s-{KUBERNETES_VERSION}_etcd-{ETCD_VERSION}_kwok-{KWOK_VERSION}_{digest.hexdigest()[:10]}"


def bin_dir() -> Path:
    return cache_root() / "controlplane" / cache_key() / "bin"


def is_built() -> bool:
    return (bin_dir().parent / "COMPLETE").exists()


def ensure_built(progress: Progress) -> Path:
    """Return the directory holding all six binaries, building what is missing first."""
    target = bin_dir()
    if is_built():
        return target
    go = shutil.which("go")
    if go is None:
        raise BuildError(
            "Go is not installed or not on PATH. kubesched builds its local control plane "
            f"(Kubernetes {KUBERNETES_VERSION}, etcd {ETCD_VERSION}, kwok {KWOK_VERSION}) from Go modules: "
            "install Go 1.26 or newer and make sure `go version` works, then run `kubesched cluster build`.")
    target.mkdir(parents=True, exist_ok=True)
    lock_path = target.parent / "build.lock"
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"another process is building the control plane into {target.parent}; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
        if is_built():
            return target
        _build_all(go, target, progress)
        (target.parent / "COMPLETE").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + "\n")
    return target


def _build_all(go: str, target: Path, progress: Progress) -> None:
    todo = [c for c in COMPONENTS if not (target / c.name).exists()]
    estimate = sum(c.cold_seconds for c in todo)
    progress(f"building the local control plane into {target} ({len(todo)} of {len(COMPONENTS)} components "
             f"to build; a cold build takes ~{estimate // 60 + 1} minutes on 2 cores and needs ~6 GB of Go "
             "caches; later runs reuse the binaries)")
    started = time.monotonic()
    src = controlplane_source()
    for index, comp in enumerate(COMPONENTS, start=1):
        if comp not in todo:
            continue
        _build_one(go, src, comp, target, f"[{index}/{len(COMPONENTS)}]", progress)
    progress(f"control plane built in {time.monotonic() - started:.0f} s")


def _build_one(go: str, src: Path, comp: Component, target: Path, tag: str, progress: Progress) -> None:
    out = target / comp.name
    tmp = target / f".{comp.name}.tmp"
    cmd = [go, "build", "-trimpath", "-o", str(tmp), "-ldflags", comp.ldflags, comp.package]
    env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS=os.environ.get("GOFLAGS", "") + " -mod=readonly")
    progress(f"{tag} {comp.name}: building {comp.package} (~{comp.cold_seconds} s cold)")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=src / comp.module_dir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    done = threading.Event()

    def tick() -> None:
        while not done.wait(_TICK_SECONDS):
            progress(f"{tag} {comp.name}: {time.monotonic() - started:.0f} s elapsed")

    ticker = threading.Thread(target=tick, name=f"build-progress-{comp.name}", daemon=True)
    ticker.start()
    try:
        output, _ = proc.communicate()
    finally:
        done.set()
        ticker.join()
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(_explain_failure(comp, output, cmd, src / comp.module_dir))
    os.replace(tmp, out)
    progress(f"{tag} {comp.name}: done in {time.monotonic() - started:.0f} s")


def _explain_failure(comp: Component, output: str, cmd: list[str], cwd: Path) -> str:
    tail = "\n".join(output.strip().splitlines()[-15:])
    lowered = output.lower()
    if any(s in lowered for s in ("proxy.golang.org", "410 gone", "404 not found", "dial tcp",
                                  "no such host", "connection refused", "i/o timeout", "goproxy")):
        hint = ("a Go module could not be downloaded: check that the Go module proxy is reachable "
                f"(GOPROXY={os.environ.get('GOPROXY', 'default')}) and that it serves the pinned versions")
    elif "go.mod requires go" in lowered or "toolchain" in lowered:
        hint = "this Go is too old for the pinned modules: install Go 1.26 or newer"
    else:
        hint = "the Go build failed"
    return (f"building {comp.name} failed: {hint}.\n  command: (cd {cwd} && {' '.join(cmd)})\n"
            f"  last lines of its output:\n    " + tail.replace("\n", "\n    "))
