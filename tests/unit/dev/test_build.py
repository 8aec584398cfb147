from __future__ import annotations

from pathlib import Path

import pytest

from kubesched_dev.localcluster import build
from kubesched_dev.localcluster.versions import COMPONENTS, KUBERNETES_VERSION


def test_cache_key_names_the_versions() -> None:
    key = build.cache_key()
    assert key.startswith(f"k8s-{KUBERNETES_VERSION}_etcd-")
    assert "_kwok-v" in key


def test_no_go_is_one_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(build.BuildError, match=r"Go is not installed or not on PATH.*install Go 1\.26"):
        build.ensure_built(lambda m: None)


def test_a_failed_build_names_the_component_and_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_go = tmp_path / "bin" / "go"
    fake_go.parent.mkdir()
    fake_go.write_text("#!/bin/sh\necho 'go: k8s.io/kubernetes@v1.37.2: reading proxy.golang.org: 410 Gone' >&2\n"
                       "exit 1\n")
    fake_go.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(fake_go.parent))
    messages: list[str] = []
    with pytest.raises(build.BuildError) as info:
        build.ensure_built(messages.append)
    text = str(info.value)
    assert text.startswith(f"building {COMPONENTS[0].name} failed: a Go module could not be downloaded")
    assert "410 Gone" in text
    assert any("a cold build takes ~" in m for m in messages)
    assert not any(p.name == COMPONENTS[0].name for p in (tmp_path / "cache").rglob("*")), "no half-written binary"
