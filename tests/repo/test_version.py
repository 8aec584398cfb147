"""kubesched's version is written in one place, src/kubesched/__init__.py's `__version__`: the package
metadata reads it (hatch's dynamic version), deploy/ tags the image with it, and no other file of
the repository spells it out."""

from __future__ import annotations

import importlib.metadata
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

import kubesched

ROOT = Path(__file__).resolve().parents[2]
INIT = ROOT / "src" / "kubesched" / "__init__.py"
# Where the version may appear spelled out: its one place; the image tag, which YAML cannot read from
# Python and the test below keeps equal; and files that do not state kubesched's version (the history
# of releases, the lock file's other packages, the example plugin package's own version).
ALLOWED = {INIT, ROOT / "deploy" / "kustomization.yaml", ROOT / "CHANGELOG.md", ROOT / "uv.lock",
           ROOT / "examples" / "plugins" / "pyproject.toml"}
# controlplane/: Go modules pinning other projects' versions; mutants/: mutmut's copy of the tree
SKIPPED_DIRS = {".git", ".venv", "controlplane", "bench-results", "mutants", "node_modules", "dist", "build",
                "__pycache__"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".json", ".cfg", ".txt", ""}


def test_the_package_metadata_reads_the_version_from_init() -> None:
    project: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == INIT.relative_to(ROOT).as_posix()
    # the installed distribution was built from that file
    assert importlib.metadata.version("kubesched") == kubesched.__version__


def test_deploy_tags_the_image_with_the_version() -> None:
    kustomization = yaml.safe_load((ROOT / "deploy" / "kustomization.yaml").read_text())
    [image] = [i for i in kustomization["images"] if i["name"] == "kubesched"]
    assert image["newTag"] == kubesched.__version__
    # the Deployment names the image untagged, so the kustomization's tag is the only one
    [deployment] = [d for d in yaml.safe_load_all((ROOT / "deploy" / "kubesched.yaml").read_text())
                    if d and d["kind"] == "Deployment"]
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == ["kubesched"]


def _text_files() -> list[Path]:
    found: list[Path] = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not (d.startswith(".") and d != ".ci")]
        found += [Path(top) / f for f in files if Path(f).suffix in TEXT_SUFFIXES]
    return found


def test_no_other_file_spells_out_the_version() -> None:
    version = re.compile(rf"(?<![\d.]){re.escape(kubesched.__version__)}(?!\.?\d)")
    files = _text_files()
    assert INIT in files  # the walk reaches the tree
    assert ROOT / "pyproject.toml" in files
    spelled = [str(p.relative_to(ROOT)) for p in sorted(files)
               if p not in ALLOWED and version.search(p.read_text(errors="replace"))]
    assert spelled == [], f"{kubesched.__version__} written outside {INIT.relative_to(ROOT)}: read __version__"
