"""The benchmark PNG without matplotlib: an error that names the extra to install."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from kubesched_dev.bench import plot


def test_without_matplotlib_the_error_names_the_bench_extra(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    real = importlib.import_module

    def import_module(name: str, package: str | None = None) -> object:
        if name.partition(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", import_module)
    with pytest.raises(plot.MissingExtraError, match=r"kubesched-dev\[bench\]") as info:
        plot.bound_over_time([], tmp_path / "bound.png", "title")
    assert isinstance(info.value, ImportError)
    assert not (tmp_path / "bound.png").exists()
