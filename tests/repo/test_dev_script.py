"""./dev finds or installs uv on any machine, including where pip refuses system installs (PEP 668).

The script runs (`./dev uv --version`, which stops before `uv sync`) with a PATH that holds no uv and
a fake python3 that plays each machine: pip that installs, pip that refuses with PEP 668's message,
no pip module, no venv module. Nothing is downloaded or installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import REPO as REPO_ROOT

DEV = REPO_ROOT / "dev"
BASH = shutil.which("bash") or "/bin/bash"
PEP_668 = """error: externally-managed-environment

\N{MULTIPLICATION SIGN} This environment is externally managed
╰─> To install Python packages system-wide, try apt install
    python3-xyz, where xyz is the package you are trying to
    install.
"""

# A fake python3 (and, linked into a venv it makes, that venv's python). FAKE_PIP says what the
# system's pip does: "ok" (installs the uv module), "pep668", "nopip"; FAKE_VENV=no: no venv module.
FAKE_PYTHON = r"""#!{bash}
PATH=/usr/bin:/bin
echo "$0 $*" >> "$FAKE_LOG"
here=$(dirname "$0")
case "$1 $2" in
  "-m uv")
    [ -e "$FAKE_STATE/uv-module" ] || {{ echo "$0: No module named uv" >&2; exit 1; }}
    echo "fake uv (module) ${{*:3}}"; exit 0 ;;
  "-m pip")
    if [ "$(basename "$0")" = python3 ]; then
      case "$FAKE_PIP" in
        ok) touch "$FAKE_STATE/uv-module"; exit 0 ;;
        pep668) printf '%s' "$FAKE_PEP668" >&2; exit 1 ;;
        nopip) echo "$0: No module named pip" >&2; exit 1 ;;
      esac
    fi
    # a venv's pip: puts uv beside its python
    printf '#!%s\necho "fake uv (venv) $*"\n' "{bash}" > "$here/uv"; chmod +x "$here/uv"; exit 0 ;;
  "-m venv")
    [ "$FAKE_VENV" = no ] && {{ echo "venv not created: ensurepip is not available" >&2; exit 1; }}
    mkdir -p "$3/bin"; ln -s "$0" "$3/bin/python"; exit 0 ;;
esac
echo "fake python3: unexpected $*" >&2; exit 2
"""


def _machine(tmp_path: Path, *, uv_on_path: bool = False) -> tuple[Path, dict[str, str]]:
    bin_dir, state, home = tmp_path / "bin", tmp_path / "state", tmp_path / "home"
    for d in (bin_dir, state, home):
        d.mkdir()
    for tool in ("dirname", "tail", "rm"):  # what ./dev itself runs besides bash's builtins
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    python3 = bin_dir / "python3"
    python3.write_text(FAKE_PYTHON.format(bash=BASH))
    python3.chmod(0o755)
    if uv_on_path:
        uv = bin_dir / "uv"
        uv.write_text(f'#!{BASH}\necho "fake uv (PATH) $*"\n')
        uv.chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(home), "FAKE_LOG": str(tmp_path / "calls.log"),
           "FAKE_STATE": str(state), "FAKE_PEP668": PEP_668, "LANG": os.environ.get("LANG", "C.UTF-8")}
    return home / ".cache" / "kubesched" / "uv-venv", env


def _dev(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BASH, str(DEV), *args], env=env, capture_output=True, text=True, timeout=30,
                          check=False)


@pytest.mark.parametrize(("pip", "why"), [
    pytest.param("pep668", "pip refuses to install into this system's Python (PEP 668)", id="pep-668"),
    pytest.param("nopip", "pip could not install uv: ", id="no-pip-module"),
])
def test_falls_back_to_a_private_venv(tmp_path: Path, pip: str, why: str) -> None:
    venv, env = _machine(tmp_path)
    env["FAKE_PIP"] = pip
    first = _dev(env, "uv", "--version")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "fake uv (venv) --version"
    assert why in first.stderr
    assert f"installing uv into a private venv, {venv}" in first.stderr
    assert (venv / "bin" / "uv").exists()
    # the next run takes the venv's uv at once: no pip, no python3 at all
    log = tmp_path / "calls.log"
    log.write_text("")
    again = _dev(env, "uv", "--version")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "fake uv (venv) --version"
    assert log.read_text() == ""


def test_xdg_cache_home_holds_the_private_venv(tmp_path: Path) -> None:
    _, env = _machine(tmp_path)
    env |= {"FAKE_PIP": "pep668", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    result = _dev(env, "uv", "--version")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "xdg" / "kubesched" / "uv-venv" / "bin" / "uv").exists()


def test_pip_that_installs_is_used_as_before(tmp_path: Path) -> None:
    venv, env = _machine(tmp_path)
    env["FAKE_PIP"] = "ok"
    result = _dev(env, "uv", "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "fake uv (module) --version"
    assert not venv.exists()


def test_no_venv_module_says_what_to_install(tmp_path: Path) -> None:
    venv, env = _machine(tmp_path)
    env |= {"FAKE_PIP": "pep668", "FAKE_VENV": "no"}
    result = _dev(env, "uv", "--version")
    assert result.returncode == 1
    assert "python3-venv" in result.stderr
    assert "https://docs.astral.sh/uv/" in result.stderr
    assert not venv.exists()  # no half-made venv for the next run to trip on


def test_uv_on_path_is_used_without_python(tmp_path: Path) -> None:
    _, env = _machine(tmp_path, uv_on_path=True)
    result = _dev(env, "uv", "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "fake uv (PATH) --version"
    assert not (tmp_path / "calls.log").exists()
