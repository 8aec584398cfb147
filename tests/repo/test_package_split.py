"""The scheduler and its dev tools are two packages (src/kubesched, devtools/: kubesched-dev): the
scheduler imports nothing of the dev tools, which it finds only through entry points."""

from __future__ import annotations

import ast

from tests.paths import REPO


def _imports(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_scheduler_imports_nothing_of_the_dev_tools() -> None:
    offenders = sorted(
        f"{path.relative_to(REPO)}: {name}"
        for path in (REPO / "src" / "kubesched").rglob("*.py")
        for name in _imports(ast.parse(path.read_text(), str(path)))
        if name == "kubesched_dev" or name.startswith("kubesched_dev.")
    )
    assert offenders == []


def test_the_dev_tools_are_not_in_the_scheduler_package() -> None:
    package = REPO / "src" / "kubesched"
    assert not [p.name for p in package.iterdir() if p.name in ("localcluster", "bench", "demo.py")]
    assert not [p.name for p in (package / "cmd").iterdir() if p.name in ("bench.py", "chaos.py", "cluster.py")]
