"""`./dev mutate [PATH...]`: mutation testing of the rule rooms with mutmut, and its survivors.

mutmut (the dev group; configured in pyproject.toml's [tool.mutmut]) mutates plugins/, framework/
and backend/queue/ and runs, for each mutant, the unit tests that reach the mutated function. Its
results stay in mutants/ (one .meta file per source file, kept between runs: with no PATH a second
run tests only the mutants of functions that changed; the mutants of a PATH are tested again).
This module turns paths into mutmut's mutant-name patterns, runs mutmut on one worker, and prints
per module the mutants, how many were killed, survived or timed out, and the name of every
survivor (`mutmut show NAME` prints its diff); the same text is written to mutants/report.txt. It
is not part of `./dev test`: a module of a few hundred lines takes minutes to tens of minutes on
this project's 2 cores (docs/development.md#mutation-testing).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# What `./dev mutate` with no PATH mutates: [tool.mutmut] only_mutate's rooms.
DEFAULT_PATHS = ("src/kubesched/plugins", "src/kubesched/framework", "src/kubesched/backend/queue")
MUTANTS = Path("mutants")
REPORT = MUTANTS / "report.txt"

# mutmut 3.8.1's exit codes per mutant (mutmut/stats.py, status_by_exit_code), folded into the
# columns of the report. None: generated, not run yet.
_STATUS = {1: "killed", 3: "killed", 0: "survived", 36: "timeout", -24: "timeout", 24: "timeout",
           152: "timeout", 255: "timeout", 5: "no tests", 33: "no tests", 34: "skipped",
           37: "type check", -11: "segfault", -9: "segfault", 2: "interrupted", None: "not run"}
COLUMNS = ("mutants", "killed", "survived", "timeout", "no tests", "not run", "other")


def status(exit_code: int | None) -> str:
    """The report's name for a mutant's exit code (anything unknown is mutmut's "suspicious")."""
    return _STATUS.get(exit_code, "suspicious")


def pattern(path: str) -> str:
    """mutmut's name pattern for the mutants of a source file or folder under src/; a mutant name
    or pattern (`kubesched.backend.queue.scheduling_queue.x*flush_*`) is taken as it is.

    mutmut names a mutant `<module>.<function key>__mutmut_<n>`, the module dotted from the path
    without src/ (a package's __init__ is the package itself), the key x_<function> or
    xǁ<class>ǁ<method>."""
    if path.startswith("kubesched.") and "/" not in path and not path.endswith(".py"):
        return path
    p = Path(path)
    parts = p.with_suffix("").parts if p.suffix == ".py" else p.parts
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or parts[0] != "kubesched":
        raise ValueError(f"{path}: not a module or folder of src/kubesched")
    return ".".join(parts) + ".*"


@dataclass
class ModuleResult:
    """One source file's mutants: how many of each status, and the survivors' names."""

    counts: Counter[str] = field(default_factory=Counter)
    survivors: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)


def _module_of(key: str) -> str:
    """The module part of a mutant name (before the function key, which starts with x_ or xǁ)."""
    parts = key.split(".")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i].startswith(("x_", "x\u01c1")):
            return ".".join(parts[:i])
    return key.rsplit(".", 1)[0]


def collect(mutants: Path, patterns: Sequence[str]) -> dict[str, ModuleResult]:
    """The results mutmut left in mutants/ for the mutants matching patterns, by module."""
    results: dict[str, ModuleResult] = {}
    for meta in sorted((mutants / "src").rglob("*.py.meta")):
        exit_codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
        for key, code in exit_codes.items():
            if not any(fnmatch.fnmatchcase(key, p) for p in patterns):
                continue
            result = results.setdefault(_module_of(key), ModuleResult())
            name = status(code)
            result.counts["mutants"] += 1
            result.counts[name if name in COLUMNS else "other"] += 1
            if name == "survived":
                result.survivors.append(key)
            elif name == "timeout":
                result.timeouts.append(key)
    for result in results.values():
        result.survivors.sort(key=_natural)
        result.timeouts.sort(key=_natural)
    return results


def _natural(key: str) -> tuple[str, int]:
    stem, _, n = key.rpartition("__mutmut_")
    return stem, int(n) if n.isdigit() else 0


def render(results: dict[str, ModuleResult]) -> str:
    """The report: a table of counts per module, then each module's survivors and timeouts."""
    width = max([len("module"), *(len(m) for m in results)])
    lines = ["  ".join([f"{'module':<{width}}", *(f"{c:>8}" for c in COLUMNS)])]
    total: Counter[str] = Counter()
    for module, result in sorted(results.items()):
        total.update(result.counts)
        lines.append("  ".join([f"{module:<{width}}", *(f"{result.counts[c]:>8}" for c in COLUMNS)]))
    if len(results) > 1:
        lines.append("  ".join([f"{'total':<{width}}", *(f"{total[c]:>8}" for c in COLUMNS)]))
    for module, result in sorted(results.items()):
        for title, names in (("survived", result.survivors), ("timeout", result.timeouts)):
            if names:
                lines += ["", f"{module}: {title} ({len(names)})", *(f"  {n}" for n in names)]
    if not results:
        lines.append("(no mutants matched: run without --results first)")
    return "\n".join(lines) + "\n"


def _mutmut(args: Iterable[str]) -> int:
    # The mutmut next to this Python (the project's venv), so `uv run` is not needed twice.
    exe = Path(sys.executable).with_name("mutmut")
    return subprocess.run([str(exe), *args], check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev mutate",
        description="Mutation testing (mutmut) of kubesched's plugins, framework and scheduling queue; "
                    "prints the survivors. Run from the repository's root.")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="source files or folders under src/kubesched, or mutmut name patterns "
                             "(kubesched.<module>.x*<function>*); default: the three rooms")
    parser.add_argument("--max-children", type=int, default=1,
                        help="mutants tested at once (default 1: the machine is shared)")
    parser.add_argument("--results", action="store_true",
                        help="only print the results mutants/ holds, run nothing")
    args = parser.parse_args(argv)
    try:
        patterns = [pattern(p) for p in (args.paths or DEFAULT_PATHS)]
    except ValueError as e:
        parser.error(str(e))
    if not args.results:
        # Named mutants are tested again whatever mutants/ holds; with none named, mutmut tests only
        # those without a result (new, or in a function that changed since).
        code = _mutmut(["run", f"--max-children={args.max_children}", *(patterns if args.paths else [])])
        if code != 0:
            print(f"mutmut run exited {code}", file=sys.stderr)
            return code
    report = render(collect(MUTANTS, patterns))
    if MUTANTS.is_dir():
        REPORT.write_text(report)
    print(report, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
