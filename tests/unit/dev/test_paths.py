"""Where kubesched-dev finds the data it ships (the control plane's Go modules, the demo's examples):
devtools/<name> in a checkout, kubesched_dev/_<name> in an installed wheel."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from kubesched_dev.localcluster import paths
from tests.paths import REPO


def test_a_checkout_uses_the_devtools_folders() -> None:
    assert paths.controlplane_source() == REPO / "devtools" / "controlplane"
    assert paths.examples() == REPO / "devtools" / "examples"
    assert (paths.examples() / "seed" / "cronjobs.yaml").exists()
    assert (paths.examples() / "demo" / "report-cronjob.yaml").exists()


def _installed(tmp_path: Path) -> ModuleType:
    """paths.py as a wheel lays it out: site-packages/kubesched_dev/localcluster/paths.py."""
    where = tmp_path / "site-packages" / "kubesched_dev" / "localcluster" / "paths.py"
    where.parent.mkdir(parents=True)
    shutil.copy(paths.__file__, where)
    spec = importlib.util.spec_from_file_location("installed_paths", where)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_installed_wheel_uses_the_force_included_folders(tmp_path: Path) -> None:
    installed = _installed(tmp_path)
    package = tmp_path / "site-packages" / "kubesched_dev"
    (package / "_controlplane" / "kubernetes").mkdir(parents=True)
    (package / "_controlplane" / "kubernetes" / "go.mod").write_text("module x\n")
    (package / "_examples" / "config").mkdir(parents=True)
    (package / "_examples" / "config" / "seed.yaml").write_text("{}\n")
    assert installed.controlplane_source() == package / "_controlplane"
    assert installed.examples() == package / "_examples"


def test_missing_data_names_both_places(tmp_path: Path) -> None:
    installed = _installed(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"the examples/ of kubesched-dev was not found at .*examples or "
                                                r".*kubesched_dev/_examples"):
        installed.examples()


def test_the_wheel_force_includes_what_paths_looks_for() -> None:
    """devtools/pyproject.toml ships the folders under the names paths.py expects."""
    config = tomllib.loads((REPO / "devtools" / "pyproject.toml").read_text())
    included = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert included == {"controlplane": "kubesched_dev/_controlplane", "examples": "kubesched_dev/_examples"}
