"""README.md, CHANGELOG.md and docs/*.md: every relative link reaches a file of the repository, and
every #anchor a heading of the page it names (GitHub's heading slugs), so a moved page or a renamed
heading fails here instead of leaving a dead link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _outside_code(text: str) -> str:
    """The text without fenced code blocks and inline code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
    return {slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.M)}


@pytest.mark.parametrize(("heading", "expected"), [
    pytest.param("Serving and kube-scheduler's flags", "serving-and-kube-schedulers-flags", id="apostrophe"),
    pytest.param("What if: `kubesched snapshot` and `kubesched simulate`",
                 "what-if-kubesched-snapshot-and-kubesched-simulate", id="code"),
    pytest.param("explain at 5,000 nodes", "explain-at-5000-nodes", id="comma"),
    pytest.param("What it may do (RBAC)", "what-it-may-do-rbac", id="parentheses"),
])
def test_slug(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_the_pages_exist() -> None:
    names = {p.name for p in PAGES if p.parent.name == "docs"}
    assert {"running.md", "plugins.md", "tools.md", "pools.md", "deploying.md", "architecture.md",
            "development.md", "benchmarks.md", "reliability.md"} <= names


@pytest.mark.parametrize("page", [pytest.param(p, id=str(p.relative_to(ROOT))) for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    dead: list[str] = []
    for target in LINK.findall(_outside_code(page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            dead.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            dead.append(f"{target}: no heading with that anchor in {linked.relative_to(ROOT)}")
    assert dead == []
