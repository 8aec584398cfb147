"""The PNG of pods bound over time, one line per run, a colour per contender.

matplotlib is imported here only, when a plot is asked for. It is not a dependency of the scheduler
but of kubesched-dev's `bench` extra (`pip install 'kubesched-dev[bench]'`; a checkout's `./dev` syncs
it, through the dev group's `kubesched-dev[bench]`); without it the
bench still runs and says the PNG was skipped, and `bound_over_time` raises MissingExtraError.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from kubesched_dev.bench.report import RunResult

COLOURS = {"limit": "#7f7f7f", "kube-scheduler": "#1f77b4", "kubesched": "#d62728",
           "kubesched-asyncio": "#ff9896", "kubesched-json": "#ff7f0e"}


MISSING = ("matplotlib is not installed: it comes with kubesched-dev's `bench` extra "
           "(pip install 'kubesched-dev[bench]', or uv sync in a checkout)")


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the extra that brings it."""


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def bound_over_time(results: list[RunResult], path: Path, title: str, steady: bool = False) -> None:
    # Imported by name: matplotlib is optional, so mypy must not require its stubs.
    try:
        importlib.import_module("matplotlib").use("Agg")  # no display here; must precede pyplot's import
        plt = importlib.import_module("matplotlib.pyplot")
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.partition(".")[0] != "matplotlib":
            raise  # matplotlib is there but something it needs is not: its own message says what
        raise MissingExtraError(MISSING, name="matplotlib") from exc

    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=110)
    labelled: set[str] = set()
    for r in results:
        if not r.curve:
            continue
        xs = [p[0] for p in r.curve]
        ys = [p[1] for p in r.curve]
        label = None if r.contender in labelled else r.contender
        labelled.add(r.contender)
        ax.plot(xs, ys, color=COLOURS.get(r.contender, "black"), linewidth=1.4,
                linestyle="-" if r.round == 1 else (0, (4, 1 + r.round)), label=label)
        ax.annotate(f"{r.pods_per_s:.0f}/s", (xs[-1], ys[-1]), fontsize=7, color=COLOURS.get(r.contender, "black"),
                    xytext=(3, -3 * r.round), textcoords="offset points")
    ax.set_xlabel("seconds since the first pod was created (the contender ready)" if steady
                  else "seconds since the contender started (all pods pending)")
    ax.set_ylabel("pods bound")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
