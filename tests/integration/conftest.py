"""One local control plane per test session, shared by every integration test.

If the plane cannot be built or started, the fixture raises and every test that needs it errors:
a missing control plane must never look like a pass or a skip.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

from kubesched.localcluster import plane as planes
from kubesched.localcluster.topology import seed_kind

from .kube import Kube


def _progress(message: str) -> None:
    print(f"[plane] {message}", file=sys.stderr, flush=True)


def _remove_stale_test_clusters() -> None:
    for c in planes.list_clusters():
        if c.name.startswith("kubesched-test-") and c.owner_pid and not os.path.exists(f"/proc/{c.owner_pid}"):
            _progress(f"removing stale test cluster {c.name}")
            planes.down(c.name, _progress)


@pytest.fixture(scope="session")
def plane() -> Iterator[Kube]:
    _remove_stale_test_clusters()
    name = f"kubesched-test-{os.getpid()}"
    cluster = planes.up(name, seed_kind(), progress=_progress)
    try:
        yield Kube(cluster)
    finally:
        planes.down(name, _progress)
