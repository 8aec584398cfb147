"""deploy/Containerfile's rules, checked statically (this project's machines have no container engine):
multi-stage, every base image pinned by tag and digest, build tools installed by hash, installed
from uv.lock, a final stage with only the runtime,
run as a numeric non-root user. The checker is tried on bad files too, so a rule cannot pass by
checking nothing."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.paths import REPO as REPO_ROOT

CONTAINERFILE = REPO_ROOT / "deploy" / "Containerfile"
# an exact release (3.11.14, 0.13.9, with a variant such as -slim-bookworm), or a digest
PINNED = re.compile(r"^[^@\s]+:\d+\.\d+\.\d+[\w.-]*(@sha256:[0-9a-f]{64})?$|^[^@\s]+@sha256:[0-9a-f]{64}$")
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
PIP_INSTALL = re.compile(r"\bpip install\b[^;&|]*")
BUILD_TOOLS = re.compile(r"\b(apt-get|apt|apk|gcc|g\+\+|make|build-essential|uv|uvx|pip install|curl|wget)\b")


@dataclass
class Stage:
    image: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        op, _, rest = line.partition(" ")
        out.append((op.upper(), rest.strip()))
    return out


def _stages(text: str) -> tuple[list[Stage], dict[str, str]]:
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for op, rest in _instructions(text):
        if op == "ARG" and not stages:
            name, _, default = rest.partition("=")
            args[name] = default
        elif op == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], m[0]), words[0])
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(image, name))
        elif stages:
            stages[-1].instructions.append((op, rest))
    return stages, args


def violations(text: str) -> list[str]:
    """What breaks the project's rules for its image (empty: none)."""
    stages, _ = _stages(text)
    names = {s.name for s in stages}
    found: list[str] = []
    if len(stages) < 2:
        found.append("not multi-stage")
    for s in stages:
        if s.image not in names and not PINNED.match(s.image):
            found.append(f"FROM {s.image}: not pinned to an exact version or a digest")
        elif s.image not in names and not DIGEST.search(s.image):
            found.append(f"FROM {s.image}: no digest, the tag can be pushed again")
    runs = " ; ".join(rest for s in stages for op, rest in s.instructions if op == "RUN")
    copies = [rest for s in stages for op, rest in s.instructions if op in ("COPY", "ADD")]
    for pip in PIP_INSTALL.findall(runs):
        if "--require-hashes" not in pip:
            found.append(f"RUN {pip.strip()}: without --require-hashes, what PyPI serves under the name is installed")
    if not re.search(r"\buv (sync|export)\b[^;&|]*--frozen", runs):
        found.append("no `uv sync --frozen` / `uv export --frozen`: the lock is not what is installed")
    if not any("uv.lock" in c.split() for c in copies):
        found.append("uv.lock is not copied into the build")
    if not stages:
        return found
    final = stages[-1]
    users = [rest for op, rest in final.instructions if op == "USER"]
    uid = users[-1].partition(":")[0] if users else ""
    if not uid.isdigit() or int(uid) == 0:
        found.append(f"final stage USER {uid or '(none)'}: want a numeric non-root uid")
    for op, rest in final.instructions:
        words = shlex.split(rest) if op in ("COPY", "ADD") else []
        sources = [w for w in words[:-1] if not w.startswith("--")]
        from_stage = next((w.split("=", 1)[1] for w in words if w.startswith("--from=")), None)
        if op in ("COPY", "ADD") and from_stage is None:
            found.append(f"final stage {op} {rest}: only built artefacts belong there, copied from a stage")
        elif op in ("COPY", "ADD") and any(Path(src).name in ("uv", "uvx") for src in sources):
            found.append(f"final stage {op} {rest}: a build tool")
        elif op == "RUN" and BUILD_TOOLS.search(rest.replace("pip uninstall", "")):
            found.append(f"final stage RUN {rest}: installs or uses a build tool")
    build_bases = {s.image for s in stages[:-1] if s.image not in names and "python" in s.image}
    if build_bases and final.image not in build_bases:
        found.append(f"final stage FROM {final.image}: not the build's Python image, the venv would not run")
    return found


def test_the_containerfile_keeps_the_rules() -> None:
    assert violations(CONTAINERFILE.read_text()) == []


def test_the_final_stage_copies_only_the_venv() -> None:
    stages, args = _stages(CONTAINERFILE.read_text())
    final = stages[-1]
    copies = [rest for op, rest in final.instructions if op == "COPY"]
    assert copies == ["--from=build /opt/kubesched /opt/kubesched"]
    assert final.image == args["PYTHON_IMAGE"]
    assert [rest for op, rest in final.instructions if op == "ENTRYPOINT"] == ['["kubesched"]']


PY_PIN = "python:3.11.14-slim-bookworm@sha256:" + "b" * 64
GOOD = f"""
ARG PY={PY_PIN}
FROM ${{PY}} AS build
RUN python3 -m pip install --require-hashes -r /tmp/uv.txt
COPY pyproject.toml uv.lock ./
RUN uv sync --frozen --no-dev --no-editable
FROM ${{PY}}
COPY --from=build /opt/venv /opt/venv
USER 65532:65532
"""


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(GOOD, [], id="good"),
    pytest.param(GOOD.replace(PY_PIN, "python:3.11-slim"),
                 ["FROM python:3.11-slim: not pinned to an exact version or a digest"] * 2, id="minor-tag"),
    pytest.param(GOOD.replace(PY_PIN, "python:3.11.14-slim-bookworm"),
                 ["FROM python:3.11.14-slim-bookworm: no digest, the tag can be pushed again"] * 2, id="no-digest"),
    pytest.param(GOOD.replace("FROM ${PY} AS build", "FROM ghcr.io/astral-sh/uv:latest AS uv\nFROM ${PY} AS build"),
                 ["FROM ghcr.io/astral-sh/uv:latest: not pinned to an exact version or a digest"], id="latest"),
    pytest.param(GOOD.replace(PY_PIN, "python@sha256:" + "a" * 64), [], id="digest"),
    pytest.param(GOOD.replace(" --require-hashes", ""),
                 ["RUN pip install -r /tmp/uv.txt: without --require-hashes, what PyPI serves under the name is "
                  "installed"], id="pip-without-hashes"),
    pytest.param(f"FROM {PY_PIN}\nCOPY pyproject.toml uv.lock ./\nRUN uv sync --frozen\nUSER 1000\n",
                 ["not multi-stage", "final stage COPY pyproject.toml uv.lock ./: only built artefacts "
                  "belong there, copied from a stage", "final stage RUN uv sync --frozen: installs or uses a "
                  "build tool"], id="single-stage"),
    pytest.param(GOOD.replace("USER 65532:65532", "USER 0"),
                 ["final stage USER 0: want a numeric non-root uid"], id="root"),
    pytest.param(GOOD.replace("USER 65532:65532", "USER app"),
                 ["final stage USER app: want a numeric non-root uid"], id="named-user"),
    pytest.param(GOOD.replace("USER 65532:65532\n", ""),
                 ["final stage USER (none): want a numeric non-root uid"], id="no-user"),
    pytest.param(GOOD.replace("uv sync --frozen --no-dev --no-editable", "pip install ."),
                 ["RUN pip install .: without --require-hashes, what PyPI serves under the name is installed",
                  "no `uv sync --frozen` / `uv export --frozen`: the lock is not what is installed"], id="no-lock"),
    pytest.param(GOOD.replace("COPY --from=build /opt/venv /opt/venv",
                              "COPY --from=build /opt/venv /opt/venv\nCOPY --from=uv /uv /usr/local/bin/uv"),
                 ["final stage COPY --from=uv /uv /usr/local/bin/uv: a build tool"], id="uv-in-final"),
    pytest.param(GOOD.replace("USER 65532", "RUN apt-get install -y gcc\nUSER 65532"),
                 ["final stage RUN apt-get install -y gcc: installs or uses a build tool"], id="compiler-in-final"),
    pytest.param(GOOD.replace("FROM ${PY}\nCOPY", "FROM python:3.12.12-slim-bookworm@sha256:" + "c" * 64 + "\nCOPY"),
                 ["final stage FROM python:3.12.12-slim-bookworm@sha256:" + "c" * 64 + ": not the build's Python "
                  "image, the venv would not run"], id="other-python"),
])
def test_the_checker(text: str, expected: list[str]) -> None:
    assert violations(text) == expected


def test_the_image_holds_the_scheduler_alone() -> None:
    """The build copies kubesched's own files only: not the dev tools (devtools/: the local control
    plane and its Go modules, bench, demo), which the dev group alone installs (`--no-dev` here)."""
    stages, _ = _stages(CONTAINERFILE.read_text())
    sources = []
    for stage in stages:
        for op, rest in stage.instructions:
            words = shlex.split(rest) if op in ("COPY", "ADD") else []
            if words and not any(w.startswith("--from=") for w in words):
                sources += [w for w in words[:-1] if not w.startswith("--")]
    assert sorted(sources) == ["LICENSE", "NOTICE", "README.md", "pyproject.toml", "src", "uv.lock"]
    runs = [rest for s in stages for op, rest in s.instructions if op == "RUN" and "uv sync" in rest]
    assert runs
    assert all("--no-dev" in r for r in runs)
