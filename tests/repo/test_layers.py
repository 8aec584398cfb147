"""The layers contract names every room of kubesched, so no top-level module or package is left
unguarded (a new one must take its place in the contract)."""

from __future__ import annotations

import tomllib

from tests.paths import REPO

# The package's face and its entry point, not rooms.
NOT_ROOMS = {"__init__", "__main__"}



def _layers() -> list[str]:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [layers] = [c for c in contracts if c["type"] == "layers"]
    return [room.strip() for line in layers["layers"] for room in line.split("|")]


def test_every_room_of_the_package_is_a_layer() -> None:
    package = REPO / "src" / "kubesched"
    rooms = {p.stem for p in package.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))} - NOT_ROOMS
    assert sorted(rooms - set(_layers())) == []
    assert sorted(set(_layers()) - rooms) == []
